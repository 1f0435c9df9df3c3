// A raw AMQP client (rhea, what the JS SDK is built on, without the SDK's own
// size check) sends a message larger than --max-message-size: the server must
// refuse it at once by closing the link with amqp:link:message-size-exceeded,
// naming the limit, even when the message is larger than the session window
// (it used to wait for the rest forever). The connection stays usable. And
// ids over Service Bus' 128 characters are refused naming the limit.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { connect, sendOne } = require("./raw_amqp");

const LIMIT = 256 * 1024; // the emulator's default --max-message-size

emulatorSuite("raw client over the size limit", { queues: ["raw"] }, (ctx) => {
  for (const size of [LIMIT + 1024, 12 * 1024 * 1024]) {
    ctx.test(`a ${Math.round(size / 1024)} KB message is refused at once with amqp:link:message-size-exceeded`, async () => {
      const { conn, status } = await connect(ctx.emu.amqpPort);
      assert.equal(status, 202, "put-token for the namespace");
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

  // The SDKs check these client-side; a raw client gets Service Bus's answer
  // (the ids used to be cut to 128 bytes silently, mid-character at times).
  for (const [name, fields] of [
    ["MessageId", { message_id: "m".repeat(129) }],
    ["SessionId", { group_id: "s".repeat(129) }],
  ]) {
    ctx.test(`a ${name} of 129 characters is refused with an argument error naming the limit`, async () => {
      const { conn } = await connect(ctx.emu.amqpPort);
      try {
        const r = await sendOne(conn, "raw", 16, fields);
        assert.equal(r.outcome, "rejected", JSON.stringify(r));
        assert.equal(r.error.condition, "com.microsoft:argument-error", JSON.stringify(r.error));
        assert.match(String(r.error.description), new RegExp(`${name} is 129 characters.*limit is 128`));
        // 128 characters of two bytes each are taken whole
        const ok = await sendOne(conn, "raw", 16, { message_id: "\u00e9".repeat(128) });
        assert.equal(ok.outcome, "accepted", JSON.stringify(ok));
      } finally {
        conn.close();
      }
    }, 60000);
  }
});
