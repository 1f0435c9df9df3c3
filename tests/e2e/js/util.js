// Small helpers shared by the JS SDK tests.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");

/** Receiver options used everywhere: no auto lock renewal, so locks expire as configured. */
const PEEK_LOCK = { receiveMode: "peekLock", maxAutoLockRenewalDurationInMs: 0 };

/**
 * Receives until exactly n messages arrived (or timeoutMs passed: then fails with
 * what did arrive). Does not settle them.
 */
async function receiveExact(receiver, n, timeoutMs = 20000) {
  const got = [];
  const deadline = Date.now() + timeoutMs;
  while (got.length < n) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const batch = await receiver.receiveMessages(n - got.length, { maxWaitTimeInMs: Math.min(left, 5000) });
    got.push(...batch);
  }
  assert.equal(got.length, n, `expected ${n} message(s), received ${got.length}: ${JSON.stringify(got.map((m) => m.messageId))}`);
  return got;
}

/**
 * Proves, without waiting for a lock to expire, that nothing that is not locked is
 * ahead of a new message: sends a unique marker and expects it as the very next
 * message a fresh receiver gets (FIFO). Completes the marker.
 */
async function expectMarkerNext(client, queue, receiverOptions = {}) {
  const marker = `marker-${crypto.randomUUID()}`;
  const sender = client.createSender(queue);
  await sender.sendMessages({ body: marker, messageId: marker });
  await sender.close();
  const receiver = client.createReceiver(queue, { ...PEEK_LOCK, ...receiverOptions });
  try {
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, marker, `expected the marker next, got messageId=${m.messageId} body=${JSON.stringify(m.body)}`);
    await receiver.completeMessage(m);
  } finally {
    await receiver.close();
  }
}

/** Awaits promise and expects a ServiceBusError with the given code. */
async function expectCode(promise, code) {
  let err = null;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected an error with code ${code}, but the call succeeded`);
  // core-amqp retries errors it deems retryable (UnauthorizedError is one: keys may be
  // rotated) and then throws an AggregateError of every attempt's error.
  if (err instanceof AggregateError && Array.isArray(err.errors) && err.errors.length > 0) {
    for (const e of err.errors) assert.equal(e.code, code, `attempt failed with ${e.code} (${e.name}: ${e.message}), expected ${code}`);
    err = err.errors[err.errors.length - 1];
  }
  assert.equal(err.code, code, `expected code ${code}, got ${err.code} (${err.name}: ${err.message})`);
  return err;
}

function uniqueId(prefix) {
  return `${prefix}-${crypto.randomUUID()}`;
}

/** Sends a raw request on the entity's management link of the SDK's own connection
 * (what 7.9.5 has no API for); resolves with the response message. */
async function rawManagementRequest(client, entity, operation, body) {
  const context = client._connectionContext;
  const mgmt = context.getManagementClient(entity);
  await mgmt.initWithUniqueReplyTo();
  const request = { body, reply_to: mgmt.replyTo, application_properties: { operation } };
  return mgmt._makeManagementRequest(request, { logError() {}, verbose() {}, info() {}, warning() {} });
}

/** A lock token (uuid text) as the 16 bytes of an AMQP uuid (RFC order), for $management bodies. */
function lockTokenBytes(lockToken) {
  return Buffer.from(lockToken.replace(/-/g, ""), "hex");
}

/** Lock tokens (16-byte Buffers, RFC order) as the AMQP array of uuid that `lock-tokens` is. */
function lockTokenArray(tokens) {
  return require("rhea-promise").types.wrap_array(tokens, 0x98, undefined);
}

/**
 * Waits until this emulator's entity cache has been refilled after whatever SQL ran before:
 * a lookup of a name it does not know refills the cache from the database before answering
 * not-found (the read-through that makes a row inserted with SQL usable at once), so once
 * the refusal is in, every change committed before it is routed by. A change made with SQL
 * also reaches the emulator by its NOTIFY within milliseconds, but a send racing the NOTIFY
 * (or a loaded machine) may still see the old routing: waiting a fixed time flaked.
 */
async function entitiesReloaded(sb) {
  const probe = sb.createReceiver(`no-such-queue-${Date.now()}`, PEEK_LOCK);
  await expectCode(probe.receiveMessages(1, { maxWaitTimeInMs: 1000 }), "MessagingEntityNotFound");
  await probe.close().catch(() => {});
}

module.exports = {
  PEEK_LOCK, receiveExact, expectMarkerNext, expectCode, uniqueId, rawManagementRequest, lockTokenBytes, lockTokenArray, entitiesReloaded,
};
