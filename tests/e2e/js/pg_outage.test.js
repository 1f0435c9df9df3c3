// PostgreSQL goes away under a running emulator (issue 13). sbemu used to stay
// up refusing sends with internal-error, never recover (/health 503 for good)
// and spin a core. Now: sends are answered com.microsoft:server-busy (which
// the SDKs retry), no CPU is used while it waits, and once PostgreSQL can be
// reached again (the embedded cluster is restarted by sbemu itself; an
// external one by whoever runs it) /health returns to 200 and everything
// acknowledged before is still there.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { describe, test, after } = require("node:test");
const { ServiceBusClient } = require("@azure/service-bus");
const { Emulator, externalPostgres, guarded, httpGet, postmasterPid, alive, cpuSeconds, sleep } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { psql } = require("./qs_util");

const QUEUE = "outage";
const BEFORE = 20;
// While it waits, sbemu may poll for its way back (a few timers a second), nothing more.
const IDLE_CPU_MAX_S = 0.3;
const IDLE_WINDOW_MS = 3000;

async function waitHealth(emu, status, ms) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await httpGet(emu.httpPort, "/health", 1000);
    if (last.status === status) return;
    await sleep(100);
  }
  throw new Error(`/health did not answer ${status} within ${ms} ms (last: ${last && last.status})`);
}

function client(emu, retryOptions) {
  return new ServiceBusClient(emu.connectionString, { retryOptions });
}

/** What an outage must look like from outside: 503, server-busy, an idle process. */
async function checkOutage(emu) {
  await waitHealth(emu, 503, 10000);
  const sb = client(emu, { maxRetries: 0, timeoutInMs: 10000 });
  try {
    const err = await sb
      .createSender(QUEUE)
      .sendMessages({ body: "during", messageId: "during-no-retry" })
      .then(() => null, (e) => e);
    assert.ok(err, "a send without retries succeeded while PostgreSQL was away");
    assert.equal(err.code, "ServiceBusy", `expected ServiceBusy (com.microsoft:server-busy), got ${err.code}: ${err.message}`);
    assert.match(err.message, /database/i, "the refusal says what is unavailable");
  } finally {
    await sb.close();
  }
  const cpu0 = cpuSeconds(emu.proc.pid);
  await sleep(IDLE_WINDOW_MS);
  const used = cpuSeconds(emu.proc.pid) - cpu0;
  process.stdout.write(`# CPU while waiting for PostgreSQL: ${used.toFixed(2)} s in ${IDLE_WINDOW_MS / 1000} s\n`);
  assert.ok(used <= IDLE_CPU_MAX_S, `sbemu used ${used.toFixed(2)} s of CPU in ${IDLE_WINDOW_MS} ms while waiting`);
  const still = await httpGet(emu.httpPort, "/health", 1000);
  assert.equal(still.status, 503, "healthy while PostgreSQL is still away");
}

async function sendSome(emu, tag, n) {
  const sb = client(emu, { maxRetries: 2, retryDelayInMs: 200 });
  try {
    await sb.createSender(QUEUE).sendMessages(Array.from({ length: n }, (_, i) => ({ body: i, messageId: `${tag}-${i}` })));
  } finally {
    await sb.close();
  }
}

/** Receives everything there is; checks the expected ids arrived once each. */
async function receiveExpect(emu, expected) {
  const sb = client(emu, { maxRetries: 2, retryDelayInMs: 200 });
  try {
    const r = sb.createReceiver(QUEUE, PEEK_LOCK);
    const ids = [];
    for (;;) {
      const batch = await r.receiveMessages(50, { maxWaitTimeInMs: 2000 });
      if (!batch.length) break;
      for (const m of batch) {
        ids.push(m.messageId);
        await r.completeMessage(m);
      }
    }
    const missing = expected.filter((id) => !ids.includes(id));
    const dups = ids.filter((id, k) => ids.indexOf(id) !== k);
    assert.deepEqual({ missing, dups }, { missing: [], dups: [] });
    return ids;
  } finally {
    await sb.close();
  }
}

/** Polls cond() every 100 ms until it is true; fails naming what after ms. */
async function waitFor(cond, ms, what) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(100);
  }
}

/** The queue's rows in the store (every state and subqueue). */
function queueRows(emu) {
  return Number(psql(emu, `SELECT count(*) FROM messages m JOIN entities e ON e.id = m.entity_id WHERE e.path = '${QUEUE}'`));
}

/** Kills the embedded postmaster and waits until sbemu has logged that PostgreSQL is back and
 * /health says 200 (200 alone can come before sbemu noticed the outage at all). */
