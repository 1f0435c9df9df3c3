// Locks and idleness on the emulator's clock: a lock lapses when the clock passes
// LockDuration (redelivery, MessageLockLost, MaxDeliveryCount), and receives count as
// activity for AutoDeleteOnIdle.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { SWEEP_GRACE_MS, sleep, clockNow, advance, expectNothing, describe, pollReceive, psql } = require("./qs_util");

const queues = [
  { name: "lapse" },
  { name: "lapse-max", properties: { MaxDeliveryCount: 2 } },
  { name: "idle-recv", properties: { AutoDeleteOnIdle: "PT5M" } },
  { name: "idle-dlq" },
];

const exists = (emu, q) => psql(emu, `SELECT count(*) FROM queues WHERE name = '${q}'`) === "1";

emulatorSuite("js locks and idleness on the clock", { queues }, (ctx) => {
  // First: every later clock move would count as idleness for idle-recv.
  ctx.test("AutoDeleteOnIdle PT5M: a receive at +4 min counts as activity, so the queue lives at +8 min and goes at +14 min", async () => {
    const sb = ctx.client();
    await sb.createSender("idle-recv").sendMessages([{ messageId: "r1", body: 1 }, { messageId: "r2", body: 2 }]);
    await advance(ctx.emu, "PT4M");
    const receiver = sb.createReceiver("idle-recv", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.completeMessage(m);
    await receiver.close();
    await advance(ctx.emu, "PT4M"); // 8 min after the send, 4 after the receive
    await sleep(SWEEP_GRACE_MS);
    assert.ok(exists(ctx.emu, "idle-recv"), "idle-recv was received from 4 min ago (AutoDeleteOnIdle PT5M): it must still exist");
    await advance(ctx.emu, "PT6M");
    const deadline = Date.now() + SWEEP_GRACE_MS + 1500;
    while (exists(ctx.emu, "idle-recv") && Date.now() < deadline) await sleep(200);
    assert.ok(!exists(ctx.emu, "idle-recv"), "idle-recv left idle 6 min (PT5M) should be deleted");
  });

  ctx.test("a lock lapses when the clock passes LockDuration (PT1M): redelivered with deliveryCount 1, old lock → MessageLockLost", async () => {
    const sb = ctx.client();
    await sb.createSender("lapse").sendMessages({ messageId: "l1", body: "x" });
    const receiver = sb.createReceiver("lapse", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    const c = await clockNow(ctx.emu);
    const lockLeft = m.lockedUntilUtc.getTime() - c.now.getTime();
    assert.ok(lockLeft > 50000 && lockLeft <= 61000, `lockedUntilUtc should be ~60 s after the emulator's now, is ${lockLeft} ms`);
    // Within the lock: nobody else gets it.
    await advance(ctx.emu, "PT30S");
    const other = sb.createReceiver("lapse", PEEK_LOCK);
    await expectNothing(other, "lapse at +30 s (lock of 60 s held)", 1500);
    await advance(ctx.emu, "PT45S");
    const got = await pollReceive(other, 1, SWEEP_GRACE_MS + 2000);
    assert.equal(got.length, 1, "after the clock passed the lock, the message should be delivered again");
    assert.equal(got[0].messageId, "l1");
    assert.equal(got[0].deliveryCount, 1, "deliveryCount after one lapsed lock");
    assert.equal(got[0].sequenceNumber.toString(), m.sequenceNumber.toString());
    await expectCode(receiver.completeMessage(m), "MessageLockLost");
    await other.completeMessage(got[0]);
    await expectNothing(other, "lapse after completing the redelivery", 1000);
    await other.close();
    await receiver.close();
  });

  ctx.test("MaxDeliveryCount 2: two lapsed locks on the clock dead-letter the message with MaxDeliveryCountExceeded", async () => {
    const sb = ctx.client();
    await sb.createSender("lapse-max").sendMessages({ messageId: "mx", body: "x" });
    const receiver = sb.createReceiver("lapse-max", PEEK_LOCK);
    const [a] = await receiveExact(receiver, 1);
    assert.equal(a.deliveryCount, 0);
    await advance(ctx.emu, "PT2M");
    const again = await pollReceive(receiver, 1, SWEEP_GRACE_MS + 2000);
    assert.equal(again.length, 1, "the first lapse should make the message deliverable again");
    assert.equal(again[0].deliveryCount, 1);
    await advance(ctx.emu, "PT2M");
    await sleep(SWEEP_GRACE_MS);
    await expectNothing(receiver, "lapse-max after the second lapse (MaxDeliveryCount 2)");
    await receiver.close();
    const dlq = sb.createReceiver("lapse-max", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const got = await pollReceive(dlq, 1, 4000);
    assert.equal(got.length, 1, "expected mx in the DLQ");
    assert.equal(got[0].messageId, "mx");
    assert.equal(got[0].deadLetterReason, "MaxDeliveryCountExceeded");
    await dlq.completeMessage(got[0]);
    await dlq.close();
  });

  ctx.test("the dead-letter queue's content survives the clock: 1 day later it is still there", async () => {
    const sb = ctx.client();
    await sb.createSender("idle-dlq").sendMessages({ messageId: "old-dl", body: "x", timeToLive: 60000 });
    const receiver = sb.createReceiver("idle-dlq", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deadLetterMessage(m, { deadLetterReason: "Keep", deadLetterErrorDescription: "for a day" });
    await receiver.close();
    const dlq = sb.createReceiver("idle-dlq", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    await advance(ctx.emu, "PT23H");
    await sleep(SWEEP_GRACE_MS);
    const got = await pollReceive(dlq, 1, 4000);
    assert.equal(got.length, 1, `expected old-dl still in the DLQ 23 h after its 1 min TTL, got ${got.map(describe)}`);
    assert.equal(got[0].messageId, "old-dl");
    assert.equal(got[0].deadLetterReason, "Keep");
    await dlq.completeMessage(got[0]);
    await dlq.close();
  });
});
