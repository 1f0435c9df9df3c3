// Scheduled sends (x-opt-scheduled-enqueue-time on sendMessages) and duplicate detection,
// both on the emulator's clock (POST /$sbemu/clock/advance).
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { clockNow, advance, expectNothing, describe, pollReceive } = require("./qs_util");

const MIN = 60000;
const queues = [
  { name: "sched" },
  { name: "dedup", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" } },
  { name: "dedup-batch", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" } },
  { name: "no-dedup" },
];

emulatorSuite("js scheduled sends and duplicate detection", { queues }, (ctx) => {
  ctx.test("duplicate detection: messageId d1 sent twice is accepted twice and arrives once", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("dedup");
    await sender.sendMessages({ messageId: "d1", body: "first" });
    await sender.sendMessages({ messageId: "d1", body: "second" }); // must not throw: a duplicate is acknowledged
    await sender.sendMessages({ messageId: "d2", body: "other id" });
    const receiver = sb.createReceiver("dedup", PEEK_LOCK);
    const got = await pollReceive(receiver, 3, 4000);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.body}`), ["d1:first", "d2:other id"],
      "expected the first d1 and d2 only");
    for (const m of got) await receiver.completeMessage(m);

    // Completed, but still within the 1 min window: d1 is still a duplicate.
    await sender.sendMessages({ messageId: "d1", body: "within window after complete" });
    await expectNothing(receiver, "dedup: d1 re-sent within the window after the first was completed");

    // Past the window: d1 is new again.
    await advance(ctx.emu, "PT2M");
    await sender.sendMessages({ messageId: "d1", body: "after window" });
    const [m] = await receiveExact(receiver, 1);
    assert.equal(`${m.messageId}:${m.body}`, "d1:after window", `after the window, d1 should arrive again`);
    await receiver.completeMessage(m);
    await expectNothing(receiver, "dedup at the end", 1000);
    await receiver.close();
    await sender.close();
  });

  ctx.test("duplicate detection within one batch: the second d-b is dropped", async () => {
    const sb = ctx.client();
    await sb.createSender("dedup-batch").sendMessages([
      { messageId: "d-a", body: 1 },
      { messageId: "d-b", body: 2 },
      { messageId: "d-b", body: 3 },
      { messageId: "d-c", body: 4 },
    ]);
    const receiver = sb.createReceiver("dedup-batch", PEEK_LOCK);
    const got = await pollReceive(receiver, 4, 4000);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.body}`), ["d-a:1", "d-b:2", "d-c:4"]);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
  });

  ctx.test("a queue without duplicate detection keeps both messages with the same id", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("no-dedup");
    await sender.sendMessages({ messageId: "d1", body: "first" });
    await sender.sendMessages({ messageId: "d1", body: "second" });
    const receiver = sb.createReceiver("no-dedup", PEEK_LOCK);
    const got = await receiveExact(receiver, 2);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.body}`), ["d1:first", "d1:second"]);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    await sender.close();
  });

  // Runs last, and attaches every link before moving the clock: the moves add up to more
  // than an hour (a SAS token's lifetime; see qs_clock for a new client after such a move).
  ctx.test("scheduled 1 h ahead (emulator clock): invisible at +30 min, arrives after +61 min; TTL counts from the enqueue", async () => {
    const sb = ctx.client();
    const { now } = await clockNow(ctx.emu);
    const at = new Date(now.getTime() + 60 * MIN);
    await sb.createSender("sched").sendMessages([
      { messageId: "later", body: "scheduled", scheduledEnqueueTimeUtc: at },
      { messageId: "s-ttl", body: "scheduled, TTL 10 min", scheduledEnqueueTimeUtc: at, timeToLive: 10 * MIN },
      { messageId: "now", body: "immediate" },
    ]);
    const receiver = sb.createReceiver("sched", PEEK_LOCK);
    const [first] = await receiveExact(receiver, 1);
    assert.equal(first.messageId, "now", `only the unscheduled message may arrive now, got ${describe(first)}`);
    await receiver.completeMessage(first);
    await expectNothing(receiver, "sched right after sending (the scheduled messages are due in 1 h)");

    await advance(ctx.emu, "PT30M");
    await expectNothing(receiver, "sched at +30 min (due at +60 min)");

    // +61 min: had s-ttl's TTL counted from the send, it would have expired 51 min ago.
    await advance(ctx.emu, "PT31M");
    const got = await pollReceive(receiver, 2, 5000);
    assert.deepEqual(got.map((m) => m.messageId), ["later", "s-ttl"],
      `expected both scheduled messages, in order, within 5 s of advancing past their time; got ${got.map(describe)}`);
    const c = await clockNow(ctx.emu);
    for (const m of got) {
      assert.ok(m.scheduledEnqueueTimeUtc instanceof Date, `${m.messageId}: scheduledEnqueueTimeUtc missing on the received message`);
      assert.equal(m.scheduledEnqueueTimeUtc.getTime(), at.getTime(),
        `${m.messageId}: scheduledEnqueueTimeUtc ${m.scheduledEnqueueTimeUtc.toISOString()} should be ${at.toISOString()}`);
      assert.ok(m.enqueuedTimeUtc.getTime() >= at.getTime() - 1000 && m.enqueuedTimeUtc.getTime() <= c.now.getTime() + 1000,
        `${m.messageId}: enqueuedTimeUtc ${m.enqueuedTimeUtc.toISOString()} should be the activation time: between the scheduled time ${at.toISOString()} and the clock's now ${c.nowText}`);
      assert.ok(m.sequenceNumber.greaterThan(first.sequenceNumber),
        `${m.messageId}: an activated scheduled message gets a sequence number after "now" (${first.sequenceNumber}), got ${m.sequenceNumber}`);
    }
    const [later, sttl] = got;
    assert.equal(later.body, "scheduled");
    assert.equal(sttl.timeToLive, 10 * MIN, `s-ttl: timeToLive should stay 10 min, got ${sttl.timeToLive}`);
    assert.ok(sttl.expiresAtUtc.getTime() >= at.getTime() + 10 * MIN - 1000,
      `s-ttl: expiresAtUtc ${sttl.expiresAtUtc.toISOString()} should be at least the scheduled time + 10 min (${new Date(at.getTime() + 10 * MIN).toISOString()})`);
    await receiver.completeMessage(later);
    await receiver.abandonMessage(sttl);
    // And s-ttl does expire 10 min after its enqueue: +72 min.
    await advance(ctx.emu, "PT11M");
    await expectNothing(receiver, "sched 11 min after activation (s-ttl has TTL 10 min)");
    await receiver.close();
  });
});
