// A namespace's reset and snapshots, through the HTTP port with SAS
// (POST /$sbemu/namespaces/{ns}/reset, PUT|GET|DELETE .../snapshots/{name},
// POST .../snapshots/{name}/restore), checked with the real SDK:
//  - a reset puts back what Config.json declared (an entity created since is
//    gone, one deleted since is back, properties and rules as declared) with
//    no message of any kind, no session state, no duplicate history, the clock
//    at real time; a receiver attached before it still receives, and one on a
//    deleted entity is detached with MessagingEntityNotFound. Its time is
//    printed for 50 entities holding 100 messages each (not a pass/fail);
//  - a snapshot brings back every entity and every message with its body,
//    properties and state (active, deferred, scheduled, dead-lettered with its
//    reason, delivery count), the session state and the clock, restored by
//    the emulator that saved it and by another one on the same database, and
//    sequence numbers never go back;
//  - bad input (an unknown namespace, an unknown snapshot, a malformed name, a
//    wrong method, no SAS token) is a clear error and changes nothing.
"use strict";

const assert = require("node:assert/strict");
const Long = require("long");
const { emulatorSuite, emulatorPairSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { clockNow, advance, psql } = require("./qs_util");
const { adminClient, rawRequest, all } = require("./admin_util");

const NS = "sbemulatorns";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One request to the $sbemu API; resolves {status, json, body}. */
async function api(emu, method, rest, opts = {}) {
  const r = await rawRequest(emu, `$sbemu/${rest}`, { method, ...opts });
  let json = null;
  try {
    json = JSON.parse(r.body);
  } catch {}
  return { status: r.status, json, body: r.body };
}

async function expectStatus(emu, method, rest, status, opts = {}) {
  const r = await api(emu, method, rest, opts);
  assert.equal(r.status, status, `${method} /$sbemu/${rest}: expected ${status}, got ${r.status} ${r.body}`);
  return r;
}

/** POST .../reset; returns the answer and the round trip in ms. */
async function reset(emu, ns = NS) {
  const t0 = process.hrtime.bigint();
  const r = await expectStatus(emu, "POST", `namespaces/${ns}/reset`, 200);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, ...r.json };
}

/** Every message of an entity (a queue, or [topic, subscription]) and of its dead-letter subqueue, peeked. */
async function peekAll(client, entity, subQueueType) {
  const opts = subQueueType ? { subQueueType } : {};
  const receiver = Array.isArray(entity) ? client.createReceiver(entity[0], entity[1], opts) : client.createReceiver(entity, opts);
  const out = [];
  let from = Long.fromNumber(0);
  for (;;) {
    const got = await receiver.peekMessages(100, { fromSequenceNumber: from });
    if (!got.length) break;
    out.push(...got);
    from = got[got.length - 1].sequenceNumber.add(1);
  }
  await receiver.close();
  return out;
}

/** What a restore must bring back of a message, exactly. */
function view(m) {
  return {
    seq: m.sequenceNumber.toString(),
    messageId: m.messageId,
    body: m.body,
    applicationProperties: m.applicationProperties,
    subject: m.subject,
    correlationId: m.correlationId,
    sessionId: m.sessionId,
    state: m.state,
    deliveryCount: m.deliveryCount,
    deadLetterReason: m.deadLetterReason,
    deadLetterErrorDescription: m.deadLetterErrorDescription,
    enqueued: m.enqueuedTimeUtc && m.enqueuedTimeUtc.toISOString(),
    scheduled: m.scheduledEnqueueTimeUtc && m.scheduledEnqueueTimeUtc.toISOString(),
  };
}

/** Every message of the entities, both subqueues, as view()s. */
async function stateOf(client, entities) {
  const out = {};
  for (const e of entities) {
    const key = Array.isArray(e) ? e.join("/Subscriptions/") : e;
    out[key] = (await peekAll(client, e)).map(view);
    out[`${key}/$DeadLetterQueue`] = (await peekAll(client, e, "deadLetter")).map(view);
  }
  return out;
}

