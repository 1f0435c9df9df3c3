// AMQP over WebSockets: the JS SDK with webSocketOptions always dials
// wss://<Endpoint host>:<Endpoint port>/$servicebus/websocket (subprotocol
// AMQPWSB10), so wss must work on the AMQP port (TLS sniffed) and on the TLS
// port; ws:// works on the HTTP port. The certificate is trusted through the
// ws constructor's `ca` option, which the SDK passes on.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const net = require("node:net");
const WebSocket = require("ws");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, uniqueId } = require("./util");

const KEY = "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE";
const LARGE = 1024 * 1024; // bytes: many WebSocket frames each way

/** A ws constructor that dials ws:// on the given port whatever URL the SDK builds. */
function plainWsTo(port) {
  return class extends WebSocket {
    constructor(url, protocols, options) {
      super(String(url).replace(/^wss:\/\/[^/]+/, `ws://localhost:${port}`), protocols, options);
    }
  };
}

/** Sends a small and a large message, receives both, settles them three ways. */
async function roundTrip(sb, queue) {
  const id = uniqueId("ws");
  const sender = sb.createSender(queue);
  await sender.sendMessages([
    { messageId: `${id}-small`, body: "over a WebSocket", applicationProperties: { n: 1 } },
    { messageId: `${id}-large`, body: Buffer.alloc(LARGE, 7) },
  ]);
  const receiver = sb.createReceiver(queue, PEEK_LOCK);
  const [small, large] = await receiveExact(receiver, 2);
  assert.equal(small.messageId, `${id}-small`);
  assert.equal(small.body, "over a WebSocket");
  assert.equal(small.applicationProperties.n, 1);
  assert.equal(large.messageId, `${id}-large`);
  assert.equal(Buffer.from(large.body).length, LARGE);
  assert.ok(Buffer.from(large.body).every((b) => b === 7), "the large body arrived intact");
  await receiver.abandonMessage(small); // comes back with DeliveryCount 1
  await receiver.deadLetterMessage(large, { deadLetterReason: "over-ws", deadLetterErrorDescription: "checked" });
  const [again] = await receiveExact(receiver, 1);
  assert.equal(again.messageId, `${id}-small`);
  assert.equal(again.deliveryCount, 1);
  await receiver.completeMessage(again);
  const dlq = sb.createReceiver(queue, { ...PEEK_LOCK, subQueueType: "deadLetter" });
  const [dead] = await receiveExact(dlq, 1);
  assert.equal(dead.messageId, `${id}-large`);
  assert.equal(dead.deadLetterReason, "over-ws");
  await dlq.completeMessage(dead);
  assert.deepEqual(await receiver.peekMessages(5), [], "the queue is empty after settling");
  await Promise.all([sender.close(), receiver.close(), dlq.close()]);
}

emulatorSuite("AMQP over WebSockets", { queues: ["ws"], amqpsPort: "free", args: ["--max-message-size", String(2 * LARGE)] }, (ctx) => {
  const wssOptions = () => ({ webSocket: WebSocket, webSocketConstructorOptions: { ca: fs.readFileSync(ctx.emu.certPath) } });

  ctx.test("wss on the AMQP port: send, receive, abandon, dead-letter, complete, 1 MB", async () => {
    const sb = ctx.client(`Endpoint=sb://localhost:${ctx.emu.amqpPort};${KEY}`, { webSocketOptions: wssOptions() });
    await roundTrip(sb, "ws");
  });

  ctx.test("wss on the TLS port", async () => {
    const sb = ctx.client(`Endpoint=sb://localhost:${ctx.emu.amqpsPort};${KEY}`, { webSocketOptions: wssOptions() });
    await roundTrip(sb, "ws");
  });

  ctx.test("ws:// on the HTTP port", async () => {
    const sb = ctx.client(`Endpoint=sb://localhost:${ctx.emu.httpPort};${KEY}`, { webSocketOptions: { webSocket: plainWsTo(ctx.emu.httpPort) } });
    await roundTrip(sb, "ws");
  });

  ctx.test("a WebSocket client and a plain AMQP client see the same queue", async () => {
    const viaWs = ctx.client(`Endpoint=sb://localhost:${ctx.emu.amqpPort};${KEY}`, { webSocketOptions: wssOptions() });
    const plain = ctx.client();
    await viaWs.createSender("ws").sendMessages({ messageId: "crossed", body: "from ws" });
    const [m] = await receiveExact(plain.createReceiver("ws", PEEK_LOCK), 1);
    assert.equal(m.messageId, "crossed");
    assert.equal(m.body, "from ws");
  });

  for (const [what, path] of [["with a trailing slash", "/$servicebus/websocket/"], ["another path is refused", "/elsewhere"]]) {
    ctx.test(`upgrade ${what}`, async () => {
      const outcome = await new Promise((resolve) => {
        const ws = new WebSocket(`ws://localhost:${ctx.emu.httpPort}${path}`, ["AMQPWSB10"]);
        ws.on("open", () => {
          resolve(`open ${ws.protocol}`);
          ws.close();
        });
        ws.on("error", (e) => resolve(`error ${e.message}`));
      });
      if (path.startsWith("/$servicebus")) assert.equal(outcome, "open AMQPWSB10");
      else assert.match(outcome, /^error/);
    });
  }

  // The Java SDK (qpid-proton-j-extensions WebSocketUpgrade) writes its request target in
  // absolute-form, "GET https://<host>/$servicebus/websocket HTTP/1.1" (RFC 9112 3.2.2).
  for (const [target, ok] of [
    ["https://localhost/$servicebus/websocket", true],
    ["http://localhost:1234/$servicebus/websocket/", true],
    ["https://localhost/elsewhere", false],
  ]) {
    ctx.test(`upgrade with an absolute-form target ${target}: ${ok ? "101" : "refused"}`, async () => {
      const head = await new Promise((resolve, reject) => {
        const s = net.connect({ host: "127.0.0.1", port: ctx.emu.httpPort });
        let got = "";
        const timer = setTimeout(() => { s.destroy(); resolve(got); }, 3000);
        s.on("connect", () => s.write(`GET ${target} HTTP/1.1\r\nConnection: Upgrade,Keep-Alive\r\nUpgrade: websocket\r\n` +
          "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: AMQPWSB10\r\n" +
          "Host: localhost\r\n\r\n"));
        s.on("data", (c) => {
          got += c;
          if (got.includes("\r\n\r\n")) { clearTimeout(timer); s.destroy(); resolve(got); }
        });
        s.on("close", () => { clearTimeout(timer); resolve(got); });
        s.on("error", reject);
      });
      if (ok) assert.match(head, /^HTTP\/1\.1 101 /, JSON.stringify(head));
      else assert.doesNotMatch(head, /^HTTP\/1\.1 101 /, JSON.stringify(head));
    });
  }
});
