// Namespaces over HTTP (README "Namespaces"): the ATOM management API, the movable clock, reset and
// snapshots, fault rules and /metrics, each per namespace, with the real JS admin clients and the
// real JS SDK. A management request is in the namespace its Host header names (<name>.localhost),
// else the one its SAS token's key name names; the $sbemu routes that name a namespace in their
// path act on that one, with a token for it or for the default namespace.
"use strict";

const assert = require("node:assert/strict");
const http = require("node:http");
const crypto = require("node:crypto");
const { emulatorSuite, makeConfig, SAS_KEY } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { FLAVOURS, adminClient, sasToken, rawRequest, failure, all } = require("./admin_util");
const { putRule, deleteRule, failureOf } = require("./faults_util");
const Long = require("long");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The default namespace and "suite-a" each declare a queue "orders" (Config.json).
function config() {
  const base = makeConfig(["orders"]);
  base.UserConfig.Namespaces.push({ Name: "suite-a", Queues: [{ ...base.UserConfig.Namespaces[0].Queues[0] }] });
  return base;
}

function connStr(port, keyName) {
  return `Endpoint=sb://localhost:${port};SharedAccessKeyName=${keyName};SharedAccessKey=${SAS_KEY};UseDevelopmentEmulator=true;`;
}

/** A request to the HTTP port with a Host header of our choosing (Node does not resolve *.localhost). */
function hostRequest(emu, host, path, { method = "GET", keyName = "RootManageSharedAccessKey", auth = true, signedFor = host } = {}) {
  const headers = { host: `${host}:${emu.httpPort}` };
  if (auth) headers.authorization = sasToken(`http://${signedFor}:${emu.httpPort}/${path}`, { keyName });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: emu.httpPort, path: `/${path}`, method, headers, timeout: 15000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode, body }));
      });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on("error", reject);
    req.end();
  });
}

/** A $sbemu request signed with a key name (the namespace its token is for). */
async function sbemu(emu, method, rest, keyName = "RootManageSharedAccessKey") {
  const url = `http://localhost:${emu.httpPort}/$sbemu/${rest}`;
  const r = await rawRequest(emu, `$sbemu/${rest}`, { method, auth: sasToken(url, { keyName }) });
  let json = null;
  try {
    json = JSON.parse(r.body);
  } catch {}
  return { status: r.status, json, body: r.body };
}

async function peekCount(client, entity) {
  const r = client.createReceiver(entity, PEEK_LOCK);
  try {
    return (await r.peekMessages(100, { fromSequenceNumber: Long.fromNumber(1) })).length;
  } finally {
    await r.close();
  }
}

/** Polls until peekCount(client, entity) === n, or fails after timeoutMs. */
async function countBecomes(client, entity, n, what, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    if ((last = await peekCount(client, entity)) === n) return;
    await sleep(200);
  }
  assert.fail(`${what}: ${entity} holds ${last} message(s), expected ${n}`);
}

