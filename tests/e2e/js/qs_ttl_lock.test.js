// Expiry meets locks and the dead-letter subqueue: a message that expires while locked can
// still be completed; abandoned or with its lock lapsed it expires at once; the DLQ ignores
// TTL. Time moves through POST /$sbemu/clock/advance.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { SWEEP_GRACE_MS, sleep, advance, expectNothing, describe, pollReceive, drain, rowsGone } = require("./qs_util");

const TTL_REASON = "TTLExpiredException";
const TTL_DESCRIPTION = "The message expired and was dead lettered.";
const DLQ = { ...PEEK_LOCK, subQueueType: "deadLetter" };
const LOCKED = { LockDuration: "PT5M", DefaultMessageTimeToLive: "PT1M" };

const queues = [
  { name: "lock-complete", properties: { ...LOCKED, DeadLetteringOnMessageExpiration: true } },
  { name: "lock-abandon", properties: { ...LOCKED, DeadLetteringOnMessageExpiration: true } },
  { name: "lock-abandon-drop", properties: LOCKED },
  { name: "lock-lapse", properties: { ...LOCKED, DeadLetteringOnMessageExpiration: true } },
  { name: "dlq-fresh" },
  { name: "dlq-ttl", properties: { DefaultMessageTimeToLive: "PT1M", DeadLetteringOnMessageExpiration: true } },
];

function checkDeadLettered(m, id) {
  assert.equal(m.messageId, id, `expected ${id} in the DLQ, got ${describe(m)}`);
  assert.equal(m.deadLetterReason, TTL_REASON, `${id}: deadLetterReason`);
  assert.equal(m.deadLetterErrorDescription, TTL_DESCRIPTION, `${id}: deadLetterErrorDescription`);
}

emulatorSuite("js TTL, locks and the DLQ", { queues }, (ctx) => {
  ctx.test("a message that expires while locked can still be completed, and is not dead-lettered", async () => {
    const sb = ctx.client();
    await sb.createSender("lock-complete").sendMessages({ messageId: "held", body: "TTL 1 min, lock 5 min" });
    const receiver = sb.createReceiver("lock-complete", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await advance(ctx.emu, "PT2M"); // past the TTL, within the lock
    await sleep(SWEEP_GRACE_MS); // the sweep must leave a locked message alone
    await receiver.completeMessage(m);
    await expectNothing(receiver, "lock-complete after complete", 1000);
    await receiver.close();
    assert.deepEqual((await drain(sb, "lock-complete", { dlq: true })).map(describe), [],
      "a message completed after its expiry must not be dead-lettered");
  });

  ctx.test("a message abandoned after its TTL expired (lock still held) is expired at once: DLQ, never redelivered", async () => {
    const sb = ctx.client();
    await sb.createSender("lock-abandon").sendMessages({ messageId: "abandoned", body: "TTL 1 min" });
    const receiver = sb.createReceiver("lock-abandon", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "abandoned");
    await advance(ctx.emu, "PT2M");
    await receiver.abandonMessage(m);
    await expectNothing(receiver, "lock-abandon after abandoning an expired message (it must not be redelivered)");
    await receiver.close();
    const dlq = sb.createReceiver("lock-abandon", DLQ);
    const got = await pollReceive(dlq, 1, 4000);
    assert.equal(got.length, 1, `expected "abandoned" in the DLQ of lock-abandon, got ${got.map(describe)}`);
    checkDeadLettered(got[0], "abandoned");
    await dlq.completeMessage(got[0]);
    await dlq.close();
  });

  ctx.test("without DeadLetteringOnMessageExpiration an expired message abandoned is dropped, not redelivered", async () => {
    const sb = ctx.client();
    await sb.createSender("lock-abandon-drop").sendMessages({ messageId: "gone", body: "TTL 1 min" });
    const receiver = sb.createReceiver("lock-abandon-drop", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await advance(ctx.emu, "PT2M");
    await receiver.abandonMessage(m);
    await expectNothing(receiver, "lock-abandon-drop after abandoning an expired message");
    await receiver.close();
    assert.deepEqual(await rowsGone(ctx.emu, "lock-abandon-drop"), [], "the expired message's row is still there");
    assert.deepEqual((await drain(sb, "lock-abandon-drop", { dlq: true })).map(describe), [], "DLQ of lock-abandon-drop");
  });

  ctx.test("a lock that lapses after the TTL expires the message at once: DLQ, and complete gives MessageLockLost", async () => {
    const sb = ctx.client();
    await sb.createSender("lock-lapse").sendMessages({ messageId: "lapsed", body: "TTL 1 min, lock 5 min" });
    const receiver = sb.createReceiver("lock-lapse", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "lapsed");
    await advance(ctx.emu, "PT6M"); // past the TTL and the lock
    const dlq = sb.createReceiver("lock-lapse", DLQ);
    const got = await pollReceive(dlq, 1, SWEEP_GRACE_MS + 3000);
    assert.equal(got.length, 1, `expected "lapsed" in the DLQ of lock-lapse once its lock lapsed, got ${got.map(describe)}`);
    checkDeadLettered(got[0], "lapsed");
    await dlq.completeMessage(got[0]);
    await dlq.close();
    await expectCode(receiver.completeMessage(m), "MessageLockLost");
    await expectNothing(receiver, "lock-lapse after the lapsed lock");
    await receiver.close();
  });

  ctx.test("the dead-letter subqueue ignores TTL: a dead-lettered message stays receivable past its TTL", async () => {
    const sb = ctx.client();
    await sb.createSender("dlq-ttl").sendMessages({ messageId: "kept", body: "TTL 1 min", timeToLive: 30000 });
    const receiver = sb.createReceiver("dlq-ttl", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deadLetterMessage(m, { deadLetterReason: "ByTheTest", deadLetterErrorDescription: "dead-lettered by hand" });
    await receiver.close();
    await advance(ctx.emu, "PT10M");
    await sleep(SWEEP_GRACE_MS); // give the sweep its chance to (wrongly) drop it
    const dlq = sb.createReceiver("dlq-ttl", DLQ);
    const got = await pollReceive(dlq, 1, 5000);
    assert.equal(got.length, 1, `expected "kept" still in the DLQ 10 min after its 30 s TTL, got ${got.map(describe)}`);
    assert.equal(got[0].messageId, "kept");
    assert.equal(got[0].deadLetterReason, "ByTheTest", "the DLQ message must keep the reason it was dead-lettered with");
    assert.equal(got[0].deadLetterErrorDescription, "dead-lettered by hand");
    await dlq.completeMessage(got[0]);
    await dlq.close();
  });

  ctx.test("a DLQ receiver on a fresh client, with no other link to its queue, is authorized and receives", async () => {
    const sb = ctx.client();
    await sb.createSender("dlq-fresh").sendMessages({ messageId: "dl-fresh", body: "x" });
    const receiver = sb.createReceiver("dlq-fresh", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deadLetterMessage(m, { deadLetterReason: "ByTheTest", deadLetterErrorDescription: "fresh client" });
    await receiver.close();
    // A new connection whose only link is the DLQ one: the SDK puts a token for
    // sb://<host>/dlq-fresh/$DeadLetterQueue, which must authorize that link.
    const dlq = ctx.client().createReceiver("dlq-fresh", DLQ);
    const got = await pollReceive(dlq, 1, 4000);
    assert.equal(got.length, 1, `expected dl-fresh in the DLQ, got ${got.map(describe)}`);
    assert.equal(got[0].messageId, "dl-fresh");
    await dlq.completeMessage(got[0]);
    await dlq.close();
  });
});
