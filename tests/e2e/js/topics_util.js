// Helpers for the topic suites (topics*.test.js): Config.json rules, draining a
// subscription (or its dead-letter queue) and a raw AMQP attach that reports how the
// emulator answered.
"use strict";

const assert = require("node:assert/strict");
const { PEEK_LOCK } = require("./util");
const { psql } = require("./qs_util");
const raw = require("./raw_amqp");

/** A Config.json SQL rule (with an optional SQL action). */
function sqlRule(name, expression, action) {
  const p = { FilterType: "Sql", SqlFilter: { SqlExpression: expression } };
  if (action) p.Action = { SqlExpression: action };
  return { Name: name, Properties: p };
}

/** A Config.json correlation rule: fields like {CorrelationId, Label, Properties: {...}}. */
function corrRule(name, fields, action) {
  const p = { FilterType: "Correlation", CorrelationFilter: fields };
  if (action) p.Action = { SqlExpression: action };
  return { Name: name, Properties: p };
}

/** A subscription that takes only messages whose application property `target` is its name. */
function targeted(name, properties = {}) {
  return { name, properties, rules: [sqlRule("only-me", `target = '${name}'`)] };
}

const DLQ = { ...PEEK_LOCK, subQueueType: "deadLetter" };

/**
 * Receives (peek-lock) from topic/sub (or its DLQ) until n messages arrived, then waits
 * quietMs more for anything extra; completes all and returns them. Fails with the
 * whole list when the count is not exactly n.
 */
async function drainSub(client, topic, sub, n, { dlq = false, timeoutMs = 8000, quietMs = 1000, what } = {}) {
  const r = client.createReceiver(topic, sub, dlq ? DLQ : PEEK_LOCK);
  const got = [];
  try {
    const deadline = Date.now() + timeoutMs;
    while (got.length < n && Date.now() < deadline) {
      got.push(...(await r.receiveMessages(n - got.length, { maxWaitTimeInMs: Math.min(1000, Math.max(100, deadline - Date.now())) })));
    }
    if (got.length >= n) got.push(...(await r.receiveMessages(10, { maxWaitTimeInMs: quietMs })));
    for (const m of got) await r.completeMessage(m);
  } finally {
    await r.close();
  }
  const where = what || `${topic}/Subscriptions/${sub}${dlq ? "/$DeadLetterQueue" : ""}`;
  assert.equal(got.length, n, `${where}: expected ${n} message(s), got ${got.length}: ${JSON.stringify(got.map(brief))}`);
  return got;
}

/** A short, comparable description of a received message. */
function brief(m) {
  const s = { messageId: m.messageId };
  if (m.applicationProperties && m.applicationProperties.tag !== undefined) s.tag = m.applicationProperties.tag;
  if (m.applicationProperties && m.applicationProperties.RuleName !== undefined) s.RuleName = m.applicationProperties.RuleName;
  if (m.deadLetterReason !== undefined) s.deadLetterReason = m.deadLetterReason;
  if (m.sequenceNumber !== undefined) s.seq = m.sequenceNumber.toString();
  return s;
}

/** Messages held in the table for one entity (by path in the entities view), by subqueue: "active,dlq". */
function storedCounts(emu, path) {
  // a subscription's copies still in its topic's log count as active (migration 018)
  return psql(emu, `SELECT count(*) FILTER (WHERE m.subqueue = 0) + sbemu_log_pending(e.id, 1000000) || ',' ||
    count(*) FILTER (WHERE m.subqueue = 1)
    FROM entities e LEFT JOIN messages m ON m.entity_id = e.id WHERE e.path = '${path}' GROUP BY e.id`);
}

/**
 * Attaches one raw link (role "sender" or "receiver") to address after a $cbs put-token,
 * and resolves with how it ended: {opened: true} when the emulator attached it, or
 * {condition, description} when it refused (detach with an error).
 */
async function rawAttach(port, address, role) {
  const { conn } = await raw.connect(port, { name: `sb://localhost/${address}` });
  try {
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ timeout: true }), 8000);
      const done = (r) => { clearTimeout(timer); resolve(r); };
      const link = role === "sender"
        ? conn.open_sender({ target: { address } })
        : conn.open_receiver({ source: { address }, credit_window: 0 });
      const onErr = (ctx) => {
        const l = ctx.sender || ctx.receiver;
        const e = l && l.error;
        done({ condition: e && e.condition, description: e && e.description });
      };
      link.on(`${role}_error`, onErr);
      link.on(`${role}_close`, onErr);
      link.once(`${role}_open`, () => {
        // A refusal is an attach followed at once by a detach with the error: give it a moment.
        setTimeout(() => done({ opened: true }), 1000);
      });
    });
  } finally {
    conn.close();
  }
}

module.exports = { sqlRule, corrRule, targeted, DLQ, drainSub, brief, storedCounts, rawAttach };
