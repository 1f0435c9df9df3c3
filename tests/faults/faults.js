// The faults script (issue 13): sbemu keeps what it acknowledged and keeps
// working through crashes, a dying database, shutdown under load and a full
// disk. It prints its figures and asserts its invariants; the last line is
// "faults: N passed, N failed".
//
//   node tests/faults/faults.js [--cycles N] [--skip-disk]
//
// 1. Crash cycles, under a sending and a receiving load (tests/faults/load.js):
//    every third cycle kills the embedded postmaster (sbemu must bring it back
//    by itself, without a restart), the others kill -9 sbemu and start it again.
//    Invariants: no acknowledged send is missing at the end; a message may be
//    delivered again only if its completion was never acknowledged (at least
//    once), never after.
// 2. SIGTERM under the same load: exit 0, nothing acknowledged lost (checked
//    with the rest at the end).
// 3. A full disk: the data dir on a small tmpfs, a ballast file fills it; sends
//    are refused with an error that says why, the server stays up, and once the
//    ballast is gone it takes sends again by itself; nothing acknowledged lost.
//
// CI runs a short version (tests/faults/run.sh: 6 cycles); for a release, run
// 100: `tests/faults/run.sh 100` (about 10 minutes).
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn, execFileSync } = require("node:child_process");
const E2E = path.join(__dirname, "..", "e2e");
const { Emulator, httpGet, sleep } = require(path.join(E2E, "harness"));
const { advance, SWEEP_GRACE_MS } = require(path.join(E2E, "js", "qs_util"));
const { ServiceBusClient } = require(path.join(E2E, "node_modules", "@azure/service-bus"));

const args = process.argv.slice(2);
const CYCLES = Number(args[args.indexOf("--cycles") + 1]) || 6;
const SKIP_DISK = args.includes("--skip-disk");
const QUEUE = "faults";
const POSTMASTER_EVERY = 3; // every third cycle kills the database instead of sbemu
const LOCK_LAPSE = "PT2M"; // past the queue's LockDuration (harness: PT1M)
const RECOVER_MS = 30000; // the most a postmaster kill may take to heal
const DISK_MB = 320; // the tmpfs: room for the cluster and its WAL, then the ballast
const DISK_FREE_MB = 24; // left free by the ballast

