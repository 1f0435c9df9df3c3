// The emulator's movable clock: GET /$sbemu/clock and POST /$sbemu/clock/advance?by=<ISO-8601>.
"use strict";

const assert = require("node:assert/strict");
const net = require("node:net");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { request, clockNow, advance } = require("./qs_util");

const MIN = 60000;

emulatorSuite("js clock endpoint", { queues: ["clock-q"] }, (ctx) => {
  ctx.test("GET /$sbemu/clock answers 200 JSON {now, offsetMs}: offset 0 and now = real time on a fresh emulator", async () => {
    const r = await request(ctx.emu.httpPort, "GET", "/$sbemu/clock");
    assert.equal(r.status, 200, `expected 200, got ${r.status} ${r.body}`);
    assert.match(String(r.headers["content-type"]), /application\/json/,
      `expected Content-Type application/json, got ${r.headers["content-type"]}`);
    const c = await clockNow(ctx.emu);
    assert.equal(c.offsetMs, 0, `a fresh emulator should have offsetMs 0, got ${c.offsetMs}`);
    assert.match(c.nowText, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]00:00)$/, `now should be an ISO-8601 UTC time, got ${c.nowText}`);
    const skew = Math.abs(c.now.getTime() - Date.now());
    assert.ok(skew < 5000, `now (${c.nowText}) should be the real time (±5 s), is ${skew} ms off`);
  });

  ctx.test("POST advance?by=PT6M moves offsetMs by exactly 360000 and now by ~6 min; GET agrees", async () => {
    const before = await clockNow(ctx.emu);
    const a = await advance(ctx.emu, "PT6M");
    assert.equal(a.offsetMs - before.offsetMs, 6 * MIN, `offsetMs went ${before.offsetMs} → ${a.offsetMs}, expected +360000`);
    const moved = a.now.getTime() - before.now.getTime();
    assert.ok(moved >= 6 * MIN && moved < 6 * MIN + 5000, `now moved by ${moved} ms (${before.nowText} → ${a.nowText}), expected 360000..365000`);
    const g = await clockNow(ctx.emu);
    assert.equal(g.offsetMs, a.offsetMs, `GET after advance shows offsetMs ${g.offsetMs}, advance answered ${a.offsetMs}`);
    const drift = g.now.getTime() - (Date.now() + g.offsetMs);
    assert.ok(Math.abs(drift) < 5000, `GET now (${g.nowText}) should be real time + offsetMs, is ${drift} ms off`);
  });

  for (const [iso, ms] of [["PT1H2M3S", 3723000], ["PT30S", 30000], ["P1D", 86400000], ["PT90M", 90 * MIN]]) {
    ctx.test(`advance?by=${iso} adds ${ms} ms`, async () => {
      const before = await clockNow(ctx.emu);
      const a = await advance(ctx.emu, iso);
      assert.equal(a.offsetMs - before.offsetMs, ms, `by=${iso}: offsetMs ${before.offsetMs} → ${a.offsetMs}, expected +${ms}`);
    });
  }

  ctx.test("advance?by=PT0.5S adds 500 ms (fractional seconds)", async () => {
    const before = await clockNow(ctx.emu);
    const a = await advance(ctx.emu, "PT0.5S");
    assert.equal(a.offsetMs - before.offsetMs, 500, `by=PT0.5S: offsetMs ${before.offsetMs} → ${a.offsetMs}, expected +500`);
  });

  ctx.test("POST advance with no Content-Length (as curl -X POST and Java's HttpURLConnection send it) answers at once", async () => {
    const before = await clockNow(ctx.emu);
    // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 6.3).
    const raw = await new Promise((resolve, reject) => {
      const s = net.connect({ host: "127.0.0.1", port: ctx.emu.httpPort });
      let got = "";
      const timer = setTimeout(() => { s.destroy(); reject(new Error(`no answer within 3 s; got ${JSON.stringify(got)}`)); }, 3000);
      s.on("connect", () => s.write("POST /$sbemu/clock/advance?by=PT1M HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n"));
      s.on("data", (c) => {
        got += c;
        if (/\r\n\r\n[\s\S]*"offsetMs"/.test(got)) { clearTimeout(timer); s.destroy(); resolve(got); }
      });
      s.on("error", (e) => { clearTimeout(timer); reject(e); });
      s.on("close", () => { clearTimeout(timer); reject(new Error(`closed; got ${JSON.stringify(got)}`)); });
    });
    assert.match(raw, /^HTTP\/1\.1 200/, raw);
    const after = await clockNow(ctx.emu);
    assert.equal(after.offsetMs - before.offsetMs, MIN, `offsetMs ${before.offsetMs} → ${after.offsetMs}, expected +60000`);
  });

  ctx.test("GET on /$sbemu/clock/advance does not move the clock (only POST does)", async () => {
    const before = await clockNow(ctx.emu);
    const r = await request(ctx.emu.httpPort, "GET", "/$sbemu/clock/advance?by=PT1M");
    assert.ok(r.status >= 400 && r.status < 500, `GET advance: expected a 4xx (405), got ${r.status} ${r.body}`);
    const after = await clockNow(ctx.emu);
    assert.equal(after.offsetMs, before.offsetMs, `a GET moved the clock: ${before.offsetMs} → ${after.offsetMs}`);
  });

  for (const [label, query] of [
    ["a negative duration (time never goes back)", "?by=-PT1M"],
    ["a bad duration (banana)", "?by=banana"],
    ["an empty duration", "?by="],
    ["a duration with no unit (PT)", "?by=PT"],
    ["no by parameter", ""],
  ]) {
    ctx.test(`advance with ${label} answers 400 with a JSON error naming the parameter "by", clock unchanged`, async () => {
      const before = await clockNow(ctx.emu);
      const p = `/$sbemu/clock/advance${query}`;
      const r = await request(ctx.emu.httpPort, "POST", p);
      assert.equal(r.status, 400, `POST ${p}: expected 400, got ${r.status} ${r.body}`);
      let j;
      try {
        j = JSON.parse(r.body);
      } catch {
        assert.fail(`POST ${p}: expected a JSON error body, got ${JSON.stringify(r.body)}`);
      }
      assert.ok(j && typeof j === "object", `POST ${p}: expected a JSON object, got ${r.body}`);
      assert.match(JSON.stringify(j), /\bby\b/, `POST ${p}: the error should name the parameter "by": ${r.body}`);
      const after = await clockNow(ctx.emu);
      assert.equal(after.offsetMs, before.offsetMs, `POST ${p} was refused but offsetMs changed ${before.offsetMs} → ${after.offsetMs}`);
    });
  }

  ctx.test("after the clock moved more than a SAS token's lifetime (> 1 day), a new client still connects and sends", async () => {
    const c = await clockNow(ctx.emu);
    assert.ok(c.offsetMs > 86400000, `earlier tests should have moved the clock > 1 day, offsetMs ${c.offsetMs}`);
    // Tokens are signed by the SDK with an expiry on the real clock (JS: now + 1 h). Checking them
    // against the moved clock would lock every client out of an emulator whose clock was advanced.
    await ctx.client().createSender("clock-q").sendMessages({ messageId: "token-ok", body: "t" });
    const receiver = ctx.client().createReceiver("clock-q", { receiveMode: "receiveAndDelete" });
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "token-ok");
    await receiver.close();
  });

  ctx.test("messages are stamped by the emulator clock: enqueuedTimeUtc = clock now, lockedUntilUtc = clock now + LockDuration", async () => {
    const c = await clockNow(ctx.emu);
    assert.ok(c.offsetMs > 86400000, `earlier tests should have moved the clock > 1 day, offsetMs ${c.offsetMs}`);
    const sb = ctx.client();
    await sb.createSender("clock-q").sendMessages({ messageId: "stamp", body: "t" });
    const receiver = sb.createReceiver("clock-q", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    const expected = Date.now() + c.offsetMs;
    const d = m.enqueuedTimeUtc.getTime() - expected;
    assert.ok(Math.abs(d) < 5000,
      `enqueuedTimeUtc ${m.enqueuedTimeUtc.toISOString()} should be the emulator's now (~${new Date(expected).toISOString()}), is ${d} ms off`);
    const lockMs = m.lockedUntilUtc.getTime() - expected;
    assert.ok(Math.abs(lockMs - MIN) < 5000,
      `lockedUntilUtc ${m.lockedUntilUtc.toISOString()} should be emulator now + 60 s (LockDuration PT1M), is now + ${lockMs} ms`);
    await receiver.completeMessage(m);
    await receiver.close();
  });
});