/** The namespace's entities as the management API lists them: names and the properties a test changes. */
async function entitiesOf(admin) {
  const queues = (await all(admin.listQueues())).map((q) => `${q.name} mdc=${q.maxDeliveryCount} dup=${q.requiresDuplicateDetection}`);
  const topics = [];
  for (const t of await all(admin.listTopics())) {
    for (const s of await all(admin.listSubscriptions(t.name))) {
      const rules = (await all(admin.listRules(t.name, s.subscriptionName)))
        .map((r) => `${r.name}:${r.filter.sqlExpression || r.filter.correlationId || JSON.stringify(r.filter)}`);
      topics.push(`${t.name}/${s.subscriptionName} mdc=${s.maxDeliveryCount} rules=[${rules.sort().join(",")}]`);
    }
    if (!topics.some((x) => x.startsWith(`${t.name}/`))) topics.push(`${t.name} (no subscriptions)`);
  }
  return { queues: queues.sort(), topics: topics.sort() };
}

/** Waits until pred() is true or ms pass; returns whether it became true. */
async function until(pred, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await pred()) return true;
    await sleep(50);
  }
  return pred();
}

/** A subscribe()d receiver that records what it gets and the errors it is told of. */
function listen(receiver) {
  const got = [];
  const errors = [];
  receiver.subscribe({
    async processMessage(m) {
      got.push(m.messageId);
    },
    async processError(args) {
      errors.push(args.error);
    },
  }, { autoCompleteMessages: true });
  return { receiver, got, errors };
}

// ---------------------------------------------------------------------------------------------------------------------

const BULK_QUEUES = Array.from({ length: 45 }, (_, i) => `rs-bulk-${String(i).padStart(2, "0")}`);
const BULK_SUBS = Array.from({ length: 5 }, (_, i) => ({ name: `b${i}` }));
const DECLARED_QUEUES = [
  { name: "rs-q1", properties: { MaxDeliveryCount: 7 } },
  "rs-q2",
  "rs-live",
  "rs-gone",
  { name: "rs-dup", properties: { RequiresDuplicateDetection: true } },
  { name: "rs-sess", properties: { RequiresSession: true } },
  ...BULK_QUEUES,
];
const DECLARED_TOPICS = [
  { name: "rs-topic", subscriptions: [{ name: "all" },
    { name: "red", rules: [{ name: "red-only", properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "color = 'red'" } } }] }] },
  { name: "rs-bulk-t", subscriptions: BULK_SUBS },
];

