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

  test("embedded: killing the postmaster three times in a row under a receiver; each time it comes back by itself", { timeout: 120000 }, async () => {
    const emu = new Emulator({ name: "outage-kills", queues: [QUEUE] });
    emus.push(emu);
    await guarded(emu, async () => {
      await emu.start();
      for (let round = 0; round < 3; round++) {
        await sendSome(emu, `round${round}`, 10);
        await emu.kill9Postgres();
        await waitHealth(emu, 200, 30000);
        await receiveExpect(emu, ids(`round${round}`, 10));
      }
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
