// A subscription's peek-lock leaves the body in its topic's log (migration
// 028): the row a claim writes has no body, only its size, and whatever takes
// the lock away without completing fetches the body first. What a client
// sees must not change: the body on receive, peek, abandon, defer,
// dead-letter (here or forwarded), properties-to-modify and a lapsed lock;
// sizes go back to 0; and the sweep keeps a log entry while a row still
// takes its body from it. Run with the story (its twins of the statements)
// and without.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { SWEEP_GRACE_MS, advance, expectNothing, pollReceive, psql, sleep } = require("./qs_util");

const DLQ = { receiveMode: "peekLock", subQueueType: "deadLetter" };

const config = {
  queues: [{ name: "dl-target" }],
  topics: [
    { name: "t-body", subscriptions: [{ name: "a" }, { name: "b" }] },
    { name: "t-fwd", subscriptions: [{ name: "s", properties: { ForwardDeadLetteredMessagesTo: "dl-target" } }] },
    { name: "t-lapse", subscriptions: [{ name: "s", properties: { LockDuration: "PT5S" } }] },
    { name: "t-held", subscriptions: [{ name: "only" }] },
  ],
};

const sub = (topic, name) => `${topic}/Subscriptions/${name}`;
const idOf = (emu, path) => psql(emu, `SELECT id FROM entities WHERE path = '${path}'`);
const bodiless = (emu, path) =>
  Number(psql(emu, `SELECT count(*) FROM messages WHERE entity_id = ${idOf(emu, path)} AND message IS NULL`));
const sizeOf = (emu, path) => Number(psql(emu, `SELECT size_in_bytes FROM entity_runtime WHERE entity_id = ${idOf(emu, path)}`));
const logEntries = (emu, topic) => Number(psql(emu, `SELECT count(*) FROM topic_log WHERE topic_id = ${idOf(emu, topic)}`));

async function send(client, topic, bodies) {
  const sender = client.createSender(topic);
  await sender.sendMessages(bodies.map((b, i) => ({ body: b, messageId: `${topic}-${i}` })));
  await sender.close();
}

