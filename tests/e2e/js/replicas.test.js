// Two emulators on one database serve as one namespace (the chart's replicas):
// locks that lapse are given back once, whichever sweep sees them, and competing
// receivers on both replicas never get a message twice; a replica killed with
// kill -9 in the middle of a stream of sends loses nothing it acknowledged, the
// other replica serves it all, and the killed one comes back. (qs_two_procs
// covers expiry, schedules and duplicate detection across two processes.)
"use strict";

const assert = require("node:assert/strict");
const { ackingLoad, emulatorPairSuite } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { advance, psql } = require("./qs_util");

const LOCKED = 30;
const ACKED_BEFORE_KILL = 200;

// Sends through the replica that is killed (harness ackingLoad).
const LOAD = `
const { ServiceBusClient } = require("@azure/service-bus");
const sb = new ServiceBusClient(process.env.CONN, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
const sender = sb.createSender("rp-kill");
let next = 0;
const worker = async () => {
  for (;;) {
    const id = "kill-" + next++;
    try {
      await sender.sendMessages({ messageId: id, body: Buffer.alloc(4096, next & 0xff) });
      process.stdout.write("ACK " + id + "\\n");
    } catch {
      return;
    }
  }
};
for (let i = 0; i < 10; i++) worker();
process.on("uncaughtException", () => {});
`;

/** Receives and completes on every receiver at once until 2 s pass with nothing; returns the messageIds each got. */
async function competeAll(receivers) {
  return Promise.all(receivers.map(async (r) => {
    const ids = [];
    for (let empty = 0; empty < 2; ) {
      const got = await r.receiveMessages(20, { maxWaitTimeInMs: 1000 });
      if (!got.length) empty++;
      for (const m of got) {
        ids.push(`${m.messageId}#${m.deliveryCount}`);
        await r.completeMessage(m);
      }
    }
    return ids;
  }));
}

emulatorPairSuite("replicas", {
  one: { queues: [{ name: "rp-lock", properties: { LockDuration: "PT5S" } }, "rp-kill",
    { name: "rp-idle", properties: { AutoDeleteOnIdle: "PT5M" } }] },
}, (ctx) => {
  ctx.test("locks that lapse are given back once: competing receivers on both replicas get each message once more, none twice", async () => {
    const sender = ctx.c1.createSender("rp-lock");
    await sender.sendMessages(Array.from({ length: LOCKED }, (_, i) => ({ messageId: `lk-${i}`, body: i })));
    const holder = ctx.c1.createReceiver("rp-lock", PEEK_LOCK);
    const held = [];
    while (held.length < LOCKED) {
      const got = await holder.receiveMessages(LOCKED - held.length, { maxWaitTimeInMs: 5000 });
      assert.ok(got.length, `only ${held.length} of ${LOCKED} received before the locks lapse`);
      held.push(...got);
    }
    await advance(ctx.one, "PT1M"); // one clock for the namespace: both replicas' sweeps see the locks lapsed
    const [onOne, onTwo] = await competeAll([ctx.c1.createReceiver("rp-lock", PEEK_LOCK), ctx.c2.createReceiver("rp-lock", PEEK_LOCK)]);
    const all = onOne.concat(onTwo).sort();
    const want = Array.from({ length: LOCKED }, (_, i) => `lk-${i}#1`).sort();
    assert.deepEqual(all, want, `one: ${onOne.length}, two: ${onTwo.length}`);
  });

  ctx.test("an idle queue is deleted once, whichever replica's sweep sees it first, and neither logs an error", async () => {
    assert.equal(psql(ctx.one, "SELECT count(*) FROM queues WHERE name = 'rp-idle'"), "1");
    await advance(ctx.one, "PT10M");
    const deadline = Date.now() + 20000;
    while (psql(ctx.one, "SELECT count(*) FROM queues WHERE name = 'rp-idle'") !== "0" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal(psql(ctx.one, "SELECT count(*) FROM queues WHERE name = 'rp-idle'"), "0", "rp-idle was not deleted");
    for (const emu of [ctx.one, ctx.two]) assert.doesNotMatch(emu.log(), /ERROR/);
  });

  ctx.test("kill -9 of a replica mid-stream loses nothing it acknowledged: the other serves it all, and it comes back", async () => {
    const load = ackingLoad(LOAD, { CONN: ctx.two.connectionString });
    const acked = load.acked;
    assert.ok(await load.waitFor(ACKED_BEFORE_KILL, 60000), `only ${acked.length} sends acknowledged before the kill`);
    await ctx.two.kill9();
    await load.stop();
    const [got] = await competeAll([ctx.c1.createReceiver("rp-kill", PEEK_LOCK)]);
    const ids = new Set(got.map((s) => s.split("#")[0]));
    const missing = acked.filter((id) => !ids.has(id));
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged sends are missing on the other replica`);
    assert.equal(ids.size, got.length, "no message was delivered twice");
    await ctx.two.start(); // same ports, same database
    const { ServiceBusClient } = require("@azure/service-bus");
    await ctx.c2.close();
    ctx.c2 = new ServiceBusClient(ctx.two.connectionString, { retryOptions: { maxRetries: 1, timeoutInMs: 10000 } });
    await ctx.c1.createSender("rp-kill").sendMessages({ messageId: "after", body: "after the restart" });
    const [back] = await competeAll([ctx.c2.createReceiver("rp-kill", PEEK_LOCK)]);
    assert.deepEqual(back, ["after#0"]);
  }, 120000);
});
