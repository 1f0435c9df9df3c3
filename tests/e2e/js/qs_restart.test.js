// Queue-semantics state lives in PostgreSQL: duplicate-detection history, pending scheduled
// messages and TTLs survive a restart of sbemu (SIGTERM, start again on the same data dir).
// The clock is not moved before the restart, so the test holds whether or not the clock's
// offset itself is kept.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { SWEEP_GRACE_MS, clockNow, advance, expectNothing, describe, pollReceive } = require("./qs_util");

const queues = [
  { name: "rs-dedup", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT10M" } },
  { name: "rs-sched" },
  { name: "rs-ttl", properties: { DeadLetteringOnMessageExpiration: true } },
];

emulatorSuite("js queue semantics across a restart", { queues }, (ctx) => {
  let scheduledFor = null;

  ctx.test("before the restart: d1 sent, a message scheduled 10 min ahead, a message with TTL 30 s", async () => {
    const sb = ctx.client();
    await sb.createSender("rs-dedup").sendMessages({ messageId: "d1", body: "before restart" });
    const { now } = await clockNow(ctx.emu);
    scheduledFor = new Date(now.getTime() + 10 * 60000);
    await sb.createSender("rs-sched").sendMessages({ messageId: "later", body: "x", scheduledEnqueueTimeUtc: scheduledFor });
    await sb.createSender("rs-ttl").sendMessages({ messageId: "short", body: "x", timeToLive: 30000 });
    await sb.close();
    await ctx.emu.stop();
    await ctx.emu.start();
  }, 90000);

  ctx.test("duplicate-detection history survives the restart: d1 re-sent is dropped", async () => {
    const sb = ctx.client();
    await sb.createSender("rs-dedup").sendMessages({ messageId: "d1", body: "after restart" });
    const r = sb.createReceiver("rs-dedup", PEEK_LOCK);
    const got = await pollReceive(r, 2, 4000);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.body}`), ["d1:before restart"]);
    await r.completeMessage(got[0]);
    await r.close();
  });

  ctx.test("a scheduled message survives the restart: still invisible, then delivered after its time", async () => {
    assert.ok(scheduledFor, "the first test did not run");
    const sb = ctx.client();
    const r = sb.createReceiver("rs-sched", PEEK_LOCK);
    await expectNothing(r, "rs-sched right after the restart (due in ~10 min)");
    await advance(ctx.emu, "PT11M");
    const got = await pollReceive(r, 1, 5000);
    assert.deepEqual(got.map((m) => m.messageId), ["later"], `expected the scheduled message after +11 min, got ${got.map(describe)}`);
    await r.completeMessage(got[0]);
    await r.close();
  });

  ctx.test("a TTL set before the restart still expires (to the DLQ) after it", async () => {
    const sb = ctx.client();
    const dlq = sb.createReceiver("rs-ttl", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const got = await pollReceive(dlq, 1, SWEEP_GRACE_MS + 3000);
    assert.equal(got.length, 1, `expected "short" (TTL 30 s, the clock is 11 min on) in rs-ttl's DLQ, got ${got.map(describe)}`);
    assert.equal(got[0].messageId, "short");
    assert.equal(got[0].deadLetterReason, "TTLExpiredException");
    await dlq.completeMessage(got[0]);
    await dlq.close();
  });
});
