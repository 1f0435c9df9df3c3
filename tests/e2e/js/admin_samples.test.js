// The calls of the four official JS samples that use the admin client
// (azure-sdk-for-js sdk/servicebus/service-bus/samples/v7/javascript:
// advanced/administrationClient.js, advanced/listingEntities.js,
// advanced/ruleManager.js, topicSubscriptionWithRuleOperationsSample.js), in
// their order, with @azure/service-bus 7.9.5 as the samples use it: a host
// name and a credential (a NamedKeyCredential here: the emulator takes SAS
// only), so https and AMQP over TLS on one port, the AMQP port; or a
// connection string without UseDevelopmentEmulator. Each runs in a child
// process because Node reads NODE_EXTRA_CA_CERTS (the emulator's certificate)
// only at start-up; it prints what it saw as JSON and the test checks it.
"use strict";

const assert = require("node:assert/strict");
const path = require("node:path");
const { execFile } = require("node:child_process");
const { emulatorSuite, SAS_KEY, SAS_KEY_NAME } = require("../harness");

const PRELUDE = `
const { ServiceBusAdministrationClient, ServiceBusClient } = require("@azure/service-bus");
const { AzureNamedKeyCredential } = require("@azure/core-auth");
const fqdn = process.env.SERVICEBUS_FQDN;
const credential = new AzureNamedKeyCredential(process.env.KEY_NAME, process.env.KEY);
const out = {};
const done = (p) => p.then(() => console.log(JSON.stringify(out)), (e) => { console.log(JSON.stringify({ error: e.code || e.name, message: e.message })); process.exit(1); });
`;

const ADMINISTRATION_CLIENT = `${PRELUDE}
done((async () => {
  const admin = new ServiceBusAdministrationClient(fqdn, credential);
  out.created = (await admin.createQueue("sample-queue")).name;
  const q = await admin.getQueue("sample-queue");
  out.before = q.maxDeliveryCount;
  q.maxDeliveryCount = 12;
  out.after = (await admin.updateQueue(q)).maxDeliveryCount;
  out.total = (await admin.getQueueRuntimeProperties("sample-queue")).totalMessageCount;
  out.namespace = (await admin.getNamespaceProperties()).name;
  await admin.deleteQueue("sample-queue");
  out.exists = await admin.queueExists("sample-queue");
})());
`;

const LISTING_ENTITIES = `${PRELUDE}
done((async () => {
  const admin = new ServiceBusAdministrationClient(fqdn, credential);
  for (let i = 0; i < 7; i++) await admin.createQueue("random-queue_" + i);
  const names = (list) => list.map((q) => q.name).filter((n) => n.startsWith("random-queue_"));
  const runs = [];
  let seen = [];
  for await (const q of admin.listQueues()) seen.push(q);
  runs.push(names(seen));
  seen = [];
  let it = admin.listQueues(), item = await it.next();
  while (!item.done) { seen.push(item.value); item = await it.next(); }
  runs.push(names(seen));
  for (const settings of [undefined, { maxPageSize: 2 }, { maxPageSize: 3 }]) {
    seen = [];
    for await (const page of admin.listQueues().byPage(settings)) seen.push(...page);
    runs.push(names(seen));
  }
  const first = (await admin.listQueues().byPage({ maxPageSize: 2 }).next()).value;
  out.marker = first.continuationToken;
  const rest = (await admin.listQueues().byPage({ continuationToken: first.continuationToken, maxPageSize: 10 }).next()).value;
  runs.push(names([...first, ...rest]));
  out.runs = runs;
  for (let i = 0; i < 7; i++) await admin.deleteQueue("random-queue_" + i);
  out.left = names(await (async () => { const a = []; for await (const q of admin.listQueues()) a.push(q); return a; })());
})());
`;

