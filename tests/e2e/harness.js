// Starts a real sbemu on free ports with a temporary data dir (its embedded
// PostgreSQL lives there), waits for GET /health = 200, hands out the connection
// string, and stops it with SIGTERM expecting exit code 0. The emulator's stdout
// and stderr go to <tmp>/sbemu.log, which is printed when something goes wrong.
//
// Environment: SBEMU_BIN (default <repo>/build/bin/sbemu), SBEMU_E2E_KEEP=1 keeps
// the temp dirs, SBEMU_E2E_VERBOSE=1 prints the log even when all went well,
// SBEMU_E2E_ARGS="--log-level debug" adds flags to every sbemu started.
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const net = require("node:net");
const http = require("node:http");
const { spawn } = require("node:child_process");

const REPO = path.resolve(__dirname, "..", "..");
const BIN = process.env.SBEMU_BIN || path.join(REPO, "build", "bin", "sbemu");
const SAS_KEY_NAME = "RootManageSharedAccessKey";
const SAS_KEY = "SAS_KEY_VALUE";
const HEALTH_TIMEOUT_MS = 30000;
const STOP_TIMEOUT_MS = 15000;

/** A TCP port that was free a moment ago (bind port 0, read it back, close). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves true when something accepts TCP connections on 127.0.0.1:port. */
function portInUse(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => { s.destroy(); resolve(true); });
    s.once("error", () => resolve(false));
  });
}

function httpGet(port, urlPath, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: urlPath, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err) => resolve({ status: 0, body: String(err) }));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Official-emulator Config.json for the given queues and topics. */
function makeConfig(queues = [], topics = []) {
  const q = queues.map((e) => (typeof e === "string" ? { name: e } : e));
  const queueProps = (p = {}) => ({
    DeadLetteringOnMessageExpiration: false,
    DefaultMessageTimeToLive: "PT1H",
    DuplicateDetectionHistoryTimeWindow: "PT20S",
    ForwardDeadLetteredMessagesTo: "",
    ForwardTo: "",
    LockDuration: "PT1M",
    MaxDeliveryCount: 10,
    RequiresDuplicateDetection: false,
    RequiresSession: false,
    ...p,
  });
  return {
    UserConfig: {
      Namespaces: [
        {
          Name: "sbemulatorns",
          Queues: q.map((e) => ({ Name: e.name, Properties: queueProps(e.properties) })),
          Topics: topics.map((t) => ({
            Name: t.name,
            Properties: {
              DefaultMessageTimeToLive: "PT1H",
              DuplicateDetectionHistoryTimeWindow: "PT20S",
              RequiresDuplicateDetection: false,
              ...(t.properties || {}),
            },
            Subscriptions: (t.subscriptions || [{ name: "sub" }]).map((s) => ({
              Name: s.name,
              Properties: (({ DuplicateDetectionHistoryTimeWindow, RequiresDuplicateDetection, ...rest }) => rest)(
                queueProps(s.properties)),
              Rules: s.rules || [],
            })),
          })),
        },
      ],
      Logging: { Type: "Console" },
    },
  };
}

function connectionString(port, key = SAS_KEY, keyName = SAS_KEY_NAME) {
  return `Endpoint=sb://localhost:${port};SharedAccessKeyName=${keyName};SharedAccessKey=${key};UseDevelopmentEmulator=true;`;
}

