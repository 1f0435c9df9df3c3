// AMQPS: the JS SDK without UseDevelopmentEmulator dials TLS on the Endpoint's port.
// The generated certificate (CN/SAN localhost) is trusted through NODE_EXTRA_CA_CERTS,
// which Node reads only at start-up, so the client runs in a child process.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { execFile } = require("node:child_process");
const { emulatorSuite } = require("../harness");

const CHILD = `
const { ServiceBusClient } = require("@azure/service-bus");
(async () => {
  const sb = new ServiceBusClient(process.argv[1], { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
  try {
    await sb.createSender("tls").sendMessages({ messageId: "tls-1", body: "over TLS" });
    const r = sb.createReceiver("tls", { maxAutoLockRenewalDurationInMs: 0 });
    const got = await r.receiveMessages(1, { maxWaitTimeInMs: 10000 });
    if (got.length) await r.completeMessage(got[0]);
    console.log(JSON.stringify(got.map((m) => ({ id: m.messageId, body: m.body }))));
  } catch (e) {
    console.log(JSON.stringify({ error: e.code || e.name, message: e.message }));
  } finally {
    await sb.close();
  }
})();
`;

function runChild(connStr, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, ["-e", CHILD, connStr], { cwd: path.join(__dirname, ".."), env: { ...process.env, ...env }, timeout: 60000 },
      (err, stdout, stderr) => resolve({ err, stdout: stdout.trim(), stderr }));
  });
}

emulatorSuite("js over TLS", { queues: ["tls"], amqpsPort: "free" }, (ctx) => {
  ctx.test("the generated certificate is where the docs say", async () => {
    assert.ok(fs.existsSync(ctx.emu.certPath), `no ${ctx.emu.certPath}`);
    assert.match(fs.readFileSync(ctx.emu.certPath, "utf8"), /-----BEGIN CERTIFICATE-----/);
    assert.ok(fs.existsSync(path.join(ctx.emu.dataDir, "tls", "key.pem")), "key.pem next to cert.pem");
  });

  ctx.test("send and receive over AMQPS with NODE_EXTRA_CA_CERTS", async () => {
    const cs = `Endpoint=sb://localhost:${ctx.emu.amqpsPort};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;`;
    const r = await runChild(cs, { NODE_EXTRA_CA_CERTS: ctx.emu.certPath });
    assert.equal(r.stdout, JSON.stringify([{ id: "tls-1", body: "over TLS" }]), `child said: ${r.stdout}\n${r.stderr}`);
  });

  // The AMQP port sniffs: a ClientHello there starts TLS, so an Endpoint naming
  // the AMQP port without UseDevelopmentEmulator works too.
  ctx.test("send and receive over TLS on the AMQP port", async () => {
    const cs = `Endpoint=sb://localhost:${ctx.emu.amqpPort};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;`;
    const r = await runChild(cs, { NODE_EXTRA_CA_CERTS: ctx.emu.certPath });
    assert.equal(r.stdout, JSON.stringify([{ id: "tls-1", body: "over TLS" }]), `child said: ${r.stdout}\n${r.stderr}`);
  });

  ctx.test("without trusting the certificate the TLS handshake fails", async () => {
    const cs = `Endpoint=sb://localhost:${ctx.emu.amqpsPort};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;`;
    const env = { NODE_EXTRA_CA_CERTS: "" };
    const r = await runChild(cs, env);
    const out = JSON.parse(r.stdout || "{}");
    assert.ok(out.error, `expected a TLS error, child said: ${r.stdout}`);
    assert.match(out.message, /certificate|self.signed|verify/i);
  });
});