async function waitFor(what, fn, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

function suite(title, args) {
  emulatorSuite(title, { ...config, args }, (ctx) => {
    ctx.test("a lock from the log: the row has no body, the receiver has it; each settlement keeps it", async () => {
      const sb = ctx.client();
      const bodies = ["zero", "one", "two", "three", "four", "five"];
      await send(sb, "t-body", bodies);
      const r = sb.createReceiver("t-body", "a", PEEK_LOCK);
      const got = await receiveExact(r, 6);
      const byBody = new Map(got.map((m) => [m.body, m]));
      assert.deepEqual([...byBody.keys()].sort(), [...bodies].sort());
      assert.equal(bodiless(ctx.emu, sub("t-body", "a")), 6, "the locked rows left their bodies in the log");
      assert.ok(sizeOf(ctx.emu, sub("t-body", "a")) > 0);

      // peek while locked: the bodies, from the rows (caught up)
      const peeked = await r.peekMessages(10);
      assert.deepEqual(peeked.map((m) => m.body).sort(), [...bodies].sort());

      await r.abandonMessage(byBody.get("zero"));
      await r.abandonMessage(byBody.get("one"), { touched: "yes" }); // properties to modify
      await r.deferMessage(byBody.get("two"));
      await r.deadLetterMessage(byBody.get("three"), { deadLetterReason: "ByTheTest", deadLetterErrorDescription: "by hand" });
      await r.completeMessage(byBody.get("four"));
      await r.completeMessage(byBody.get("five"));

      const again = await receiveExact(r, 2);
      const back = new Map(again.map((m) => [m.body, m]));
      assert.deepEqual([...back.keys()].sort(), ["one", "zero"]);
      assert.deepEqual(again.map((m) => m.deliveryCount), [1, 1]);
      assert.equal(back.get("one").applicationProperties.touched, "yes");
      for (const m of again) await r.completeMessage(m);
      const [deferred] = await r.receiveDeferredMessages(byBody.get("two").sequenceNumber);
      assert.equal(deferred.body, "two");
      await r.completeMessage(deferred);
      await expectNothing(r, "t-body/a after settling everything", 1000);
      await r.close();
      const dlq = sb.createReceiver("t-body", "a", DLQ);
      const [dead] = await receiveExact(dlq, 1);
      assert.equal(dead.body, "three");
      assert.equal(dead.deadLetterReason, "ByTheTest");
      await dlq.completeMessage(dead);
      await dlq.close();
      assert.equal(sizeOf(ctx.emu, sub("t-body", "a")), 0, "every message settled: no bytes left");

      // the other subscription's copies are untouched by all this
      const rb = sb.createReceiver("t-body", "b", PEEK_LOCK);
      const theirs = await receiveExact(rb, 6);
      assert.deepEqual(theirs.map((m) => m.body).sort(), [...bodies].sort());
      for (const m of theirs) await rb.completeMessage(m);
      await rb.close();
      assert.equal(sizeOf(ctx.emu, sub("t-body", "b")), 0);
    });

    ctx.test("a dead letter forwarded elsewhere takes its body along", async () => {
      const sb = ctx.client();
      await send(sb, "t-fwd", ["away"]);
      const r = sb.createReceiver("t-fwd", "s", PEEK_LOCK);
      const [m] = await receiveExact(r, 1);
      assert.equal(bodiless(ctx.emu, sub("t-fwd", "s")), 1);
      await r.deadLetterMessage(m, { deadLetterReason: "ByTheTest", deadLetterErrorDescription: "forwarded" });
      await r.close();
      const q = sb.createReceiver("dl-target", PEEK_LOCK);
      const [there] = await receiveExact(q, 1);
      assert.equal(there.body, "away");
      await q.completeMessage(there);
      await q.close();
      assert.equal(sizeOf(ctx.emu, sub("t-fwd", "s")), 0);
      assert.equal(sizeOf(ctx.emu, "dl-target"), 0);
    });

    ctx.test("a lock that lapses returns the message with its body", async () => {
      const sb = ctx.client();
      await send(sb, "t-lapse", ["lapsing"]);
      const r = sb.createReceiver("t-lapse", "s", PEEK_LOCK);
      const [m] = await receiveExact(r, 1);
      assert.equal(bodiless(ctx.emu, sub("t-lapse", "s")), 1);
      await advance(ctx.emu, "PT1M");
      const got = await pollReceive(r, 1, SWEEP_GRACE_MS + 3000);
      assert.equal(got.length, 1, "received again once the lock lapsed");
      assert.equal(got[0].body, "lapsing");
      assert.equal(got[0].deliveryCount, 1);
      assert.equal(got[0].sequenceNumber.toNumber(), m.sequenceNumber.toNumber());
      await r.completeMessage(got[0]);
      await r.close();
      assert.equal(sizeOf(ctx.emu, sub("t-lapse", "s")), 0);
    });

    ctx.test("the sweep keeps a log entry while a locked row takes its body from it", async () => {
      const sb = ctx.client();
      await send(sb, "t-held", ["h0", "h1", "h2"]);
      const r = sb.createReceiver("t-held", "only", PEEK_LOCK);
      const got = await receiveExact(r, 3);
      assert.equal(bodiless(ctx.emu, sub("t-held", "only")), 3);
      await sleep(SWEEP_GRACE_MS + 1000); // a sweep or two: the cursor is past all three
      assert.equal(logEntries(ctx.emu, "t-held"), 3, "the log still holds the locked messages' bodies");
      // the first row given its body back, the cut passes it and stops at
      // the next that still takes its body from the log
      got.sort((a, b) => a.sequenceNumber.toNumber() - b.sequenceNumber.toNumber());
      await r.abandonMessage(got[0]);
      await sleep(SWEEP_GRACE_MS + 1000);
      assert.equal(bodiless(ctx.emu, sub("t-held", "only")), 2);
      assert.equal(logEntries(ctx.emu, "t-held"), 2, "cut below the first row still without its body");
      await r.abandonMessage(got[1]);
      const back = await receiveExact(r, 2);
      assert.deepEqual(back.map((m) => m.body).sort(), [got[0].body, got[1].body].sort());
      for (const m of [...back, got[2]]) await r.completeMessage(m);
      await r.close();
      await waitFor("t-held's log cut once nothing takes a body from it", () => logEntries(ctx.emu, "t-held") === 0);
      assert.equal(sizeOf(ctx.emu, sub("t-held", "only")), 0);
    });
  });
}

suite("js topics: a lock leaves the body in the log (story on)", []);
suite("js topics: a lock leaves the body in the log (story off)", ["--story", "off"]);
