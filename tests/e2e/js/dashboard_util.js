// Helpers for the dashboard's tests (dashboard_*.test.js): its JSON API on
// the HTTP port, signed as the page signs it (a token for the namespace
// root), and polling with a deadline.
"use strict";

const assert = require("node:assert/strict");
const http = require("node:http");
const { sasToken } = require("./admin_util");

/** A SAS token for the namespace root of emu's HTTP port (covers every path). */
function rootToken(emu, opts = {}) {
  return sasToken(`http://localhost:${emu.httpPort}/`, opts);
}

/**
 * One call of /$sbemu/api/<path>. body: an object (sent as JSON, POST), a
 * string (sent as it is, POST) or undefined (GET). opts: method, auth (false:
 * no Authorization; a string: that header), port. Resolves {status, headers, json, text}.
 */
function dash(emu, path, body, opts = {}) {
  const method = opts.method || (body === undefined ? "GET" : "POST");
  const headers = {};
  if (opts.auth !== false) headers.authorization = typeof opts.auth === "string" ? opts.auth : rootToken(emu);
  let payload;
  if (body !== undefined) {
    payload = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: opts.port || emu.httpPort, method, path: `/$sbemu/api/${path}`, headers, timeout: 20000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON: the test says so */ }
        resolve({ status: res.statusCode, headers: res.headers, json, text });
      });
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in time`)));
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Expects a refusal: status and an "error" text matching re, in JSON. */
async function refused(promise, status, re) {
  const r = await promise;
  assert.equal(r.status, status, `expected HTTP ${status}, got ${r.status}: ${r.text}`);
  assert.ok(r.json && typeof r.json.error === "string", `the refusal must be JSON {"error": ...}, got ${r.text}`);
  assert.match(r.json.error, re);
  assert.equal(r.json.status, status, `"status" in the body: ${r.text}`);
  return r.json;
}

/** Expects 200 and returns the JSON body. */
async function ok(promise) {
  const r = await promise;
  assert.equal(r.status, 200, `expected HTTP 200, got ${r.status}: ${r.text}`);
  assert.ok(r.json, `expected JSON, got ${r.text}`);
  return r.json;
}

/** Polls fn (async, returns a value or throws/returns falsy) until it returns something truthy. */
async function eventually(what, fn, timeoutMs = 15000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms (last: ${last && last.message ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** An entity's counts from GET entities. */
async function countsOf(emu, path) {
  const doc = await ok(dash(emu, "entities"));
  const e = doc.entities.find((x) => x.path === path);
  assert.ok(e, `no entity ${path} in ${JSON.stringify(doc.entities.map((x) => x.path))}`);
  return e.counts;
}

module.exports = { rootToken, dash, refused, ok, eventually, countsOf };
