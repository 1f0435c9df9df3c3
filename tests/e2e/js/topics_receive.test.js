// A subscription is a full receiver: peek-lock, receive-and-delete, subscribe(),
// complete/abandon/dead-letter/defer, renewMessageLock and lock lost, MaxDeliveryCount,
// peekMessages, Status ReceiveDisabled/Disabled. Each subscription of t-rx takes only
// messages whose property `target` names it.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode, rawManagementRequest, lockTokenBytes, lockTokenArray } = require("./util");
const { advance, expectNothing, pollReceive, psql } = require("./qs_util");
const { targeted, DLQ, drainSub, storedCounts } = require("./topics_util");

const T = "t-rx";
const topics = [{
  name: T,
  subscriptions: [
    targeted("pl"), targeted("rnd"), targeted("stream"), targeted("settle"), targeted("defer"), targeted("peek"),
    targeted("renew", { LockDuration: "PT30S" }),
    targeted("lost", { LockDuration: "PT30S" }),
    targeted("maxdel", { MaxDeliveryCount: 2 }),
    targeted("rxdis", { Status: "ReceiveDisabled" }),
    targeted("dis", { Status: "Disabled" }),
  ],
}];

const send = (sb, target, msgs) => sb.createSender(T).sendMessages(msgs.map((m) => ({ ...m, applicationProperties: { ...(m.applicationProperties || {}), target } })));

