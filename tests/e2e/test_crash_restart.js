// Durability: 100 acknowledged sends survive kill -9 of sbemu (and of its
// embedded PostgreSQL), and survive on an external cluster given with --postgres.
"use strict";

const assert = require("node:assert/strict");
const { describe, test, after } = require("node:test");
const { ServiceBusClient } = require("@azure/service-bus");
const { Emulator, ackingLoad, externalPostgres, guarded, postmasterPid, alive } = require("./harness");
const { PEEK_LOCK } = require("./js/util");

const N = 100;
const QUEUE = "durable";

/** The child of the SIGTERM test: 20 concurrent senders of 100 KB messages
 * (megabytes in the store when the signal comes), one "ACK id" line per
 * acknowledged send. */
const SIGTERM_LOAD = `
const { ServiceBusClient } = require("@azure/service-bus");
const sb = new ServiceBusClient(process.env.CONN, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
const sender = sb.createSender(process.env.QUEUE);
let next = 0;
const worker = async () => {
  for (;;) {
    const id = "term-" + next++;
    try {
      await sender.sendMessages({ messageId: id, body: Buffer.alloc(100 * 1024, next & 0xff) });
      process.stdout.write("ACK " + id + "\\n");
    } catch {
      return;
    }
  }
};
for (let i = 0; i < 20; i++) worker();
process.on("uncaughtException", () => {});
`;

function client(emu) {
  return new ServiceBusClient(emu.connectionString, {
    retryOptions: { maxRetries: 2, retryDelayInMs: 200, timeoutInMs: 15000 },
  });
}

/** Sends N messages concurrently; resolves once every send was acknowledged. */
async function sendAll(emu, tag) {
  const sb = client(emu);
  try {
    const sender = sb.createSender(QUEUE);
    await Promise.all(
      Array.from({ length: N }, (_, i) => sender.sendMessages({ messageId: `${tag}-${i}`, body: { tag, i } }))
    );
  } finally {
    await sb.close();
  }
}

/** Receives (and completes) until N arrived, then checks nothing else is there. */
async function receiveAll(emu, tag) {
  const sb = client(emu);
  try {
    const receiver = sb.createReceiver(QUEUE, PEEK_LOCK);
    const ids = [];
    const deadline = Date.now() + 60000;
    while (ids.length < N && Date.now() < deadline) {
      const batch = await receiver.receiveMessages(50, { maxWaitTimeInMs: 3000 });
      for (const m of batch) {
        ids.push(m.messageId);
        await receiver.completeMessage(m);
      }
    }
    // Anything extra (a duplicate, an earlier run's message) shows up here.
    const extra = await receiver.receiveMessages(10, { maxWaitTimeInMs: 2000 });
    ids.push(...extra.map((m) => m.messageId));
    const expected = Array.from({ length: N }, (_, i) => `${tag}-${i}`);
    const missing = expected.filter((id) => !ids.includes(id));
    const dups = ids.filter((id, k) => ids.indexOf(id) !== k);
    const foreign = ids.filter((id) => !expected.includes(id));
    assert.deepEqual({ missing, dups, foreign, count: ids.length }, { missing: [], dups: [], foreign: [], count: N });
  } finally {
    await sb.close();
  }
}

describe("crash and restart", () => {
  const emus = [];
  after(async () => {
    for (const e of emus) await e.cleanup();
  });

  test("kill -9 sbemu: all 100 acknowledged messages are there after restart", { timeout: 180000 }, async () => {
    const emu = new Emulator({ name: "crash", queues: [QUEUE] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      await sendAll(emu, "crash1");
      await emu.kill9();
      await emu.start(); // same data dir, same ports; the old postmaster may still run
      await receiveAll(emu, "crash1");
      await emu.stop();
    })();
  });

  test("kill -9 sbemu and its postmaster: all 100 messages are there after restart", { timeout: 180000 }, async () => {
    const emu = new Emulator({ name: "crash-pg", queues: [QUEUE] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      await sendAll(emu, "crash2");
      const pgPid = postmasterPid(emu.dataDir);
      assert.ok(pgPid, "the embedded cluster wrote a postmaster.pid");
      await emu.kill9();
      await emu.kill9Postgres();
      await emu.start();
      await receiveAll(emu, "crash2");
      await emu.stop();
      const newPid = postmasterPid(emu.dataDir);
      assert.ok(!newPid || !alive(newPid), `embedded postmaster ${newPid} still runs after a clean stop`);
    })();
  });

  test("SIGTERM while 100 KB sends stream in: exit 0, and every acknowledged send is there after restart", { timeout: 180000 }, async () => {
    const emu = new Emulator({ name: "term-load", queues: [QUEUE] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      // The senders run in a child process (harness ackingLoad): when the emulator
      // goes away mid-send, the SDK's reconnect timers may throw after the fact.
      const load = ackingLoad(SIGTERM_LOAD, { CONN: emu.connectionString, QUEUE });
      const acked = load.acked;
      assert.ok(await load.waitFor(200, 60000), `only ${acked.length} sends acknowledged before the signal`);
      emu.proc.kill("SIGTERM");
      const exit = await emu.exited;
      await load.stop();
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, "clean exit on SIGTERM under load");
      await emu.start();
      const sb2 = client(emu);
      const receiver = sb2.createReceiver(QUEUE, { receiveMode: "receiveAndDelete" });
      const got = new Set();
      for (let empty = 0; empty < 2; ) {
        const batch = await receiver.receiveMessages(200, { maxWaitTimeInMs: 2000 });
        if (!batch.length) empty++;
        for (const m of batch) got.add(m.messageId);
      }
      await sb2.close();
      const missing = acked.filter((id) => !got.has(id));
      assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged sends are missing`);
      await emu.stop();
    })();
  });

  test("--postgres on a separate cluster: kill -9 sbemu, restart, nothing lost", { timeout: 180000 }, async (t) => {
    const pg = await externalPostgres();
    t.after(() => pg.cleanup());
    const conninfo = pg.conninfo;
    const emu = new Emulator({ name: "extpg", queues: [QUEUE], args: ["--postgres", conninfo] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      assert.equal(postmasterPid(emu.dataDir), null, "no embedded cluster when --postgres is given");
      await sendAll(emu, "ext");
      // The messages are rows in the external database.
      const count = pg.psql("sb", `SELECT count(*) FROM messages m JOIN queues q ON q.id = m.entity_id WHERE q.name = '${QUEUE}'`);
      assert.equal(count, String(N), "rows in the messages table");
      await emu.kill9();
      await emu.start();
      await receiveAll(emu, "ext");
      await emu.stop();
    })();
  });
});