let passed = 0;
let failed = 0;
function check(name, fn) {
  try {
    fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err.message}`);
  }
}

/** A load child (load.js); its output lines are parsed into the ledger as they come. */
function startLoad(ledger, role, emu, tag) {
  const child = spawn(process.execPath, [path.join(__dirname, "load.js"), role, emu.connectionString, QUEUE, tag || ""], {
    env: { ...process.env, NODE_PATH: path.join(E2E, "node_modules") },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let partial = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop();
    for (const l of lines) ledger.line(l);
  });
  const closed = new Promise((r) => child.once("close", r));
  return {
    async stop() {
      await sleep(300); // let what it is printing arrive
      child.kill("SIGKILL");
      await closed;
    },
  };
}

/** What was acknowledged and what was seen: the invariants are checked on it. */
class Ledger {
  constructor() {
    this.acked = new Set();
    this.recv = new Map(); // id -> times received
    this.done = new Set(); // completion acknowledged
    this.afterDone = []; // received again after its completion was acknowledged
  }
  line(l) {
    const [kind, id] = l.split(" ");
    if (kind === "ACK") this.acked.add(id);
    else if (kind === "RECV") {
      if (this.done.has(id)) this.afterDone.push(id);
      this.recv.set(id, (this.recv.get(id) || 0) + 1);
    } else if (kind === "DONE") this.done.add(id);
  }
  missing() {
    return [...this.acked].filter((id) => !this.recv.has(id));
  }
  redelivered() {
    return [...this.recv.values()].filter((n) => n > 1).length;
  }
}

/** Receives what is left (peek-lock, completing) into the ledger, until the queue
 * (or its dead-letter subqueue) is empty; resolves with how many it received. */
async function drain(emu, ledger, subQueueType) {
  const sb = new ServiceBusClient(emu.connectionString, { retryOptions: { maxRetries: 3, retryDelayInMs: 300 } });
  let n = 0;
  try {
    const r = sb.createReceiver(QUEUE, { receiveMode: "peekLock", subQueueType });
    for (;;) {
      const batch = await r.receiveMessages(200, { maxWaitTimeInMs: 3000 });
      if (!batch.length) break;
      n += batch.length;
      for (const m of batch) ledger.line(`RECV ${m.messageId}`);
      for (const m of batch) {
        await r.completeMessage(m);
        ledger.line(`DONE ${m.messageId}`);
      }
    }
  } finally {
    await sb.close();
  }
  return n;
}

/** Everything left, locked ones included: a claim whose answer was lost with
 * the connection (sbemu killed, or PostgreSQL lost mid-commit) holds its
 * messages until their lock lapses, as Service Bus does; the namespace clock
 * is moved past LockDuration so that they come back now. */
async function drainAll(emu, ledger) {
  await drain(emu, ledger);
  await advance(emu, LOCK_LAPSE);
  await sleep(SWEEP_GRACE_MS);
  const lapsed = await drain(emu, ledger);
  const dead = await drain(emu, ledger, "deadLetter");
  return { lapsed, dead };
}

/** How many times sbemu has logged that PostgreSQL came back (emu_loop.c). */
function healedCount(emu) {
  return (emu.log().match(/PostgreSQL is back after/g) || []).length;
}

async function waitHealth(emu, status, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const h = await httpGet(emu.httpPort, "/health", 1000);
    if (h.status === status) return Date.now() - t0;
    await sleep(50);
  }
  throw new Error(`/health did not answer ${status} within ${ms} ms`);
}

const stat = (xs) =>
  xs.length ? `avg ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(0)} ms, max ${Math.max(...xs)} ms` : "none";

async function crashCycles() {
  const emu = new Emulator({ name: "faults", queues: [QUEUE] });
  const ledger = new Ledger();
  const restartMs = [];
  const healMs = [];
  let sigtermCode = null;
  let lapsed = 0;
  let dead = 0;
  try {
    await emu.start();
    const receiver = startLoad(ledger, "receive", emu);
    let sender = startLoad(ledger, "send", emu, "c0");
    for (let i = 1; i <= CYCLES; i++) {
      await sleep(700 + Math.floor(Math.random() * 1300));
      // sbemu must still be the process we started (a crash between cycles would otherwise be
      // hidden by the next kill -9 and restart)
      assert.ok(emu.proc && !emu.exit, `sbemu had exited by itself before cycle ${i}: ${JSON.stringify(emu.exit)}`);
      if (i % POSTMASTER_EVERY === 0) {
        const pid = emu.proc.pid;
        const backBefore = healedCount(emu);
        await emu.kill9Postgres();
        // healed = sbemu logged that PostgreSQL is back (/health may still say 200 before
        // sbemu has noticed the outage at all), and says 200
        const t0 = Date.now();
        while (healedCount(emu) === backBefore && Date.now() - t0 < RECOVER_MS) await sleep(50);
        assert.ok(healedCount(emu) > backBefore, `sbemu did not log "PostgreSQL is back" within ${RECOVER_MS} ms`);
        await waitHealth(emu, 200, RECOVER_MS);
        healMs.push(Date.now() - t0);
        assert.ok(emu.proc && emu.proc.pid === pid && !emu.exit, "sbemu itself survived the postmaster's death");
      } else {
        await emu.kill9();
        const t0 = Date.now();
        await emu.start();
        restartMs.push(Date.now() - t0);
      }
      // a fresh sender now and then, so that ids of every cycle are in flight
      if (i % 2 === 0) {
        await sender.stop();
        sender = startLoad(ledger, "send", emu, `c${i}`);
      }
    }
    // SIGTERM under the same load: exit 0, and (checked below) nothing lost.
    await sleep(1000);
    emu.proc.kill("SIGTERM");
    const r = await emu.exited;
    sigtermCode = r.code;
    emu.proc = null;
    await emu.start();
    await sleep(1000);
    await sender.stop();
    await receiver.stop();
    ({ lapsed, dead } = await drainAll(emu, ledger));
    await emu.stop();
  } catch (err) {
    emu.failed = true;
    emu.dumpLog(err.message);
    check("crash cycles ran", () => {
      throw err;
    });
  } finally {
    await emu.cleanup();
  }
  const missing = ledger.missing();
  console.log(
    `figures: ${CYCLES} cycles (${healMs.length} postmaster kills, ${restartMs.length} sbemu kills), ` +
      `${ledger.acked.size} sends acknowledged, ${ledger.recv.size} distinct messages received, ` +
      `${ledger.redelivered()} delivered more than once (locks lost with the process), ` +
      `${missing.length} acknowledged but missing, ${ledger.afterDone.length} seen after their completion was acknowledged; ` +
      `at the end ${lapsed} came back when their locks lapsed, ${dead} were dead-lettered (MaxDeliveryCount)`
  );
  console.log(`figures: sbemu restart to healthy ${stat(restartMs)}; heal after a postmaster kill ${stat(healMs)}`);
  check("the load was acknowledged at all", () => assert.ok(ledger.acked.size > 0));
  check("no acknowledged send is missing", () => assert.deepEqual(missing.slice(0, 10), []));
  check("nothing is delivered after its completion was acknowledged", () =>
    assert.deepEqual(ledger.afterDone.slice(0, 10), []));
  check("SIGTERM under load exits 0", () => assert.equal(sigtermCode, 0));
}

async function fullDisk() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sbemu-faults-disk-"));
  fs.chmodSync(root, 0o755);
  const mnt = path.join(root, "d");
  fs.mkdirSync(mnt);
  // A mount needs root (CI runs as root); anywhere else this part fails, saying so.
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${DISK_MB}m,mode=0755`, "tmpfs", mnt]);
  const emu = new Emulator({ name: "disk", queues: [QUEUE], dataDir: path.join(mnt, "data") });
  const ballast = path.join(mnt, "ballast");
  const ledger = new Ledger();
  let refusal = null;
  let healMs = null;
  try {
    await emu.start();
    const free = Number(execFileSync("df", ["--output=avail", "-B1M", mnt]).toString().split("\n")[1]);
    execFileSync("fallocate", ["-l", `${Math.max(1, free - DISK_FREE_MB)}M`, ballast]);
    const sb = new ServiceBusClient(emu.connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    const body = Buffer.alloc(100 * 1024, 3);
    for (let i = 0; i < 2000 && !refusal; i++) {
      const id = `disk-${i}`;
      try {
        await sb.createSender(QUEUE).sendMessages({ messageId: id, body });
        ledger.line(`ACK ${id}`);
      } catch (err) {
        refusal = err;
      }
    }
    await sb.close().catch(() => {});
    console.log(`figures: full disk: ${ledger.acked.size} x 100 KiB acknowledged, then: ${refusal && refusal.code}: ${refusal && refusal.message}`);
    check("a full disk refuses sends", () => assert.ok(refusal, "2000 sends of 100 KiB all fit"));
    check("the refusal is server-busy (what the SDKs retry) and says why", () => {
      assert.equal(refusal.code, "ServiceBusy");
      assert.match(refusal.message, /space|disk|database/i);
    });
    await sleep(2000);
    check("the server stays up on a full disk", () => assert.ok(!emu.exit, "sbemu exited"));
    const h = await httpGet(emu.httpPort, "/health", 2000);
    check("/health answers on a full disk", () => assert.ok(h.status === 200 || h.status === 503, `got ${h.status}`));
    // Space returns: the next sends are taken without a restart.
    fs.rmSync(ballast);
    const t0 = Date.now();
    const sb2 = new ServiceBusClient(emu.connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    for (let i = 0; Date.now() - t0 < 90000; i++) {
      try {
        await sb2.createSender(QUEUE).sendMessages({ messageId: `after-${i}`, body: "after" });
        ledger.line(`ACK after-${i}`);
        healMs = Date.now() - t0;
        break;
      } catch {
        await sleep(200);
      }
    }
    await sb2.close().catch(() => {});
    console.log(`figures: full disk: sends taken again ${healMs === null ? "never" : healMs + " ms"} after the space returned`);
    check("sends are taken again once space returns", () => assert.ok(healMs !== null));
    await drainAll(emu, ledger);
    check("nothing acknowledged before or after the full disk is missing", () =>
      assert.deepEqual(ledger.missing().slice(0, 10), []));
    await emu.stop();
  } catch (err) {
    emu.failed = true;
    emu.dumpLog(err.message);
    check("the full-disk run", () => {
      throw err;
    });
  } finally {
    await emu.cleanup();
    try {
      execFileSync("umount", ["-l", mnt]);
    } catch {}
    fs.rmSync(root, { recursive: true, force: true });
  }
}

(async () => {
  const t0 = Date.now();
  await crashCycles();
  if (!SKIP_DISK) await fullDisk();
  console.log(`faults: took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  console.log(`faults: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
