// Batched sends and FIFO order.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectMarkerNext } = require("./util");
const { connect, sendOne } = require("./raw_amqp");

emulatorSuite("js batches and order", { queues: ["arr", "batch", "fifo"] }, (ctx) => {
  ctx.test("sendMessages([...]) delivers every message of the array", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("arr");
    const sent = Array.from({ length: 10 }, (_, i) => ({
      messageId: `arr-${i}`,
      body: { i },
      applicationProperties: { i },
    }));
    await sender.sendMessages(sent);
    const receiver = sb.createReceiver("arr", PEEK_LOCK);
    const got = await receiveExact(receiver, 10);
    assert.deepEqual(got.map((m) => m.messageId), sent.map((m) => m.messageId), "array order is kept");
    for (const m of got) {
      const i = Number(m.messageId.split("-")[1]);
      assert.deepEqual(m.body, { i });
      assert.equal(m.applicationProperties.i, i);
    }
    const seq = got.map((m) => m.sequenceNumber.toNumber());
    for (let k = 1; k < seq.length; k++) assert.ok(seq[k] > seq[k - 1], `sequence numbers increase: ${seq}`);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    await expectMarkerNext(sb, "arr");
  });

  ctx.test("createMessageBatch + sendMessages(batch)", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("batch");
    const batch = await sender.createMessageBatch();
    assert.ok(batch.maxSizeInBytes > 0, `maxSizeInBytes ${batch.maxSizeInBytes}`);
    for (let i = 0; i < 25; i++) {
      const ok = batch.tryAddMessage({ messageId: `b-${i}`, body: `batch body ${i}`, subject: "batched" });
      assert.ok(ok, `message ${i} fits the batch`);
    }
    assert.equal(batch.count, 25);
    await sender.sendMessages(batch);

    const receiver = sb.createReceiver("batch", PEEK_LOCK);
    const got = await receiveExact(receiver, 25);
    assert.deepEqual(got.map((m) => m.messageId), Array.from({ length: 25 }, (_, i) => `b-${i}`));
    got.forEach((m, i) => {
      assert.equal(m.body, `batch body ${i}`);
      assert.equal(m.subject, "batched");
    });
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    await expectMarkerNext(sb, "batch");
  });

  ctx.test("batch size limit: a batch refuses a message that does not fit", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("batch");
    const batch = await sender.createMessageBatch();
    // The SDK sizes the batch from the link's max-message-size that the server advertised:
    // the emulator's default --max-message-size, 256 KB (Service Bus Standard).
    assert.equal(batch.maxSizeInBytes, 256 * 1024);
    // tryAddMessage refusing is the SDK's own check, made before the emulator sees anything.
    assert.equal(batch.tryAddMessage({ body: Buffer.alloc(batch.maxSizeInBytes + 1) }), false);
  });

  ctx.test("the emulator's side of the limit: a transfer over 256 KB is refused, one at it is taken", async () => {
    // A raw client sends what the SDK would not: refused with message-size-exceeded (the
    // delivery rejected, or the link closed when the message is still arriving).
    const { conn } = await connect(ctx.emu.amqpPort);
    try {
      const over = await sendOne(conn, "batch", 256 * 1024 + 1);
      assert.ok(["rejected", "link-closed"].includes(over.outcome), JSON.stringify(over));
      assert.equal(over.error.condition, "amqp:link:message-size-exceeded", JSON.stringify(over.error));
      // the whole encoded message counts: a body of 256 KB less its framing is taken
      const at = await sendOne(conn, "batch", 256 * 1024 - 64);
      assert.equal(at.outcome, "accepted", JSON.stringify(at));
    } finally {
      conn.close();
    }
  });

  ctx.test("50 messages sent one by one come back in FIFO order", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("fifo");
    for (let i = 0; i < 50; i++) await sender.sendMessages({ messageId: `f-${i}`, body: i });
    const receiver = sb.createReceiver("fifo", PEEK_LOCK);
    const got = await receiveExact(receiver, 50);
    assert.deepEqual(got.map((m) => m.body), Array.from({ length: 50 }, (_, i) => i));
    const seq = got.map((m) => m.sequenceNumber.toNumber());
    for (let k = 1; k < seq.length; k++) assert.ok(seq[k] > seq[k - 1], `sequence numbers increase: ${seq}`);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    await expectMarkerNext(sb, "fifo");
  });
});
