// A raw AMQP client (rhea, what the JS SDK is built on, without the SDK's own
// size check) sends a message larger than --max-message-size: the server must
// refuse it at once by closing the link with amqp:link:message-size-exceeded,
// naming the limit, even when the message is larger than the session window
// (it used to wait for the rest forever). The connection stays usable.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const rhea = require("rhea");
const { emulatorSuite, SAS_KEY, SAS_KEY_NAME } = require("../harness");

const LIMIT = 256 * 1024; // the emulator's default --max-message-size

function sasToken(audience) {
  const expiry = Math.floor(Date.now() / 1000) + 3600;
  const enc = encodeURIComponent(audience);
  const sig = crypto.createHmac("sha256", SAS_KEY).update(`${enc}\n${expiry}`).digest("base64");
  return `SharedAccessSignature sr=${enc}&sig=${encodeURIComponent(sig)}&se=${expiry}&skn=${SAS_KEY_NAME}`;
}

/** Opens a connection and authorises it for the whole namespace through $cbs. */
function connect(port) {
  return new Promise((resolve, reject) => {
    const container = rhea.create_container();
    const conn = container.connect({ host: "127.0.0.1", port, reconnect: false, hostname: "localhost" });
    conn.on("connection_error", (ctx) => reject(new Error(`connection error: ${ctx.connection.error}`)));
    conn.once("connection_open", () => {
      const replyTo = "cbs-reply";
      const receiver = conn.open_receiver({ source: { address: "$cbs" }, target: { address: replyTo } });
      const sender = conn.open_sender({ target: { address: "$cbs" } });
      receiver.once("message", (ctx) => {
        const status = ctx.message.application_properties["status-code"];
        if (status === 202 || status === 200) resolve(conn);
        else reject(new Error(`put-token answered ${status}`));
      });
      sender.once("sendable", () => {
        sender.send({
          message_id: "put-1",
          reply_to: replyTo,
          application_properties: {
            operation: "put-token",
            type: "servicebus.windows.net:sastoken",
            name: "sb://localhost/",
          },
          body: sasToken("sb://localhost/"),
        });
      });
    });
  });
}

/** Sends one message of size bytes on a new link; resolves with how the link ended or the delivery was settled. */
function sendOne(conn, address, size) {
  return new Promise((resolve) => {
    const sender = conn.open_sender({ target: { address } });
    const started = Date.now();
    sender.once("sendable", () => {
      sender.send({ message_id: `m-${size}`, body: rhea.message.data_section(Buffer.alloc(size, 7)) });
    });
    sender.on("accepted", () => resolve({ outcome: "accepted", ms: Date.now() - started }));
    sender.on("rejected", (ctx) => resolve({ outcome: "rejected", error: ctx.delivery.remote_state.error, ms: Date.now() - started }));
    sender.on("sender_error", (ctx) => resolve({ outcome: "link-error", error: ctx.sender.error, ms: Date.now() - started }));
    sender.on("sender_close", (ctx) => resolve({ outcome: "link-closed", error: ctx.sender.error, ms: Date.now() - started }));
  });
}

emulatorSuite("raw client over the size limit", { queues: ["raw"] }, (ctx) => {
  for (const size of [LIMIT + 1024, 12 * 1024 * 1024]) {
    ctx.test(`a ${Math.round(size / 1024)} KB message is refused at once with amqp:link:message-size-exceeded`, async () => {
      const conn = await connect(ctx.emu.amqpPort);
      try {
        const r = await sendOne(conn, "raw", size);
        assert.notEqual(r.outcome, "accepted", "an oversized message was accepted");
        assert.ok(r.error, `no error condition (${r.outcome})`);
        assert.equal(r.error.condition, "amqp:link:message-size-exceeded", JSON.stringify(r.error));
        assert.match(String(r.error.description), /262144/, "the error names the limit");
        assert.ok(r.ms < 10000, `refused after ${r.ms} ms`);
        // the same connection still takes a message that fits
        const ok = await sendOne(conn, "raw", 1024);
        assert.equal(ok.outcome, "accepted", JSON.stringify(ok));
      } finally {
        conn.close();
      }
    }, 60000);
  }
});