emulatorSuite("js topics: subscriptions as receivers", { topics }, (ctx) => {
  ctx.test("peek-lock: receive, complete; completing again is refused; the subscription is empty after", async () => {
    const sb = ctx.client();
    await send(sb, "pl", [{ messageId: "p1", body: "one" }, { messageId: "p2", body: "two" }]);
    const r = sb.createReceiver(T, "pl", PEEK_LOCK);
    assert.equal(r.entityPath, `${T}/Subscriptions/pl`);
    const got = await receiveExact(r, 2);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.body}:${m.deliveryCount}`), ["p1:one:0", "p2:two:0"]);
    for (const m of got) {
      assert.ok(m.lockedUntilUtc instanceof Date && m.lockToken, `${m.messageId}: a peek-lock delivery has a lock`);
      await r.completeMessage(m);
    }
    // completing again is refused by the SDK itself (an SDK fact), and by the emulator
    // through $management (a complete of a lock token whose message is gone)
    await assert.rejects(r.completeMessage(got[0]), (e) => /deleted or already settled/i.test(e.message), "the SDK's own refusal");
    const again = await rawManagementRequest(sb, `${T}/Subscriptions/pl`, "com.microsoft:update-disposition", {
      "lock-tokens": lockTokenArray([lockTokenBytes(got[0].lockToken)]),
      "disposition-status": "completed",
    }).then(() => null, (e) => e);
    assert.ok(again, "a second complete through $management was accepted");
    assert.equal(again.code, "MessageLockLost", `${again.code}: ${again.message}`);
    await expectNothing(r, "pl after completing both", 1000);
    await r.close();
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/pl`), "0,0");
  });

  ctx.test("receiveAndDelete: three messages in order, gone at once (a second receiver gets nothing)", async () => {
    const sb = ctx.client();
    await send(sb, "rnd", [1, 2, 3].map((i) => ({ messageId: `r${i}`, body: i })));
    const r = sb.createReceiver(T, "rnd", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(r, 3);
    assert.deepEqual(got.map((m) => m.messageId), ["r1", "r2", "r3"]);
    await r.close();
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/rnd`), "0,0");
    await drainSub(sb, T, "rnd", 0);
  });

  ctx.test("subscribe() streams messages from a subscription (sent before and after it starts)", async () => {
    const sb = ctx.client();
    await send(sb, "stream", [{ messageId: "st1", body: 1 }]);
    const r = sb.createReceiver(T, "stream", PEEK_LOCK);
    const got = [];
    const errors = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${got} in 15 s; errors ${errors}`)), 15000);
      r.subscribe({
        async processMessage(m) {
          got.push(m.messageId);
          await r.completeMessage(m);
          if (got.length === 1) await send(sb, "stream", [{ messageId: "st2", body: 2 }, { messageId: "st3", body: 3 }]);
          if (got.length === 3) { clearTimeout(timer); setTimeout(resolve, 800); }
        },
        async processError(a) { errors.push(`${a.errorSource}: ${a.error.code} ${a.error.message}`); },
      }, { autoCompleteMessages: false, maxConcurrentCalls: 1 });
    });
    await r.close();
    assert.deepEqual(got, ["st1", "st2", "st3"]);
    assert.deepEqual(errors, []);
  });

  ctx.test("abandon redelivers with deliveryCount 1; deadLetterMessage moves it to <topic>/Subscriptions/settle/$DeadLetterQueue", async () => {
    const sb = ctx.client();
    await send(sb, "settle", [{ messageId: "s1", body: { v: 1 }, subject: "subj" }]);
    const r = sb.createReceiver(T, "settle", PEEK_LOCK);
    const [first] = await receiveExact(r, 1);
    await r.abandonMessage(first);
    const [again] = await receiveExact(r, 1);
    assert.equal(again.messageId, "s1");
    assert.equal(again.deliveryCount, 1);
    assert.equal(again.sequenceNumber.toString(), first.sequenceNumber.toString());
    await r.deadLetterMessage(again, { deadLetterReason: "Bad", deadLetterErrorDescription: "by the test" });
    await expectNothing(r, "settle after dead-lettering", 1000);
    await r.close();
    const d = sb.createReceiver(T, "settle", DLQ);
    assert.equal(d.entityPath, `${T}/Subscriptions/settle/$DeadLetterQueue`);
    const [m] = await receiveExact(d, 1);
    assert.deepEqual([m.messageId, m.body, m.subject, m.deadLetterReason, m.deadLetterErrorDescription, m.applicationProperties.target],
      ["s1", { v: 1 }, "subj", "Bad", "by the test", "settle"]);
    await d.completeMessage(m);
    await d.close();
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/settle`), "0,0");
  });

  ctx.test("defer: a deferred message is not received again; receiveDeferredMessages(seq) returns it and it completes", async () => {
    const sb = ctx.client();
    await send(sb, "defer", [{ messageId: "d1", body: "later" }, { messageId: "d2", body: "now" }]);
    const r = sb.createReceiver(T, "defer", PEEK_LOCK);
    const [m1, m2] = await receiveExact(r, 2);
    assert.equal(m1.messageId, "d1");
    await r.deferMessage(m1);
    await r.completeMessage(m2);
    await expectNothing(r, "defer after deferring d1", 1000);
    const [dm] = await r.receiveDeferredMessages(m1.sequenceNumber);
    assert.ok(dm, "receiveDeferredMessages returned nothing");
    assert.equal(dm.messageId, "d1");
    assert.equal(dm.body, "later");
    await r.completeMessage(dm);
    await expectCode(r.receiveDeferredMessages(m1.sequenceNumber), "MessageNotFound"); // completed: gone
    await r.close();
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/defer`), "0,0");
  });

  ctx.test("peekMessages shows messages with sequence numbers without locking; receive then gets them with deliveryCount 0", async () => {
    const sb = ctx.client();
    await send(sb, "peek", [1, 2, 3].map((i) => ({ messageId: `pk${i}`, body: i })));
    const r = sb.createReceiver(T, "peek", PEEK_LOCK);
    const peeked = await r.peekMessages(10);
    assert.deepEqual(peeked.map((m) => m.messageId), ["pk1", "pk2", "pk3"]);
    for (let i = 1; i < 3; i++) assert.ok(peeked[i].sequenceNumber.greaterThan(peeked[i - 1].sequenceNumber));
    const again = await r.peekMessages(2, { fromSequenceNumber: peeked[1].sequenceNumber });
    assert.deepEqual(again.map((m) => m.messageId), ["pk2", "pk3"]);
    const got = await receiveExact(r, 3);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.deliveryCount}:${m.sequenceNumber}`),
      peeked.map((m) => `${m.messageId}:0:${m.sequenceNumber}`));
    for (const m of got) await r.completeMessage(m);
    await r.close();
  });

  ctx.test("MaxDeliveryCount 2: after two abandons the message is in the subscription's DLQ (MaxDeliveryCountExceeded)", async () => {
    const sb = ctx.client();
    await send(sb, "maxdel", [{ messageId: "md", body: "poison" }]);
    const r = sb.createReceiver(T, "maxdel", PEEK_LOCK);
    for (let i = 0; i < 2; i++) {
      const [m] = await receiveExact(r, 1);
      assert.equal(m.deliveryCount, i);
      await r.abandonMessage(m);
    }
    await expectNothing(r, "maxdel after 2 abandons", 1000);
    await r.close();
    const [d] = await drainSub(sb, T, "maxdel", 1, { dlq: true });
    assert.equal(d.messageId, "md");
    assert.equal(d.deadLetterReason, "MaxDeliveryCountExceeded");
  });

  ctx.test("ReceiveDisabled subscription: the topic still stores its copy; receiving fails with MessagingEntityDisabled", async () => {
    const sb = ctx.client();
    await send(sb, "rxdis", [{ messageId: "rx", body: "kept" }]);
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/rxdis`), "1,0");
    const r = sb.createReceiver(T, "rxdis", PEEK_LOCK);
    await expectCode(r.receiveMessages(1, { maxWaitTimeInMs: 3000 }), "MessagingEntityDisabled");
    await r.close().catch(() => {});
  });

  ctx.test("Disabled subscription: takes no copy (the send is accepted); receiving fails with MessagingEntityDisabled", async () => {
    const sb = ctx.client();
    await send(sb, "dis", [{ messageId: "dx", body: "dropped for dis" }]);
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/dis`), "0,0");
    const r = sb.createReceiver(T, "dis", PEEK_LOCK);
    await expectCode(r.receiveMessages(1, { maxWaitTimeInMs: 3000 }), "MessagingEntityDisabled");
    await r.close().catch(() => {});
    // Enabled with SQL, it takes the next message.
    psql(ctx.emu, `UPDATE subscriptions SET status = 'Active' WHERE name = 'dis'`);
    // The emulator hears of the UPDATE through its NOTIFY a moment later: wait until a
    // receiver is let in (its attach reads the same entity cache that routes the send).
    const deadline = Date.now() + 10000;
    for (;;) {
      const probe = sb.createReceiver(T, "dis", PEEK_LOCK);
      const err = await probe.receiveMessages(1, { maxWaitTimeInMs: 100 }).then(() => null, (e) => e);
      await probe.close().catch(() => {});
      if (!err) break;
      assert.equal(err.code, "MessagingEntityDisabled", `${err.code}: ${err.message}`);
      assert.ok(Date.now() < deadline, "the subscription is still Disabled 10 s after the UPDATE");
      await new Promise((res) => setTimeout(res, 100));
    }
    await send(sb, "dis", [{ messageId: "dy", body: "after enabling" }]);
    assert.deepEqual((await drainSub(sb, T, "dis", 1)).map((m) => m.messageId), ["dy"]);
  });

  // Moves the clock: last.
  ctx.test("renewMessageLock extends the lock; a lock left to expire (clock +40 s) is lost and the message comes back", async () => {
    const sb = ctx.client();
    await send(sb, "renew", [{ messageId: "rn", body: "renew me" }]);
    await send(sb, "lost", [{ messageId: "lo", body: "lose me" }]);
    const rr = sb.createReceiver(T, "renew", PEEK_LOCK);
    const rl = sb.createReceiver(T, "lost", PEEK_LOCK);
    const [mr] = await receiveExact(rr, 1);
    const [ml] = await receiveExact(rl, 1);
    const before = mr.lockedUntilUtc.getTime();
    await advance(ctx.emu, "PT20S");
    const renewed = await rr.renewMessageLock(mr);
    assert.ok(renewed.getTime() >= before + 19000, `renewed lock ${renewed.toISOString()} should be ~20 s past ${new Date(before).toISOString()}`);
    await advance(ctx.emu, "PT20S"); // 40 s after the receive: "lost" (30 s) expired, "renew" (renewed at 20 s) holds
    await rr.completeMessage(mr);
    await expectCode(rl.completeMessage(ml), "MessageLockLost");
    const back = await pollReceive(rl, 1, 5000);
    assert.deepEqual(back.map((m) => `${m.messageId}:${m.deliveryCount}`), ["lo:1"], "the lost message is delivered again");
    await rl.completeMessage(back[0]);
    await rr.close();
    await rl.close();
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/renew`), "0,0");
    assert.equal(storedCounts(ctx.emu, `${T}/Subscriptions/lost`), "0,0");
  });
});