const RULE_MANAGER = `${PRELUDE}
done((async () => {
  const admin = new ServiceBusAdministrationClient(fqdn, credential);
  const topic = "topic-rulemanager-sample" + Date.now(), sub = "subscription-rule-manager";
  await admin.createTopic(topic);
  await admin.createSubscription(topic, sub);
  const client = new ServiceBusClient(fqdn, credential);
  const rm = client.createRuleManager(topic, sub);
  const list = async () => { const a = []; for await (const r of rm.listRules()) a.push(r); return a; };
  out.first = (await list()).map((r) => r.name);
  await rm.createRule("sqlRule", { sqlExpression: "price > 10" });
  await rm.createRule("correlationRule", { correlationId: "correlationId", subject: "label", messageId: "messageId",
    applicationProperties: { key1: "value1", key2: 2, key3: true, key4: new Date("2000-01-01T00:00:00Z") },
    replyTo: "replyTo", replyToSessionId: "replyToSessionId", sessionId: "sessionId", to: "to" });
  const all = await list();
  out.second = all.map((r) => r.name);
  out.correlation = all.find((r) => r.name === "correlationRule").filter;
  out.pages = [];
  for await (const page of rm.listRules().byPage({ maxPageSize: 2 })) out.pages.push(page.map((r) => r.name));
  // the admin client sees what the rule manager made
  out.viaAdmin = (await admin.getRule(topic, sub, "correlationRule")).filter.applicationProperties.key2;
  await rm.deleteRule("sqlRule");
  await rm.deleteRule("correlationRule");
  out.last = (await list()).map((r) => r.name);
  await admin.deleteTopic(topic);
  out.topicExists = await admin.topicExists(topic);
  await client.close();
})());
`;

const TOPIC_FILTERS = `
const { ServiceBusClient, ServiceBusAdministrationClient } = require("@azure/service-bus");
const cs = process.env.SERVICEBUS_CONNECTION_STRING;
const out = {};
const topic = "TopicSubscriptionWithRuleOperationsSample" + Date.now();
const messages = [
  { subject: "Red", body: "test-red1" }, { subject: "Red", body: "test-red2", correlationId: "notimportant" },
  { subject: "Red", body: "test-red3", correlationId: "important" }, { subject: "Blue", body: "test-blue1" },
  { subject: "Blue", body: "test-blue2", correlationId: "notimportant" }, { subject: "Blue", body: "test-blue3", correlationId: "important" },
  { subject: "Green", body: "test-green1" }, { subject: "Green", body: "test-green2", correlationId: "notimportant" },
  { subject: "Green", body: "test-green3", correlationId: "important" },
];
(async () => {
  const sb = new ServiceBusClient(cs);
  const admin = new ServiceBusAdministrationClient(cs);
  await admin.createTopic(topic);
  await admin.createSubscription(topic, "NoFilterSubscription");
  await admin.deleteRule(topic, "NoFilterSubscription", "$Default");
  await admin.createRule(topic, "NoFilterSubscription", "$Default", { sqlExpression: "1=1" });
  await admin.createSubscription(topic, "RedSqlFilterSubscription", { defaultRuleOptions: { name: "RedSqlRule", filter: { sqlExpression: "Color = 'Red'" } } });
  await admin.createSubscription(topic, "BlueSqlFilterWithActionSubscription", { defaultRuleOptions: { name: "BlueSqlRule",
    filter: { sqlExpression: "Color = 'Blue'" }, action: { sqlExpression: "SET Color = 'BlueProcessed'" } } });
  await admin.createSubscription(topic, "ImportantCorrelationFilterSubscription", { defaultRuleOptions: { name: "ImportantCorrelationRule",
    filter: { subject: "Red", correlationId: "important" } } });
  await sb.createSender(topic).sendMessages(messages);
  const received = await sb.createReceiver(topic, "ImportantCorrelationFilterSubscription").receiveMessages(10, { maxWaitTimeInMs: 5000 });
  out.received = received.map((m) => m.body);
  out.counts = {};
  for (const s of ["NoFilterSubscription", "RedSqlFilterSubscription", "BlueSqlFilterWithActionSubscription"])
    out.counts[s] = (await admin.getSubscriptionRuntimeProperties(topic, s)).activeMessageCount;
  out.rules = {};
  for (const s of ["NoFilterSubscription", "RedSqlFilterSubscription", "BlueSqlFilterWithActionSubscription", "ImportantCorrelationFilterSubscription"]) {
    out.rules[s] = [];
    for await (const r of admin.listRules(topic, s)) out.rules[s].push(r.name);
  }
  for (const s of Object.keys(out.rules)) await admin.deleteSubscription(topic, s);
  out.left = (await admin.getTopicRuntimeProperties(topic)).subscriptionCount;
  await sb.close();
})().then(() => console.log(JSON.stringify(out)), (e) => { console.log(JSON.stringify({ error: e.code || e.name, message: e.message })); process.exit(1); });
`;

