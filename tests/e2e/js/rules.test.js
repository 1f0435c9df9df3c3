// Rules over <topic>/Subscriptions/<sub>/$management with the real SDK's rule
// manager (add-rule, remove-rule, enumerate-rules), the wire encoding seen by a
// raw rhea client (descriptor codes, types, 204, paging, parameters), and a rule
// change applying to the very next message sent to the topic.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const rhea = require("rhea");
const { emulatorSuite } = require("../harness");
const { connect } = require("./raw_amqp");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");

const TOPIC = "orders";

/** Descriptor codes of enumerate-rules (wire-protocol §7.3; JS core-amqp Constants.descriptorCodes). */
const CODES = {
  ruleDescription: 1335734829060,
  sqlFilter: 83483426822,
  trueFilter: 83483426823,
  falseFilter: 83483426824,
  correlationFilter: 83483426825,
  emptyAction: 1335734829061,
  sqlAction: 1335734829062,
};

/** psql on the embedded cluster: socket in <data-dir>/pg/run, user and database sbemu. */
function psql(emu, sql) {
  return execFileSync("psql", ["-h", path.join(emu.dataDir, "pg", "run"), "-U", "sbemu", "-d", "sbemu",
    "-v", "ON_ERROR_STOP=1", "-Atc", sql], { stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
}

async function listAll(ruleManager) {
  const rules = [];
  for await (const r of ruleManager.listRules()) rules.push(r);
  return rules;
}

/** One request on <entity>/$management with a raw rhea connection; resolves with the response message. */
function mgmtRequest(conn, entity, operation, body) {
  return new Promise((resolve, reject) => {
    const node = `${entity}/$management`;
    const replyTo = `reply-${crypto.randomUUID()}`;
    const receiver = conn.open_receiver({ source: { address: node }, target: { address: replyTo } });
    const sender = conn.open_sender({ target: { address: node } });
    const timer = setTimeout(() => reject(new Error(`no answer to ${operation} on ${node}`)), 10000);
    receiver.once("message", (ctx) => {
      clearTimeout(timer);
      sender.close();
      receiver.close();
      resolve(ctx.message);
    });
    sender.once("sendable", () => {
      sender.send({ message_id: crypto.randomUUID(), reply_to: replyTo, application_properties: { operation }, body });
    });
  });
}

const status = (m) => m.application_properties.statusCode;
const described = (t) => ({ code: t.descriptor.value, fields: t.value });

emulatorSuite("js rules", {
  queues: ["plain-q"],
  topics: [{
    name: TOPIC,
    subscriptions: [{ name: "manage" }, { name: "raw" }, { name: "route" }, { name: "empty" }],
  }],
}, (ctx) => {
  ctx.test("a new subscription has $Default: TrueFilter, no action", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    const rules = await listAll(rm);
    assert.deepEqual(rules, [{ name: "$Default", filter: { sqlExpression: "1=1" }, action: {} }]);
  });

  ctx.test("createRule with a SQL filter and a SQL action; listRules gives them back", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    await rm.createRule("Big-Red", { sqlExpression: "color = 'red' AND quantity > 3" },
      { sqlExpression: "SET sys.Label = 'big-red'; SET tagged = true" });
    const rule = (await listAll(rm)).find((r) => r.name === "Big-Red");
    assert.deepEqual(rule, {
      name: "Big-Red",
      filter: { sqlExpression: "color = 'red' AND quantity > 3" },
      action: { sqlExpression: "SET sys.Label = 'big-red'; SET tagged = true" },
    });
  });

  ctx.test("createRule with a correlation filter: every field and typed property round-trips", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    const when = new Date("2024-05-01T12:00:00.250Z");
    const filter = {
      correlationId: "corr-1", messageId: "msg-1", to: "to-1", replyTo: "reply-1", subject: "subject-1",
      sessionId: "session-1", replyToSessionId: "reply-session-1", contentType: "application/json",
      applicationProperties: { color: "blue", count: 7, big: 2 ** 40, negative: -12, ratio: 1.5, ok: true, when },
    };
    await rm.createRule("corr", filter);
    const rule = (await listAll(rm)).find((r) => r.name === "corr");
    assert.ok(rule, "the correlation rule is listed");
    const { applicationProperties, ...fields } = rule.filter;
    const { applicationProperties: sent, ...sentFields } = filter;
    assert.deepEqual(fields, sentFields);
    assert.equal(applicationProperties.color, "blue");
    assert.equal(Number(applicationProperties.count), 7);
    assert.equal(Number(applicationProperties.big), 2 ** 40);
    assert.equal(Number(applicationProperties.negative), -12);
    assert.equal(applicationProperties.ratio, 1.5);
    assert.equal(applicationProperties.ok, true);
    assert.equal(new Date(applicationProperties.when).getTime(), when.getTime());
    assert.deepEqual(Object.keys(applicationProperties).sort(), Object.keys(sent).sort());
    assert.deepEqual(rule.action, {});
  });

  ctx.test("rule names are unique regardless of letter case: MessagingEntityAlreadyExists", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    const err = await expectCode(rm.createRule("BIG-RED", { sqlExpression: "1=1" }), "MessagingEntityAlreadyExists");
    assert.match(err.message, /already exists/);
  });

  ctx.test("deleteRule of a rule that does not exist: MessagingEntityNotFound", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    await expectCode(rm.deleteRule("no-such-rule"), "MessagingEntityNotFound");
  });

  ctx.test("a filter or action that does not parse is refused with its position; the link stays usable", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    let err = await rm.createRule("bad-filter", { sqlExpression: "color = 'red' AND (quantity > 3" })
      .then(() => null, (e) => e);
    assert.ok(err, "a filter with an open parenthesis was accepted");
    assert.match(err.message, /SQL filter of rule 'bad-filter' is invalid: .*column \d+/);
    err = await rm.createRule("bad-action", { sqlExpression: "1=1" }, { sqlExpression: "SET = 5" })
      .then(() => null, (e) => e);
    assert.ok(err, "an action without a property name was accepted");
    assert.match(err.message, /SQL action of rule 'bad-action' is invalid: .*column \d+/);
    await rm.createRule("after-bad", { sqlExpression: "quantity < 0" });
    const names = (await listAll(rm)).map((r) => r.name);
    assert.ok(names.includes("after-bad"), `after-bad missing from ${names}`);
    assert.ok(!names.includes("bad-filter") && !names.includes("bad-action"), `refused rules listed: ${names}`);
  });

  ctx.test("rule names: at most 50 characters, none of @ ? # * / \\", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    let err = await rm.createRule("r".repeat(51), { sqlExpression: "1=1" }).then(() => null, (e) => e);
    assert.ok(err, "a 51-character name was accepted");
    assert.match(err.message, /51 characters long; the limit is 50/);
    err = await rm.createRule("a#b", { sqlExpression: "1=1" }).then(() => null, (e) => e);
    assert.ok(err, "a name with # was accepted");
    assert.match(err.message, /contains '#'/);
    await rm.createRule("r".repeat(50), { sqlExpression: "1=1" });
    await rm.deleteRule("r".repeat(50));
  });

  ctx.test("deleteRule('$Default') removes it; names match regardless of case", async () => {
    const rm = ctx.client().createRuleManager(TOPIC, "manage");
    await rm.deleteRule("$default");
    const names = (await listAll(rm)).map((r) => r.name);
    // in rule-name order, whatever the letter case (as Service Bus lists them), not in the order made
    assert.deepEqual(names, ["after-bad", "Big-Red", "corr"]);
  });

  ctx.test("enumerate-rules on the wire: descriptor codes, field types, created-at, paging, 204", async () => {
    const { conn } = await connect(ctx.emu.amqpPort);
    try {
      const sub = `${TOPIC}/Subscriptions/manage`;
      let resp = await mgmtRequest(conn, sub, "com.microsoft:enumerate-rules",
        { top: rhea.types.wrap_int(100), skip: rhea.types.wrap_int(0) });
      assert.equal(status(resp), 200);
      const rules = resp.body.rules;
      assert.ok(Array.isArray(rules) && rules.length === 3, `rules: ${JSON.stringify(rules)}`);
      const byName = {};
      for (const entry of rules) {
        const d = described(entry["rule-description"]);
        assert.equal(d.code, CODES.ruleDescription);
        assert.equal(d.fields.length, 4);
        assert.equal(d.fields[2].type.typecode, 0xa1); // name: str8
        assert.equal(d.fields[3].type.typecode, 0x83); // created-at: timestamp
        byName[d.fields[2].value] = d.fields;
      }
      const [sqlFilter, sqlAction] = byName["Big-Red"].map((f) => f.descriptor && described(f));
      assert.equal(sqlFilter.code, CODES.sqlFilter);
      assert.deepEqual(sqlFilter.fields.map((f) => f.value), ["color = 'red' AND quantity > 3", 20]);
      assert.equal(sqlFilter.fields[1].type.typecode, 0x54); // compatibility-level: int (smallint encoding)
      assert.equal(sqlAction.code, CODES.sqlAction);
      assert.deepEqual(sqlAction.fields.map((f) => f.value), ["SET sys.Label = 'big-red'; SET tagged = true", 20]);
      const corr = described(byName.corr[0]);
      assert.equal(corr.code, CODES.correlationFilter);
      assert.equal(corr.fields.length, 9);
      assert.equal(described(byName.corr[1]).code, CODES.emptyAction);
      // created-at is the emulator's clock at the add, in the order the rules were added
      const created = ["Big-Red", "corr", "after-bad"].map((n) => byName[n][3].value.getTime());
      assert.ok(created[0] <= created[1] && created[1] <= created[2], `created-at: ${created}`);
      assert.ok(Math.abs(created[2] - Date.now()) < 60000, `created-at ${new Date(created[2])} is not now`);
      // paging: top/skip in any integer type, in the listing order
      resp = await mgmtRequest(conn, sub, "com.microsoft:enumerate-rules",
        { top: rhea.types.wrap_long(1), skip: rhea.types.wrap_uint(1) });
      assert.equal(status(resp), 200);
      assert.equal(resp.body.rules.length, 1);
      assert.equal(described(resp.body.rules[0]["rule-description"]).fields[2].value, "Big-Red");
      resp = await mgmtRequest(conn, sub, "com.microsoft:enumerate-rules",
        { top: rhea.types.wrap_int(10), skip: rhea.types.wrap_int(3) });
      assert.equal(status(resp), 204);
      // $Default of an untouched subscription is a true-filter
      resp = await mgmtRequest(conn, `${TOPIC}/Subscriptions/empty`, "com.microsoft:enumerate-rules",
        { top: rhea.types.wrap_int(10), skip: rhea.types.wrap_int(0) });
      const def = described(resp.body.rules[0]["rule-description"]);
      assert.equal(def.fields[2].value, "$Default");
      assert.equal(described(def.fields[0]).code, CODES.trueFilter);
      assert.deepEqual(described(def.fields[0]).fields, []);
      assert.equal(described(def.fields[1]).code, CODES.emptyAction);
    } finally {
      conn.close();
    }
  });

  ctx.test("raw add-rule: filter and action parameters are kept; a queue's node refuses rules", async () => {
    const { conn } = await connect(ctx.emu.amqpPort);
    try {
      const sub = `${TOPIC}/Subscriptions/raw`;
      let resp = await mgmtRequest(conn, sub, "com.microsoft:add-rule", {
        "rule-name": "with-params",
        "rule-description": rhea.types.wrap_map({
          "sql-filter": rhea.types.wrap_map({
            expression: "quantity > @min AND color = @color",
            parameters: rhea.types.wrap_map({ "@min": rhea.types.wrap_long(5), "@color": "red" }),
          }),
          "sql-rule-action": rhea.types.wrap_map({
            expression: "SET note = @note",
            parameters: rhea.types.wrap_map({ "@note": "from-param" }),
          }),
        }),
      });
      assert.equal(status(resp), 200, resp.application_properties.statusDescription);
      assert.equal(psql(ctx.emu, "SELECT concat_ws('|', r.filter_type, r.filter_parameters::text, r.action_parameters::text)"
        + " FROM rules r JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'raw' AND r.name = 'with-params'"),
        'Sql|{"@min": 5, "@color": "red"}|{"@note": "from-param"}');
      // without its parameters the same filter does not parse
      resp = await mgmtRequest(conn, sub, "com.microsoft:add-rule", {
        "rule-name": "no-params",
        "rule-description": rhea.types.wrap_map({
          "sql-filter": rhea.types.wrap_map({ expression: "quantity > @min" }),
        }),
      });
      assert.equal(status(resp), 400);
      assert.equal(resp.application_properties.errorCondition, "com.microsoft:argument-error");
      assert.match(resp.application_properties.statusDescription, /@min/);
      // both filters at once
      resp = await mgmtRequest(conn, sub, "com.microsoft:add-rule", {
        "rule-name": "both",
        "rule-description": rhea.types.wrap_map({
          "sql-filter": rhea.types.wrap_map({ expression: "1=1" }),
          "correlation-filter": rhea.types.wrap_map({ "correlation-id": "x" }),
        }),
      });
      assert.equal(status(resp), 400);
      // rules live on subscriptions only
      for (const entity of ["plain-q", TOPIC]) {
        resp = await mgmtRequest(conn, entity, "com.microsoft:enumerate-rules",
          { top: rhea.types.wrap_int(10), skip: rhea.types.wrap_int(0) });
        assert.equal(status(resp), 400);
        assert.equal(resp.application_properties.errorCondition, "amqp:not-allowed");
        assert.match(resp.application_properties.statusDescription, /applies to subscriptions only/);
      }
    } finally {
      conn.close();
    }
  });

  ctx.test("a rule change applies to the very next message sent to the topic", async () => {
    const sb = ctx.client();
    const rm = sb.createRuleManager(TOPIC, "route");
    const sender = sb.createSender(TOPIC);
    const receiver = sb.createReceiver(TOPIC, "route", PEEK_LOCK);
    const drain = async (n) => {
      const got = await receiveExact(receiver, n);
      for (const m of got) await receiver.completeMessage(m);
      const extra = await receiver.receiveMessages(5, { maxWaitTimeInMs: 500 });
      assert.deepEqual(extra.map((m) => m.messageId), [], "more messages than the rules let through");
      return got;
    };
    await sender.sendMessages({ messageId: "before", body: "all pass" });
    assert.deepEqual((await drain(1)).map((m) => m.messageId), ["before"]);

    await rm.createRule("only-red", { sqlExpression: "color = 'red'" }, { sqlExpression: "SET sys.Label = 'was-red'" });
    await rm.deleteRule("$Default");
    await sender.sendMessages([
      { messageId: "red", body: 1, applicationProperties: { color: "red" } },
      { messageId: "blue", body: 2, applicationProperties: { color: "blue" } },
      { messageId: "none", body: 3 },
    ]);
    const [red] = await drain(1);
    assert.equal(red.messageId, "red");
    assert.equal(red.subject, "was-red");

    await rm.deleteRule("only-red");
    await sender.sendMessages({ messageId: "nothing-matches", body: 4, applicationProperties: { color: "red" } });
    await rm.createRule("blue-corr", { applicationProperties: { color: "blue" } });
    await sender.sendMessages([
      { messageId: "blue-2", body: 5, applicationProperties: { color: "blue" } },
      { messageId: "red-2", body: 6, applicationProperties: { color: "red" } },
    ]);
    assert.deepEqual((await drain(1)).map((m) => m.messageId), ["blue-2"]);
    await receiver.close();
    await sender.close();
  });
});