emulatorSuite("js reset", { queues: DECLARED_QUEUES, topics: DECLARED_TOPICS }, (ctx) => {
  let sb;
  let admin;
  let declared;

  ctx.test("the declared state, as the management API lists it", async () => {
    sb = ctx.client();
    admin = adminClient(ctx.emu, "7.9.5");
    declared = await entitiesOf(admin);
    assert.ok(declared.queues.includes("rs-q1 mdc=7 dup=false"), JSON.stringify(declared.queues));
    assert.ok(declared.topics.includes("rs-topic/red mdc=10 rules=[red-only:color = 'red']"), JSON.stringify(declared.topics));
    // a fresh emulator: a reset changes nothing it can see
    const r = await reset(ctx.emu);
    assert.equal(r.namespace, NS);
    assert.deepEqual(await entitiesOf(admin), declared);
  });

  ctx.test("a reset puts back the declared entities with no messages, no sessions, no duplicate history and the real clock; receivers on entities that survive keep working", async () => {
    // a receiver attached before the reset, on an entity that survives it
    const live = listen(sb.createReceiver("rs-live", PEEK_LOCK));
    await sb.createSender("rs-live").sendMessages({ messageId: "live-before", body: "b" });
    assert.ok(await until(() => live.got.includes("live-before"), 10000), `the live receiver did not get its first message: ${live.got}`);

    // messages of every kind
    const q1 = sb.createSender("rs-q1");
    await q1.sendMessages([1, 2, 3].map((i) => ({ messageId: `q1-${i}`, body: i })));
    const r1 = sb.createReceiver("rs-q1", PEEK_LOCK);
    const [toDead] = await receiveExact(r1, 1);
    await r1.deadLetterMessage(toDead, { deadLetterReason: "Because", deadLetterErrorDescription: "a test" });
    const [locked] = await receiveExact(r1, 1); // held, unsettled, across the reset
    const q2 = sb.createSender("rs-q2");
    await q2.scheduleMessages({ messageId: "q2-later", body: "later" }, new Date(Date.now() + 3600 * 1000));
    await q2.sendMessages({ messageId: "q2-deferred", body: "d" });
    const r2 = sb.createReceiver("rs-q2", PEEK_LOCK);
    const [toDefer] = await receiveExact(r2, 1);
    await r2.deferMessage(toDefer);
    await sb.createSender("rs-topic").sendMessages([{ messageId: "t-red", body: 1, applicationProperties: { color: "red" } },
      { messageId: "t-blue", body: 2, applicationProperties: { color: "blue" } }]);
    await sb.createSender("rs-dup").sendMessages({ messageId: "dup-1", body: "first" });
    const dupRx = sb.createReceiver("rs-dup", { receiveMode: "receiveAndDelete" });
    await receiveExact(dupRx, 1);
    await sb.createSender("rs-sess").sendMessages({ messageId: "s-1", body: "s", sessionId: "sess-1" });
    const session = await sb.acceptSession("rs-sess", "sess-1", PEEK_LOCK);
    await session.setSessionState("state before the reset");

    // entities changed: one created, one declared deleted, properties and rules changed
    await admin.createQueue("rs-extra");
    await sb.createSender("rs-extra").sendMessages({ messageId: "extra-1", body: "x" });
    const extra = listen(sb.createReceiver("rs-extra", PEEK_LOCK));
    assert.ok(await until(() => extra.got.length === 1, 10000), "the receiver on rs-extra got nothing");
    await admin.deleteQueue("rs-gone");
    const q1props = await admin.getQueue("rs-q1");
    await admin.updateQueue({ ...q1props, maxDeliveryCount: 3 });
    await admin.createRule("rs-topic", "all", "extra-rule", { sqlExpression: "1 = 1" });
    await admin.deleteRule("rs-topic", "red", "red-only");
    const moved = await advance(ctx.emu, "PT1H");
    assert.equal(moved.offsetMs, 3600000);
    assert.notDeepEqual(await entitiesOf(admin), declared);

    const r = await reset(ctx.emu);
    assert.equal(r.clock.offsetMs, 0, `the reset's answer: ${JSON.stringify(r)}`);

    // the declared entities, as declared; the extra one gone, the deleted one back
    assert.deepEqual(await entitiesOf(admin), declared);
    assert.equal(await admin.queueExists("rs-extra"), false);
    assert.equal(await admin.queueExists("rs-gone"), true);
    // no message of any kind anywhere
    for (const q of ["rs-q1", "rs-q2", "rs-dup", "rs-sess", "rs-live", "rs-gone"]) {
      const rt = await admin.getQueueRuntimeProperties(q);
      assert.deepEqual([rt.activeMessageCount, rt.deadLetterMessageCount, rt.scheduledMessageCount], [0, 0, 0], `queue ${q}`);
      assert.equal(rt.sizeInBytes, 0, `queue ${q} size`);
    }
    for (const s of ["all", "red"]) {
      const rt = await admin.getSubscriptionRuntimeProperties("rs-topic", s);
      assert.deepEqual([rt.activeMessageCount, rt.deadLetterMessageCount], [0, 0], `subscription ${s}`);
    }
    assert.deepEqual(await stateOf(sb, ["rs-q1", "rs-q2", ["rs-topic", "all"], ["rs-topic", "red"]]), {
      "rs-q1": [], "rs-q1/$DeadLetterQueue": [], "rs-q2": [], "rs-q2/$DeadLetterQueue": [],
      "rs-topic/Subscriptions/all": [], "rs-topic/Subscriptions/all/$DeadLetterQueue": [],
      "rs-topic/Subscriptions/red": [], "rs-topic/Subscriptions/red/$DeadLetterQueue": [],
    });
    assert.equal(psql(ctx.emu, "SELECT (SELECT count(*) FROM messages) || ' ' || (SELECT count(*) FROM sessions) || ' ' ||" +
      " (SELECT count(*) FROM duplicate_detection)"), "0 0 0", "messages, sessions and MessageIds left in the database");
    // the clock at real time, here and in the reset's answer
    const c = await clockNow(ctx.emu);
    assert.equal(c.offsetMs, 0);
    assert.ok(Math.abs(c.now.getTime() - Date.now()) < 5000, `the clock is ${c.now.getTime() - Date.now()} ms off real time`);

    // the receiver attached before the reset receives a message sent after it
    await sb.createSender("rs-live").sendMessages({ messageId: "live-after", body: "a" });
    assert.ok(await until(() => live.got.includes("live-after"), 10000),
      `the receiver attached before the reset did not get the message sent after it; it got ${JSON.stringify(live.got)}, errors ${live.errors.map((e) => e.code)}`);
    // the one on the deleted entity was told so
    assert.ok(await until(() => extra.errors.some((e) => e.code === "MessagingEntityNotFound"), 10000),
      `the receiver on rs-extra was not detached with MessagingEntityNotFound: ${extra.errors.map((e) => `${e.code}: ${e.message}`)}`);
    // the message held across the reset is gone: its lock with it
    await expectCode(r1.completeMessage(locked), "MessageLockLost");
    // the session lock held across the reset is lost, and the session has no state
    await expectCode(session.receiveMessages(1, { maxWaitTimeInMs: 3000 }), "SessionLockLost");
    await sb.createSender("rs-sess").sendMessages({ messageId: "s-2", body: "s", sessionId: "sess-1" });
    const again = await sb.acceptSession("rs-sess", "sess-1", PEEK_LOCK);
    assert.equal(await again.getSessionState(), null, "the session state survived the reset");
    const [s2] = await receiveExact(again, 1);
    assert.equal(s2.messageId, "s-2");
    await again.completeMessage(s2);
    await again.close();
    // the duplicate window is empty: the same MessageId is taken again
    await sb.createSender("rs-dup").sendMessages({ messageId: "dup-1", body: "second" });
    const [d] = await receiveExact(dupRx, 1);
    assert.equal(d.body, "second");
    // sequence numbers go on from where they were (never handed out twice)
    await q1.sendMessages({ messageId: "q1-after", body: 4 });
    const [after] = await peekAll(sb, "rs-q1");
    assert.ok(after.sequenceNumber.greaterThan(locked.sequenceNumber),
      `a message sent after the reset has sequence number ${after.sequenceNumber}, not above ${locked.sequenceNumber} handed out before`);
    for (const r of [r1, r2, dupRx]) await r.close();
  }, 90000);

  ctx.test("timing: a reset of 50 entities holding 100 messages each (printed, not a pass/fail)", async () => {
    await reset(ctx.emu); // what the tests before left
    const filled = [];
    for (let round = 0; round < 5; round++) {
      for (const q of BULK_QUEUES) {
        await sb.createSender(q).sendMessages(Array.from({ length: 100 }, (_, i) => ({ body: `m${i}`, messageId: `${q}-${i}` })));
      }
      await sb.createSender("rs-bulk-t").sendMessages(Array.from({ length: 100 }, (_, i) => ({ body: `t${i}` })));
      // (the topic's copies may be one topic_log entry each for its subscriptions: migration 018)
      const held = Number(psql(ctx.emu, "SELECT (SELECT count(*) FROM messages) +" +
        " (SELECT coalesce(sum(sbemu_log_pending(entity_id, 100000)), 0) FROM sbemu_cursors)"));
      assert.equal(held, 50 * 100, `expected 5000 messages in 50 entities before the reset, found ${held}`);
      filled.push(await reset(ctx.emu));
      assert.equal(psql(ctx.emu, "SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM topic_log)"), "0");
    }
    const empty = [];
    for (let i = 0; i < 10; i++) empty.push(await reset(ctx.emu));
    const summary = (rs) => {
      const sorted = rs.map((r) => r.ms).sort((a, b) => a - b);
      return `median ${sorted[sorted.length >> 1].toFixed(1)} ms, min ${sorted[0].toFixed(1)}, max ${sorted[sorted.length - 1].toFixed(1)}` +
        ` (${rs.length} resets; each ${rs.map((r) => r.ms.toFixed(1)).join(", ")})`;
    };
    const line = `reset timing (HTTP round trip): ${filled[0].entities} entities, 50 of them holding 100 messages each ` +
      `(5000 in all): ${summary(filled)}; with no messages: ${summary(empty)}`;
    console.log(line);
    process.stdout.write(`# ${line}\n`);
  }, 90000);

  ctx.test("bad input is refused with a clear error and changes nothing", async () => {
    await sb.createSender("rs-q2").sendMessages({ messageId: "survivor", body: "stays" });
    await advance(ctx.emu, "PT10M");
    await expectStatus(ctx.emu, "PUT", `namespaces/${NS}/snapshots/keep`, 201);
    const before = await stateOf(sb, ["rs-q2"]);
    const snapsBefore = (await expectStatus(ctx.emu, "GET", `namespaces/${NS}/snapshots`, 200)).json;

    const cases = [
      ["POST", "namespaces/other-ns/reset", {}, 404, /namespace 'other-ns' does not exist: a namespace is made when a client first uses it/],
      ["PUT", "namespaces/other-ns/snapshots/x", {}, 404, /namespace 'other-ns' does not exist/],
      ["POST", `namespaces/${NS}/snapshots/no-such/restore`, {}, 404, /snapshot 'no-such' does not exist in the namespace 'sbemulatorns'/],
      ["GET", `namespaces/${NS}/snapshots/no-such`, {}, 404, /snapshot 'no-such' does not exist/],
      ["DELETE", `namespaces/${NS}/snapshots/no-such`, {}, 404, /snapshot 'no-such' does not exist/],
      ["PUT", `namespaces/${NS}/snapshots/bad%20name`, {}, 400, /snapshot name 'bad name' holds ' '/],
      ["PUT", `namespaces/${NS}/snapshots/${"n".repeat(65)}`, {}, 400, /65 characters long; the most is 64/],
      ["POST", `namespaces/${NS}/snapshots/-dash/restore`, {}, 400, /must start with a letter or a digit/],
      ["PUT", `namespaces/${NS}/snapshots/a%2Fb`, {}, 400, /holds '\/'/],
      ["GET", `namespaces/${NS}/reset`, {}, 405, /reset takes POST/],
      ["PUT", `namespaces/${NS}/snapshots/keep/restore`, {}, 405, /restore takes POST/],
      ["POST", `namespaces/${NS}/snapshots`, {}, 405, /list of snapshots takes GET/],
      ["POST", `namespaces/${NS}/snapshots/keep`, {}, 405, /snapshot takes GET, PUT or DELETE/],
      ["POST", `namespaces/${NS}/reset`, { auth: false }, 401, /no Authorization header/],
      ["POST", `namespaces/${NS}/snapshots/keep/restore`, { auth: false }, 401, /no Authorization header/],
      ["DELETE", `namespaces/${NS}/snapshots/keep`, { auth: "SharedAccessSignature sr=x&sig=bad&se=1&skn=RootManageSharedAccessKey" }, 401, /Unauthorized/],
    ];
    for (const [method, rest, opts, status, why] of cases) {
      const r = await expectStatus(ctx.emu, method, rest, status, opts);
      const text = r.json ? r.json.error : r.body;
      assert.match(text, why, `${method} ${rest}: the error does not say why: ${r.body}`);
    }
    // nothing changed: the message, the clock, the snapshots
    assert.deepEqual(await stateOf(sb, ["rs-q2"]), before);
    assert.equal((await clockNow(ctx.emu)).offsetMs, 600000);
    assert.deepEqual((await expectStatus(ctx.emu, "GET", `namespaces/${NS}/snapshots`, 200)).json, snapsBefore);
    // "default" and no namespace at all name the default namespace
    assert.equal((await expectStatus(ctx.emu, "GET", "namespaces/default/snapshots/keep", 200)).json.name, "keep");
    assert.equal((await expectStatus(ctx.emu, "GET", "snapshots/keep", 200)).json.name, "keep");
    await expectStatus(ctx.emu, "DELETE", "snapshots/keep", 200);
    const r = await expectStatus(ctx.emu, "POST", "reset", 200);
    assert.equal(r.json.clock.offsetMs, 0);
  });
});

