// Peek-lock expiry on a queue with LockDuration PT5S. The only tests that wait on
// purpose: a lock has to run out.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite, sleep } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode, expectMarkerNext } = require("./util");

const LOCK_MS = 5000;
const queues = [
  { name: "lock-expiry", properties: { LockDuration: "PT5S" } },
  { name: "lock-lost", properties: { LockDuration: "PT5S" } },
];

emulatorSuite("js locks", { queues }, (ctx) => {
  ctx.test("an expired lock makes the message receivable again with deliveryCount 1", async () => {
    const sb = ctx.client();
    await sb.createSender("lock-expiry").sendMessages([
      { messageId: "keep-locked", body: 1 },
      { messageId: "completed", body: 2 },
    ]);
    const receiver = sb.createReceiver("lock-expiry", PEEK_LOCK);
    const [x, y] = await receiveExact(receiver, 2);
    assert.equal(x.messageId, "keep-locked");
    assert.equal(y.messageId, "completed");
    assert.equal(x.deliveryCount, 0);
    const lockLeft = x.lockedUntilUtc.getTime() - Date.now();
    assert.ok(lockLeft > 1000 && lockLeft <= LOCK_MS + 1000, `lockedUntilUtc should be ~5 s ahead, is ${lockLeft} ms`);
    await receiver.completeMessage(y);

    // While the lock holds, nobody else gets x.
    const other = ctx.client().createReceiver("lock-expiry", PEEK_LOCK);
    assert.deepEqual((await other.receiveMessages(1, { maxWaitTimeInMs: 1000 })).map((m) => m.messageId), []);

    await sleep(LOCK_MS + 1000);
    const again = await receiveExact(other, 1);
    assert.equal(again[0].messageId, "keep-locked");
    assert.equal(again[0].deliveryCount, 1);
    assert.equal(again[0].sequenceNumber.toString(), x.sequenceNumber.toString());
    assert.notEqual(again[0].lockToken, x.lockToken);
    // Only x came back: the completed y stays gone.
    assert.deepEqual((await other.receiveMessages(1, { maxWaitTimeInMs: 1000 })).map((m) => m.messageId), []);
    await other.completeMessage(again[0]);
    await other.close();
    await receiver.close();
    await expectMarkerNext(sb, "lock-expiry");
  });

  ctx.test("complete after the lock expired fails with MessageLockLost", async () => {
    const sb = ctx.client();
    await sb.createSender("lock-lost").sendMessages({ messageId: "late", body: "too slow" });
    const receiver = sb.createReceiver("lock-lost", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await sleep(LOCK_MS + 1000);
    await expectCode(receiver.completeMessage(m), "MessageLockLost");
    // The message is still there, delivered a second time.
    const [again] = await receiveExact(receiver, 1);
    assert.equal(again.messageId, "late");
    assert.equal(again.deliveryCount, 1);
    await receiver.completeMessage(again);
    await receiver.close();
    await expectMarkerNext(sb, "lock-lost");
  });
});
