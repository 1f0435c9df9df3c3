// GET /metrics scraped by a real Prometheus (Debian's `prometheus`, every second) while the JS SDK
// sends, receives, completes, abandons, defers and dead-letters; the test then asks Prometheus'
// own HTTP API (/api/v1/query) for the counters and the database's counts until they are what the
// traffic made (with a deadline), and checks that sbemu's target is up. Also: promtool accepts a
// real scrape (names, types, HELP), /metrics refuses other methods with a clear 405, a management
// GET of a queue named "metrics" still reaches the queue, and two emulators on one database show
// the same database counts (they are the database's, not the process's).
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { spawn, spawnSync } = require("node:child_process");
const { before, after } = require("node:test");
const { emulatorSuite, emulatorPairSuite, freePort, httpGet, sleep } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { advance } = require("./qs_util");
const { sasToken } = require("./admin_util");

const PROMETHEUS = "/usr/bin/prometheus";
const PROMTOOL = "/usr/bin/promtool";
// How long Prometheus may take to show what the traffic did: a scrape a second, and a query that
// sees the newest sample.
const PROM_DEADLINE_MS = 30000;
// Prometheus ends itself after this long if the test process dies before stopping it.
const PROM_LIFETIME_S = 300;

const LONG_TTL = { DefaultMessageTimeToLive: "P10D" };
const queues = [
  { name: "mq", properties: LONG_TTL },
  { name: "mdc", properties: { ...LONG_TTL, MaxDeliveryCount: 1 } },
  { name: "ttl", properties: { DefaultMessageTimeToLive: "PT1M", DeadLetteringOnMessageExpiration: true } },
];
const topics = [
  { name: "mt", properties: LONG_TTL, subscriptions: [{ name: "s1", properties: LONG_TTL }, { name: "s2", properties: LONG_TTL }] },
];

