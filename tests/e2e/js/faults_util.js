// Helpers for the faults-on-demand suites (faults*.test.js): the HTTP API
// /$sbemu/faults, signed as the management API is, and clients whose retry
// options a test sets.
"use strict";

const assert = require("node:assert/strict");
const { rawRequest } = require("./admin_util");

/** One request to /$sbemu/faults[/name]; resolves {status, json, body}. */
async function faults(emu, method, name, body) {
  const path = name === undefined ? "$sbemu/faults" : `$sbemu/faults/${name}`;
  const opts = { method };
  if (body !== undefined) opts.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await rawRequest(emu, path, opts);
  let json = null;
  try {
    json = JSON.parse(res.body);
  } catch {}
  return { status: res.status, json, body: res.body, headers: res.headers };
}

/** PUT a rule; expects 201 (or 200 when replacing) and returns the rule as answered. */
async function putRule(emu, name, rule, expected = 201) {
  const res = await faults(emu, "PUT", name, rule);
  assert.equal(res.status, expected, `PUT /$sbemu/faults/${name}: ${res.status} ${res.body}`);
  return res.json;
}

async function getRule(emu, name) {
  const res = await faults(emu, "GET", name);
  assert.equal(res.status, 200, `GET /$sbemu/faults/${name}: ${res.status} ${res.body}`);
  return res.json;
}

async function deleteRule(emu, name) {
  const res = await faults(emu, "DELETE", name);
  assert.equal(res.status, 200, `DELETE /$sbemu/faults/${name ?? ""}: ${res.status} ${res.body}`);
  return res.json;
}

/** Awaits promise, expects it to fail, and returns the error (the last of an AggregateError's). */
async function failureOf(promise, what) {
  try {
    await promise;
  } catch (e) {
    if (e instanceof AggregateError && Array.isArray(e.errors) && e.errors.length) return e.errors[e.errors.length - 1];
    return e;
  }
  assert.fail(`${what}: expected a failure, but it succeeded`);
}

/** Lines of the emulator's log that say a fault rule fired. */
function firedLines(emu, name) {
  return emu.log().split("\n").filter((l) => l.includes(`fault rule '${name}' fired:`));
}

module.exports = { faults, putRule, getRule, deleteRule, failureOf, firedLines };
