// Namespaces (README "Namespaces"): one emulator, several namespaces, through the real JS SDK.
// A client is in the namespace its host name names (sb://<name>.localhost) or, without one, the
// namespace its SharedAccessKeyName names; RootManageSharedAccessKey on plain localhost is the
// default namespace, as before. Entities of the same name in two namespaces are two entities:
// messages, sequence numbers and counts never cross.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const { emulatorSuite, makeConfig } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { psql } = require("./qs_util");
const Long = require("long");

const SAS_KEY = "SAS_KEY_VALUE";
const DEFAULT_KEY = "RootManageSharedAccessKey";

// Config.json with three namespaces: the default (first), "suite-a" and "ns2", each with a queue
// "orders"; the default and suite-a also a topic "events" with a subscription "all", and suite-a
// a queue "fwd" that forwards to its own "orders".
function config() {
  const base = makeConfig(["orders"], [{ name: "events", subscriptions: [{ name: "all" }] }]);
  const [first] = base.UserConfig.Namespaces;
  const queue = (name, props = {}) => ({ ...first.Queues[0], Name: name, Properties: { ...first.Queues[0].Properties, ...props } });
  base.UserConfig.Namespaces.push(
    { Name: "suite-a", Queues: [queue("orders"), queue("fwd", { ForwardTo: "orders" })], Topics: first.Topics },
    { Name: "ns2", Queues: [queue("orders")] },
  );
  return base;
}

function connStr(port, keyName, host = "localhost") {
  return `Endpoint=sb://${host}:${port};SharedAccessKeyName=${keyName};SharedAccessKey=${SAS_KEY};UseDevelopmentEmulator=true;`;
}

async function sendAll(client, entity, ids) {
  const s = client.createSender(entity);
  await s.sendMessages(ids.map((id) => ({ messageId: id, body: id })));
  await s.close();
}

/** Receives exactly the given MessageIds (in any order) and completes them; fails on anything else. */
async function receiveOnly(client, entity, ids) {
  const r = client.createReceiver(entity, PEEK_LOCK);
  try {
    const got = await receiveExact(r, ids.length);
    assert.deepEqual(got.map((m) => m.messageId).sort(), [...ids].sort());
    for (const m of got) await r.completeMessage(m);
    const more = await r.receiveMessages(1, { maxWaitTimeInMs: 1000 });
    assert.equal(more.length, 0, `nothing else: got ${more.map((m) => m.messageId)}`);
    return got;
  } finally {
    await r.close();
  }
}

async function peekCount(client, entity) {
  const r = client.createReceiver(entity, PEEK_LOCK);
  try {
    return (await r.peekMessages(100, { fromSequenceNumber: Long.fromNumber(1) })).length;
  } finally {
    await r.close();
  }
}