emulatorSuite("js namespaces over HTTP", { config: config() }, (ctx) => {
  const tag = crypto.randomUUID().slice(0, 8);
  let dflt, suiteA;

  for (const flavour of FLAVOURS) {
    ctx.test(`${flavour}: the admin client manages the namespace its key name names, and no other`, async () => {
      const mine = adminClient(ctx.emu, flavour, { keyName: "suite-a" });
      const root = adminClient(ctx.emu, flavour);
      const name = `made-${flavour.replace(/\W/g, "")}-${tag}`;
      await mine.createQueue(name, { maxDeliveryCount: 3 });
      assert.equal((await mine.getQueue(name)).maxDeliveryCount, 3);
      assert.equal(await root.queueExists(name), false, "the default namespace has no such queue");
      const listed = (await all(mine.listQueues())).map((q) => q.name);
      assert.ok(listed.includes(name) && listed.includes("orders"), JSON.stringify(listed));
      assert.ok(!(await all(root.listQueues())).map((q) => q.name).includes(name));
      // the same name in two namespaces is two queues
      await root.createQueue(name, { maxDeliveryCount: 5 });
      assert.equal((await mine.getQueue(name)).maxDeliveryCount, 3);
      assert.equal((await root.getQueue(name)).maxDeliveryCount, 5);
      assert.equal((await mine.getNamespaceProperties()).name, "suite-a");
      assert.equal((await root.getNamespaceProperties()).name, "sbemulatorns");
      await root.deleteQueue(name);
      assert.equal((await mine.getQueue(name)).maxDeliveryCount, 3, "a delete in one namespace leaves the other's");
      await mine.deleteQueue(name);
    });
  }

  ctx.test("runtime counts are per namespace, and a namespace made by the admin API takes AMQP clients", async () => {
    dflt = ctx.client(ctx.emu.connectionString);
    suiteA = ctx.client(connStr(ctx.emu.amqpPort, "suite-a"));
    const s = suiteA.createSender("orders");
    await s.sendMessages([{ body: 1 }, { body: 2 }]);
    await s.close();
    const mine = adminClient(ctx.emu, "beta", { keyName: "suite-a" });
    const root = adminClient(ctx.emu, "beta");
    assert.equal((await mine.getQueueRuntimeProperties("orders")).activeMessageCount, 2);
    assert.equal((await root.getQueueRuntimeProperties("orders")).activeMessageCount, 0);
    // a namespace no one has used: the admin API makes it, and a client of its key name finds its queue
    const fresh = adminClient(ctx.emu, "beta", { keyName: `fresh-${tag}` });
    await fresh.createQueue("work");
    const c = ctx.client(connStr(ctx.emu.amqpPort, `fresh-${tag}`));
    await c.createSender("work").sendMessages({ messageId: "w1", body: "w" });
    const [m] = await receiveExact(c.createReceiver("work", PEEK_LOCK), 1);
    assert.equal(m.messageId, "w1");
    await expectCode(dflt.createSender("work").sendMessages({ body: "x" }), "MessagingEntityNotFound");
  });

  ctx.test("the Host header <name>.localhost chooses the namespace, whatever the key name", async () => {
    const listed = await hostRequest(ctx.emu, "suite-a.localhost", "$Resources/Queues?api-version=2021-05");
    assert.equal(listed.status, 200, listed.body);
    assert.match(listed.body, /<title type="text">orders<\/title>/);
    const info = await hostRequest(ctx.emu, "SUITE-A.localhost", "$namespaceinfo?api-version=2021-05");
    assert.match(info.body, /<Name>SUITE-A<\/Name>|<Name>suite-a<\/Name>/);
    // a Host no namespace may be: 400 with a token signed for localhost, 401 with one signed for that host
    let bad = await hostRequest(ctx.emu, "a_b.c.localhost", "$Resources/Queues?api-version=2021-05", { signedFor: "localhost" });
    assert.equal(bad.status, 400, bad.body);
    assert.match(bad.body, /The host 'a_b\.c\.localhost' names no namespace: The namespace name 'a_b\.c' holds '\.'/);
    bad = await hostRequest(ctx.emu, "a_b.c.localhost", "$Resources/Queues?api-version=2021-05");
    assert.equal(bad.status, 401, bad.body);
    assert.match(bad.body, /Unauthorized: The host 'a_b\.c\.localhost' names no namespace/);
  });

  ctx.test("each namespace has its own clock: an advance expires one namespace's messages only", async () => {
    const ttl = 10 * 60 * 1000;
    await dflt.createSender("orders").sendMessages({ messageId: `d-${tag}`, body: "d", timeToLive: ttl });
    await suiteA.createSender("orders").sendMessages({ messageId: `a-${tag}`, body: "a", timeToLive: ttl });
    const before = await countBecomes(suiteA, "orders", 3, "before the advance");
    void before;
    const adv = await rawRequest(ctx.emu, "$sbemu/namespaces/suite-a/clock/advance?by=PT11M", { method: "POST", auth: false });
    assert.equal(adv.status, 200, adv.body);
    const body = JSON.parse(adv.body);
    assert.equal(body.namespace, "suite-a");
    assert.equal(body.offsetMs, 11 * 60 * 1000);
    const dClock = JSON.parse((await rawRequest(ctx.emu, "$sbemu/clock", { auth: false })).body);
    assert.equal(dClock.offsetMs, 0, "the default namespace's clock did not move");
    assert.equal(dClock.namespace, "sbemulatorns");
    const viaHost = JSON.parse((await hostRequest(ctx.emu, "suite-a.localhost", "$sbemu/clock", { auth: false })).body);
    assert.equal(viaHost.offsetMs, 11 * 60 * 1000);
    // suite-a's three messages expired (two without a TTL of their own live forever: only the one with one)
    await countBecomes(suiteA, "orders", 2, "after suite-a's advance");
    assert.equal(await peekCount(dflt, "orders"), 1, "the default namespace's message with the same TTL lives on");
    const unknown = await rawRequest(ctx.emu, "$sbemu/namespaces/no-such-ns/clock", { auth: false });
    assert.equal(unknown.status, 404, unknown.body);
    assert.match(unknown.body, /The namespace 'no-such-ns' does not exist/);
  });

  ctx.test("reset and snapshots act on one namespace; a token for another namespace is refused", async () => {
    const mine = adminClient(ctx.emu, "beta", { keyName: "suite-a" });
    await mine.createQueue(`extra-${tag}`);
    let r = await sbemu(ctx.emu, "PUT", "namespaces/suite-a/snapshots/before", "suite-a");
    assert.equal(r.status, 201, r.body);
    assert.equal(r.json.namespace, "suite-a");
    assert.equal(r.json.messages, 2);
    r = await sbemu(ctx.emu, "GET", "namespaces/sbemulatorns/snapshots");
    assert.deepEqual(r.json.snapshots, [], "the default namespace has no snapshot");
    r = await sbemu(ctx.emu, "GET", "namespaces/SUITE-A/snapshots");
    assert.deepEqual(r.json.snapshots.map((x) => x.name), ["before"], "a namespace's name in any letter case");
    r = await sbemu(ctx.emu, "POST", "namespaces/suite-a/reset");
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.namespace, "suite-a");
    assert.equal(r.json.entities, 1, "its declared queue");
    assert.equal(r.json.clock.offsetMs, 0, "its clock back to real time");
    assert.equal(await peekCount(suiteA, "orders"), 0);
    assert.equal(await mine.queueExists(`extra-${tag}`), false);
    assert.equal(await peekCount(dflt, "orders"), 1, "the default namespace keeps its message");
    r = await sbemu(ctx.emu, "POST", "namespaces/suite-a/snapshots/before/restore", "suite-a");
    assert.equal(r.status, 200, r.body);
    assert.equal(await peekCount(suiteA, "orders"), 2);
    assert.equal(await mine.queueExists(`extra-${tag}`), true);
    // a token whose key name is another namespace's
    r = await sbemu(ctx.emu, "POST", "namespaces/suite-a/reset", `fresh-${tag}`);
    assert.equal(r.status, 401, r.body);
    assert.match(r.json.error || r.body, /the token is for namespace 'fresh-[0-9a-f]+' .*not 'suite-a'/);
    r = await sbemu(ctx.emu, "POST", "namespaces/no-such-ns/reset");
    assert.equal(r.status, 404, r.body);
    // without a namespace in the path: the token's own
    r = await sbemu(ctx.emu, "POST", "reset", `fresh-${tag}`);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.namespace, `fresh-${tag}`);
    assert.equal(r.json.entities, 0, "a namespace made on first use resets to empty");
    assert.equal(await peekCount(suiteA, "orders"), 2, "suite-a untouched");
  });

  ctx.test("a fault rule acts in its own namespace only", async () => {
    await putRule(ctx.emu, "busy-a", { namespace: "suite-a", entity: "orders", operation: "send", effect: "error",
      error: "com.microsoft:server-busy", times: 1 });
    const a = ctx.client(connStr(ctx.emu.amqpPort, "suite-a"), { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    const d = ctx.client(ctx.emu.connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    await d.createSender("orders").sendMessages({ body: "default is not busy" });
    const err = await failureOf(a.createSender("orders").sendMessages({ body: "x" }), "suite-a's send");
    assert.equal(err.code, "ServiceBusy", `${err.code}: ${err.message}`);
    await deleteRule(ctx.emu, "busy-a");
    // a $cbs rule: the first token of a connection is in the namespace its key name chooses
    await putRule(ctx.emu, "notoken-a", { namespace: "suite-a", entity: "orders", operation: "cbs", effect: "error",
      error: "amqp:unauthorized-access" });
    const a2 = ctx.client(connStr(ctx.emu.amqpPort, "suite-a"), { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    const refused = await failureOf(a2.createSender("orders").sendMessages({ body: "x" }), "suite-a's put-token");
    assert.equal(refused.code, "UnauthorizedAccess", `${refused.code}: ${refused.message}`);
    const d2 = ctx.client(ctx.emu.connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    await d2.createSender("orders").sendMessages({ body: "the default's token is not refused" });
    await deleteRule(ctx.emu, "notoken-a");
  });

  ctx.test("/metrics labels each entity with its namespace", async () => {
    const res = await rawRequest(ctx.emu, "metrics", { auth: false });
    assert.equal(res.status, 200);
    assert.match(res.body, /sbemu_entity_active_messages\{namespace="suite-a",entity="orders",kind="queue"\} 2/);
    assert.match(res.body, /sbemu_entity_active_messages\{namespace="sbemulatorns",entity="orders",kind="queue"\} 3/);
  });
});