/** Pid of the embedded postmaster, from <data-dir>/pg/data/postmaster.pid (null if none). */
function postmasterPid(dataDir) {
  try {
    const pid = parseInt(fs.readFileSync(path.join(dataDir, "pg", "data", "postmaster.pid"), "utf8").split("\n")[0], 10);
    return Number.isFinite(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

class Emulator {
  /**
   * opts: queues, topics (see makeConfig), config (a whole Config.json object instead),
   * args (extra CLI flags), amqpsPort (default 0 = disabled), dataDir (reuse one),
   * env (extra environment), name (for the temp dir).
   */
  constructor(opts = {}) {
    this.opts = opts;
    // The name is cut short: psql reaches the cluster through <tmp>/data/pg/run/.s.PGSQL.5432,
    // and a Unix socket path has at most 107 bytes (the run dir of tests/e2e/run.sh comes first).
    const slug = (opts.name || "run").slice(0, 24);
    this.tmp = opts.tmp || fs.mkdtempSync(path.join(os.tmpdir(), `sbemu-e2e-${slug}-`));
    // The embedded cluster runs as the postgres user, which must be able to reach <data-dir>/pg.
    if (!opts.tmp) fs.chmodSync(this.tmp, 0o755);
    this.dataDir = opts.dataDir || path.join(this.tmp, "data");
    this.logPath = path.join(this.tmp, "sbemu.log");
    this.configPath = path.join(this.tmp, "Config.json");
    this.proc = null;
    this.exit = null; // {code, signal} once it ended
    this.failed = false;
  }

  get connectionString() {
    return connectionString(this.amqpPort);
  }

  connectionStringWith(key, keyName) {
    return connectionString(this.amqpPort, key, keyName);
  }

  get certPath() {
    return path.join(this.dataDir, "tls", "cert.pem");
  }

  async start() {
    if (!fs.existsSync(BIN)) throw new Error(`sbemu binary not found at ${BIN} (build it: scripts/build.sh)`);
    const config = this.opts.config || makeConfig(this.opts.queues, this.opts.topics);
    fs.writeFileSync(this.configPath, JSON.stringify(config, null, 2));
    // Ports are picked once and kept across restarts of the same Emulator.
    if (!this.amqpPort) {
      this.amqpPort = this.opts.amqpPort || (await freePort());
      this.httpPort = this.opts.httpPort || (await freePort());
      // amqpsPort: 0 (default) disables TLS, "free" picks a free port, a number is used as is.
      this.amqpsPort = this.opts.amqpsPort === "free" ? await freePort() : this.opts.amqpsPort ?? 0;
    }
    const args = [
      "--config", this.configPath,
      "--data-dir", this.dataDir,
      "--amqp-port", String(this.amqpPort),
      "--amqps-port", String(this.amqpsPort),
      "--http-port", String(this.httpPort),
      ...(this.opts.args || []),
      ...(process.env.SBEMU_E2E_ARGS || "").split(/\s+/).filter(Boolean), // e.g. "--log-level debug"
    ];
    const log = fs.openSync(this.logPath, "a");
    fs.writeSync(log, `\n=== ${new Date().toISOString()} ${BIN} ${args.join(" ")}\n`);
    this.exit = null;
    const env = { ...process.env, ...(this.opts.env || {}) };
    // The tests' own SBEMU_* settings must not leak into the server's flags.
    for (const k of Object.keys(env)) if (k.startsWith("SBEMU_") && !(this.opts.env || {})[k]) delete env[k];
    this.proc = spawn(BIN, args, { stdio: ["ignore", log, log], env });
    fs.closeSync(log);
    const proc = this.proc;
    this.exited = new Promise((resolve) => {
      proc.on("exit", (code, signal) => {
        if (this.proc === proc) this.exit = { code, signal };
        resolve({ code, signal });
      });
    });
    await this.waitHealthy();
    return this;
  }

  async waitHealthy(timeoutMs = HEALTH_TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    let last = null;
    while (Date.now() < deadline) {
      if (this.exit) {
        this.fail(`sbemu exited during start-up (code ${this.exit.code}, signal ${this.exit.signal})`);
      }
      last = await httpGet(this.httpPort, "/health", 1000);
      if (last.status === 200) {
        let body;
        try {
          body = JSON.parse(last.body);
        } catch {
          this.fail(`/health answered 200 with a body that is not JSON: ${last.body}`);
        }
        if (body.status !== "healthy") this.fail(`/health answered 200 with ${last.body}`);
        return;
      }
      await sleep(100);
    }
    this.fail(`sbemu not healthy after ${timeoutMs} ms (last /health: ${last && last.status} ${last && last.body})`);
  }

  log() {
    try {
      return fs.readFileSync(this.logPath, "utf8");
    } catch {
      return "";
    }
  }

  /** Prints the tail of the emulator's log to stderr (once per failure). */
  dumpLog(reason = "") {
    const text = this.log();
    const lines = text.split("\n");
    const tail = lines.slice(-200).join("\n");
    process.stderr.write(
      `\n----- sbemu log (${this.logPath}, last ${Math.min(200, lines.length)} of ${lines.length} lines)${reason ? " after: " + reason : ""} -----\n` +
        `${tail}\n----- end of sbemu log -----\n`
    );
  }

  fail(message) {
    this.failed = true;
    this.dumpLog(message);
    throw new Error(message);
  }

  /** SIGTERM, then expects a clean exit 0 within STOP_TIMEOUT_MS. */
  async stop() {
    if (!this.proc) return;
    if (this.exit) {
      const e = this.exit;
      this.proc = null;
      this.fail(`sbemu had already exited before stop() (code ${e.code}, signal ${e.signal})`);
    }
    this.proc.kill("SIGTERM");
    let timeout;
    const timer = new Promise((resolve) => (timeout = setTimeout(() => resolve("timeout"), STOP_TIMEOUT_MS)));
    const r = await Promise.race([this.exited, timer]);
    clearTimeout(timeout); // a pending timer would keep the test process alive for 15 s
    const proc = this.proc;
    this.proc = null;
    if (r === "timeout") {
      proc.kill("SIGKILL");
      await this.exited;
      this.fail(`sbemu did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`);
    }
    if (r.code !== 0) this.fail(`sbemu exited with code ${r.code} signal ${r.signal} after SIGTERM (expected 0)`);
  }

  /** kill -9 the emulator (its embedded PostgreSQL keeps running). */
  async kill9() {
    if (!this.proc) return;
    this.proc.kill("SIGKILL");
    await this.exited;
    this.proc = null;
  }

  /** kill -9 the embedded postmaster too (what a power cut would do). */
  async kill9Postgres() {
    const pid = postmasterPid(this.dataDir);
    if (!pid) throw new Error(`no postmaster.pid under ${this.dataDir}/pg/data`);
    try {
      process.kill(pid, "SIGKILL");
    } catch (e) {
      if (e.code !== "ESRCH") throw e;
    }
    for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
    if (alive(pid)) throw new Error(`postmaster ${pid} still alive after SIGKILL`);
    return pid;
  }

  /**
   * Stops anything left behind: the emulator (SIGKILL if still up) and an embedded
   * postmaster it may have left (SIGQUIT = immediate shutdown), then removes the temp dir.
   */
  async cleanup() {
    if (this.proc) await this.kill9();
    const pid = postmasterPid(this.dataDir);
    if (pid && alive(pid)) {
      try {
        process.kill(pid, "SIGQUIT");
      } catch {}
      for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
    }
    if (process.env.SBEMU_E2E_VERBOSE) this.dumpLog("end of run");
    if (!this.failed && !process.env.SBEMU_E2E_KEEP && !this.opts.tmp) {
      fs.rmSync(this.tmp, { recursive: true, force: true });
    } else {
      process.stderr.write(`sbemu e2e: kept ${this.tmp}\n`);
    }
  }
}

/**
 * Declares a node:test suite with an emulator around it. body(ctx) gets ctx.emu
 * (started before the first test) and ctx.test(name, fn[, timeoutMs]), a test that
 * prints the emulator's log when it fails. The emulator is stopped after the last
 * test, and the stop itself is a test (exit code 0 on SIGTERM).
 */
function emulatorSuite(name, opts, body) {
  const { describe, before, after, test } = require("node:test");
  describe(name, () => {
    const emu = new Emulator({ name: name.replace(/[^A-Za-z0-9]+/g, "-"), ...opts });
    const clients = [];
    const ctx = {
      emu,
      /** A ServiceBusClient on this emulator, closed at the end of the suite. */
      client(connStr = emu.connectionString, options = {}) {
        const { ServiceBusClient } = require("@azure/service-bus");
        const c = new ServiceBusClient(connStr, {
          retryOptions: { maxRetries: 1, retryDelayInMs: 200, maxRetryDelayInMs: 1000, timeoutInMs: 10000 },
          ...options,
        });
        clients.push(c);
        return c;
      },
      test(tname, fn, timeoutMs = 40000) {
        test(tname, { timeout: timeoutMs }, async (t) => {
          if (!started) throw new Error("emulator did not start (see its log above)");
          try {
            await fn(t);
          } catch (err) {
            emu.failed = true;
            emu.dumpLog(`${name} › ${tname}: ${err && err.message}`);
            throw err;
          }
        });
      },
    };
    let started = false;
    before(async () => {
      await emu.start();
      started = true;
    }, { timeout: HEALTH_TIMEOUT_MS + 10000 });
    body(ctx);
    test("emulator stops cleanly on SIGTERM (exit 0)", { timeout: STOP_TIMEOUT_MS + 30000 }, async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      if (!started) throw new Error("emulator did not start");
      await emu.stop();
    });
    after(async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      await emu.cleanup();
    });
  });
}

/**
 * emulatorSuite with two emulators on one database: `one` runs the embedded PostgreSQL, `two`
 * reaches it with --postgres. body(ctx) gets ctx.one, ctx.two, ctx.c1 and ctx.c2 (a
 * ServiceBusClient on each, set once both are up) and ctx.test(name, fn[, timeoutMs]), a test that
 * prints both logs when it fails. opts: one, two (Emulator options of each) and started(ctx), an
 * async check run once both are up. Both are stopped after the last test, the one using the
 * other's database first, and the stop is a test (exit code 0 on SIGTERM).
 */
function emulatorPairSuite(name, opts, body) {
  const { describe, before, after, test } = require("node:test");
  describe(name, () => {
    const slug = name.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 20);
    const ctx = { one: new Emulator({ name: `${slug}-1`, ...opts.one }), two: null, c1: null, c2: null };
    let started = false;
    ctx.test = (tname, fn, timeoutMs = 60000) => test(tname, { timeout: timeoutMs }, async (t) => {
      if (!started) throw new Error("the emulators did not start (see their logs above)");
      try {
        await fn(t);
      } catch (err) {
        for (const emu of [ctx.one, ctx.two]) {
          emu.failed = true;
          emu.dumpLog(`${name} › ${tname}: ${err && err.message}`);
        }
        throw err;
      }
    });
    const closeClients = () => Promise.allSettled([ctx.c1 && ctx.c1.close(), ctx.c2 && ctx.c2.close()]);
    before(async () => {
      await ctx.one.start();
      const shared = ["--postgres", `host=${path.join(ctx.one.dataDir, "pg", "run")} user=sbemu dbname=sbemu`];
      ctx.two = new Emulator({ name: `${slug}-2`, ...opts.two, args: [...shared, ...((opts.two || {}).args || [])] });
      await ctx.two.start();
      const { ServiceBusClient } = require("@azure/service-bus");
      const retryOptions = { maxRetries: 1, retryDelayInMs: 200, maxRetryDelayInMs: 1000, timeoutInMs: 10000 };
      ctx.c1 = new ServiceBusClient(ctx.one.connectionString, { retryOptions });
      ctx.c2 = new ServiceBusClient(ctx.two.connectionString, { retryOptions });
      if (opts.started) await opts.started(ctx);
      started = true;
    }, { timeout: 2 * HEALTH_TIMEOUT_MS + 30000 });
    body(ctx);
    test("both emulators stop cleanly on SIGTERM (exit 0)", { timeout: 2 * STOP_TIMEOUT_MS + 30000 }, async () => {
      await closeClients();
      if (!started) throw new Error("the emulators did not start");
      await ctx.two.stop();
      await ctx.one.stop();
    });
    after(async () => {
      await closeClients();
      if (ctx.two) await ctx.two.cleanup();
      await ctx.one.cleanup();
    });
  });
}

