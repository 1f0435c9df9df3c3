// TCP probes: a client that connects and closes without sending a byte, or
// after half a request line. Testcontainers for Go waits for a port that way
// (wait.ForListeningPort dials the mapped port and hangs up), as do Kubernetes
// tcpSocket probes and `nc -z`. Every port must shrug it off: the emulator
// stays up, /health answers 200 and an SDK client keeps working. (A bare
// connect-and-close on the HTTP port used to kill sbemu with SIGSEGV: lws
// reports such a connection closed with no per-session data.)
"use strict";

const assert = require("node:assert/strict");
const net = require("node:net");
const { emulatorSuite, httpGet, alive } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");

/** Connects, writes `bytes` (if any), and closes at once, both ways, as a probe does (or resets
 * with `reset`). A half-close (end) would wait for the server to close its side, which a TLS
 * port that got half a plain request line need not do at once (it did not, once, in 5 s). */
function probe(port, bytes, reset = false) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: "127.0.0.1", port });
    sock.on("error", () => {});
    sock.on("connect", () => {
      const close = () => (reset ? sock.resetAndDestroy() : sock.destroy());
      if (bytes) sock.write(bytes, close);
      else close();
    });
    sock.on("close", resolve);
    setTimeout(() => reject(new Error(`probe on ${port} did not finish`)), 5000).unref();
  });
}

async function stillServing(ctx, what) {
  // Give the server a turn to handle the close before looking.
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(alive(ctx.emu.proc.pid), `the emulator died after ${what}`);
  const health = await httpGet(ctx.emu.httpPort, "/health");
  assert.equal(health.status, 200, `/health after ${what}`);
}

emulatorSuite("tcp probes on every port", { queues: ["probed"], amqpsPort: "free" }, (ctx) => {
  const ports = () => ({ http: ctx.emu.httpPort, amqp: ctx.emu.amqpPort, amqps: ctx.emu.amqpsPort });

  for (const kind of ["http", "amqp", "amqps"]) {
    ctx.test(`${kind} port: connect and close without a byte`, async () => {
      await probe(ports()[kind]);
      await stillServing(ctx, `a bare connect-and-close on the ${kind} port`);
    });
    ctx.test(`${kind} port: connect and reset without a byte`, async () => {
      await probe(ports()[kind], null, true);
      await stillServing(ctx, `a connect-and-reset on the ${kind} port`);
    });
    ctx.test(`${kind} port: half a request line, then close`, async () => {
      await probe(ports()[kind], "GET /hea");
      await stillServing(ctx, `half a request line on the ${kind} port`);
    });
  }

  ctx.test("ten probes at once on the http port, then the SDK still sends and receives", async () => {
    await Promise.all(Array.from({ length: 10 }, () => probe(ctx.emu.httpPort)));
    await stillServing(ctx, "ten probes at once");
    const sb = ctx.client();
    await sb.createSender("probed").sendMessages({ messageId: "after-probes", body: "x" });
    const receiver = sb.createReceiver("probed", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "after-probes");
    await receiver.completeMessage(m);
    await receiver.close();
  });
});
