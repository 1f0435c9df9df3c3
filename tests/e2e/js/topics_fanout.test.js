// Topics: a send fans out to every subscription whose rules match, with the topic's
// sequence number on every copy; no match = accepted and dropped; receiving from a topic
// and sending to a subscription are refused; topics, subscriptions and rules from
// Config.json and from plain SQL (live at once).
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, entitiesReloaded } = require("./util");
const { psql, errorOf, expectNothing } = require("./qs_util");
const { sqlRule, drainSub, brief, storedCounts, rawAttach } = require("./topics_util");

/** How long a change made with plain SQL may take to reach the emulator (its NOTIFY, then the cache reload). */
const topics = [
  { name: "t-fan", subscriptions: [{ name: "s1" }, { name: "s2" }, { name: "s3" }] },
  {
    name: "t-seq",
    subscriptions: [
      { name: "a", rules: [sqlRule("a-or-both", "k = 'a' OR k = 'both'")] },
      { name: "b", rules: [sqlRule("b-or-both", "k = 'b' OR k = 'both'")] },
    ],
  },
  { name: "t-none", subscriptions: [{ name: "only-red", rules: [sqlRule("red", "color = 'red'")] }] },
  {
    name: "t-cfg",
    subscriptions: [
      { name: "plain" },
      { name: "ruled", rules: [sqlRule("r1", "x = 1"), sqlRule("r2", "x = 2", "SET y = 3")] },
    ],
  },
];

const ruleRows = (emu, topic, sub) => psql(emu, `SELECT r.name || ':' || r.filter_type || ':' || coalesce(r.sql_expression, '') ||
  ':' || coalesce(r.action_expression, '') FROM rules r JOIN subscriptions s ON s.id = r.subscription_id JOIN topics t ON t.id = s.topic_id
  WHERE t.name = '${topic}' AND s.name = '${sub}' ORDER BY r.name`).split("\n").filter(Boolean);

