// The $management operations through the JS SDK (wire-protocol §7): peek,
// schedule / cancel, deferral (receive by sequence number, update-disposition),
// renew-lock, and batch delete (a raw request: 7.9.5 has no purge API).
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite, sleep } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode, rawManagementRequest } = require("./util");
const { advance, clockNow } = require("./qs_util");

const queues = [
  "mgmt-peek",
  "mgmt-empty",
  "mgmt-states",
  "mgmt-schedule",
  "mgmt-cancel",
  "mgmt-defer",
  "mgmt-defer-2",
  "mgmt-twice",
  { name: "mgmt-renew", properties: { LockDuration: "PT5S" } },
  "mgmt-purge",
  "mgmt-raw",
  "mgmt-defer-rnd",
  "mgmt-modify",
  { name: "mgmt-sched-dedup", properties: { RequiresDuplicateDetection: true } },
  "mgmt-clock",
  { name: "mgmt-sched-full", properties: { MaxSizeInMegabytes: 1 } },
];

const seqs = (msgs) => msgs.map((m) => Number(m.sequenceNumber));
const ids = (msgs) => msgs.map((m) => m.messageId);

emulatorSuite("js management", { queues }, (ctx) => {
  ctx.test("peekMessages returns messages in order, from a sequence number, without locking", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-peek").sendMessages([
      { messageId: "p1", body: "one" },
      { messageId: "p2", body: "two" },
      { messageId: "p3", body: "three" },
    ]);
    const receiver = sb.createReceiver("mgmt-peek", PEEK_LOCK);
    const all = await receiver.peekMessages(10, { fromSequenceNumber: require("long").fromNumber(1) });
    assert.deepEqual(ids(all), ["p1", "p2", "p3"]);
    assert.deepEqual(all.map((m) => m.body), ["one", "two", "three"]);
    assert.ok(all.every((m) => m.state === "active"), JSON.stringify(all.map((m) => m.state)));
    assert.ok(all.every((m) => m.lockToken === undefined));
    assert.ok(all.every((m) => m.enqueuedTimeUtc instanceof Date));
    assert.ok(seqs(all)[0] < seqs(all)[1] && seqs(all)[1] < seqs(all)[2]);
    // From the second one, at most 1.
    const some = await receiver.peekMessages(1, { fromSequenceNumber: all[1].sequenceNumber });
    assert.deepEqual(ids(some), ["p2"]);
    // omitMessageBody: the same messages without their bodies.
    const bare = await receiver.peekMessages(3, { fromSequenceNumber: all[0].sequenceNumber, omitMessageBody: true });
    assert.deepEqual(ids(bare), ["p1", "p2", "p3"]);
    assert.ok(bare.every((m) => m.body === undefined), JSON.stringify(bare.map((m) => m.body)));
    // Past the end: nothing (204).
    const none = await receiver.peekMessages(5, { fromSequenceNumber: all[2].sequenceNumber.add(1) });
    assert.deepEqual(none, []);
    // Peek locked nothing: all three are receivable at once.
    const got = await receiveExact(receiver, 3);
    assert.deepEqual(ids(got), ["p1", "p2", "p3"]);
    // A locked message is still peekable, delivery count as granted so far.
    const locked = await receiver.peekMessages(3, { fromSequenceNumber: all[0].sequenceNumber });
    assert.deepEqual(ids(locked), ["p1", "p2", "p3"]);
    for (const m of got) await receiver.completeMessage(m);
    assert.deepEqual(await receiver.peekMessages(5, { fromSequenceNumber: all[0].sequenceNumber }), []);
    await receiver.close();
  });

  ctx.test("peekMessages on an empty queue returns []", async () => {
    const receiver = ctx.client().createReceiver("mgmt-empty", PEEK_LOCK);
    assert.deepEqual(await receiver.peekMessages(10), []);
    await receiver.close();
  });

  ctx.test("peekMessages shows deferred and scheduled messages with their state", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("mgmt-states");
    await sender.sendMessages({ messageId: "to-defer", body: "d" });
    const receiver = sb.createReceiver("mgmt-states", PEEK_LOCK);
    const [d] = await receiveExact(receiver, 1);
    await receiver.deferMessage(d);
    const later = new Date(Date.now() + 3600 * 1000);
    const [scheduledSeq] = await sender.scheduleMessages({ messageId: "scheduled", body: "s" }, later);
    await sender.sendMessages({ messageId: "active", body: "a" });
    const peeked = await receiver.peekMessages(10, { fromSequenceNumber: d.sequenceNumber });
    assert.deepEqual(ids(peeked), ["to-defer", "scheduled", "active"]);
    assert.deepEqual(peeked.map((m) => m.state), ["deferred", "scheduled", "active"]);
    assert.equal(peeked[1].sequenceNumber.toString(), scheduledSeq.toString());
    assert.equal(peeked[1].scheduledEnqueueTimeUtc.getTime(), later.getTime());
    // The deferred message was delivered once before it was deferred.
    assert.equal(peeked[0].deliveryCount, 1);
    assert.equal(peeked[2].deliveryCount, 0);
    await sender.close();
    await receiver.close();
  });

  ctx.test("scheduleMessages returns sequence numbers; the message is invisible until due", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("mgmt-schedule");
    const due = new Date(Date.now() + 3000);
    const result = await sender.scheduleMessages([{ messageId: "later", body: "hello" }], due);
    assert.equal(result.length, 1);
    assert.ok(Number(result[0]) >= 1, `sequence number ${result[0]}`);
    // Receive from now on, however long the set-up took (a loaded machine can eat the 3 s):
    // whenever the message comes, it must not have come before it was due.
    const receiver = sb.createReceiver("mgmt-schedule", PEEK_LOCK);
    const got = [];
    const deadline = due.getTime() + 15000;
    while (!got.length && Date.now() < deadline) got.push(...await receiver.receiveMessages(1, { maxWaitTimeInMs: 1000 }));
    const receivedAt = Date.now();
    assert.equal(got.length, 1, "the scheduled message never came");
    const [m] = got;
    assert.ok(receivedAt >= due.getTime(), `delivered ${due.getTime() - receivedAt} ms before it was due`);
    assert.equal(m.messageId, "later");
    assert.equal(m.body, "hello");
    // As on Service Bus, activation gives the message a new sequence number.
    assert.ok(m.sequenceNumber.greaterThan(result[0]), `${m.sequenceNumber} after ${result[0]}`);
    assert.equal(m.scheduledEnqueueTimeUtc.getTime(), due.getTime());
    // enqueued (activated) at its time, not before; the sweep runs every second
    assert.ok(m.enqueuedTimeUtc.getTime() >= due.getTime() && m.enqueuedTimeUtc.getTime() - due.getTime() < 5000,
      `enqueued ${m.enqueuedTimeUtc.toISOString()} for a message due ${due.toISOString()}`);
    await receiver.completeMessage(m);
    await sender.close();
    await receiver.close();
  });

  ctx.test("scheduleMessages honours duplicate detection like a send", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("mgmt-sched-dedup");
    const later = new Date(Date.now() + 3600 * 1000);
    const [first] = await sender.scheduleMessages({ messageId: "once", body: 1 }, later);
    await sender.scheduleMessages({ messageId: "once", body: 2 }, later); // accepted, dropped
    await sender.sendMessages({ messageId: "once", body: 3 }); // a duplicate too
    const receiver = sb.createReceiver("mgmt-sched-dedup", PEEK_LOCK);
    const peeked = await receiver.peekMessages(10, { fromSequenceNumber: first });
    assert.deepEqual(peeked.map((m) => m.body), [1]);
    await sender.cancelScheduledMessages(first);
    await sender.close();
    await receiver.close();
  });

  ctx.test("scheduleMessages into a full queue fails with QuotaExceeded; cancelling makes room", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("mgmt-sched-full");
    const later = new Date(Date.now() + 3600 * 1000);
    const chunk = Buffer.alloc(200 * 1024, 7);
    const seqs = [];
    for (let i = 0; i < 5; i++) seqs.push((await sender.scheduleMessages({ body: chunk }, later))[0]);
    await expectCode(sender.scheduleMessages({ body: chunk }, later), "QuotaExceeded");
    await sender.cancelScheduledMessages(seqs[0]);
    await sender.scheduleMessages({ body: chunk }, later);
    await sender.close();
  });

  ctx.test("cancelScheduledMessages removes scheduled messages", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("mgmt-cancel");
    const later = new Date(Date.now() + 3600 * 1000);
    const [a, b] = await sender.scheduleMessages(
      [{ messageId: "keep", body: 1 }, { messageId: "cancel", body: 2 }], later);
    await sender.cancelScheduledMessages(b);
    const receiver = sb.createReceiver("mgmt-cancel", PEEK_LOCK);
    let peeked = await receiver.peekMessages(10, { fromSequenceNumber: a });
    assert.deepEqual(ids(peeked), ["keep"]);
    // Cancelling again, or something that is no schedule, is harmless.
    await sender.cancelScheduledMessages([a, b]);
    await sender.cancelScheduledMessages(b.add(1000));
    peeked = await receiver.peekMessages(10, { fromSequenceNumber: a });
    assert.deepEqual(peeked, []);
    await sender.close();
    await receiver.close();
  });

  ctx.test("deferred messages: receiveDeferredMessages, then complete / abandon / deadLetter", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-defer").sendMessages([
      { messageId: "d-complete", body: 1 },
      { messageId: "d-abandon", body: 2 },
    ]);
    const receiver = sb.createReceiver("mgmt-defer", PEEK_LOCK);
    const [x, y] = await receiveExact(receiver, 2);
    await receiver.deferMessage(x);
    await receiver.deferMessage(y);
    // Deferred messages are not received normally.
    assert.deepEqual(ids(await receiver.receiveMessages(1, { maxWaitTimeInMs: 1000 })), []);

    const got = await receiver.receiveDeferredMessages([y.sequenceNumber, x.sequenceNumber]);
    assert.deepEqual(ids(got), ["d-abandon", "d-complete"]);
    assert.ok(got.every((m) => typeof m.lockToken === "string" && m.lockToken.length === 36));
    assert.ok(got.every((m) => m.state === "deferred"));
    assert.ok(got.every((m) => m.lockedUntilUtc.getTime() > Date.now()));
    assert.equal(got[1].deliveryCount, 1);
    // Locked: a second receive of the same numbers fails (not available).
    await expectCode(receiver.receiveDeferredMessages([x.sequenceNumber]), "MessageNotFound");

    await receiver.completeMessage(got[1]);
    await receiver.abandonMessage(got[0]);
    // Abandon keeps a deferred message deferred.
    let peeked = await receiver.peekMessages(10, { fromSequenceNumber: x.sequenceNumber });
    assert.deepEqual(ids(peeked), ["d-abandon"]);
    assert.equal(peeked[0].state, "deferred");
    assert.deepEqual(ids(await receiver.receiveMessages(1, { maxWaitTimeInMs: 1000 })), []);

    const [again] = await receiver.receiveDeferredMessages(y.sequenceNumber);
    assert.equal(again.messageId, "d-abandon");
    assert.equal(again.deliveryCount, 2);
    await receiver.deadLetterMessage(again, { deadLetterReason: "why", deadLetterErrorDescription: "because" });
    assert.deepEqual(await receiver.peekMessages(10, { fromSequenceNumber: x.sequenceNumber }), []);
    const dlq = sb.createReceiver("mgmt-defer", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const dl = await dlq.peekMessages(10, { fromSequenceNumber: x.sequenceNumber });
    assert.deepEqual(ids(dl), ["d-abandon"]);
    assert.equal(dl[0].deadLetterReason, "why");
    assert.equal(dl[0].deadLetterErrorDescription, "because");
    await dlq.close();
    await receiver.close();
  });

  ctx.test("receiveDeferredMessages of a sequence number that is not deferred fails with MessageNotFound", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-defer-2").sendMessages({ messageId: "plain", body: 1 });
    const receiver = sb.createReceiver("mgmt-defer-2", PEEK_LOCK);
    const [peeked] = await receiver.peekMessages(1);
    const err = await expectCode(receiver.receiveDeferredMessages(peeked.sequenceNumber), "MessageNotFound");
    assert.match(err.message, new RegExp(String(peeked.sequenceNumber)));
    // Nothing was taken: the message is still receivable.
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "plain");
    await receiver.completeMessage(m);
    await receiver.close();
  });

  ctx.test("receive-and-delete receiveDeferredMessages deletes; a deferred lock can be renewed", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-defer-rnd").sendMessages([
      { messageId: "rnd", body: 1 },
      { messageId: "renewed", body: 2 },
    ]);
    const receiver = sb.createReceiver("mgmt-defer-rnd", PEEK_LOCK);
    const [a, b] = await receiveExact(receiver, 2);
    await receiver.deferMessage(a);
    await receiver.deferMessage(b);
    const rnd = sb.createReceiver("mgmt-defer-rnd", { receiveMode: "receiveAndDelete" });
    const [gone] = await rnd.receiveDeferredMessages(a.sequenceNumber);
    assert.equal(gone.messageId, "rnd");
    assert.equal(gone.body, 1);
    assert.equal(gone.lockToken, undefined);
    await expectCode(rnd.receiveDeferredMessages(a.sequenceNumber), "MessageNotFound");
    await rnd.close();

    const [d] = await receiver.receiveDeferredMessages(b.sequenceNumber);
    const before = d.lockedUntilUtc.getTime();
    await sleep(1100);
    const after = await receiver.renewMessageLock(d);
    assert.ok(after.getTime() >= before + 1000, `${after.toISOString()} vs ${new Date(before).toISOString()}`);
    await receiver.completeMessage(d);
    assert.deepEqual(await receiver.peekMessages(10, { fromSequenceNumber: a.sequenceNumber }), []);
    await receiver.close();
  });

  ctx.test("settling a deferred message with propertiesToModify changes its application properties", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-modify").sendMessages({
      messageId: "modify", body: 1, applicationProperties: { color: "red", size: 3 },
    });
    const receiver = sb.createReceiver("mgmt-modify", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deferMessage(m);
    let [d] = await receiver.receiveDeferredMessages(m.sequenceNumber);
    await receiver.abandonMessage(d, { color: "blue", added: true });
    [d] = await receiver.receiveDeferredMessages(m.sequenceNumber);
    assert.deepEqual(d.applicationProperties, { color: "blue", size: 3, added: true });
    assert.equal(d.state, "deferred");
    await receiver.deadLetterMessage(d, { deadLetterReason: "r", deadLetterErrorDescription: "d", step: 2 });
    const dlq = sb.createReceiver("mgmt-modify", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const [x] = await receiveExact(dlq, 1);
    assert.equal(x.applicationProperties.step, 2);
    assert.equal(x.applicationProperties.color, "blue");
    assert.equal(x.deadLetterReason, "r");
    await dlq.completeMessage(x);
    await dlq.close();
    await receiver.close();
  });

  ctx.test("completing a deferred message twice fails with MessageLockLost", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-twice").sendMessages({ messageId: "twice", body: 1 });
    const receiver = sb.createReceiver("mgmt-twice", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deferMessage(m);
    const [d] = await receiver.receiveDeferredMessages(m.sequenceNumber);
    await receiver.completeMessage(d);
    await expectCode(receiver.completeMessage(d), "MessageLockLost");
    await receiver.close();
  });

  ctx.test("renewMessageLock extends lockedUntilUtc; an unknown lock is MessageLockLost", async () => {
    const sb = ctx.client();
    await sb.createSender("mgmt-renew").sendMessages({ messageId: "renew", body: 1 });
    const receiver = sb.createReceiver("mgmt-renew", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    const first = m.lockedUntilUtc.getTime();
    await sleep(3000);
    const renewed = await receiver.renewMessageLock(m);
    assert.ok(renewed instanceof Date);
    assert.ok(renewed.getTime() >= first + 2500, `renewed ${renewed.toISOString()} vs first ${new Date(first).toISOString()}`);
    assert.ok(Math.abs(renewed.getTime() - (Date.now() + 5000)) < 1500, `about 5 s ahead: ${renewed.getTime() - Date.now()} ms`);
    assert.equal(m.lockedUntilUtc.getTime(), renewed.getTime());
    // Past the first lock's end, the renewed lock still holds: nobody else gets it, complete works.
    await sleep(Math.max(0, first - Date.now()) + 1000);
    const other = ctx.client().createReceiver("mgmt-renew", PEEK_LOCK);
    assert.deepEqual(ids(await other.receiveMessages(1, { maxWaitTimeInMs: 500 })), []);
    await receiver.completeMessage(m);
    await expectCode(receiver.renewMessageLock(m), "MessageLockLost");
    await other.close();
    await receiver.close();
  });

  ctx.test("batch-delete-messages (raw request) deletes unlocked messages enqueued before a time", async () => {
    const sb = ctx.client();
    const { types } = require("rhea-promise");
    await sb.createSender("mgmt-purge").sendMessages([1, 2, 3, 4].map((i) => ({ messageId: `b${i}`, body: i })));
    const receiver = sb.createReceiver("mgmt-purge", PEEK_LOCK);
    const [locked] = await receiveExact(receiver, 1); // b1 stays locked: not deleted
    const res = await rawManagementRequest(sb, "mgmt-purge", "com.microsoft:batch-delete-messages", {
      "message-count": types.wrap_int(2),
      "enqueued-time-utc": types.wrap_timestamp(new Date(Date.now() + 60000)),
    });
    assert.equal(res.application_properties.statusCode, 200);
    assert.equal(res.body["message-count"], 2);
    let left = await receiver.peekMessages(10, { fromSequenceNumber: locked.sequenceNumber });
    assert.deepEqual(ids(left), ["b1", "b4"]);
    // Nothing enqueued before an old time.
    const none = await rawManagementRequest(sb, "mgmt-purge", "com.microsoft:batch-delete-messages", {
      "message-count": types.wrap_int(100),
      "enqueued-time-utc": types.wrap_timestamp(new Date(Date.now() - 3600 * 1000)),
    });
    assert.equal(none.body["message-count"], 0);
    await receiver.completeMessage(locked);
    left = await receiver.peekMessages(10, { fromSequenceNumber: locked.sequenceNumber });
    assert.deepEqual(ids(left), ["b4"]);
    await receiver.close();
  });

  ctx.test("unknown operations answer 501 and malformed requests 400, and the link stays up", async () => {
    const sb = ctx.client();
    const { types } = require("rhea-promise");
    const call = async (op, body) => {
      try {
        const r = await rawManagementRequest(sb, "mgmt-raw", op, body);
        return { status: r.application_properties.statusCode };
      } catch (e) {
        return { code: e.code, message: e.message };
      }
    };
    // The SB SDK reports conditions it has no code for as GeneralError named after the
    // core-amqp error (amqp:not-implemented -> NotImplementedError, argument-error -> ArgumentError).
    const unknown = await call("com.microsoft:no-such-thing", {});
    assert.match(unknown.message, /^NotImplementedError: .*no-such-thing/, JSON.stringify(unknown));
    // a session operation on a queue without sessions is refused as Service Bus does (amqp:not-allowed)
    const session = await call("com.microsoft:renew-session-lock", { "session-id": "s" });
    assert.match(session.message, /^InvalidOperationError: 'mgmt-raw' has no sessions/, JSON.stringify(session));
    const missing = await call("com.microsoft:peek-message", { "message-count": types.wrap_int(1) });
    assert.match(missing.message, /^ArgumentError: .*'from-sequence-number'/, JSON.stringify(missing));
    const wrong = await call("com.microsoft:peek-message", {
      "from-sequence-number": "one", "message-count": types.wrap_int(1),
    });
    assert.match(wrong.message, /^ArgumentError: .*'from-sequence-number' must be an integer, not string/, JSON.stringify(wrong));
    const badStatus = await call("com.microsoft:update-disposition", {
      "lock-tokens": types.wrap_array([Buffer.alloc(16)], 0x98, undefined), "disposition-status": "eaten",
    });
    assert.match(badStatus.message, /^ArgumentError: .*disposition-status/, JSON.stringify(badStatus));
    const noTokens = await call("com.microsoft:renew-lock", { "lock-tokens": [] });
    assert.match(noTokens.message, /^ArgumentError: .*lock-tokens/, JSON.stringify(noTokens));
    const lost = await call("com.microsoft:renew-lock", {
      "lock-tokens": types.wrap_array([Buffer.alloc(16, 7)], 0x98, undefined),
    });
    assert.equal(lost.code, "MessageLockLost", JSON.stringify(lost));
    // Still usable.
    const receiver = sb.createReceiver("mgmt-raw", PEEK_LOCK);
    assert.deepEqual(await receiver.peekMessages(1), []);
    await receiver.close();
  });

  // Last: moving the emulator's clock makes every queue of this suite older.
  ctx.test("schedules and lock renewals follow the emulator's movable clock", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("mgmt-clock");
    const inAnHour = new Date(Date.now() + 3600 * 1000);
    const [seq] = await sender.scheduleMessages({ messageId: "hour", body: "h" }, inAnHour);
    const receiver = sb.createReceiver("mgmt-clock", PEEK_LOCK);
    assert.deepEqual(ids(await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 })), []);
    await advance(ctx.emu, "PT1H1M");
    const [m] = await receiveExact(receiver, 1, 15000);
    assert.equal(m.messageId, "hour");
    assert.ok(m.sequenceNumber.greaterThan(seq));
    // The lock runs on the moved clock, and a renewal extends it from the moved now.
    const { now } = await clockNow(ctx.emu);
    assert.ok(Math.abs(m.lockedUntilUtc.getTime() - (now.getTime() + 60000)) < 3000, `${m.lockedUntilUtc.toISOString()} vs ${now.toISOString()}`);
    await advance(ctx.emu, "PT30S");
    const renewed = await receiver.renewMessageLock(m);
    const later = (await clockNow(ctx.emu)).now;
    assert.ok(Math.abs(renewed.getTime() - (later.getTime() + 60000)) < 3000, `${renewed.toISOString()} vs ${later.toISOString()}`);
    await receiver.completeMessage(m);
    await sender.close();
    await receiver.close();
  });
});