async function killAndHeal(emu) {
  const backs = () => (emu.log().match(/PostgreSQL is back after/g) || []).length;
  const before = backs();
  await emu.kill9Postgres();
  await waitFor(() => backs() > before, 30000, 'sbemu logged "PostgreSQL is back"');
  await waitHealth(emu, 200, 30000);
}

const ids = (tag, n) => Array.from({ length: n }, (_, i) => `${tag}-${i}`);

describe("PostgreSQL outage", () => {
  const emus = [];
  after(async () => {
    for (const e of emus) await e.cleanup();
  });

  test("embedded: the postmaster is killed and cannot start at first; sbemu waits idle, answers server-busy, and restarts it once it can", { timeout: 120000 }, async () => {
    const emu = new Emulator({ name: "outage-emb", queues: [QUEUE] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      await sendSome(emu, "before", BEFORE);
      // Keep the cluster from starting again (as a vanished volume would), then kill it.
      const data = path.join(emu.dataDir, "pg", "data");
      const pid = postmasterPid(emu.dataDir);
      fs.renameSync(data, data + ".away");
      process.kill(pid, "SIGKILL");
      for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
      await checkOutage(emu);
      assert.ok(!alive(pid), "the old postmaster is gone");
      // the log says why it cannot come back yet
      assert.match(emu.log(), /PostgreSQL is still unavailable after \d+ attempts \(.*does not exist/);
      // A sender with the SDK's retries, started during the outage, gets through once it ends.
      const sb = client(emu, { maxRetries: 20, retryDelayInMs: 500, maxRetryDelayInMs: 1000, timeoutInMs: 5000 });
      const retried = sb.createSender(QUEUE).sendMessages({ body: "retried", messageId: "retried-0" });
      await sleep(1000);
      fs.renameSync(data + ".away", data);
      await waitHealth(emu, 200, 30000);
      await retried;
      await sb.close();
      const newPid = postmasterPid(emu.dataDir);
      assert.ok(newPid && newPid !== pid && alive(newPid), "sbemu started a new postmaster");
      await sendSome(emu, "after", 5);
      await receiveExpect(emu, [...ids("before", BEFORE), "retried-0", ...ids("after", 5)]);
      assert.match(emu.log(), /PostgreSQL is back after/);
      await emu.stop();
    })();
  });

  test("embedded: killing the postmaster three times in a row under a receiver; each time it comes back by itself", { timeout: 150000 }, async () => {
    const emu = new Emulator({ name: "outage-kills", queues: [QUEUE] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      // One receiver stays attached through the three kills (subscribe, peek-lock, the
      // SDK's own retries): what is sent after each heal must reach it.
      const sb = client(emu, { maxRetries: 20, retryDelayInMs: 200, maxRetryDelayInMs: 1000, timeoutInMs: 10000 });
      const got = new Set();
      const errors = [];
      const receiver = sb.createReceiver(QUEUE, PEEK_LOCK);
      receiver.subscribe(
        { processMessage: async (m) => { got.add(m.messageId); }, processError: async (a) => { errors.push(a.error.code || a.error.message); } },
        { autoCompleteMessages: true, maxConcurrentCalls: 1 });
      await sendSome(emu, "first", 5);
      await waitFor(() => ids("first", 5).every((id) => got.has(id)), 30000, "the receiver got first-0..4");
      for (let round = 0; round < 3; round++) {
        await waitFor(() => queueRows(emu) === 0, 30000, "every completion committed before the kill");
        await killAndHeal(emu);
        await sendSome(emu, `round${round}`, 10);
        await waitFor(() => ids(`round${round}`, 10).every((id) => got.has(id)), 60000,
          `the receiver attached before kill ${round + 1} got round${round}-0..9 (got ${[...got].filter((i) => i.startsWith(`round${round}`))}; errors ${errors})`);
      }
      await waitFor(() => queueRows(emu) === 0, 30000, "every completion committed");
      process.stdout.write(`# receiver errors seen (and ridden out) across the kills: ${errors.length ? errors.join(", ") : "none"}\n`);
      await receiver.close();
      await sb.close();
      await emu.stop();
    })();
  });

  test("--postgres: the external server stops; sbemu answers server-busy, idles, and reconnects when it is back", { timeout: 120000 }, async (t) => {
    const pg = await externalPostgres();
    t.after(() => pg.cleanup());
    const emu = new Emulator({ name: "outage-ext", queues: [QUEUE], args: ["--postgres", pg.conninfo] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      await sendSome(emu, "before", BEFORE);
      pg.stop("immediate");
      await checkOutage(emu);
      pg.start();
      await waitHealth(emu, 200, 30000);
      await sendSome(emu, "after", 5);
      await receiveExpect(emu, [...ids("before", BEFORE), ...ids("after", 5)]);
      await emu.stop();
    })();
  });
});
