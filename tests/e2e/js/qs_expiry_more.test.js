// More expiry and scheduling on the emulator's clock: many expired messages ahead of a live
// one, a sweep of a large backlog, space freed by expiry, schedules in the past, a waiting
// subscriber woken by activation, deferred messages and expiry.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { SWEEP_GRACE_MS, sleep, clockNow, advance, expectNothing, describe, pollReceive, drain, rowsGone } = require("./qs_util");

const DLQ = { ...PEEK_LOCK, subQueueType: "deadLetter" };
const queues = [
  { name: "exp-ahead" },
  { name: "exp-backlog", properties: { DeadLetteringOnMessageExpiration: true } },
  { name: "exp-space", properties: { MaxSizeInMegabytes: 1 } },
  { name: "sched-past" },
  { name: "sched-wake" },
  { name: "exp-race", properties: { DeadLetteringOnMessageExpiration: true } },
  { name: "ttl-days", properties: { DefaultMessageTimeToLive: "P14D" } },
  { name: "defer-exp", properties: { DeadLetteringOnMessageExpiration: true, DefaultMessageTimeToLive: "PT1M" } },
];

emulatorSuite("js more expiry and scheduling", { queues }, (ctx) => {
  ctx.test("60 expired messages ahead of a live one do not hold it back: receive(1) gets the live one at once", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("exp-ahead");
    const batch = await sender.createMessageBatch();
    for (let i = 0; i < 60; i++) {
      assert.ok(batch.tryAddMessage({ messageId: `old-${i}`, body: i, timeToLive: 10000 }), `batch full at ${i}`);
    }
    await sender.sendMessages(batch);
    await sender.sendMessages({ messageId: "live", body: "default TTL" });
    await advance(ctx.emu, "PT20S");
    const receiver = sb.createReceiver("exp-ahead", PEEK_LOCK);
    const t0 = Date.now();
    const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
    assert.deepEqual(got.map((m) => m.messageId), ["live"], `receive(1) after 60 expired messages got ${got.map(describe)}`);
    assert.ok(Date.now() - t0 < 4000, `the live message took ${Date.now() - t0} ms to arrive`);
    await receiver.completeMessage(got[0]);
    await expectNothing(receiver, "exp-ahead after the live message", 1000);
    await receiver.close();
  });

  ctx.test("a backlog of 300 expired messages all reach the DLQ by the background sweep", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("exp-backlog");
    for (let b = 0; b < 3; b++) {
      await sender.sendMessages(Array.from({ length: 100 }, (_, i) => ({ messageId: `bl-${b * 100 + i}`, body: "x", timeToLive: 10000 })));
    }
    await advance(ctx.emu, "PT20S");
    await sleep(SWEEP_GRACE_MS + 1000);
    const dlq = sb.createReceiver("exp-backlog", { receiveMode: "receiveAndDelete", subQueueType: "deadLetter" });
    const got = [];
    const deadline = Date.now() + 20000;
    while (got.length < 300 && Date.now() < deadline) {
      const b = await dlq.receiveMessages(300 - got.length, { maxWaitTimeInMs: 2000 });
      if (b.length === 0 && got.length > 0) break;
      got.push(...b);
    }
    await dlq.close();
    assert.equal(got.length, 300, `expected all 300 expired messages in the DLQ, got ${got.length}`);
    assert.deepEqual(new Set(got.map((m) => m.deadLetterReason)), new Set(["TTLExpiredException"]));
    assert.deepEqual(got.map((m) => m.messageId).sort(), Array.from({ length: 300 }, (_, i) => `bl-${i}`).sort(), "each expired message exactly once");
    assert.deepEqual((await drain(sb, "exp-backlog", { timeoutMs: 1000 })).map(describe), [], "exp-backlog itself must be empty");
  });

  ctx.test("expired (dropped) messages free their space in a MaxSizeInMegabytes 1 queue", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("exp-space");
    const payload = Buffer.alloc(200 * 1024, 0x62);
    for (let i = 0; i < 4; i++) await sender.sendMessages({ messageId: `short-${i}`, body: payload, timeToLive: 10000 });
    await advance(ctx.emu, "PT20S");
    // the sweep drops them with no receiver looking: wait for their rows to go
    assert.deepEqual(await rowsGone(ctx.emu, "exp-space"), [], "the expired messages' rows are still there");
    // 800 KB expired: if it still counted, 4 more 200 KB messages could not fit in 1 MB.
    for (let i = 0; i < 4; i++) {
      try {
        await sender.sendMessages({ messageId: `fresh-${i}`, body: payload });
      } catch (e) {
        const err = e instanceof AggregateError && e.errors && e.errors.length ? e.errors[e.errors.length - 1] : e;
        assert.fail(`send fresh-${i} (200 KB) after 4 × 200 KB expired failed with ${err.code}: ${err.message}; expired messages must free their space`);
      }
    }
    const receiver = sb.createReceiver("exp-space", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(receiver, 4);
    assert.deepEqual(got.map((m) => m.messageId), [0, 1, 2, 3].map((i) => `fresh-${i}`));
    await receiver.close();
    await sender.close();
  });

  ctx.test("a message scheduled in the past (emulator clock) is delivered at once", async () => {
    const sb = ctx.client();
    const { now } = await clockNow(ctx.emu);
    const at = new Date(now.getTime() - 60000);
    await sb.createSender("sched-past").sendMessages({ messageId: "past", body: "x", scheduledEnqueueTimeUtc: at });
    const receiver = sb.createReceiver("sched-past", PEEK_LOCK);
    const got = await pollReceive(receiver, 1, 4000);
    assert.deepEqual(got.map((m) => m.messageId), ["past"], `a schedule 1 min in the past should be delivered at once, got ${got.map(describe)}`);
    await receiver.completeMessage(got[0]);
    await receiver.close();
  });

  ctx.test("a subscriber already waiting gets a scheduled message when the clock passes its time", async () => {
    const sb = ctx.client();
    const receiver = sb.createReceiver("sched-wake", PEEK_LOCK);
    const got = [];
    let wake;
    const arrived = new Promise((r) => (wake = r));
    receiver.subscribe({
      async processMessage(m) {
        got.push(m.messageId);
        await receiver.completeMessage(m);
        wake();
      },
      async processError() {},
    }, { autoCompleteMessages: false });
    await sleep(500); // the subscriber's credit is out
    const { now } = await clockNow(ctx.emu);
    await sb.createSender("sched-wake").sendMessages({ messageId: "woken", body: "x", scheduledEnqueueTimeUtc: new Date(now.getTime() + 10 * 60000) });
    await sleep(1500);
    assert.deepEqual(got, [], "nothing may arrive before the scheduled time");
    await advance(ctx.emu, "PT11M");
    const t0 = Date.now();
    const timeout = sleep(SWEEP_GRACE_MS + 2500).then(() => "timeout");
    const r = await Promise.race([arrived, timeout]);
    await receiver.close();
    assert.notEqual(r, "timeout", `the waiting subscriber did not get the scheduled message within ${Date.now() - t0} ms of the clock passing its time`);
    assert.deepEqual(got, ["woken"]);
  });

  ctx.test("expiry racing a busy subscriber: each of 300 messages is either completed or dead-lettered, exactly once", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("exp-race");
    for (let b = 0; b < 3; b++) {
      await sender.sendMessages(Array.from({ length: 100 }, (_, i) => ({ messageId: `er-${b * 100 + i}`, body: "x", timeToLive: 20000 })));
    }
    await sender.close();
    const receiver = sb.createReceiver("exp-race", PEEK_LOCK);
    const completed = [];
    const errors = [];
    let advanced = false;
    let settle;
    const idle = () => new Promise((r) => (settle = r));
    let quiet = idle();
    let timer = null;
    receiver.subscribe({
      async processMessage(m) {
        await receiver.completeMessage(m);
        completed.push(m.messageId);
        if (completed.length === 40 && !advanced) {
          advanced = true;
          await advance(ctx.emu, "PT30S"); // the rest expire while this subscriber keeps receiving
        }
        clearTimeout(timer);
        timer = setTimeout(() => settle(), 3000);
      },
      async processError(args) {
        errors.push(`${args.errorSource}: ${args.error.code || ""} ${args.error.message}`);
      },
    }, { autoCompleteMessages: false, maxConcurrentCalls: 4 });
    await Promise.race([quiet, sleep(40000)]);
    clearTimeout(timer);
    await receiver.close();
    assert.ok(advanced, `the subscriber completed only ${completed.length} messages, never reached 40 (errors: ${errors})`);
    await sleep(SWEEP_GRACE_MS);
    const dlq = sb.createReceiver("exp-race", { receiveMode: "receiveAndDelete", subQueueType: "deadLetter" });
    const dead = [];
    for (;;) {
      const b = await dlq.receiveMessages(300, { maxWaitTimeInMs: 1500 });
      if (b.length === 0) break;
      dead.push(...b.map((m) => m.messageId));
    }
    await dlq.close();
    const both = completed.filter((id) => dead.includes(id));
    assert.deepEqual(both, [], "messages both completed and dead-lettered");
    const dupC = completed.filter((id, i) => completed.indexOf(id) !== i);
    assert.deepEqual(dupC, [], "messages completed twice");
    const all = [...completed, ...dead].sort();
    assert.equal(all.length, 300, `completed ${completed.length} + dead-lettered ${dead.length} should be 300`);
    assert.deepEqual(all, Array.from({ length: 300 }, (_, i) => `er-${i}`).sort());
    assert.ok(dead.length > 0, "the clock moved 30 s past a 20 s TTL with messages left: some must have expired");
    assert.deepEqual(errors, []);
  });

  ctx.test("TTLs beyond 2^31 ms: P14D caps 30 days and 20 days to 1209600000 ms, keeps 10 days; 11 days later only the 10-day one is gone", async () => {
    const DAY = 86400000;
    const sb = ctx.client();
    await sb.createSender("ttl-days").sendMessages([
      { messageId: "d30", body: 30, timeToLive: 30 * DAY },
      { messageId: "d20", body: 20, timeToLive: 20 * DAY },
      { messageId: "d10", body: 10, timeToLive: 10 * DAY },
    ]);
    const receiver = sb.createReceiver("ttl-days", PEEK_LOCK);
    const got = await receiveExact(receiver, 3);
    const ttl = Object.fromEntries(got.map((m) => [m.messageId, m.timeToLive]));
    assert.deepEqual(ttl, { d30: 14 * DAY, d20: 14 * DAY, d10: 10 * DAY }, "effective TTLs with DefaultMessageTimeToLive P14D");
    for (const m of got) await receiver.abandonMessage(m);
    await advance(ctx.emu, "P11D");
    const left = await pollReceive(receiver, 3, 3000);
    assert.deepEqual(left.map((m) => m.messageId).sort(), ["d20", "d30"], `after 11 days, got ${left.map(describe)}`);
    for (const m of left) await receiver.completeMessage(m);
    await receiver.close();
  });

  ctx.test("a deferred message is not dead-lettered when its TTL passes, nor delivered to a plain receive", async () => {
    const sb = ctx.client();
    await sb.createSender("defer-exp").sendMessages([
      { messageId: "deferred", body: "TTL 1 min" },
      { messageId: "plain", body: "TTL 1 min" },
    ]);
    const receiver = sb.createReceiver("defer-exp", PEEK_LOCK);
    const got = await receiveExact(receiver, 2);
    const d = got.find((m) => m.messageId === "deferred");
    const p = got.find((m) => m.messageId === "plain");
    await receiver.deferMessage(d);
    await receiver.abandonMessage(p);
    await advance(ctx.emu, "PT2M");
    await sleep(SWEEP_GRACE_MS);
    await expectNothing(receiver, "defer-exp after the TTL (the deferred message is only reachable by sequence number)");
    await receiver.close();
    const inDlq = await drain(sb, "defer-exp", { dlq: true, timeoutMs: 2000 });
    assert.deepEqual(inDlq.map((m) => m.messageId), ["plain"],
      `only the plain (abandoned) message should be dead-lettered on expiry; the deferred one must not be: got ${inDlq.map(describe)}`);
  });
});
