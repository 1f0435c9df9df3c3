// Live SQL seeding (sql/README.md): a row inserted, updated or deleted in queues, topics,
// subscriptions or rules takes effect at once in every emulator on the database, links already
// attached included, and the CHECK constraints of migration 008 refuse, by name, what the
// management plane refuses. Two emulators share one PostgreSQL: `one` runs the embedded cluster,
// `two` reaches it with --postgres; every change is made with psql and seen through both.
// (sql_entities.test.js covers the first steps for queues: an INSERT usable at once, SendDisabled
// on an attached sender, a DELETE detaching an attached receiver; topics_fanout.test.js a rule
// inserted with SQL.)
"use strict";

const assert = require("node:assert/strict");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { emulatorPairSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode, uniqueId } = require("./util");
const { psql, expectNothing } = require("./qs_util");
const { drainSub } = require("./topics_util");

/** psql expecting a refusal: returns its error text (stderr), or fails when the statement passed. */
function psqlRefused(emu, sql) {
  try {
    execFileSync("psql", ["-h", path.join(emu.dataDir, "pg", "run"), "-U", "sbemu", "-d", "sbemu",
      "-v", "ON_ERROR_STOP=1", "-Atc", sql], { stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    return String(e.stderr);
  }
  return assert.fail(`expected PostgreSQL to refuse: ${sql}`);
}

/**
 * Returns once each client's emulator has refilled its entity cache since the call: a look-up of a
 * name that does not exist waits for a refill that starts after it (amqp10/broker/broker_entities.c), so when
 * it answers MessagingEntityNotFound, every change committed before is what that emulator routes by,
 * and its attached links have taken it. No sleeping on the NOTIFY.
 */
async function caughtUp(...clients) {
  for (const c of clients) {
    await expectCode(c.createSender(uniqueId("no-such")).sendMessages({ body: "probe" }), "MessagingEntityNotFound");
  }
}

/** A subscription's id, as SQL. */
const subId = (topic, sub) =>
  `(SELECT s.id FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.name = '${topic}' AND s.name = '${sub}')`;

/** A topic and its subscriptions (each with $Default), inserted with one statement. */
function seedTopic(emu, topic, ...subs) {
  psql(emu, `WITH t AS (INSERT INTO topics (name) VALUES ('${topic}') RETURNING id)
    INSERT INTO subscriptions (topic_id, name) SELECT id, s FROM t, unnest(ARRAY['${subs.join("', '")}']) AS s`);
}

/** One message from sender to receiver (completed): both links are attached and the path works. */
async function through(sender, receiver, messageId) {
  await sender.sendMessages({ messageId, body: messageId });
  const [m] = await receiveExact(receiver, 1);
  assert.equal(m.messageId, messageId);
  await receiver.completeMessage(m);
}

emulatorPairSuite("js live SQL seeding, two emulators on one database", { one: { name: "sql-seeding-1" }, two: { name: "sql-seeding-2" } }, (ctx) => {
  const one = ctx.one;

  ctx.test("queues: a session queue INSERTed with its columns is usable at once in both, with its lock duration", async () => {
    const { c1, c2 } = ctx;
    psql(one, "INSERT INTO queues (name, requires_session, lock_duration) VALUES ('seed-sess', true, '30 seconds')");
    await c2.createSender("seed-sess").sendMessages({ messageId: "s1", body: "in a session", sessionId: "alpha" });
    const r = await c1.acceptSession("seed-sess", "alpha", PEEK_LOCK);
    const [m] = await receiveExact(r, 1);
    assert.equal(m.messageId, "s1");
    const lockMs = r.sessionLockedUntilUtc.getTime() - Date.now();
    assert.ok(lockMs > 20000 && lockMs <= 31000, `the session lock should last lock_duration (30 s), ${lockMs} ms are left`);
    await r.completeMessage(m);
    await r.close();
  });

  ctx.test("queues: UPDATE reaches attached links: a receiver held while ReceiveDisabled and given its messages once Active, a sender forwarding once forward_to is set", async () => {
    const { c1, c2 } = ctx;
    psql(one, "INSERT INTO queues (name) VALUES ('seed-upd'), ('seed-upd-target')");
    const sender = c1.createSender("seed-upd");
    const receiver = c2.createReceiver("seed-upd", PEEK_LOCK);
    await through(sender, receiver, "direct");

    // An attached receiver is held (gets nothing) while the queue is ReceiveDisabled; a new one is refused.
    psql(one, "UPDATE queues SET status = 'ReceiveDisabled' WHERE name = 'seed-upd'");
    await caughtUp(c1, c2);
    await sender.sendMessages({ messageId: "held", body: 2 }); // ReceiveDisabled still takes sends
    await expectNothing(receiver, "seed-upd while ReceiveDisabled", 1500);
    await expectCode(c2.createReceiver("seed-upd", PEEK_LOCK).receiveMessages(1, { maxWaitTimeInMs: 2000 }),
      "MessagingEntityDisabled");
    psql(one, "UPDATE queues SET status = 'Active' WHERE name = 'seed-upd'");
    await caughtUp(c2);
    const [h] = await receiveExact(receiver, 1);
    assert.equal(h.messageId, "held", "the same receiver gets what waited once the queue is Active");
    await receiver.completeMessage(h);

    psql(one, "UPDATE queues SET forward_to = 'seed-upd-target' WHERE name = 'seed-upd'");
    await caughtUp(c1);
    await sender.sendMessages({ messageId: "forwarded", body: 3 });
    const target = c2.createReceiver("seed-upd-target", PEEK_LOCK);
    const [f] = await receiveExact(target, 1);
    assert.equal(f.messageId, "forwarded");
    await target.completeMessage(f);
    await target.close();
    await expectNothing(receiver, "seed-upd once it forwards", 1000);
    await receiver.close();
    await sender.close();
  });

  ctx.test("queues: DELETE refuses the next send of senders already attached, in both emulators", async () => {
    const { c1, c2 } = ctx;
    psql(one, "INSERT INTO queues (name) VALUES ('seed-del')");
    const s1 = c1.createSender("seed-del");
    const s2 = c2.createSender("seed-del");
    await s1.sendMessages({ body: "one" });
    await s2.sendMessages({ body: "two" });
    psql(one, "DELETE FROM queues WHERE name = 'seed-del'");
    await caughtUp(c1, c2);
    await expectCode(s1.sendMessages({ body: "after" }), "MessagingEntityNotFound");
    await expectCode(s2.sendMessages({ body: "after" }), "MessagingEntityNotFound");
    assert.equal(psql(one, "SELECT count(*) FROM messages m LEFT JOIN entities e ON e.id = m.entity_id WHERE e.id IS NULL"), "0",
      "the queue's messages went with it");
  });

  ctx.test("topics: SendDisabled refuses the next send of an attached sender and Active takes it back; DELETE takes subscriptions and rules along and detaches their receivers", async () => {
    const { c1, c2 } = ctx;
    seedTopic(one, "seed-topic", "all");
    const sender = c2.createSender("seed-topic");
    const receiver = c1.createReceiver("seed-topic", "all", PEEK_LOCK);
    await through(sender, receiver, "before");

    psql(one, "UPDATE topics SET status = 'SendDisabled' WHERE name = 'seed-topic'");
    await caughtUp(c2);
    await expectCode(sender.sendMessages({ messageId: "refused", body: 2 }), "MessagingEntityDisabled");
    psql(one, "UPDATE topics SET status = 'Active' WHERE name = 'seed-topic'");
    await caughtUp(c2);
    await sender.sendMessages({ messageId: "after", body: 3 });
    const [a] = await receiveExact(receiver, 1);
    assert.equal(a.messageId, "after", "the attached receiver gets what the re-activated topic takes");
    await receiver.completeMessage(a);

    psql(one, "DELETE FROM topics WHERE name = 'seed-topic'");
    assert.equal(psql(one, `SELECT count(*) FROM subscriptions s LEFT JOIN topics t ON t.id = s.topic_id WHERE t.id IS NULL`), "0");
    assert.equal(psql(one, `SELECT count(*) FROM rules r LEFT JOIN subscriptions s ON s.id = r.subscription_id WHERE s.id IS NULL`), "0");
    await caughtUp(c1, c2);
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 }), "MessagingEntityNotFound");
    await expectCode(sender.sendMessages({ body: "gone" }), "MessagingEntityNotFound");
  });

  ctx.test("subscriptions: one INSERTed with forward_to and its own SQL rule in one transaction routes the next message of a sender already attached; forward_to set to NULL keeps them", async () => {
    const { c1, c2 } = ctx;
    psql(one, "INSERT INTO queues (name) VALUES ('seed-fwd-q')");
    seedTopic(one, "seed-fwd", "keep");
    const sender = c1.createSender("seed-fwd");
    await sender.sendMessages({ messageId: "m0", body: 0, applicationProperties: { n: 50 } });
    assert.deepEqual((await drainSub(c2, "seed-fwd", "keep", 1)).map((m) => m.messageId), ["m0"]);

    psql(one, `BEGIN;
      INSERT INTO subscriptions (topic_id, name, forward_to) SELECT id, 'big', 'seed-fwd-q' FROM topics WHERE name = 'seed-fwd';
      DELETE FROM rules WHERE subscription_id = ${subId("seed-fwd", "big")};
      INSERT INTO rules (subscription_id, name, filter_type, sql_expression) SELECT ${subId("seed-fwd", "big")}, 'over-10', 'Sql', 'n > 10';
      COMMIT;`);
    await caughtUp(c1);
    await sender.sendMessages([
      { messageId: "small", body: 1, applicationProperties: { n: 5 } },
      { messageId: "large", body: 2, applicationProperties: { n: 50 } },
    ]);
    const q = c2.createReceiver("seed-fwd-q", PEEK_LOCK);
    const [fw] = await receiveExact(q, 1);
    assert.equal(fw.messageId, "large", "only what the new rule takes is forwarded");
    await q.completeMessage(fw);
    await expectNothing(q, "seed-fwd-q after large", 1000);
    assert.deepEqual((await drainSub(c2, "seed-fwd", "keep", 2)).map((m) => m.messageId), ["small", "large"]);

    psql(one, "UPDATE subscriptions SET forward_to = NULL WHERE name = 'big'");
    await caughtUp(c1);
    await sender.sendMessages({ messageId: "large-2", body: 3, applicationProperties: { n: 60 } });
    assert.deepEqual((await drainSub(c2, "seed-fwd", "big", 1)).map((m) => m.messageId), ["large-2"]);
    await expectNothing(q, "seed-fwd-q once forward_to is NULL", 1000);
    await q.close();
    await sender.close();
  });

  ctx.test("subscriptions: ReceiveDisabled holds an attached receiver and refuses a new one; DELETE detaches it and takes its rules along, the topic routes on", async () => {
    const { c1, c2 } = ctx;
    seedTopic(one, "seed-subs", "gone", "stays");
    const sender = c1.createSender("seed-subs");
    const receiver = c2.createReceiver("seed-subs", "gone", PEEK_LOCK);
    await through(sender, receiver, "m1");

    psql(one, "UPDATE subscriptions SET status = 'ReceiveDisabled' WHERE name = 'gone'");
    await caughtUp(c1, c2);
    await sender.sendMessages({ messageId: "m2", body: 2 }); // the subscription still takes its copy
    await expectNothing(receiver, "gone while ReceiveDisabled", 1500);
    await expectCode(c2.createReceiver("seed-subs", "gone", PEEK_LOCK).receiveMessages(1, { maxWaitTimeInMs: 2000 }),
      "MessagingEntityDisabled");
    // (its copy: a messages row, or still in the topic's log: migration 018)
    assert.equal(psql(one, `SELECT count(*) + sbemu_log_pending(${subId("seed-subs", "gone")}, 10) FROM messages` +
      ` WHERE entity_id = ${subId("seed-subs", "gone")}`), "1");

    const id = psql(one, `SELECT ${subId("seed-subs", "gone")}`);
    psql(one, "DELETE FROM subscriptions WHERE name = 'gone'");
    assert.equal(psql(one, `SELECT count(*) FROM rules WHERE subscription_id = ${id}`), "0", "its $Default went with it");
    await caughtUp(c1, c2);
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 }), "MessagingEntityNotFound");
    await receiver.close().catch(() => {});
    assert.equal(psql(one, `SELECT count(*) FROM messages WHERE entity_id = ${id}`), "0", "its messages went with it");
    assert.equal(psql(one, `SELECT count(*) FROM sbemu_cursors WHERE entity_id = ${id}`), "0", "its cursor went with it");
    await sender.sendMessages({ messageId: "m3", body: 3 });
    assert.deepEqual((await drainSub(c2, "seed-subs", "stays", 3)).map((x) => x.messageId), ["m1", "m2", "m3"]);
    await sender.close();
  });

  ctx.test("rules: a correlation rule with properties and an action, INSERTed, UPDATEd and DELETEd with SQL, decides what a receiver already attached gets", async () => {
    const { c1, c2 } = ctx;
    seedTopic(one, "seed-rules", "eu");
    const sender = c1.createSender("seed-rules");
    const receiver = c2.createReceiver("seed-rules", "eu", PEEK_LOCK);
    const send = (id, props, subject) => sender.sendMessages({ messageId: id, body: id, subject, applicationProperties: props });
    const take = async () => {
      const got = await receiver.receiveMessages(10, { maxWaitTimeInMs: 1500 });
      for (const x of got) await receiver.completeMessage(x);
      return got.map((x) => ({ id: x.messageId, ...x.applicationProperties }));
    };
    await through(sender, receiver, "any"); // $Default takes everything

    psql(one, `BEGIN; DELETE FROM rules WHERE subscription_id = ${subId("seed-rules", "eu")};
      INSERT INTO rules (subscription_id, name, filter_type, correlation, action_expression)
        SELECT ${subId("seed-rules", "eu")}, 'region', 'Correlation', '{"Properties": {"region": "eu"}}', 'SET routed = ''by-sql''';
      COMMIT;`);
    await caughtUp(c1);
    await send("us-1", { region: "us" });
    await send("eu-1", { region: "eu" });
    await receiveExact(receiver, 1).then(async ([x]) => {
      assert.deepEqual({ id: x.messageId, ...x.applicationProperties }, { id: "eu-1", region: "eu", routed: "by-sql", RuleName: "region" });
      await receiver.completeMessage(x);
    });
    assert.deepEqual(await take(), [], "us-1 is not for this rule");

    psql(one, `UPDATE rules SET correlation = '{"Label": "urgent", "Properties": {"region": "us"}}', action_expression = NULL
      WHERE name = 'region' AND subscription_id = ${subId("seed-rules", "eu")}`);
    await caughtUp(c1);
    await send("eu-2", { region: "eu" }, "urgent");
    await send("us-2", { region: "us" }, "urgent");
    await send("us-3", { region: "us" }, "later");
    const [u] = await receiveExact(receiver, 1);
    assert.deepEqual({ id: u.messageId, ...u.applicationProperties }, { id: "us-2", region: "us" });
    await receiver.completeMessage(u);
    assert.deepEqual(await take(), [], "only us-2 has both the label and the property");

    psql(one, `DELETE FROM rules WHERE subscription_id = ${subId("seed-rules", "eu")}`);
    await caughtUp(c1);
    await send("none", { region: "us" }, "urgent");
    assert.deepEqual(await take(), [], "a subscription without rules takes nothing");
    await receiver.close();
    await sender.close();
  });

  ctx.test("CHECK constraints refuse what the management plane refuses, naming the rule, and the running entities stay as they were", async () => {
    const { c1, c2 } = ctx;
    psql(one, "INSERT INTO queues (name) VALUES ('seed-checks')");
    seedTopic(one, "seed-checks-t", "s");
    const sub = subId("seed-checks-t", "s");
    const refused = [
      ["INSERT INTO queues (name, lock_duration) VALUES ('seed-short-lock', '4 seconds')", "queues_lock_duration_5s_to_5m"],
      ["INSERT INTO queues (name) VALUES ('seed#hash')", "queues_name_path_syntax"],
      ["UPDATE queues SET forward_to = 'SEED-CHECKS' WHERE name = 'seed-checks'", "queues_forward_to_not_itself"],
      ["UPDATE queues SET forward_dead_lettered_messages_to = '' WHERE name = 'seed-checks'", "queues_forward_dead_lettered_messages_to_not_empty"],
      ["UPDATE queues SET max_delivery_count = 0 WHERE name = 'seed-checks'", "queues_max_delivery_count_at_least_1"],
      ["UPDATE queues SET max_size_in_megabytes = 81921 WHERE name = 'seed-checks'", "queues_max_size_in_megabytes_1_to_81920"],
      ["UPDATE queues SET default_message_time_to_live = '999 milliseconds' WHERE name = 'seed-checks'", "queues_default_message_time_to_live_at_least_1s"],
      ["UPDATE queues SET user_metadata = repeat('m', 1025) WHERE name = 'seed-checks'", "queues_user_metadata_max_1024_chars"],
      ["UPDATE queues SET status = 'Paused' WHERE name = 'seed-checks'", "queues_status_active_disabled_send_or_receive_disabled"],
      ["INSERT INTO topics (name, duplicate_detection_history_time_window) VALUES ('seed-t2', '7 days 1 second')", "topics_duplicate_detection_history_time_window_20s_to_7d"],
      ["UPDATE topics SET status = 'ReceiveDisabled' WHERE name = 'seed-checks-t'", "topics_status_active_disabled_or_send_disabled"],
      ["INSERT INTO topics (name) VALUES (repeat('t', 261))", "topics_name_max_260_chars"],
      ["INSERT INTO subscriptions (topic_id, name) SELECT id, 'a/b' FROM topics WHERE name = 'seed-checks-t'", "subscriptions_name_no_forbidden_chars"],
      ["INSERT INTO subscriptions (topic_id, name) SELECT id, repeat(chr(233), 51) FROM topics WHERE name = 'seed-checks-t'", "subscriptions_name_max_50_chars"],
      [`UPDATE subscriptions SET forward_to = 'Seed-Checks-T' WHERE id = ${sub}`, "subscriptions_forward_to_not_own_topic"],
      [`UPDATE subscriptions SET auto_delete_on_idle = '4 minutes' WHERE id = ${sub}`, "subscriptions_auto_delete_on_idle_at_least_5m"],
      [`UPDATE subscriptions SET status = 'SendDisabled' WHERE id = ${sub}`, "subscriptions_status_active_disabled_or_receive_disabled"],
      [`INSERT INTO rules (subscription_id, name, filter_type) SELECT ${sub}, 'no-sql', 'Sql'`, "rules_sql_filter_needs_sql_expression"],
      [`INSERT INTO rules (subscription_id, name, filter_type, correlation) SELECT ${sub}, 'empty', 'Correlation', '{}'`, "rules_correlation_filter_needs_a_property"],
      [`INSERT INTO rules (subscription_id, name, filter_type, correlation) SELECT ${sub}, 'subj', 'Correlation', '{"Subject": "x"}'`, "rules_correlation_known_keys_and_types"],
      [`INSERT INTO rules (subscription_id, name, filter_type) SELECT ${sub}, 'a*b', 'True'`, "rules_name_no_forbidden_chars"],
      [`UPDATE rules SET action_expression = 'SET a = ''' || repeat('x', 1015) || '''' WHERE subscription_id = ${sub}`, "rules_action_expression_max_1024_chars"],
      [`UPDATE rules SET sql_expression = repeat('x', 1025) WHERE subscription_id = ${sub}`, "rules_sql_expression_max_1024_chars"],
    ];
    const before = psql(one, "SELECT string_agg(q::text, ';' ORDER BY q::text) FROM (SELECT name, status, forward_to, max_delivery_count FROM queues WHERE name LIKE 'seed-checks%' OR name LIKE 'seed-short%' OR name LIKE 'seed#%') q");
    const misses = [];
    for (const [sql, constraint] of refused) {
      const text = psqlRefused(one, sql);
      if (!text.includes(`violates check constraint "${constraint}"`)) misses.push(`${sql}\n  expected ${constraint}, got: ${text.trim()}`);
    }
    assert.deepEqual(misses, [], "each refusal names its rule");
    assert.equal(psql(one, "SELECT string_agg(q::text, ';' ORDER BY q::text) FROM (SELECT name, status, forward_to, max_delivery_count FROM queues WHERE name LIKE 'seed-checks%' OR name LIKE 'seed-short%' OR name LIKE 'seed#%') q"), before);
    assert.equal(psql(one, `SELECT string_agg(name || ':' || filter_type, ',') FROM rules WHERE subscription_id = ${sub}`), "$Default:True");
    // the same through the other emulator's clients: nothing changed
    await caughtUp(c1, c2);
    await c2.createSender("seed-checks").sendMessages({ messageId: "still", body: 1 });
    const r = c1.createReceiver("seed-checks", PEEK_LOCK);
    assert.deepEqual((await receiveExact(r, 1)).map((m) => m.messageId), ["still"]);
    await r.close();
    await c1.createSender("seed-checks-t").sendMessages({ messageId: "routed", body: 2 });
    assert.deepEqual((await drainSub(c2, "seed-checks-t", "s", 1)).map((m) => m.messageId), ["routed"]);
  });

});
