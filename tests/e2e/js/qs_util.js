// Helpers for the queue-semantics suites (qs_*.test.js): the emulator's movable
// clock (GET /$sbemu/clock, POST /$sbemu/clock/advance?by=<ISO-8601 duration>),
// "expect nothing" receives, polling, and psql on the embedded cluster.
"use strict";

const assert = require("node:assert/strict");
const http = require("node:http");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { PEEK_LOCK } = require("./util");

/** Background work (expiry sweep, idle deletion) runs at least once a second. */
const SWEEP_GRACE_MS = 2500;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function request(port, method, urlPath, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: urlPath, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

function parseClock(what, r) {
  assert.equal(r.status, 200, `${what}: expected HTTP 200, got ${r.status} with body ${JSON.stringify(r.body)}`);
  let j;
  try {
    j = JSON.parse(r.body);
  } catch {
    assert.fail(`${what}: expected a JSON body {"now":"<ISO time>","offsetMs":<n>}, got ${JSON.stringify(r.body)}`);
  }
  assert.equal(typeof j.now, "string", `${what}: "now" should be an ISO time string, body ${r.body}`);
  const now = new Date(j.now);
  assert.ok(!Number.isNaN(now.getTime()), `${what}: "now" is not a parseable time: ${JSON.stringify(j.now)}`);
  assert.ok(Number.isInteger(j.offsetMs), `${what}: "offsetMs" should be an integer, body ${r.body}`);
  return { now, nowText: j.now, offsetMs: j.offsetMs, raw: j };
}

/** GET /$sbemu/clock → {now: Date, offsetMs}. */
async function clockNow(emu) {
  return parseClock("GET /$sbemu/clock", await request(emu.httpPort, "GET", "/$sbemu/clock"));
}

/** POST /$sbemu/clock/advance?by=<iso> → {now: Date, offsetMs}; fails the test on anything but 200. */
async function advance(emu, iso) {
  const p = `/$sbemu/clock/advance?by=${encodeURIComponent(iso)}`;
  return parseClock(`POST ${p}`, await request(emu.httpPort, "POST", p));
}

/** Receives up to max messages within waitMs and expects none of them. */
async function expectNothing(receiver, what, waitMs = 2000) {
  const got = await receiver.receiveMessages(10, { maxWaitTimeInMs: waitMs });
  assert.deepEqual(got.map(describe), [], `${what}: expected no message, got ${got.length}`);
}

/** A short text for a received message in failure output. */
function describe(m) {
  const s = { messageId: m.messageId, body: typeof m.body === "string" ? m.body : "<body>" };
  if (m.deadLetterReason !== undefined) s.deadLetterReason = m.deadLetterReason;
  if (m.sequenceNumber !== undefined) s.seq = m.sequenceNumber.toString();
  return JSON.stringify(s);
}

/**
 * Polls receiveMessages until at least n messages arrived or timeoutMs passed;
 * returns what arrived (unsettled). Short waits, so a background move (sweep)
 * that does not wake a waiting receiver is still found.
 */
async function pollReceive(receiver, n, timeoutMs = 6000) {
  const got = [];
  const deadline = Date.now() + timeoutMs;
  while (got.length < n && Date.now() < deadline) {
    got.push(...(await receiver.receiveMessages(n - got.length, { maxWaitTimeInMs: 1000 })));
  }
  return got;
}

/** Opens a receiver on queue (or its DLQ), polls for up to timeoutMs, completes and returns what came. */
async function drain(client, queue, { dlq = false, timeoutMs = 2000, n = 50 } = {}) {
  const r = client.createReceiver(queue, { ...PEEK_LOCK, ...(dlq ? { subQueueType: "deadLetter" } : {}) });
  try {
    const got = [];
    const deadline = Date.now() + timeoutMs;
    while (got.length < n && Date.now() < deadline) {
      const batch = await r.receiveMessages(n - got.length, { maxWaitTimeInMs: Math.max(200, Math.min(1000, deadline - Date.now())) });
      for (const m of batch) await r.completeMessage(m);
      got.push(...batch);
    }
    return got;
  } finally {
    await r.close();
  }
}

/** psql on the embedded cluster: socket in <data-dir>/pg/run, user and database sbemu. */
function psql(emu, sql) {
  return execFileSync("psql", ["-h", path.join(emu.dataDir, "pg", "run"), "-U", "sbemu", "-d", "sbemu",
    "-v", "ON_ERROR_STOP=1", "-Atc", sql], { stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
}

/** The store's rows of an entity (every subqueue and state), as "MessageId@subqueue". */
function rowsOf(emu, entity) {
  const rows = psql(emu, "SELECT coalesce(m.message_id, '') || '@' || m.subqueue FROM messages m" +
    ` JOIN entities e ON e.id = m.entity_id WHERE e.path = '${entity}' ORDER BY m.sequence_number`);
  return rows ? rows.split("\n") : [];
}

/** Polls rowsOf(emu, entity) until it is empty or timeoutMs passed; returns what was left ([] = gone). */
async function rowsGone(emu, entity, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = rowsOf(emu, entity);
    if (!rows.length || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Deadlocks PostgreSQL has counted in the emulator's database (its cluster's
 * for replicas: they share it). A backend reports its counts when it goes idle,
 * at most once a second. */
function deadlocks(emu) {
  return Number(psql(emu, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"));
}

/** Asserts that PostgreSQL counted no deadlock since `before` (deadlocks(emu))
 * and that no emulator of emus logged one, once the backends' counts are in. */
async function assertNoDeadlocks(emu, before, emus = [emu]) {
  await sleep(2500);
  assert.equal(deadlocks(emu) - before, 0, "PostgreSQL detected deadlocks");
  for (const e of emus) assert.doesNotMatch(e.log(), /deadlock/);
}

/** A number from PostgreSQL's statistics (sql: one value), once the store's
 * backend has reported what it counted: a backend reports when idle, at most
 * once a second, so this waits until two looks 1.5 s apart agree (the sweep
 * keeps the backend reporting). */
async function settledStat(emu, sql) {
  let last = -1;
  for (let i = 0; i < 20; i++) {
    const now = Number(psql(emu, sql));
    if (now === last) return now;
    last = now;
    await sleep(1500);
  }
  return last;
}

/** Awaits promise and returns the error it fails with (AggregateError: the last attempt's), or fails. */
async function errorOf(promise, what) {
  try {
    await promise;
  } catch (e) {
    if (e instanceof AggregateError && Array.isArray(e.errors) && e.errors.length > 0) return e.errors[e.errors.length - 1];
    return e;
  }
  assert.fail(`${what}: expected an error, but it succeeded`);
}

module.exports = {
  rowsOf,
  rowsGone,
  deadlocks,
  assertNoDeadlocks,
  settledStat,
  SWEEP_GRACE_MS, sleep, request, clockNow, advance, expectNothing, describe, pollReceive, drain, psql, errorOf,
};
