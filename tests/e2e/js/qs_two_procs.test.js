// Two sbemu processes on one PostgreSQL (the scale-out the design promises): their background
// sweeps must not double anything. Expired messages reach the DLQ once, scheduled messages
// are activated once, and duplicate detection holds across the processes. Each process has
// its own clock offset, so both are advanced by the same amounts.
"use strict";

const assert = require("node:assert/strict");
const path = require("node:path");
const { describe, before, after, test } = require("node:test");
const { ServiceBusClient } = require("@azure/service-bus");
const { Emulator } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { SWEEP_GRACE_MS, sleep, clockNow, advance } = require("./qs_util");

const queues = [
  { name: "tp-ttl", properties: { DeadLetteringOnMessageExpiration: true } },
  { name: "tp-sched" },
  { name: "tp-dedup", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT5M" } },
];

/** Receives in receiveAndDelete mode until 2 s pass with nothing; returns messageIds. */
async function takeAll(client, queue, dlq = false) {
  const r = client.createReceiver(queue, { receiveMode: "receiveAndDelete", ...(dlq ? { subQueueType: "deadLetter" } : {}) });
  const ids = [];
  for (;;) {
    const b = await r.receiveMessages(200, { maxWaitTimeInMs: 2000 });
    if (b.length === 0) break;
    ids.push(...b.map((m) => m.messageId));
  }
  await r.close();
  return ids;
}

function dupes(ids) {
  return ids.filter((id, i) => ids.indexOf(id) !== i);
}

describe("js two processes on one database", () => {
  const one = new Emulator({ name: "two-procs-1", queues });
  let two = null;
  let c1 = null;
  let c2 = null;
  let started = false;
  /** Polls until the second process shows the first one's clock offset; returns whether it did. */
  const agree = async (timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [a, b] = [await clockNow(one), await clockNow(two)];
      if (a.offsetMs === b.offsetMs) return { ok: true, a, b };
      if (Date.now() > deadline) return { ok: false, a, b };
      await sleep(100);
    }
  };
  /** Advances the namespace's clock through the first process. Should the second not follow
   * (a per-process clock: the last test's subject), it is moved by hand so that the other
   * tests check only what they are about. */
  const advanceBoth = async (iso) => {
    await advance(one, iso);
    const r = await agree(3000);
    if (!r.ok && r.a.offsetMs > r.b.offsetMs) await advance(two, `PT${((r.a.offsetMs - r.b.offsetMs) / 1000).toFixed(3)}S`);
  };
  const guarded = (name, fn, timeout = 60000) => test(name, { timeout }, async () => {
    if (!started) throw new Error("the emulators did not start");
    try {
      await fn();
    } catch (e) {
      one.failed = true;
      one.dumpLog(name);
      if (two) {
        two.failed = true;
        two.dumpLog(name);
      }
      throw e;
    }
  });

  before(async () => {
    await one.start();
    const conninfo = `host=${path.join(one.dataDir, "pg", "run")} user=sbemu dbname=sbemu`;
    two = new Emulator({ name: "two-procs-2", queues, args: ["--postgres", conninfo] });
    await two.start();
    const retryOptions = { maxRetries: 1, retryDelayInMs: 200, maxRetryDelayInMs: 1000, timeoutInMs: 10000 };
    c1 = new ServiceBusClient(one.connectionString, { retryOptions });
    c2 = new ServiceBusClient(two.connectionString, { retryOptions });
    const [a, b] = [await clockNow(one), await clockNow(two)];
    assert.ok(Math.abs(a.now - b.now) < 2000, `the two clocks disagree at start: ${a.nowText} vs ${b.nowText}`);
    started = true;
  }, { timeout: 90000 });

  guarded("200 expired messages reach the DLQ exactly once with two sweepers", async () => {
    const s = c1.createSender("tp-ttl");
    for (let b = 0; b < 2; b++) {
      await s.sendMessages(Array.from({ length: 100 }, (_, i) => ({ messageId: `t-${b * 100 + i}`, body: "x", timeToLive: 10000 })));
    }
    await s.close();
    await advanceBoth("PT20S");
    await sleep(SWEEP_GRACE_MS + 1000);
    const dead = await takeAll(c2, "tp-ttl", true);
    assert.deepEqual(dupes(dead), [], "messages dead-lettered more than once");
    assert.equal(dead.length, 200, `expected 200 messages in the DLQ, got ${dead.length}`);
    assert.deepEqual(await takeAll(c1, "tp-ttl"), [], "tp-ttl itself must be empty");
  });

  guarded("50 scheduled messages are activated exactly once with two sweepers", async () => {
    const { now } = await clockNow(two);
    const at = new Date(now.getTime() + 10 * 60000);
    const s = c2.createSender("tp-sched");
    await s.sendMessages(Array.from({ length: 50 }, (_, i) => ({ messageId: `s-${i}`, body: i, scheduledEnqueueTimeUtc: at })));
    await s.close();
    const early = c1.createReceiver("tp-sched", PEEK_LOCK);
    assert.deepEqual((await early.receiveMessages(5, { maxWaitTimeInMs: 1500 })).map((m) => m.messageId), [], "nothing before the time");
    await early.close();
    await advanceBoth("PT11M");
    await sleep(SWEEP_GRACE_MS + 1000);
    const got = await takeAll(c1, "tp-sched");
    assert.deepEqual(dupes(got), [], "scheduled messages activated more than once");
    assert.deepEqual(got.slice().sort(), Array.from({ length: 50 }, (_, i) => `s-${i}`).sort());
  });

  guarded("duplicate detection holds across the processes: the same 20 ids sent through both arrive once each", async () => {
    const s1 = c1.createSender("tp-dedup");
    const s2 = c2.createSender("tp-dedup");
    for (let i = 0; i < 20; i++) {
      await Promise.all([s1.sendMessages({ messageId: `d-${i}`, body: 1 }), s2.sendMessages({ messageId: `d-${i}`, body: 2 })]);
    }
    await s1.close();
    await s2.close();
    const got = await takeAll(c2, "tp-dedup");
    assert.deepEqual(got.slice().sort(), Array.from({ length: 20 }, (_, i) => `d-${i}`).sort(), "each id exactly once");
  });

  guarded("the clock is one per namespace: advancing it through one process moves the other's too (within 3 s)", async () => {
    const [a0, b0] = [await clockNow(one), await clockNow(two)];
    assert.equal(a0.offsetMs, b0.offsetMs, "the two processes disagree before the test");
    await advance(one, "PT7M");
    const r = await agree(3000);
    assert.equal(r.a.offsetMs - a0.offsetMs, 7 * 60000, "the process that was asked moved by 7 min");
    assert.ok(r.ok,
      `the other process sharing the database should see the same time within 3 s (DESIGN: N emulators on one database behave as one namespace); ` +
      `its offset went ${b0.offsetMs} → ${r.b.offsetMs} while the first one's went ${a0.offsetMs} → ${r.a.offsetMs}`);
    assert.ok(Math.abs(r.a.now - r.b.now) < 2000, `the two processes' now differ: ${r.a.nowText} vs ${r.b.nowText}`);
  });

  test("both emulators stop cleanly on SIGTERM (exit 0)", { timeout: 60000 }, async () => {
    await Promise.allSettled([c1 && c1.close(), c2 && c2.close()]);
    if (!started) throw new Error("the emulators did not start");
    await two.stop(); // the one using the other's database goes first
    await one.stop();
  });

  after(async () => {
    await Promise.allSettled([c1 && c1.close(), c2 && c2.close()]);
    if (two) await two.cleanup();
    await one.cleanup();
  });
});
