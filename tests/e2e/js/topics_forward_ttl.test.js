// Subscriptions: ForwardTo (a queue, another topic), ForwardDeadLetteredMessagesTo,
// the effective TTL (smallest of message, topic default, subscription default), expiry
// to the DLQ per subscription, and AutoDeleteOnIdle (subscription and topic), on the
// emulator's clock.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode, rawManagementRequest, lockTokenBytes, lockTokenArray } = require("./util");
const { SWEEP_GRACE_MS, sleep, advance, pollReceive, psql } = require("./qs_util");
const { targeted, drainSub, storedCounts, brief } = require("./topics_util");

const MIN = 60000;
const queues = ["fq", "dlq-target", { name: "dl-to-topic", properties: { ForwardDeadLetteredMessagesTo: "t-dlt" } }];
const topics = [
  { name: "t-dest", subscriptions: [{ name: "d1" }, { name: "d2", rules: [{ Name: "none", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "1 = 0" } } }] }] },
  {
    name: "t-fwd",
    subscriptions: [
      targeted("to-q", { ForwardTo: "fq" }),
      targeted("to-topic", { ForwardTo: "t-dest" }),
      targeted("dlf", { ForwardDeadLetteredMessagesTo: "dlq-target" }),
    ],
  },
  {
    name: "t-ttl",
    properties: { DefaultMessageTimeToLive: "PT2M" },
    subscriptions: [{ name: "s-long", properties: { DefaultMessageTimeToLive: "PT10M" } }, { name: "s-short", properties: { DefaultMessageTimeToLive: "PT1M" } }],
  },
  {
    name: "t-exp",
    subscriptions: [
      { name: "dl", properties: { DeadLetteringOnMessageExpiration: true } },
      { name: "drop", properties: { DeadLetteringOnMessageExpiration: false } },
      { name: "short-dl", properties: { DeadLetteringOnMessageExpiration: true, DefaultMessageTimeToLive: "PT1M" } },
    ],
  },
  { name: "t-idle", subscriptions: [{ name: "idle", properties: { AutoDeleteOnIdle: "PT5M" } }, { name: "keep" }] },
  { name: "t-idle-topic", properties: { AutoDeleteOnIdle: "PT5M" }, subscriptions: [{ name: "x" }] },
  { name: "t-dlt", subscriptions: [{ name: "all" }] },
];

const subExists = (emu, topic, sub) => psql(emu, `SELECT count(*) FROM subscriptions s JOIN topics t ON t.id = s.topic_id
  WHERE t.name = '${topic}' AND s.name = '${sub}'`) === "1";
const topicExists = (emu, topic) => psql(emu, `SELECT count(*) FROM topics WHERE name = '${topic}'`) === "1";

async function waitFor(cond, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (cond()) return true;
    await sleep(200);
  }
  return cond();
}