/**
 * A stream of sends from a child node process running script (JS source, run in
 * tests/e2e/js so that it finds the SDK), which prints "ACK <messageId>" for
 * each acknowledged send. The sends run in a child because an SDK whose server
 * vanishes may throw from its timers. Returns { acked, waitFor(n, ms), stop() }:
 * acked fills as the lines come; stop() waits a moment, kills the child, and
 * resolves once its output is read, so acked then holds all it acknowledged.
 */
function ackingLoad(script, env) {
  const { spawn } = require("node:child_process");
  const child = spawn(process.execPath, ["-e", script], {
    cwd: path.join(__dirname, "js"),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const acked = [];
  let partial = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop();
    for (const l of lines) if (l.startsWith("ACK ")) acked.push(l.slice(4));
  });
  const exited = new Promise((r) => child.once("close", r));
  return {
    acked,
    async waitFor(n, ms) {
      const deadline = Date.now() + ms;
      while (acked.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return acked.length >= n;
    },
    async stop() {
      await new Promise((r) => setTimeout(r, 200)); // what it printed by now is all it had acknowledged
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Wraps a test body that drives emu itself: on failure the emulator's log is
 * printed and its temp dir kept (emu.failed), then the error is thrown again.
 */
function guarded(emu, fn) {
  return async (...args) => {
    try {
      await fn(...args);
    } catch (err) {
      emu.failed = true;
      emu.dumpLog(err && err.message);
      throw err;
    }
  };
}

/**
 * A PostgreSQL cluster of its own (initdb in a temp dir, TCP on a free port),
 * for --postgres tests. Returns { conninfo, port, start(), stop(mode), cleanup() };
 * it runs as the postgres user when we are root, as PostgreSQL insists.
 */
async function externalPostgres() {
  const { execFileSync } = require("node:child_process");
  const PGBIN = "/usr/lib/postgresql/15/bin";
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sbemu-e2e-extpg-"));
  const pgDir = path.join(tmp, "pg");
  const data = path.join(pgDir, "data");
  const port = await freePort();
  const root = process.getuid && process.getuid() === 0;
  const run = (bin, args) =>
    root
      ? execFileSync("runuser", ["-u", "postgres", "--", path.join(PGBIN, bin), ...args], { stdio: "pipe" })
      : execFileSync(path.join(PGBIN, bin), args, { stdio: "pipe" });
  fs.mkdirSync(pgDir);
  if (root) {
    fs.chmodSync(tmp, 0o755);
    execFileSync("chown", ["postgres", pgDir]);
  }
  run("initdb", ["-D", data, "-U", "sbtest", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]);
  const pg = {
    port,
    conninfo: `host=127.0.0.1 port=${port} user=sbtest dbname=sb`,
    psql: (db, sql) =>
      execFileSync("psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "sbtest", "-d", db, "-Atc", sql]).toString().trim(),
    start: () =>
      run("pg_ctl", ["-D", data, "-l", path.join(pgDir, "log"), "-w", "-o",
        `-k ${pgDir} -c listen_addresses=127.0.0.1 -p ${port}`, "start"]),
    stop: (mode = "fast") => run("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]),
    cleanup() {
      try {
        pg.stop("immediate");
      } catch {}
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
  pg.start();
  pg.psql("postgres", "CREATE DATABASE sb");
  return pg;
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

module.exports = {
  guarded,
  externalPostgres,
  cpuSeconds,
  BIN,
  REPO,
  SAS_KEY,
  SAS_KEY_NAME,
  Emulator,
  emulatorSuite,
  emulatorPairSuite,
  ackingLoad,
  makeConfig,
  connectionString,
  freePort,
  portInUse,
  httpGet,
  postmasterPid,
  alive,
  sleep,
};