emulatorSuite("js topics: fan-out", { topics }, (ctx) => {
  ctx.test("one send to t-fan gives exactly one copy in each of s1, s2, s3, same sequence number and content, no RuleName", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-fan");
    await sender.sendMessages({
      messageId: "f1", body: { order: 1 }, subject: "lbl", correlationId: "cid", contentType: "application/json",
      applicationProperties: { color: "red", n: 5 },
    });
    await sender.close();
    const seqs = [];
    for (const sub of ["s1", "s2", "s3"]) {
      const [m] = await drainSub(sb, "t-fan", sub, 1);
      assert.equal(m.messageId, "f1", `${sub}: messageId`);
      assert.deepEqual(m.body, { order: 1 }, `${sub}: body`);
      assert.equal(m.subject, "lbl", `${sub}: subject`);
      assert.equal(m.correlationId, "cid", `${sub}: correlationId`);
      assert.equal(m.contentType, "application/json", `${sub}: contentType`);
      assert.deepEqual(m.applicationProperties, { color: "red", n: 5 },
        `${sub}: application properties as sent (a $Default copy carries no RuleName)`);
      assert.equal(m.deliveryCount, 0, `${sub}: deliveryCount`);
      seqs.push(m.sequenceNumber.toString());
    }
    assert.deepEqual(seqs, [seqs[0], seqs[0], seqs[0]], `all copies carry the topic's sequence number, got ${seqs}`);
    for (const sub of ["s1", "s2", "s3"]) assert.equal(storedCounts(ctx.emu, `t-fan/Subscriptions/${sub}`), "0,0", `${sub} empty after completing`);
  });

  ctx.test("an array of 3 and a batch of 2 to t-fan: each subscription gets all 5 in order, copies share sequence numbers", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-fan");
    await sender.sendMessages([1, 2, 3].map((i) => ({ messageId: `arr-${i}`, body: i })));
    const batch = await sender.createMessageBatch();
    for (const i of [4, 5]) assert.ok(batch.tryAddMessage({ messageId: `arr-${i}`, body: i }));
    await sender.sendMessages(batch);
    await sender.close();
    const per = {};
    for (const sub of ["s1", "s2", "s3"]) {
      const got = await drainSub(sb, "t-fan", sub, 5);
      assert.deepEqual(got.map((m) => m.messageId), ["arr-1", "arr-2", "arr-3", "arr-4", "arr-5"], `${sub}: order`);
      per[sub] = got.map((m) => m.sequenceNumber.toString());
      for (let i = 1; i < 5; i++) {
        assert.ok(got[i].sequenceNumber.greaterThan(got[i - 1].sequenceNumber), `${sub}: sequence numbers increase: ${per[sub]}`);
      }
    }
    assert.deepEqual(per.s2, per.s1, "s2's copies carry the same sequence numbers as s1's");
    assert.deepEqual(per.s3, per.s1, "s3's copies carry the same sequence numbers as s1's");
  });

  ctx.test("the sequence number is the topic's: a → a only, b → b only, both → a and b with one number above both", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-seq");
    for (const k of ["a", "b", "both"]) await sender.sendMessages({ messageId: `seq-${k}`, body: k, applicationProperties: { k } });
    await sender.close();
    const a = await drainSub(sb, "t-seq", "a", 2);
    const b = await drainSub(sb, "t-seq", "b", 2);
    assert.deepEqual(a.map((m) => m.messageId), ["seq-a", "seq-both"]);
    assert.deepEqual(b.map((m) => m.messageId), ["seq-b", "seq-both"]);
    const [sa, sboth] = a.map((m) => m.sequenceNumber);
    const [sb2, sboth2] = b.map((m) => m.sequenceNumber);
    assert.ok(sb2.greaterThan(sa), `seq-b (${sb2}) was sent after seq-a (${sa}): the topic numbers it higher`);
    assert.ok(sboth.greaterThan(sb2), `seq-both (${sboth}) was sent after seq-b (${sb2}): the topic numbers it higher`);
    assert.equal(sboth2.toString(), sboth.toString(), "seq-both's copies in a and b carry one sequence number");
  });

  ctx.test("no subscription matches: the send is accepted and the message dropped (nothing stored, nothing dead-lettered)", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-none");
    await sender.sendMessages({ messageId: "blue-1", body: "nobody wants me", applicationProperties: { color: "blue" } });
    await sender.sendMessages({ messageId: "none-1", body: "no color at all" });
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM messages m JOIN entities e ON e.id = m.entity_id WHERE e.path LIKE 't-none%'"), "0",
      "an unmatched message must not be stored anywhere (topic or subscription)");
    await sender.sendMessages({ messageId: "red-1", body: "wanted", applicationProperties: { color: "red" } });
    await sender.close();
    const [m] = await drainSub(sb, "t-none", "only-red", 1);
    assert.equal(m.messageId, "red-1");
    await drainSub(sb, "t-none", "only-red", 0, { dlq: true });
  });

  ctx.test("createReceiver on a topic name is refused with a Service Bus error naming the topic", async () => {
    const sb = ctx.client();
    const r = sb.createReceiver("t-fan", PEEK_LOCK);
    const err = await errorOf(r.receiveMessages(1, { maxWaitTimeInMs: 3000 }), "receive from the topic t-fan");
    await r.close().catch(() => {});
    assert.equal(err.name, "ServiceBusError", `expected a ServiceBusError, got ${err.name}: ${err.message}`);
    assert.match(err.message, /Cannot receive from topic 't-fan'/, `error message: ${err.message}`);
  });

  ctx.test("a raw receiver attached to the topic address is refused with amqp:not-allowed; on its subscription it opens", async () => {
    const refused = await rawAttach(ctx.emu.amqpPort, "t-fan", "receiver");
    assert.equal(refused.condition, "amqp:not-allowed", `attach receiver on t-fan: ${JSON.stringify(refused)}`);
    assert.match(String(refused.description), /t-fan/);
    const ok = await rawAttach(ctx.emu.amqpPort, "t-fan/Subscriptions/s1", "receiver");
    assert.deepEqual(ok, { opened: true }, "a receiver on t-fan/Subscriptions/s1 should attach");
  });

  ctx.test("sending to a subscription address is refused (SDK: ServiceBusError; raw: amqp:not-allowed); nothing is stored", async () => {
    const sb = ctx.client();
    const err = await errorOf(sb.createSender("t-fan/Subscriptions/s1").sendMessages({ messageId: "bad", body: "x" }), "send to a subscription");
    assert.equal(err.name, "ServiceBusError", `expected a ServiceBusError, got ${err.name}: ${err.message}`);
    assert.match(err.message, /Cannot send to subscription/, `error message: ${err.message}`);
    const refused = await rawAttach(ctx.emu.amqpPort, "t-fan/Subscriptions/s2", "sender");
    assert.equal(refused.condition, "amqp:not-allowed", `attach sender on t-fan/Subscriptions/s2: ${JSON.stringify(refused)}`);
    const dlqSend = await rawAttach(ctx.emu.amqpPort, "t-fan/Subscriptions/s2/$DeadLetterQueue", "sender");
    assert.equal(dlqSend.condition, "amqp:not-allowed", `attach sender on s2's DLQ: ${JSON.stringify(dlqSend)}`);
    for (const sub of ["s1", "s2", "s3"]) assert.equal(storedCounts(ctx.emu, `t-fan/Subscriptions/${sub}`), "0,0", `${sub} holds nothing`);
  });

  ctx.test("Config.json: a subscription without rules keeps $Default (TrueFilter); given rules replace $Default", async () => {
    assert.deepEqual(ruleRows(ctx.emu, "t-cfg", "plain"), ["$Default:True::"]);
    assert.deepEqual(ruleRows(ctx.emu, "t-cfg", "ruled"), ["r1:Sql:x = 1:", "r2:Sql:x = 2:SET y = 3"]);
    const sb = ctx.client();
    const sender = sb.createSender("t-cfg");
    await sender.sendMessages([
      { messageId: "x0", body: 0, applicationProperties: { x: 0 } },
      { messageId: "x1", body: 1, applicationProperties: { x: 1 } },
      { messageId: "x2", body: 2, applicationProperties: { x: 2 } },
    ]);
    await sender.close();
    assert.deepEqual((await drainSub(sb, "t-cfg", "plain", 3)).map((m) => m.messageId), ["x0", "x1", "x2"]);
    const ruled = await drainSub(sb, "t-cfg", "ruled", 2);
    assert.deepEqual(ruled.map(brief).map(({ messageId, RuleName }) => ({ messageId, RuleName })),
      [{ messageId: "x1", RuleName: undefined }, { messageId: "x2", RuleName: "r2" }]);
    assert.deepEqual(ruled[1].applicationProperties, { x: 2, y: 3, RuleName: "r2" });
  });

  ctx.test("plain SQL: INSERT INTO topics/subscriptions is usable at once; the new subscription has $Default", async () => {
    const sb = ctx.client();
    psql(ctx.emu, "INSERT INTO topics (name) VALUES ('sql-topic')");
    psql(ctx.emu, "INSERT INTO subscriptions (topic_id, name) SELECT id, 'sql-sub' FROM topics WHERE name = 'sql-topic'");
    assert.deepEqual(ruleRows(ctx.emu, "sql-topic", "sql-sub"), ["$Default:True::"], "the trigger gives a new subscription $Default");
    const sender = sb.createSender("sql-topic");
    await sender.sendMessages({ messageId: "q1", body: "via sql" });
    const [m] = await drainSub(sb, "sql-topic", "sql-sub", 1);
    assert.equal(m.body, "via sql");
    // A second subscription added while the sender stays attached gets the next message.
    psql(ctx.emu, "INSERT INTO subscriptions (topic_id, name) SELECT id, 'sql-sub2' FROM topics WHERE name = 'sql-topic'");
    await entitiesReloaded(sb);
    await sender.sendMessages({ messageId: "q2", body: "to both" });
    assert.deepEqual((await drainSub(sb, "sql-topic", "sql-sub", 1)).map((x) => x.messageId), ["q2"]);
    assert.deepEqual((await drainSub(sb, "sql-topic", "sql-sub2", 1)).map((x) => x.messageId), ["q2"]);
    await sender.close();
  });

  ctx.test("plain SQL: a rule inserted (and $Default deleted) applies to the next message sent on an attached sender, once its NOTIFY is in", async () => {
    const sb = ctx.client();
    psql(ctx.emu, "INSERT INTO topics (name) VALUES ('sql-rules')");
    psql(ctx.emu, "INSERT INTO subscriptions (topic_id, name) SELECT id, 'red' FROM topics WHERE name = 'sql-rules'");
    const sender = sb.createSender("sql-rules");
    const receiver = sb.createReceiver("sql-rules", "red", PEEK_LOCK);
    await sender.sendMessages({ messageId: "before", body: 0, applicationProperties: { color: "blue" } });
    const [first] = await receiveExact(receiver, 1);
    assert.equal(first.messageId, "before", "$Default takes everything");
    await receiver.completeMessage(first);
    const sub = "(SELECT s.id FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.name = 'sql-rules' AND s.name = 'red')";
    psql(ctx.emu, `BEGIN; DELETE FROM rules WHERE subscription_id = ${sub};
      INSERT INTO rules (subscription_id, name, filter_type, sql_expression) SELECT ${sub}, 'red-only', 'Sql', 'color = ''red'''; COMMIT;`);
    // (Rule changes over $management are answered only after the reload: rules.test.js.)
    await entitiesReloaded(sb);
    await sender.sendMessages({ messageId: "blue-after", body: 1, applicationProperties: { color: "blue" } });
    await sender.sendMessages({ messageId: "red-after", body: 2, applicationProperties: { color: "red" } });
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "red-after", `only red-after may pass the new rule, got ${JSON.stringify(brief(m))}`);
    await receiver.completeMessage(m);
    await expectNothing(receiver, "sql-rules/red after red-after", 1000);
    // An action rule added with SQL: the next message gives a second copy with RuleName.
    psql(ctx.emu, `INSERT INTO rules (subscription_id, name, filter_type, sql_expression, action_expression)
      SELECT ${sub}, 'stamp', 'Sql', 'color = ''red''', 'SET stamped = ''yes'''`);
    await entitiesReloaded(sb);
    await sender.sendMessages({ messageId: "red-2", body: 3, applicationProperties: { color: "red" } });
    const two = await receiveExact(receiver, 2);
    for (const x of two) await receiver.completeMessage(x);
    const props = two.map((x) => x.applicationProperties).sort((p, q) => String(p.RuleName).localeCompare(String(q.RuleName)));
    assert.deepEqual(props, [{ color: "red", stamped: "yes", RuleName: "stamp" }, { color: "red" }]);
    await receiver.close();
    await sender.close();
  });
  ctx.test("kill -9 right after an acknowledged send: every copy is there after a restart; Config.json rules are kept, not re-applied", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-fan");
    await sender.sendMessages([1, 2, 3].map((i) => ({ messageId: `k${i}`, body: i })));
    await sb.close();
    psql(ctx.emu, `INSERT INTO rules (subscription_id, name, filter_type, sql_expression) SELECT s.id, 'added', 'Sql', 'x = 9'
      FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.name = 't-cfg' AND s.name = 'ruled'`);
    await ctx.emu.kill9();
    await ctx.emu.start();
    const sb2 = ctx.client();
    for (const sub of ["s1", "s2", "s3"]) {
      assert.deepEqual((await drainSub(sb2, "t-fan", sub, 3)).map((m) => m.messageId), ["k1", "k2", "k3"], `${sub} after kill -9`);
    }
    assert.deepEqual(ruleRows(ctx.emu, "t-cfg", "ruled"), ["added:Sql:x = 9:", "r1:Sql:x = 1:", "r2:Sql:x = 2:SET y = 3"],
      "a restart upserts the Config.json rules; it does not drop a rule added since");
    assert.deepEqual(ruleRows(ctx.emu, "t-cfg", "plain"), ["$Default:True::"]);
  }, 90000);
});