emulatorSuite("js namespaces", { config: config() }, (ctx) => {
  let dflt, suiteA, ns2;
  const tag = crypto.randomUUID().slice(0, 8);

  ctx.test("three clients, three namespaces: each gets only its own messages", async () => {
    dflt = ctx.client(ctx.emu.connectionString); // RootManageSharedAccessKey on localhost: the default
    suiteA = ctx.client(connStr(ctx.emu.amqpPort, "suite-a")); // by SharedAccessKeyName
    // By host name: Node does not resolve *.localhost, so the SDK connects to 127.0.0.1 while the
    // connection string (the AMQP open's hostname and the $cbs audience) names ns2.localhost. The
    // key name is the default's: a namespace chosen by host keeps its own key names.
    ns2 = ctx.client(connStr(ctx.emu.amqpPort, DEFAULT_KEY, "ns2.localhost"),
      { customEndpointAddress: `sb://127.0.0.1:${ctx.emu.amqpPort}` });
    await sendAll(dflt, "orders", [`d1-${tag}`, `d2-${tag}`]);
    await sendAll(suiteA, "orders", [`a1-${tag}`, `a2-${tag}`, `a3-${tag}`]);
    await sendAll(ns2, "orders", [`n1-${tag}`]);
    // the counts differ: each namespace's "orders" is its own queue
    assert.equal(await peekCount(dflt, "orders"), 2);
    assert.equal(await peekCount(suiteA, "orders"), 3);
    assert.equal(await peekCount(ns2, "orders"), 1);
    // sequence numbers are per entity, so per namespace: each "orders" starts at 1
    for (const c of [dflt, suiteA, ns2]) {
      const r = c.createReceiver("orders", PEEK_LOCK);
      const [first] = await r.peekMessages(1, { fromSequenceNumber: Long.fromNumber(1) });
      assert.equal(Number(first.sequenceNumber), 1);
      await r.close();
    }
    await receiveOnly(ns2, "orders", [`n1-${tag}`]);
    await receiveOnly(suiteA, "orders", [`a1-${tag}`, `a2-${tag}`, `a3-${tag}`]);
    await receiveOnly(dflt, "orders", [`d1-${tag}`, `d2-${tag}`]);
  });

  ctx.test("the host decides over the key name; any letter case names the same namespace", async () => {
    // key name suite-a, host ns2.localhost: ns2
    const both = ctx.client(connStr(ctx.emu.amqpPort, "suite-a", "NS2.localhost"),
      { customEndpointAddress: `sb://127.0.0.1:${ctx.emu.amqpPort}` });
    await sendAll(both, "orders", [`h-${tag}`]);
    assert.equal(await peekCount(suiteA, "orders"), 0);
    await receiveOnly(ns2, "orders", [`h-${tag}`]);
    const upper = ctx.client(connStr(ctx.emu.amqpPort, "SUITE-A"));
    await sendAll(upper, "orders", [`u-${tag}`]);
    await receiveOnly(suiteA, "orders", [`u-${tag}`]);
  });

  ctx.test("topics route within their namespace, and ForwardTo never leaves it", async () => {
    await sendAll(suiteA, "events", [`e-${tag}`]);
    await sendAll(suiteA, "fwd", [`f-${tag}`]);
    assert.equal(await peekCount(dflt, "events/Subscriptions/all"), 0);
    assert.equal(await peekCount(dflt, "orders"), 0);
    await receiveOnly(suiteA, "events/Subscriptions/all", [`e-${tag}`]);
    await receiveOnly(suiteA, "orders", [`f-${tag}`]);
    // the default's topic still works as before
    await sendAll(dflt, "events", [`de-${tag}`]);
    assert.equal(await peekCount(suiteA, "events/Subscriptions/all"), 0);
    await receiveOnly(dflt, "events/Subscriptions/all", [`de-${tag}`]);
  });

  ctx.test("an entity of another namespace is MessagingEntityNotFound", async () => {
    // ns2 has no topic "events", and "fwd" is suite-a's
    await expectCode(ns2.createSender("events").sendMessages({ body: "x" }), "MessagingEntityNotFound");
    await expectCode(dflt.createReceiver("fwd", PEEK_LOCK).receiveMessages(1, { maxWaitTimeInMs: 3000 }),
      "MessagingEntityNotFound");
  });

  ctx.test("a namespace not seen before is made on first use, empty; SQL gives it entities", async () => {
    const name = `fresh-${tag}`;
    const fresh = ctx.client(connStr(ctx.emu.amqpPort, name));
    await expectCode(fresh.createSender("orders").sendMessages({ body: "x" }), "MessagingEntityNotFound");
    assert.equal(psql(ctx.emu, `SELECT count(*) FROM namespaces WHERE name = '${name}'`), "1");
    psql(ctx.emu, `INSERT INTO queues (name, namespace_id) SELECT 'orders', id FROM namespaces WHERE name = '${name}'`);
    const fresh2 = ctx.client(connStr(ctx.emu.amqpPort, name));
    await sendAll(fresh2, "orders", [`x-${tag}`]);
    assert.equal(await peekCount(dflt, "orders"), 0);
    assert.equal(await peekCount(suiteA, "orders"), 0);
    await receiveOnly(fresh2, "orders", [`x-${tag}`]);
    // names are unique per namespace, not across them
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM queues WHERE name = 'orders'"), "4");
  });

  ctx.test("a key name that cannot name a namespace is UnauthorizedAccess, and says why", async () => {
    const bad = ctx.client(connStr(ctx.emu.amqpPort, "not.a.namespace"));
    let err;
    try {
      await bad.createSender("orders").sendMessages({ body: "x" });
    } catch (e) {
      err = e instanceof AggregateError ? e.errors[e.errors.length - 1] : e;
    }
    assert.ok(err, "the send was refused");
    assert.equal(err.code, "UnauthorizedAccess");
    assert.match(err.message, /SharedAccessKeyName 'not\.a\.namespace' names a namespace/);
    assert.match(err.message, /letters, digits, '-' and '_'/);
  });

  ctx.test("Config.json's namespaces are rows of the namespaces table, the default first", async () => {
    assert.equal(psql(ctx.emu, "SELECT name FROM namespaces WHERE id <= 3 ORDER BY id").split("\n").join(","),
      "sbemulatorns,suite-a,ns2");
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM queues q JOIN namespaces n ON n.id = q.namespace_id" +
      " WHERE n.name = 'suite-a'"), "2");
  });
});