/** GET on 127.0.0.1:port; resolves {status, headers, body}. */
function request(port, method, urlPath) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: urlPath, timeout: 10000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${urlPath}: timeout`)));
    req.on("error", reject);
    req.end();
  });
}

/** A Prometheus of its own: a temp dir, a free port, sbemu's HTTP port as its one target. */
class Prometheus {
  constructor(targetPort, tmp) {
    this.targetPort = targetPort;
    this.dir = fs.mkdtempSync(path.join(tmp, "prom-"));
    this.logPath = path.join(this.dir, "prometheus.log");
    this.proc = null;
  }

  async start() {
    assert.ok(fs.existsSync(PROMETHEUS), `${PROMETHEUS} is missing: run scripts/install-deps.sh (apt-get install prometheus)`);
    this.port = await freePort();
    const config = path.join(this.dir, "prometheus.yml");
    fs.writeFileSync(config, [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      "  - job_name: sbemu",
      "    static_configs:",
      `      - targets: ["127.0.0.1:${this.targetPort}"]`,
      "",
    ].join("\n"));
    const log = fs.openSync(this.logPath, "w");
    // timeout(1) ends it even if this process is killed before after() runs
    this.proc = spawn("timeout", [String(PROM_LIFETIME_S), PROMETHEUS, `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(this.dir, "data")}`, `--web.listen-address=127.0.0.1:${this.port}`],
    { stdio: ["ignore", log, log] });
    fs.closeSync(log);
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + PROM_DEADLINE_MS;
    for (;;) {
      const r = await httpGet(this.port, "/-/ready", 1000);
      if (r.status === 200) return;
      if (Date.now() > deadline) throw new Error(`Prometheus not ready on ${this.port}:\n${this.log()}`);
      await sleep(200);
    }
  }

  log() {
    try {
      return fs.readFileSync(this.logPath, "utf8").split("\n").slice(-40).join("\n");
    } catch {
      return "";
    }
  }

  /** The instant vector of an expression, as [{metric, value}] (value a number). */
  async query(expr) {
    const r = await httpGet(this.port, `/api/v1/query?query=${encodeURIComponent(expr)}`, 5000);
    if (r.status !== 200) return null;
    const j = JSON.parse(r.body);
    if (j.status !== "success") return null;
    return j.data.result.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
  }

  /** Polls expr until its one sample equals want; fails naming what Prometheus last said. */
  async expect(expr, want) {
    const deadline = Date.now() + PROM_DEADLINE_MS;
    let last;
    for (;;) {
      last = await this.query(expr);
      if (last && last.length === 1 && last[0].value === want) return last[0];
      if (Date.now() > deadline) {
        assert.fail(`Prometheus: ${expr} = ${JSON.stringify(last)}, expected one sample of ${want}\n${this.log()}`);
      }
      await sleep(250);
    }
  }

  async stop() {
    if (!this.proc) return;
    this.proc.kill("SIGTERM");
    const t = setTimeout(() => this.proc && this.proc.kill("SIGKILL"), 10000);
    await this.exited;
    clearTimeout(t);
    this.proc = null;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

const sel = (entity) => `{job="sbemu",namespace="sbemulatorns",entity="${entity}"}`;

emulatorSuite("js metrics scraped by Prometheus", { queues, topics }, (ctx) => {
  let prom;
  before(async () => {
    prom = new Prometheus(ctx.emu.httpPort, ctx.emu.tmp);
    await prom.start();
  }, { timeout: PROM_DEADLINE_MS + 10000 });
  after(async () => {
    if (prom) await prom.stop();
  });

  ctx.test("SDK traffic shows in Prometheus: counters per entity, dead letters by reason, the database's counts", async (t) => {
    await prom.expect('up{job="sbemu"}', 1);
    const sb = ctx.client();
    // mq: 10 in; of them 7 completed, 1 dead-lettered by the client, 1 abandoned, 1 deferred
    const N = 10;
    await sb.createSender("mq").sendMessages(Array.from({ length: N }, (_, i) => ({ messageId: `m-${i}`, body: i })));
    const receiver = sb.createReceiver("mq", PEEK_LOCK);
    const got = await receiveExact(receiver, N);
    for (const m of got.slice(0, 7)) await receiver.completeMessage(m);
    await receiver.deadLetterMessage(got[7], { deadLetterReason: "Bad \"order\"\nline2", deadLetterErrorDescription: "test" });
    await receiver.deferMessage(got[8]);
    await receiver.abandonMessage(got[9]);
    await receiver.close();
    // mdc (MaxDeliveryCount 1): one abandon exhausts it, so the message is dead-lettered
    await sb.createSender("mdc").sendMessages({ messageId: "x", body: "x" });
    const r2 = sb.createReceiver("mdc", PEEK_LOCK);
    const [x] = await receiveExact(r2, 1);
    await r2.abandonMessage(x);
    await r2.close();
    // mt: 3 published, a copy each into s1 and s2
    await sb.createSender("mt").sendMessages([1, 2, 3].map((i) => ({ body: i })));

    await prom.expect(`sbemu_messages_in_total${sel("mq")}`, N);
    await prom.expect(`sbemu_messages_completed_total${sel("mq")}`, 7);
    await prom.expect(`sbemu_messages_abandoned_total${sel("mq")}`, 1);
    await prom.expect(`sbemu_messages_deferred_total${sel("mq")}`, 1);
    // the client's reason, quote and newline included, comes back whole through the label's escaping
    const dl = await prom.expect(`sbemu_messages_dead_lettered_total${sel("mq")}`, 1);
    assert.equal(dl.metric.reason, "Bad \"order\"\nline2");
    assert.equal(dl.metric.kind, "queue");
    t.diagnostic(`Prometheus answered: ${JSON.stringify(await prom.query(`sbemu_messages_dead_lettered_total${sel("mq")}`))}`);
    const out = await prom.query(`sbemu_messages_out_total${sel("mq")}`);
    assert.ok(out && out.length === 1 && out[0].value >= N, `out: ${JSON.stringify(out)}`);
    await prom.expect(`sbemu_messages_dead_lettered_total{job="sbemu",entity="mdc",reason="MaxDeliveryCountExceeded"}`, 1);
    await prom.expect(`sbemu_messages_in_total${sel("mt")}`, 3);
    await prom.expect(`sbemu_messages_in_total${sel("mt/Subscriptions/s1")}`, 3);
    await prom.expect(`sbemu_messages_in_total{job="sbemu",entity="mt/Subscriptions/s2",kind="subscription"}`, 3);
    // the database's counts: the abandoned message is back and the deferred one is active (as
    // Service Bus counts it), the dead letters are in their subqueues
    await prom.expect(`sbemu_entity_active_messages${sel("mq")}`, 2);
    await prom.expect(`sbemu_entity_deferred_messages${sel("mq")}`, 1);
    await prom.expect(`sbemu_entity_dead_letter_messages${sel("mq")}`, 1);
    await prom.expect(`sbemu_entity_dead_letter_messages${sel("mdc")}`, 1);
    await prom.expect(`sbemu_entity_active_messages${sel("mt/Subscriptions/s1")}`, 3);
    t.diagnostic(`Prometheus answered: ${JSON.stringify(await prom.query(`sbemu_entity_active_messages${sel("mq")}`))}`);
    const size = await prom.query(`sbemu_entity_size_bytes${sel("mq")}`);
    assert.ok(size && size[0].value > 0, `size: ${JSON.stringify(size)}`);
    // the wire and the store
    await prom.expect('sbemu_postgresql_up{job="sbemu"}', 1);
    const commits = await prom.query('sbemu_store_commits_total{job="sbemu"}');
    assert.ok(commits && commits[0].value > 0, `commits: ${JSON.stringify(commits)}`);
    const opened = await prom.query('sbemu_connections_opened_total{job="sbemu",door="amqp"}');
    assert.ok(opened && opened[0].value >= 1, `connections opened: ${JSON.stringify(opened)}`);
    const tokens = await prom.query('sbemu_cbs_put_tokens_total{job="sbemu"}');
    assert.ok(tokens && tokens[0].value >= 1, `put-tokens: ${JSON.stringify(tokens)}`);
    const latency = await prom.query('sbemu_store_commit_seconds_count{job="sbemu"}');
    assert.ok(latency && latency[0].value > 0, `commit latency count: ${JSON.stringify(latency)}`);
  }, 120000);

  ctx.test("the sweep's expiries count as expired and dead-lettered (TTLExpiredException)", async () => {
    const sb = ctx.client();
    await sb.createSender("ttl").sendMessages({ messageId: "t", body: "t" });
    await advance(ctx.emu, "PT2M");
    await prom.expect(`sbemu_messages_expired_total${sel("ttl")}`, 1);
    await prom.expect(`sbemu_messages_dead_lettered_total{job="sbemu",entity="ttl",reason="TTLExpiredException"}`, 1);
    await prom.expect(`sbemu_entity_dead_letter_messages${sel("ttl")}`, 1);
  }, 60000);

  ctx.test("a real scrape passes promtool's checks (names, units, HELP and TYPE), on either port", async () => {
    const r = await request(ctx.emu.httpPort, "GET", "/metrics");
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: r.body, encoding: "utf8" });
    assert.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}`);
    // the AMQP port's HTTP plane answers it too
    const viaAmqp = await request(ctx.emu.amqpPort, "GET", "/metrics");
    assert.equal(viaAmqp.status, 200);
    assert.match(viaAmqp.body, /^# HELP sbemu_messages_in_total /);
  });

  ctx.test("bad input: other methods get 405 naming what /metrics takes; a queue named metrics is still the queue's", async () => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const r = await request(ctx.emu.httpPort, method, "/metrics");
      assert.equal(r.status, 405, `${method}: ${r.status} ${r.body}`);
      assert.match(r.body, /takes GET only/);
    }
    // the ATOM API's GET of an entity named "metrics" carries api-version: it is not the scrape
    const atom = await request(ctx.emu.httpPort, "GET", "/metrics?api-version=2021-05");
    assert.equal(atom.status, 401, atom.body);
    assert.match(atom.body, /Authorization/);
    // and the emulator still answers the scrape afterwards
    assert.equal((await request(ctx.emu.httpPort, "GET", "/metrics")).status, 200);
  });
});

