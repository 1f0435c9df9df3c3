// Two emulators on one database taking sessions at full speed, as the
// benchmark's client (tests/bench/sbbench.c, built here) takes them: 1,000
// sessions of 20 per round, half received on each replica by four
// next-available session links at once. Each round must end with every
// message completed, and PostgreSQL must count no deadlock between the
// replicas' transactions.
//
// Why a load and not the SDK: before 1c1656b a batch's activity stamp waited
// for the other replica's transaction while that one's session lock waited
// for the first (0 deadlocks in one round, 14 in the next, on this machine);
// the JS SDK's session receivers (replicas.test.js) never overlapped that
// way. Rounds are repeated because one round may miss it.
"use strict";

const assert = require("node:assert/strict");
const { execFileSync, execFile } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { emulatorPairSuite, SAS_KEY } = require("../harness");
const { psql, deadlocks, assertNoDeadlocks } = require("./qs_util");

const ROUNDS = 4;
const SESSIONS = 1000;
const PER_SESSION = 20;
const LINKS_PER_REPLICA = 4;
const RECEIVE_LIMIT_S = 120;

const BENCH = path.join(__dirname, "..", "..", "bench");

/** Builds sbbench into a temp dir (tests/bench/build-sbbench.sh); returns its path. */
function buildClient() {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sbbench-")), "sbbench");
  execFileSync("bash", [path.join(BENCH, "build-sbbench.sh"), out]);
  return out;
}

/** Runs sbbench against emu; resolves its stdout, rejects with its stderr. */
function bench(client, emu, args) {
  return new Promise((resolve, reject) => {
    execFile(client, ["--url", `amqp://127.0.0.1:${emu.amqpPort}`, "--sas-key", SAS_KEY, "--timeout",
      String(RECEIVE_LIMIT_S), ...args], { timeout: (RECEIVE_LIMIT_S + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`sbbench ${args.join(" ")}: ${err.message}\n${stderr}`));
      else resolve(stdout.trim());
    });
  });
}

/**
 * What the database holds of the entity's sessions when a receiver failed (once in CI, round 1:
 * a session link on the second replica got nothing until its lock lapsed): who held which
 * session, which messages were still locked, and the lock batches each claim left (their times
 * say which claim came when).
 */
function storeState(emu) {
  const of = "JOIN entities e ON e.id = x.entity_id WHERE e.path = 'rl-sessions'";
  const ask = (what, sql) => {
    try {
      return `${what}:\n${psql(emu, sql) || "(none)"}`;
    } catch (e) {
      return `${what}: ${e.message}`;
    }
  };
  return [
    ask("now", "SELECT clock_timestamp()"),
    ask("sessions held", `SELECT x.session_id, x.lock_token, x.locked_until FROM sessions x ${of}` +
      " AND x.locked_until IS NOT NULL ORDER BY x.session_id LIMIT 20"),
    ask("sessions with locked messages (session, messages, locked, earliest and latest locked-until)",
      `SELECT x.session_id, count(*), count(x.lock_token), min(x.locked_until), max(x.locked_until) FROM messages x ${of}` +
      " GROUP BY x.session_id HAVING count(x.lock_token) > 0 ORDER BY x.session_id LIMIT 20"),
    ask("lock batches (session, locked-until, sequence numbers)",
      `SELECT x.session_id, x.locked_until, x.sequence_numbers FROM lock_batches x ${of} ORDER BY x.locked_until LIMIT 20`),
  ].join("\n");
}

emulatorPairSuite("replicas: sessions under load", {
  one: { queues: [{ name: "rl-sessions", properties: { RequiresSession: true } }] },
}, (ctx) => {
  ctx.test(`${ROUNDS} rounds of ${SESSIONS} sessions taken on both replicas at once: all completed, no deadlock`, async () => {
    const client = buildClient();
    const before = deadlocks(ctx.one);
    const half = ["--address", "rl-sessions", "--mode", "receive-session", "--sessions", String(SESSIONS / 2),
      "--count", String((SESSIONS / 2) * PER_SESSION), "--connections", String(LINKS_PER_REPLICA)];
    for (let round = 1; round <= ROUNDS; round++) {
      await bench(client, ctx.one, ["--address", "rl-sessions", "--mode", "send", "--sessions", String(SESSIONS),
        "--count", String(SESSIONS * PER_SESSION), "--size", "1024"]);
      const [a, b] = await Promise.all([bench(client, ctx.one, half), bench(client, ctx.two, half)])
        .catch((e) => { throw new Error(`${e.message}\n${storeState(ctx.one)}`); });
      console.log(`round ${round}: one ${a.replace(/.*rate=/, "")}, two ${b.replace(/.*rate=/, "")}`);
      assert.equal(psql(ctx.one, "SELECT count(*) FROM messages m JOIN entities e ON e.id = m.entity_id" +
        " WHERE e.path = 'rl-sessions'"), "0", `round ${round} left messages behind`);
    }
    fs.rmSync(path.dirname(client), { recursive: true, force: true });
    await assertNoDeadlocks(ctx.one, before, [ctx.one, ctx.two]);
  }, 600000);
});
