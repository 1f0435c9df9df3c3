// Topics, subscriptions and rules over the management API with both JS admin
// clients (see admin_util.js): create with options and read back, update,
// runtime figures from real traffic, rules of every filter kind with typed
// parameters and properties, and messages routed by what was made here at
// once; rules made over AMQP ($management) or SQL read back the same.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { psql } = require("./qs_util");
const { PEEK_LOCK, receiveExact } = require("./util");
const { FLAVOURS, adminClient, failure, all } = require("./admin_util");

/** Without the keys whose value is undefined (the SDK sets sqlParameters: undefined). */
const defined = (o) => JSON.parse(JSON.stringify(o));

async function drain(receiver, n) {
  const got = await receiveExact(receiver, n);
  for (const m of got) await receiver.completeMessage(m);
  const extra = await receiver.receiveMessages(5, { maxWaitTimeInMs: 500 });
  assert.equal(extra.length, 0, `expected no more than ${n}, got also ${JSON.stringify(extra.map((m) => m.body))}`);
  return got;
}

emulatorSuite("js admin: topics, subscriptions, rules", { queues: ["fwd-target"] }, (ctx) => {
  for (const flavour of FLAVOURS) {
    const p = flavour === "beta" ? "b-" : "s-";

    ctx.test(`${flavour}: topic with options, read back, updated, counted`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const opts = {
        defaultMessageTimeToLive: "PT3H",
        maxSizeInMegabytes: 4096,
        requiresDuplicateDetection: true,
        duplicateDetectionHistoryTimeWindow: "PT3M",
        enableBatchedOperations: false,
        supportOrdering: true,
        autoDeleteOnIdle: "PT1H",
        userMetadata: "topic meta",
        status: "Active",
      };
      const t = await admin.createTopic(`${p}topic`, opts);
      const got = await admin.getTopic(`${p}topic`);
      for (const x of [t, got]) for (const [k, v] of Object.entries(opts)) assert.deepEqual(x[k], v, k);
      got.userMetadata = "new meta";
      got.status = "SendDisabled";
      await admin.updateTopic(got);
      const again = await admin.getTopic(`${p}topic`);
      assert.equal(again.userMetadata, "new meta");
      assert.equal(again.status, "SendDisabled");
      again.status = "Active";
      await admin.updateTopic(again);
      // SupportOrdering: true unless told otherwise, as Service Bus answers; false is kept, and updated
      const plain = await admin.createTopic(`${p}plain`);
      assert.equal(plain.supportOrdering, true, "a topic made with no options supports ordering");
      assert.equal((await admin.getTopic(`${p}plain`)).supportOrdering, true);
      await admin.createTopic(`${p}unordered`, { supportOrdering: false });
      const unordered = await admin.getTopic(`${p}unordered`);
      assert.equal(unordered.supportOrdering, false);
      unordered.supportOrdering = true;
      await admin.updateTopic(unordered);
      assert.equal((await admin.getTopic(`${p}unordered`)).supportOrdering, true);
      await admin.createSubscription(`${p}topic`, "a");
      await admin.createSubscription(`${p}topic`, "b");
      const sender = ctx.client().createSender(`${p}topic`);
      await sender.scheduleMessages({ body: "later" }, new Date(Date.now() + 3600 * 1000));
      await sender.sendMessages({ body: "now", messageId: `${p}now` });
      await sender.close();
      const rt = await admin.getTopicRuntimeProperties(`${p}topic`);
      assert.equal(rt.name, `${p}topic`);
      assert.equal(rt.subscriptionCount, 2);
      assert.equal(rt.scheduledMessageCount, 1);
      assert.ok(rt.sizeInBytes > 0, `a topic's size holds its subscriptions': ${rt.sizeInBytes}`);
      const sub = await admin.getSubscriptionRuntimeProperties(`${p}topic`, "a");
      assert.equal(sub.activeMessageCount, 1);
      assert.equal(sub.totalMessageCount, 1);
      const topics = (await all(admin.listTopics())).map((x) => x.name);
      assert.ok(topics.includes(`${p}topic`), JSON.stringify(topics));
      const listedRt = (await all(admin.listTopicsRuntimeProperties())).find((x) => x.name === `${p}topic`);
      assert.equal(listedRt.subscriptionCount, 2);
    });

    ctx.test(`${flavour}: subscription with options, read back, updated, listed by page`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const topic = `${p}subs`;
      await admin.createTopic(topic);
      const opts = {
        lockDuration: "PT20S",
        requiresSession: true,
        defaultMessageTimeToLive: "PT30M",
        deadLetteringOnMessageExpiration: true,
        deadLetteringOnFilterEvaluationExceptions: false,
        maxDeliveryCount: 5,
        enableBatchedOperations: false,
        status: "ReceiveDisabled",
        userMetadata: "sub meta",
        autoDeleteOnIdle: "PT2H",
        forwardDeadLetteredMessagesTo: "fwd-target",
      };
      const created = await admin.createSubscription(topic, "Full", opts);
      const got = await admin.getSubscription(topic, "full");
      for (const s of [created, got]) {
        assert.equal(s.topicName, topic);
        assert.equal(s.subscriptionName, "Full", "the name as it was created, whatever the case asked");
        for (const [k, v] of Object.entries(opts)) {
          if (k === "forwardDeadLetteredMessagesTo") assert.match(s[k], /^sb:\/\/localhost:\d+\/fwd-target$/);
          else assert.deepEqual(s[k], v, k);
        }
      }
      got.maxDeliveryCount = 9;
      got.status = "Active";
      await admin.updateSubscription(got);
      const again = await admin.getSubscription(topic, "Full");
      assert.equal(again.maxDeliveryCount, 9);
      assert.equal(again.status, "Active");
      again.requiresSession = false;
      assert.equal((await failure(admin.updateSubscription(again), "RequiresSession change")).statusCode, 400);
      for (const n of ["s3", "s1", "s2"]) await admin.createSubscription(topic, n);
      const pages = [];
      for await (const page of admin.listSubscriptions(topic).byPage({ maxPageSize: 2 })) pages.push(page.map((s) => s.subscriptionName));
      assert.deepEqual(pages.flat(), ["Full", "s1", "s2", "s3"]);
      assert.ok(pages.every((pg) => pg.length <= 2));
      assert.ok((await all(admin.listSubscriptionsRuntimeProperties(topic))).every((s) => s.totalMessageCount === 0));
      assert.equal(await admin.subscriptionExists(topic, "s2"), true);
      await admin.deleteSubscription(topic, "s2");
      assert.equal(await admin.subscriptionExists(topic, "s2"), false);
      assert.equal((await failure(admin.getSubscription(topic, "s2"), "a deleted subscription")).code, "MessageEntityNotFoundError");
      assert.equal((await failure(admin.createSubscription(topic, "s1"), "twice")).code, "MessageEntityAlreadyExistsError");
      assert.equal((await failure(admin.createSubscription(`${p}no-topic`, "x"), "no topic")).code, "MessageEntityNotFoundError");
      assert.equal((await failure(all(admin.listSubscriptions(`${p}no-topic`)), "no topic")).statusCode, 404);
      // deleting the topic takes its subscriptions
      await admin.deleteTopic(topic);
      assert.equal(psql(ctx.emu, `SELECT count(*) FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.name = '${topic}'`), "0");
    });

    ctx.test(`${flavour}: rules of every kind, typed values, and routing by them at once`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const topic = `${p}rules`;
      await admin.createTopic(topic);
      // created with its rule: SQL filter with a parameter and an action
      await admin.createSubscription(topic, "blue", {
        defaultRuleOptions: {
          name: "BlueRule",
          filter: { sqlExpression: "Color = @c", sqlParameters: { "@c": "Blue" } },
          action: { sqlExpression: "SET Color = 'BlueProcessed'; SET Seen = @n", sqlParameters: { "@n": 7 } },
        },
      });
      const blueRules = await all(admin.listRules(topic, "blue"));
      assert.deepEqual(blueRules.map((r) => r.name), ["BlueRule"], "the rule replaced $Default");
      assert.deepEqual(defined(blueRules[0].filter), { sqlExpression: "Color = @c", sqlParameters: { "@c": "Blue" } });
      assert.deepEqual(defined(blueRules[0].action), { sqlExpression: "SET Color = 'BlueProcessed'; SET Seen = @n", sqlParameters: { "@n": 7 } });
      // a correlation rule with typed properties
      await admin.createSubscription(topic, "corr");
      const when = new Date("2000-01-02T03:04:05.678Z");
      const props = { s: "text", n: 2.5, i: 42, b: true, d: when };
      const corr = { correlationId: "cid", subject: "red", to: "to", replyTo: "rt", replyToSessionId: "rts", sessionId: "sid", messageId: "mid", contentType: "ct", applicationProperties: props };
      const created = await admin.createRule(topic, "corr", "c1", corr);
      assert.equal(created.name, "c1");
      const got = await admin.getRule(topic, "corr", "c1");
      assert.deepEqual(got.filter, corr);
      assert.ok(got.filter.applicationProperties.d instanceof Date);
      assert.equal(typeof got.filter.applicationProperties.b, "boolean");
      await admin.deleteRule(topic, "corr", "$Default");
      // a plain SQL rule, then changed with If-Match
      await admin.createSubscription(topic, "big");
      await admin.deleteRule(topic, "big", "$Default");
      await admin.createRule(topic, "big", "size", { sqlExpression: "Size > 10" });
      const rule = await admin.getRule(topic, "big", "size");
      rule.filter = { sqlExpression: "Size > 100" };
      rule.action = { sqlExpression: "SET Big = TRUE" };
      await admin.updateRule(topic, "big", rule);
      assert.deepEqual(defined((await admin.getRule(topic, "big", "size")).filter), { sqlExpression: "Size > 100" });
      assert.equal(await admin.ruleExists(topic, "big", "size"), true);
      assert.equal(await admin.ruleExists(topic, "big", "$Default"), false);
      // the subscriptions route by these rules at once
      const sb = ctx.client();
      const sender = sb.createSender(topic);
      await sender.sendMessages([
        { body: "blue", applicationProperties: { Color: "Blue" } },
        { body: "red", applicationProperties: { Color: "Red", Size: 50 } },
        { body: "huge", applicationProperties: { Size: 500 } },
        { body: "match", correlationId: "cid", subject: "red", to: "to", replyTo: "rt", replyToSessionId: "rts", sessionId: "sid", messageId: "mid", contentType: "ct", applicationProperties: props },
        { body: "almost", correlationId: "cid", subject: "red", to: "to", replyTo: "rt", replyToSessionId: "rts", sessionId: "sid", messageId: "mid2", contentType: "ct", applicationProperties: props },
      ]);
      await sender.close();
      const blue = await drain(sb.createReceiver(topic, "blue", PEEK_LOCK), 1);
      assert.equal(blue[0].body, "blue");
      assert.equal(blue[0].applicationProperties.Color, "BlueProcessed", "the action ran");
      assert.equal(blue[0].applicationProperties.Seen, 7);
      const big = await drain(sb.createReceiver(topic, "big", PEEK_LOCK), 1);
      assert.equal(big[0].body, "huge");
      assert.equal(big[0].applicationProperties.Big, true);
      const rt = await admin.getSubscriptionRuntimeProperties(topic, "corr");
      assert.equal(rt.activeMessageCount, 1, "only the message matching every correlation field and property");
      // rules list by page, and their errors
      for (const n of ["r3", "R1", "r2"]) await admin.createRule(topic, "big", n, { sqlExpression: `x = '${n}'` });
      const names = [];
      for await (const page of admin.listRules(topic, "big").byPage({ maxPageSize: 2 })) {
        assert.ok(page.length <= 2);
        names.push(...page.map((r) => r.name));
      }
      assert.deepEqual(names, ["R1", "r2", "r3", "size"], "rules list in name order, whatever the letter case, not in the order they were made");
      assert.equal((await failure(admin.createRule(topic, "big", "r1", { sqlExpression: "1=1" }), "twice")).code, "MessageEntityAlreadyExistsError");
      assert.equal((await failure(admin.getRule(topic, "big", "nope"), "missing")).code, "MessageEntityNotFoundError");
      assert.equal((await failure(admin.getRule(topic, "nope", "r1"), "missing subscription")).code, "MessageEntityNotFoundError");
      assert.equal((await failure(admin.deleteRule(topic, "big", "nope"), "missing")).code, "MessageEntityNotFoundError");
      const bad = await failure(admin.createRule(topic, "big", "bad", { sqlExpression: "Color = = 'x'" }), "bad SQL");
      assert.equal(bad.statusCode, 400);
      assert.match(bad.message, /SQL filter of rule 'bad' is invalid/);
      const badAction = await failure(admin.createRule(topic, "big", "bad", { sqlExpression: "1=1" }, { sqlExpression: "SET" }), "bad action");
      assert.equal(badAction.statusCode, 400);
      assert.match(badAction.message, /action of rule 'bad' is invalid/);
    });

    ctx.test(`${flavour}: rules made over AMQP or with SQL read back the same`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const topic = `${p}mixed`;
      await admin.createTopic(topic);
      await admin.createSubscription(topic, "s");
      const rm = ctx.client().createRuleManager(topic, "s");
      await rm.createRule("amqp", { sqlExpression: "a > 3" }, { sqlExpression: "SET b = 1" });
      const viaAmqp = await admin.getRule(topic, "s", "amqp");
      assert.deepEqual(defined(viaAmqp.filter), { sqlExpression: "a > 3" });
      assert.deepEqual(defined(viaAmqp.action), { sqlExpression: "SET b = 1" });
      psql(ctx.emu, `INSERT INTO rules (subscription_id, name, filter_type, correlation) SELECT s.id, 'sql', 'Correlation', '{"Label": "l", "Properties": {"k": "v", "n": 5}}' FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.name = '${topic}' AND s.name = 's'`);
      const viaSql = await admin.getRule(topic, "s", "sql");
      assert.deepEqual(viaSql.filter, { correlationId: undefined, subject: "l", to: undefined, replyTo: undefined, replyToSessionId: undefined, sessionId: undefined, messageId: undefined, contentType: undefined, applicationProperties: { k: "v", n: 5 } });
      const names = (await all(admin.listRules(topic, "s"))).map((r) => r.name);
      assert.deepEqual(names, ["$Default", "amqp", "sql"]);
      // and what is made here, $management lists
      await admin.createRule(topic, "s", "http", { sqlExpression: "c = 'd'" });
      const listed = [];
      for await (const r of rm.listRules()) listed.push(r.name);
      assert.deepEqual(listed, ["$Default", "amqp", "http", "sql"]);
    });
  }
});