emulatorSuite("js topics: forwarding, TTL, expiry, auto-delete", { queues, topics }, (ctx) => {
  ctx.test("ForwardTo a queue: a subscription's copy arrives in fq as sent; the subscription holds nothing", async () => {
    const sb = ctx.client();
    await sb.createSender("t-fwd").sendMessages({ messageId: "fw-q", body: { to: "queue" }, subject: "s", applicationProperties: { target: "to-q", k: 1 } });
    const r = sb.createReceiver("fq", PEEK_LOCK);
    const got = await pollReceive(r, 1, 6000);
    assert.deepEqual(got.map(brief).map((b) => b.messageId), ["fw-q"], "fq should get the forwarded copy");
    assert.deepEqual([got[0].body, got[0].subject, got[0].applicationProperties], [{ to: "queue" }, "s", { target: "to-q", k: 1 }]);
    await r.completeMessage(got[0]);
    await r.close();
    assert.equal(storedCounts(ctx.emu, "t-fwd/Subscriptions/to-q"), "0,0");
  });

  ctx.test("ForwardTo another topic: the copy is routed by t-dest's rules (d1 gets it, d2's 1 = 0 does not)", async () => {
    const sb = ctx.client();
    await sb.createSender("t-fwd").sendMessages({ messageId: "fw-t", body: "to topic", applicationProperties: { target: "to-topic" } });
    const [m] = await drainSub(sb, "t-dest", "d1", 1);
    assert.equal(m.messageId, "fw-t");
    assert.equal(m.body, "to topic");
    await drainSub(sb, "t-dest", "d2", 0);
    assert.equal(storedCounts(ctx.emu, "t-fwd/Subscriptions/to-topic"), "0,0");
    assert.equal(storedCounts(ctx.emu, "t-dest"), "0,0", "nothing stays at rest in t-dest");
  });

  ctx.test("ForwardDeadLetteredMessagesTo: a message dead-lettered on dlf arrives in dlq-target with DeadLetterSource = the subscription path", async () => {
    const sb = ctx.client();
    await sb.createSender("t-fwd").sendMessages({ messageId: "fw-dl", body: "reject", applicationProperties: { target: "dlf" } });
    const r = sb.createReceiver("t-fwd", "dlf", PEEK_LOCK);
    const [m] = await receiveExact(r, 1);
    await r.deadLetterMessage(m, { deadLetterReason: "Rejected", deadLetterErrorDescription: "by the test" });
    await r.close();
    const q = sb.createReceiver("dlq-target", PEEK_LOCK);
    const got = await pollReceive(q, 1, 6000);
    assert.equal(got.length, 1, "dlq-target should get fw-dl");
    assert.deepEqual([got[0].messageId, got[0].deadLetterReason, got[0].deadLetterErrorDescription, got[0].deadLetterSource],
      ["fw-dl", "Rejected", "by the test", "t-fwd/Subscriptions/dlf"]);
    await q.completeMessage(got[0]);
    await q.close();
    await drainSub(sb, "t-fwd", "dlf", 0, { dlq: true });
  });

  ctx.test("a dead letter made through $management update-disposition into a ForwardDeadLetteredMessagesTo topic is routed at once", async () => {
    // (It used to wait for the periodic topic pump, up to 5 s: only the link's own
    // disposition routed it at once.) Three in a row, each within a second.
    const sb = ctx.client();
    const sub = sb.createReceiver("t-dlt", "all", PEEK_LOCK);
    for (let i = 0; i < 3; i++) {
      await sb.createSender("dl-to-topic").sendMessages({ messageId: `mg-${i}`, body: i });
      const r = sb.createReceiver("dl-to-topic", PEEK_LOCK);
      const [m] = await receiveExact(r, 1);
      await rawManagementRequest(sb, "dl-to-topic", "com.microsoft:update-disposition", {
        "lock-tokens": lockTokenArray([lockTokenBytes(m.lockToken)]),
        "disposition-status": "suspended", "deadletter-reason": "ByManagement",
      });
      const t0 = Date.now();
      const got = await pollReceive(sub, 1, 5000);
      const ms = Date.now() - t0;
      assert.equal(got.length, 1, `mg-${i} never reached t-dlt/all`);
      assert.deepEqual([got[0].messageId, got[0].deadLetterReason, got[0].deadLetterSource], [`mg-${i}`, "ByManagement", "dl-to-topic"]);
      assert.ok(ms < 1000, `mg-${i} reached the subscription ${ms} ms after the dead-letter was answered`);
      await sub.completeMessage(got[0]);
      await r.close();
    }
    await sub.close();
  });

  ctx.test("TTL: topic default PT2M < subscription PT10M → 2 min; subscription PT1M < topic → 1 min; a shorter message TTL wins", async () => {
    const sb = ctx.client();
    await sb.createSender("t-ttl").sendMessages([
      { messageId: "none", body: 1 },
      { messageId: "30s", body: 2, timeToLive: 30000 },
      { messageId: "90s", body: 3, timeToLive: 90000 },
      { messageId: "1h", body: 4, timeToLive: 60 * MIN },
    ]);
    const want = {
      "s-long": { none: 2 * MIN, "30s": 30000, "90s": 90000, "1h": 2 * MIN },
      "s-short": { none: MIN, "30s": 30000, "90s": MIN, "1h": MIN },
    };
    const wrong = [];
    for (const sub of ["s-long", "s-short"]) {
      for (const m of await drainSub(sb, "t-ttl", sub, 4)) {
        const ttl = want[sub][m.messageId];
        const span = m.expiresAtUtc.getTime() - m.enqueuedTimeUtc.getTime();
        if (m.timeToLive !== ttl || span !== ttl) wrong.push(`${sub}/${m.messageId}: timeToLive ${m.timeToLive}, expiresAt - enqueued ${span}, expected ${ttl}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  ctx.test("expiry (+20 s, TTL 10 s): dl dead-letters (TTLExpiredException), drop drops, short-dl dead-letters; the live message stays", async () => {
    const sb = ctx.client();
    await sb.createSender("t-exp").sendMessages([
      { messageId: "x1", body: "10 s", timeToLive: 10000 },
      { messageId: "x2", body: "lives" },
    ]);
    await advance(ctx.emu, "PT20S");
    await sleep(SWEEP_GRACE_MS);
    for (const sub of ["dl", "short-dl"]) {
      const [d] = await drainSub(sb, "t-exp", sub, 1, { dlq: true });
      assert.deepEqual([d.messageId, d.deadLetterReason, d.deadLetterErrorDescription],
        ["x1", "TTLExpiredException", "The message expired and was dead lettered."], `${sub} DLQ`);
    }
    await drainSub(sb, "t-exp", "drop", 0, { dlq: true });
    assert.equal(storedCounts(ctx.emu, "t-exp/Subscriptions/drop"), "1,0", "drop holds x2 only");
    assert.deepEqual((await drainSub(sb, "t-exp", "dl", 1)).map((m) => m.messageId), ["x2"]);
    assert.deepEqual((await drainSub(sb, "t-exp", "drop", 1)).map((m) => m.messageId), ["x2"]);
    // short-dl: x2 lives 1 min (its subscription's default): still there, dead-lettered after +1 min more.
    const r = sb.createReceiver("t-exp", "short-dl", PEEK_LOCK);
    assert.deepEqual((await r.peekMessages(5)).map((m) => m.messageId), ["x2"]);
    await r.close();
    await advance(ctx.emu, "PT1M");
    await sleep(SWEEP_GRACE_MS);
    const [d2] = await drainSub(sb, "t-exp", "short-dl", 1, { dlq: true });
    assert.deepEqual([d2.messageId, d2.deadLetterReason], ["x2", "TTLExpiredException"]);
    assert.equal(storedCounts(ctx.emu, "t-exp/Subscriptions/short-dl"), "0,0");
  });

  ctx.test("AutoDeleteOnIdle PT5M: +6 min deletes the idle subscription (not its sibling) and the idle topic with its subscriptions", async () => {
    const sb = ctx.client();
    assert.ok(subExists(ctx.emu, "t-idle", "idle") && topicExists(ctx.emu, "t-idle-topic"));
    await advance(ctx.emu, "PT6M");
    assert.ok(await waitFor(() => !subExists(ctx.emu, "t-idle", "idle"), SWEEP_GRACE_MS + 2000),
      "t-idle/Subscriptions/idle (AutoDeleteOnIdle PT5M) should be deleted after 6 idle minutes");
    assert.ok(await waitFor(() => !topicExists(ctx.emu, "t-idle-topic"), SWEEP_GRACE_MS + 2000),
      "t-idle-topic (AutoDeleteOnIdle PT5M) should be deleted after 6 idle minutes");
    assert.ok(subExists(ctx.emu, "t-idle", "keep"), "keep has no AutoDeleteOnIdle");
    assert.ok(topicExists(ctx.emu, "t-idle"), "t-idle has no AutoDeleteOnIdle");
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM subscriptions s LEFT JOIN topics t ON t.id = s.topic_id WHERE t.id IS NULL"), "0");
    await expectCode(sb.createSender("t-idle-topic").sendMessages({ body: "too late" }), "MessagingEntityNotFound");
    const r = sb.createReceiver("t-idle", "idle", PEEK_LOCK);
    await expectCode(r.receiveMessages(1, { maxWaitTimeInMs: 2000 }), "MessagingEntityNotFound");
    await r.close().catch(() => {});
    await sb.createSender("t-idle").sendMessages({ messageId: "k", body: "keep gets it" });
    assert.deepEqual((await drainSub(sb, "t-idle", "keep", 1)).map((m) => m.messageId), ["k"]);
  });
});