// ---------------------------------------------------------------------------------------------------------------------

const SNAP_QUEUES = ["sn-q", { name: "sn-sess", properties: { RequiresSession: true } }, "sn-gone", "sn-live", "sn-rewind"];
const SNAP_TOPICS = [{ name: "sn-topic", subscriptions: [{ name: "all" }] }];

emulatorPairSuite("js snapshots", {
  one: { queues: SNAP_QUEUES, topics: SNAP_TOPICS },
  two: { queues: SNAP_QUEUES, topics: SNAP_TOPICS },
}, (ctx) => {
  const ENTITIES = ["sn-q", "sn-gone", ["sn-topic", "all"]];
  let admin;
  let saved;       // stateOf at the snapshot
  let savedEntities;
  let highestSeq;  // the highest sequence number handed out before a restore

  ctx.test("a snapshot keeps entities, messages in every state, session state and the clock", async () => {
    admin = adminClient(ctx.one, "7.9.5");
    const sb = ctx.c1;
    await advance(ctx.one, "PT2H");
    const s = sb.createSender("sn-q");
    await s.sendMessages([
      { messageId: "a-1", body: { n: 1, text: "active" }, subject: "subj", correlationId: "corr",
        applicationProperties: { color: "red", qty: 5, ok: true } },
      { messageId: "dl-1", body: "to dead-letter" },
      { messageId: "def-1", body: Buffer.from([1, 2, 3]) },
      { messageId: "again-1", body: "delivered twice" },
    ]);
    const now = (await clockNow(ctx.one)).now;
    await s.scheduleMessages({ messageId: "sch-1", body: "scheduled", applicationProperties: { when: "later" } },
      new Date(now.getTime() + 30 * 60000));
    const rx = sb.createReceiver("sn-q", PEEK_LOCK);
    const got = await receiveExact(rx, 4);
    const by = Object.fromEntries(got.map((m) => [m.messageId, m]));
    await rx.deadLetterMessage(by["dl-1"], { deadLetterReason: "BadOrder", deadLetterErrorDescription: "qty too high" });
    await rx.deferMessage(by["def-1"]);
    await rx.abandonMessage(by["again-1"]);
    await rx.abandonMessage(by["a-1"]);
    const [relocked] = await receiveExact(rx, 1); // a-1 again (delivery count 2), held locked while saved
    assert.equal(relocked.messageId, "a-1");
    await sb.createSender("sn-topic").sendMessages({ messageId: "t-1", body: "to the topic", applicationProperties: { k: "v" } });
    await sb.createSender("sn-gone").sendMessages({ messageId: "g-1", body: "in a queue deleted later" });
    await sb.createSender("sn-rewind").sendMessages({ messageId: "rw-1", body: "restored below where receivers are" });
    await sb.createSender("sn-sess").sendMessages({ messageId: "ss-1", body: "session", sessionId: "S" });
    const sess = await sb.acceptSession("sn-sess", "S", PEEK_LOCK);
    await sess.setSessionState("saved state");
    await sess.close();

    const put = await expectStatus(ctx.one, "PUT", `namespaces/${NS}/snapshots/base`, 201);
    assert.equal(put.json.name, "base");
    assert.equal(put.json.replaced, false);
    assert.equal(put.json.clockOffsetMs, 7200000);
    assert.equal(put.json.messages, 9, `the snapshot's answer: ${put.body}`);
    assert.ok(put.json.bytes > 0);
    const list = await expectStatus(ctx.one, "GET", `namespaces/${NS}/snapshots`, 200);
    assert.deepEqual(list.json.snapshots.map((x) => [x.name, x.entities, x.messages]), [["base", 7, 9]]);
    // a PUT of the same name replaces it
    const again = await expectStatus(ctx.one, "PUT", `namespaces/${NS}/snapshots/base`, 200);
    assert.equal(again.json.replaced, true);

    // what the snapshot holds: a-1, locked now, comes back unlocked with its delivery count
    saved = await stateOf(sb, ENTITIES);
    savedEntities = await entitiesOf(admin);
    await rx.close();
    const states = saved["sn-q"].map((m) => `${m.messageId}:${m.state}:${m.deliveryCount}`).sort();
    assert.deepEqual(states, ["a-1:active:2", "again-1:active:1", "def-1:deferred:1", "sch-1:scheduled:0"]);
    assert.deepEqual(saved["sn-q/$DeadLetterQueue"].map((m) => [m.messageId, m.deadLetterReason, m.deadLetterErrorDescription]),
      [["dl-1", "BadOrder", "qty too high"]]);
  }, 60000);

  /** Changes everything the snapshot holds; returns the highest sequence number handed out. */
  async function changeEverything(sb) {
    // a-1 may still be locked by the receiver that held it when the snapshot was taken
    const rx = sb.createReceiver("sn-q", PEEK_LOCK);
    const got = await rx.receiveMessages(10, { maxWaitTimeInMs: 2000 });
    assert.ok(got.some((m) => m.messageId === "again-1"), `again-1 was not received: ${got.map((m) => m.messageId)}`);
    for (const m of got) await rx.completeMessage(m);
    const [d] = await rx.receiveDeferredMessages(saved["sn-q"].filter((m) => m.state === "deferred").map((m) => Long.fromString(m.seq)));
    await rx.completeMessage(d);
    await rx.close();
    const [newSeq] = await sb.createSender("sn-q").scheduleMessages({ messageId: "new-sch", body: "new" }, new Date(Date.now() + 86400000));
    await sb.createSender("sn-q").sendMessages({ messageId: "new-1", body: "sent after the snapshot" });
    const dlq = sb.createReceiver("sn-q", { subQueueType: "deadLetter", receiveMode: "receiveAndDelete" });
    await receiveExact(dlq, 1);
    await dlq.close();
    const sess = await sb.acceptSession("sn-sess", "S", PEEK_LOCK);
    await sess.setSessionState("changed state");
    await sess.close();
    if (await admin.queueExists("sn-gone")) await admin.deleteQueue("sn-gone");
    if (!(await admin.queueExists("sn-new"))) await admin.createQueue("sn-new");
    await admin.createRule("sn-topic", "all", "later-rule", { sqlExpression: "k = 'w'" });
    const trx = sb.createReceiver("sn-topic", "all", PEEK_LOCK);
    const [t] = await receiveExact(trx, 1);
    await trx.completeMessage(t);
    await trx.close();
    await advance(ctx.one, "PT5H");
    const all = (await peekAll(sb, "sn-q")).map((m) => m.sequenceNumber);
    return all.concat([newSeq]).reduce((a, b) => (b.greaterThan(a) ? b : a));
  }

  /** A receiver on sn-rewind that has claimed past rw-1's sequence number (rw-1 is restored by the next restore). */
  async function rewindProbe(sb) {
    const probe = listen(sb.createReceiver("sn-rewind", PEEK_LOCK));
    await sb.createSender("sn-rewind").sendMessages({ messageId: "rw-past", body: "p" });
    assert.ok(await until(() => probe.got.includes("rw-past"), 10000), `the probe got nothing: ${JSON.stringify(probe.got)}`);
    probe.before = probe.got.filter((x) => x === "rw-1").length;
    return probe;
  }

  /** The probe gets rw-1 again at once: its claim position went back with the restore (a receiver
   * would otherwise find it only at its periodic rewind, every 5 s). */
  async function expectRewound(probe, via) {
    assert.ok(await until(() => probe.got.filter((x) => x === "rw-1").length > probe.before, 2000),
      `a receiver attached across the restore through ${via} did not get the restored rw-1 within 2 s: ${JSON.stringify(probe.got)}`);
    await probe.receiver.close();
  }

  async function checkRestored(sb, via) {
    assert.deepEqual(await entitiesOf(admin), savedEntities, `entities after the restore through ${via}`);
    assert.deepEqual(await stateOf(sb, ENTITIES), saved, `messages after the restore through ${via}`);
    const sess = await sb.acceptSession("sn-sess", "S", PEEK_LOCK);
    assert.equal(String(await sess.getSessionState()), "saved state");
    const [m] = await receiveExact(sess, 1);
    assert.equal(m.messageId, "ss-1");
    await sess.abandonMessage(m);
    await sess.close();
    for (const emu of [ctx.one, ctx.two]) {
      assert.ok(await until(async () => (await clockNow(emu)).offsetMs === 7200000, 5000),
        `the clock of ${emu === ctx.one ? "the first" : "the second"} emulator did not go back to the snapshot's: ${(await clockNow(emu)).offsetMs}`);
    }
  }

  ctx.test("restored by the emulator that saved it: everything is back, a receiver attached across it keeps working, and sequence numbers do not go back", async () => {
    const sb = ctx.c1;
    const live = listen(sb.createReceiver("sn-live", PEEK_LOCK)); // attached across the restore
    await sb.createSender("sn-live").sendMessages({ messageId: "live-before", body: "b" });
    assert.ok(await until(() => live.got.includes("live-before"), 10000), "the live receiver got nothing");
    highestSeq = await changeEverything(sb);
    const probe = await rewindProbe(sb);
    const r = await expectStatus(ctx.one, "POST", `namespaces/${NS}/snapshots/base/restore`, 200);
    assert.equal(r.json.snapshot, "base");
    assert.equal(r.json.clock.offsetMs, 7200000);
    await expectRewound(probe, "the same emulator");
    await checkRestored(sb, "the same emulator");
    await sb.createSender("sn-live").sendMessages({ messageId: "live-after", body: "a" });
    assert.ok(await until(() => live.got.includes("live-after"), 10000),
      `the receiver attached across the restore did not get a message sent after it: ${JSON.stringify(live.got)}`);
    await live.receiver.close();
    await sb.createSender("sn-q").sendMessages({ messageId: "post-restore", body: "p" });
    const post = (await peekAll(sb, "sn-q")).find((m) => m.messageId === "post-restore");
    assert.ok(post.sequenceNumber.greaterThan(highestSeq),
      `a message sent after the restore got sequence number ${post.sequenceNumber}, not above ${highestSeq} handed out before it`);
  }, 90000);

  ctx.test("restored by another emulator on the same database: everything is back on both", async () => {
    highestSeq = await changeEverything(ctx.c1);
    const probe = await rewindProbe(ctx.c1);
    const r = await expectStatus(ctx.two, "POST", `namespaces/${NS}/snapshots/base/restore`, 200);
    await expectRewound(probe, "the other emulator");
    assert.equal(r.json.entities, 7);
    assert.equal(r.json.messages, 9);
    await checkRestored(ctx.c1, "the other emulator");
    await checkRestored(ctx.c2, "the other emulator (read there)");
  }, 90000);

  ctx.test("a snapshot is deleted; then it is unknown", async () => {
    await expectStatus(ctx.two, "DELETE", `namespaces/${NS}/snapshots/base`, 200);
    await expectStatus(ctx.one, "POST", `namespaces/${NS}/snapshots/base/restore`, 404);
    assert.deepEqual((await expectStatus(ctx.one, "GET", `namespaces/${NS}/snapshots`, 200)).json.snapshots, []);
  });
});