emulatorSuite("js metrics with --metrics-token-required", { queues: ["tq"], args: ["--metrics-token-required"] }, (ctx) => {
  ctx.test("a scrape without a token is refused 401, with the management API's SAS token it is answered", async () => {
    const r = await request(ctx.emu.httpPort, "GET", "/metrics");
    assert.equal(r.status, 401, r.body);
    assert.match(r.body, /--metrics-token-required/);
    // the namespace root's token, as Prometheus' authorization.credentials would carry it
    const token = sasToken(`http://127.0.0.1:${ctx.emu.httpPort}/`, { expiresIn: 3600 });
    const ok = await new Promise((resolve, reject) => {
      http.get({ host: "127.0.0.1", port: ctx.emu.httpPort, path: "/metrics", headers: { Authorization: token } }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode, body }));
      }).on("error", reject);
    });
    assert.equal(ok.status, 200, ok.body);
    assert.match(ok.body, /sbemu_entity_active_messages\{namespace="sbemulatorns",entity="tq",kind="queue"\} 0/);
  });
});

emulatorPairSuite("js metrics: two emulators on one database", { one: { queues: ["shared"] } }, (ctx) => {
  ctx.test("the counts are the database's: a send through one shows in the other's /metrics", async () => {
    await ctx.c1.createSender("shared").sendMessages([{ body: 1 }, { body: 2 }]);
    const line = 'sbemu_entity_active_messages{namespace="sbemulatorns",entity="shared",kind="queue"} 2';
    const deadline = Date.now() + 10000;
    for (;;) {
      const [a, b] = await Promise.all([ctx.one, ctx.two].map((e) => request(e.httpPort, "GET", "/metrics")));
      if (a.body.includes(line) && b.body.includes(line)) break;
      if (Date.now() > deadline) assert.fail(`both should show "${line}"`);
      await sleep(200);
    }
    // while the process counters are each process's own: the send went through one only
    const inOf = async (e) => /sbemu_messages_in_total\{[^}]*entity="shared"[^}]*\} (\d+)/.exec((await request(e.httpPort, "GET", "/metrics")).body)[1];
    assert.deepEqual([await inOf(ctx.one), await inOf(ctx.two)].sort(), ["0", "2"]);
  });
});
