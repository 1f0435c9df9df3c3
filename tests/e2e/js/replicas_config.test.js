// Replicas that start together with the same Config.json (a Deployment rolling
// out) converge: each applies it under the advisory lock, none fails on another's
// rows, every entity exists once with the file's properties, and all of them
// serve it.
"use strict";

const assert = require("node:assert/strict");
const path = require("node:path");
const { describe, before, after, test } = require("node:test");
const { ServiceBusClient } = require("@azure/service-bus");
const { Emulator } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { psql } = require("./qs_util");

const REPLICAS = 3;
const QUEUES = Array.from({ length: 20 }, (_, i) => ({ name: `cv-${i}`, properties: { MaxDeliveryCount: 4 + i } }));
const TOPICS = [{ name: "cv-topic", subscriptions: [{ name: "all" }, { name: "none", rules: [{ name: "never", properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "1=0" } } }] }] }];

describe("replicas starting together converge on one Config.json", () => {
  const db = new Emulator({ name: "cv-db", queues: [] }); // its embedded PostgreSQL is the shared database
  const replicas = [];
  const clients = [];
  let started = false;

  before(async () => {
    await db.start();
    const shared = ["--postgres", `host=${path.join(db.dataDir, "pg", "run")} user=sbemu dbname=sbemu`];
    for (let i = 0; i < REPLICAS; i++)
      replicas.push(new Emulator({ name: `cv-${i}`, queues: QUEUES, topics: TOPICS, args: shared }));
    await Promise.all(replicas.map((r) => r.start()));
    started = true;
  }, { timeout: 120000 });

  test("every replica came up, and each entity exists once with the file's properties", { timeout: 60000 }, async () => {
    assert.ok(started, "the replicas did not all start (see their logs)");
    const rows = psql(db, "SELECT name || ':' || max_delivery_count FROM queues ORDER BY name").split("\n");
    const want = QUEUES.map((q) => `${q.name}:${q.properties.MaxDeliveryCount}`).sort();
    assert.deepEqual(rows.slice().sort(), want);
    const subs = psql(db, "SELECT string_agg(s.name || '/' || r.name, ',' ORDER BY s.name, r.name) FROM subscriptions s JOIN rules r ON r.subscription_id = s.id");
    assert.equal(subs, "all/$Default,none/never");
    for (const r of replicas) assert.doesNotMatch(r.log(), /ERROR/, `a replica logged an error:\n${r.log()}`);
  });

  test("all of them serve the entities: a send on each is received on the next", { timeout: 60000 }, async () => {
    for (const r of replicas) clients.push(new ServiceBusClient(r.connectionString));
    for (let i = 0; i < REPLICAS; i++) {
      await clients[i].createSender("cv-0").sendMessages({ messageId: `from-${i}`, body: i });
      const receiver = clients[(i + 1) % REPLICAS].createReceiver("cv-0", PEEK_LOCK);
      const [m] = await receiveExact(receiver, 1);
      assert.equal(m.messageId, `from-${i}`);
      await receiver.completeMessage(m);
      await receiver.close();
    }
  });

  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    for (const r of replicas) {
      await r.stop().catch(() => {});
      await r.cleanup();
    }
    await db.stop().catch(() => {});
    await db.cleanup();
  });
});
