// A topic stores a plain message once (migration 018, sql/store_log.h): the
// copies that differ only in their subscription are one topic_log entry, and
// each subscription takes its own from a cursor. The first suite records the
// story (the default: the statements' story twins), the pair runs the plain
// statements (--story off). What a client sees must not change: peek-lock, abandon, receive-and-delete, peek,
// counts, TTL expiry into the dead-letter queue, reset, and two emulators on
// one database each taking a message once.
"use strict";

const assert = require("node:assert/strict");
const Long = require("long");
const { emulatorSuite, emulatorPairSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { psql, expectNothing } = require("./qs_util");
const { sqlRule } = require("./topics_util");
const { adminClient, rawRequest } = require("./admin_util");

/** A fresh object each time: the SDK deletes receiveMode from the options it is given. */
const RECEIVE_AND_DELETE = () => ({ receiveMode: "receiveAndDelete" });
const STORY_OFF = ["--story", "off"];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const topics = [
  {
    name: "t-log",
    subscriptions: [
      { name: "lock" },
      { name: "rnd" },
      { name: "peek" },
      { name: "acted", rules: [sqlRule("all", "1=1", "SET acted = 'yes'")] },
    ],
  },
  {
    name: "t-ttl",
    subscriptions: [
      { name: "dlq", properties: { DeadLetteringOnMessageExpiration: true } },
      { name: "drop" },
    ],
  },
  { name: "t-reset", subscriptions: [{ name: "a" }, { name: "b" }] },
];

const idOf = (emu, path) => psql(emu, `SELECT id FROM entities WHERE path = '${path}'`);
const logEntries = (emu, topic) => Number(psql(emu, `SELECT count(*) FROM topic_log WHERE topic_id = ${idOf(emu, topic)}`));
const rowsIn = (emu, path) => Number(psql(emu, `SELECT count(*) FROM messages WHERE entity_id = ${idOf(emu, path)}`));
const sub = (topic, name) => `${topic}/Subscriptions/${name}`;

async function send(client, topic, n, extra = {}) {
  const sender = client.createSender(topic);
  const batch = [];
  for (let i = 0; i < n; i++) batch.push({ body: `m${i}`, messageId: `${topic}-${i}`, ...extra });
  await sender.sendMessages(batch);
  await sender.close();
}

async function waitFor(what, fn, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

emulatorSuite("js topics: one log entry per message", { topics }, (ctx) => {
  ctx.test("10 sends to 4 subscriptions: 10 log entries; the copy a rule action changed is a row of its own", async () => {
    const sb = ctx.client();
    await send(sb, "t-log", 10);
    assert.equal(logEntries(ctx.emu, "t-log"), 10);
    for (const s of ["lock", "rnd", "peek"]) assert.equal(rowsIn(ctx.emu, sub("t-log", s)), 0, `${s} holds rows`);
    assert.equal(rowsIn(ctx.emu, sub("t-log", "acted")), 10);
    const subs = psql(ctx.emu, `SELECT DISTINCT array_length(subs, 1) FROM topic_log WHERE topic_id = ${idOf(ctx.emu, "t-log")}`);
    assert.equal(subs, "3");
  });

  ctx.test("the counts include what is still in the log", async () => {
    const admin = adminClient(ctx.emu);
    const p = await admin.getSubscriptionRuntimeProperties("t-log", "rnd");
    assert.equal(p.activeMessageCount, 10);
    assert.equal(p.totalMessageCount, 10);
    const a = await admin.getSubscriptionRuntimeProperties("t-log", "acted");
    assert.equal(a.activeMessageCount, 10);
  });

  ctx.test("peek-lock from the log: locked, abandoned, received again with delivery count 1, completed", async () => {
    const sb = ctx.client();
    const r = sb.createReceiver("t-log", "lock", PEEK_LOCK);
    const first = await receiveExact(r, 10);
    const topicSeqs = first.map((m) => m.sequenceNumber.toNumber()).sort((x, y) => x - y);
    assert.deepEqual(first.map((m) => m.deliveryCount), Array(10).fill(0));
    assert.equal(rowsIn(ctx.emu, sub("t-log", "lock")), 10, "each locked message is a row");
    for (const m of first.slice(0, 5)) await r.completeMessage(m);
    for (const m of first.slice(5)) await r.abandonMessage(m);
    const again = await receiveExact(r, 5);
    assert.deepEqual(again.map((m) => m.deliveryCount), Array(5).fill(1));
    assert.deepEqual(again.map((m) => m.body).sort(), first.slice(5).map((m) => m.body).sort());
    for (const m of again) await r.completeMessage(m);
    await expectNothing(r, "t-log/lock after completing everything", 1000);
    await r.close();
    // the copies in the other subscriptions carry the same (the topic's) sequence numbers
    const rnd = sb.createReceiver("t-log", "rnd", RECEIVE_AND_DELETE());
    const taken = await receiveExact(rnd, 10);
    assert.deepEqual(taken.map((m) => m.sequenceNumber.toNumber()).sort((x, y) => x - y), topicSeqs);
    assert.deepEqual(taken.map((m) => m.body).sort(), first.map((m) => m.body).sort());
    assert.deepEqual(taken.map((m) => m.messageId).sort(), first.map((m) => m.messageId).sort());
    await expectNothing(rnd, "t-log/rnd after taking all", 1000);
    await rnd.close();
    assert.equal(rowsIn(ctx.emu, sub("t-log", "rnd")), 0, "receive-and-delete from the log wrote no row");
    // the story (recorded in this suite) tells of copies taken from the log as of any other
    const res = await rawRequest(ctx.emu, `$sbemu/story?messageId=${encodeURIComponent("t-log-0")}`);
    assert.equal(res.status, 200, res.body);
    const told = JSON.parse(res.body).events.map((e) => `${e.kind} ${e.entity}`);
    for (const e of ["routed t-log/Subscriptions/lock", "routed t-log/Subscriptions/peek", "locked t-log/Subscriptions/lock",
      "completed t-log/Subscriptions/lock", "received-and-deleted t-log/Subscriptions/rnd"]) assert.ok(told.includes(e), `${e}: ${told}`);
  });

  ctx.test("peek sees the log's messages; receiving after it still takes each once", async () => {
    const sb = ctx.client();
    const r = sb.createReceiver("t-log", "peek", PEEK_LOCK);
    const peeked = await r.peekMessages(20, { fromSequenceNumber: Long.fromNumber(0) });
    assert.equal(peeked.length, 10);
    const got = await receiveExact(r, 10);
    assert.deepEqual(got.map((m) => m.body).sort(), peeked.map((m) => m.body).sort());
    for (const m of got) await r.completeMessage(m);
    await expectNothing(r, "t-log/peek after completing", 1000);
    await r.close();
    const a = sb.createReceiver("t-log", "acted", RECEIVE_AND_DELETE());
    const acted = await receiveExact(a, 10);
    assert.deepEqual(acted.map((m) => m.applicationProperties.acted), Array(10).fill("yes"));
    await a.close();
  });

  ctx.test("once every subscription took its copies the sweep cuts the log", async () => {
    await waitFor("t-log's log emptied", () => logEntries(ctx.emu, "t-log") === 0);
    const admin = adminClient(ctx.emu);
    for (const s of ["lock", "rnd", "peek", "acted"]) {
      const p = await admin.getSubscriptionRuntimeProperties("t-log", s);
      assert.equal(p.activeMessageCount, 0, s);
    }
  });

  ctx.test("expiry: a logged copy nobody receives is dead-lettered where DeadLetteringOnMessageExpiration, dropped elsewhere", async () => {
    const sb = ctx.client();
    await send(sb, "t-ttl", 3, { timeToLive: 1000 });
    assert.equal(logEntries(ctx.emu, "t-ttl"), 3);
    await sleep(1500);
    const dlq = sb.createReceiver("t-ttl", "dlq", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const dead = await receiveExact(dlq, 3, 15000);
    assert.deepEqual(dead.map((m) => m.deadLetterReason), Array(3).fill("TTLExpiredException"));
    for (const m of dead) await dlq.completeMessage(m);
    await dlq.close();
    const drop = sb.createReceiver("t-ttl", "drop", PEEK_LOCK);
    await expectNothing(drop, "t-ttl/drop after expiry", 1000);
    await drop.close();
    await waitFor("t-ttl's log emptied", () => logEntries(ctx.emu, "t-ttl") === 0);
  });

  ctx.test("a reset forgets the log; what is sent afterwards is received", async () => {
    const sb = ctx.client();
    await send(sb, "t-reset", 5);
    assert.equal(logEntries(ctx.emu, "t-reset"), 5);
    const r = await rawRequest(ctx.emu, "$sbemu/reset", { method: "POST" });
    assert.equal(r.status, 200, r.body);
    assert.equal(logEntries(ctx.emu, "t-reset"), 0);
    const a = sb.createReceiver("t-reset", "a", RECEIVE_AND_DELETE());
    await expectNothing(a, "t-reset/a after the reset", 1000);
    await send(sb, "t-reset", 2);
    assert.equal((await receiveExact(a, 2)).length, 2);
    await a.close();
  });
});

emulatorPairSuite("js topics: two emulators take a logged message once", {
  one: { topics: [{ name: "t-pair", subscriptions: [{ name: "s" }, { name: "other" }] }], args: STORY_OFF },
  two: { args: STORY_OFF },
}, (ctx) => {
  ctx.test("400 messages, peek-lock receivers on both emulators: each message completed exactly once", async () => {
    const N = 400;
    const sender = ctx.c1.createSender("t-pair");
    for (let i = 0; i < N; i += 100) {
      const batch = [];
      for (let k = i; k < i + 100; k++) batch.push({ body: `p${k}`, messageId: `p${k}` });
      await sender.sendMessages(batch);
    }
    await sender.close();
    const seen = new Map();
    async function drainFrom(client, who) {
      const r = client.createReceiver("t-pair", "s", PEEK_LOCK);
      let idle = 0;
      while (idle < 3) {
        const got = await r.receiveMessages(50, { maxWaitTimeInMs: 500 });
        idle = got.length ? 0 : idle + 1;
        for (const m of got) {
          seen.set(m.messageId, (seen.get(m.messageId) || []).concat(who));
          await r.completeMessage(m);
        }
      }
      await r.close();
    }
    await Promise.all([drainFrom(ctx.c1, "one"), drainFrom(ctx.c2, "two")]);
    const twice = [...seen].filter(([, who]) => who.length > 1);
    assert.deepEqual(twice, [], "messages taken twice");
    assert.equal(seen.size, N);
    const whoTook = new Set([...seen.values()].flat());
    assert.ok(whoTook.size === 2, `both emulators took some: ${[...whoTook]}`);
  }, 90000);
});