function run(script, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, ["-e", script], { cwd: path.join(__dirname, ".."), env: { ...process.env, ...env }, timeout: 120000 },
      (err, stdout, stderr) => {
        const last = stdout.trim().split("\n").pop();
        let parsed = null;
        try {
          parsed = JSON.parse(last);
        } catch {}
        resolve({ err, out: parsed, stdout, stderr });
      });
  });
}

emulatorSuite("js admin: the official samples' calls", {}, (ctx) => {
  const env = () => ({
    NODE_EXTRA_CA_CERTS: ctx.emu.certPath,
    SERVICEBUS_FQDN: `localhost:${ctx.emu.amqpPort}`,
    KEY_NAME: SAS_KEY_NAME,
    KEY: SAS_KEY,
    SERVICEBUS_CONNECTION_STRING: `Endpoint=sb://localhost:${ctx.emu.amqpPort};SharedAccessKeyName=${SAS_KEY_NAME};SharedAccessKey=${SAS_KEY}`,
  });
  const expectRun = async (script) => {
    const r = await run(script, env());
    assert.ok(r.out && !r.out.error, `child failed: ${r.stdout}\n${r.stderr}`);
    return r.out;
  };

  ctx.test("administrationClient.js: create, get, update, runtime, namespace, delete, exists", async () => {
    const out = await expectRun(ADMINISTRATION_CLIENT);
    assert.deepEqual(out, { created: "sample-queue", before: 10, after: 12, total: 0, namespace: "sbemulatorns", exists: false });
  });

  ctx.test("listingEntities.js: every way of listing finds the seven queues, by page and by marker", async () => {
    const out = await expectRun(LISTING_ENTITIES);
    const seven = [0, 1, 2, 3, 4, 5, 6].map((i) => `random-queue_${i}`);
    assert.equal(out.runs.length, 6);
    for (const r of out.runs) assert.deepEqual(r, seven);
    assert.equal(out.marker, "2");
    assert.deepEqual(out.left, []);
  });

  ctx.test("ruleManager.js: rules over $management on a topic made over HTTPS", async () => {
    const out = await expectRun(RULE_MANAGER);
    assert.deepEqual(out.first, ["$Default"]);
    // in rule-name order, as Service Bus lists them (the SDK's own rule manager test expects this)
    assert.deepEqual(out.second, ["$Default", "correlationRule", "sqlRule"]);
    assert.deepEqual(out.pages, [["$Default", "correlationRule"], ["sqlRule"]]);
    assert.equal(out.correlation.subject, "label");
    assert.deepEqual(out.correlation.applicationProperties, { key1: "value1", key2: 2, key3: true, key4: "2000-01-01T00:00:00.000Z" });
    assert.equal(out.viaAdmin, 2);
    assert.deepEqual(out.last, ["$Default"]);
    assert.equal(out.topicExists, false);
  });

  ctx.test("topicSubscriptionWithRuleOperationsSample.js: four subscriptions, their rules, one message through", async () => {
    const out = await expectRun(TOPIC_FILTERS);
    assert.deepEqual(out.received, ["test-red3"]);
    // the color is no property of these messages: only the 1=1 subscription takes them
    assert.deepEqual(out.counts, { NoFilterSubscription: 9, RedSqlFilterSubscription: 0, BlueSqlFilterWithActionSubscription: 0 });
    assert.deepEqual(out.rules, {
      NoFilterSubscription: ["$Default"],
      RedSqlFilterSubscription: ["RedSqlRule"],
      BlueSqlFilterWithActionSubscription: ["BlueSqlRule"],
      ImportantCorrelationFilterSubscription: ["ImportantCorrelationRule"],
    });
    assert.equal(out.left, 0);
  });
});
