// Time to live: the entity default caps and fills in a message's TTL; expired messages are
// never delivered, and go to the DLQ (TTLExpiredException) only with
// DeadLetteringOnMessageExpiration. Time moves through POST /$sbemu/clock/advance.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { SWEEP_GRACE_MS, sleep, advance, expectNothing, describe, pollReceive, drain, rowsOf, rowsGone } = require("./qs_util");

const TTL_REASON = "TTLExpiredException";
const TTL_DESCRIPTION = "The message expired and was dead lettered.";
const DLQ = { ...PEEK_LOCK, subQueueType: "deadLetter" };

const queues = [
  { name: "ttl-cap", properties: { DefaultMessageTimeToLive: "PT1M" } },
  { name: "exp-peeklock" },
  { name: "exp-rnd" },
  { name: "exp-stream" },
  { name: "exp-drop-bg" },
  { name: "exp-dlq", properties: { DeadLetteringOnMessageExpiration: true } },
  { name: "exp-dlq-bg", properties: { DeadLetteringOnMessageExpiration: true, DefaultMessageTimeToLive: "PT1M" } },
];

function checkDeadLettered(m, id) {
  assert.equal(m.messageId, id, `expected ${id} in the DLQ, got ${describe(m)}`);
  assert.equal(m.deadLetterReason, TTL_REASON, `${id}: deadLetterReason`);
  assert.equal(m.deadLetterErrorDescription, TTL_DESCRIPTION, `${id}: deadLetterErrorDescription`);
}

emulatorSuite("js TTL and expiry", { queues }, (ctx) => {
  ctx.test("DefaultMessageTimeToLive PT1M caps a 10 min TTL, fills in a missing one, keeps a shorter one", async () => {
    const sb = ctx.client();
    await sb.createSender("ttl-cap").sendMessages([
      { messageId: "long", body: "10 min", timeToLive: 10 * 60000 },
      { messageId: "none", body: "no ttl" },
      { messageId: "short", body: "30 s", timeToLive: 30000 },
    ]);
    const receiver = sb.createReceiver("ttl-cap", PEEK_LOCK);
    const got = await receiveExact(receiver, 3);
    const want = { long: 60000, none: 60000, short: 30000 };
    for (const m of got) {
      const ttl = want[m.messageId];
      assert.equal(m.timeToLive, ttl, `${m.messageId}: expected timeToLive ${ttl} ms (header.ttl on the received message), got ${m.timeToLive}`);
      assert.ok(m.enqueuedTimeUtc instanceof Date, `${m.messageId}: no enqueuedTimeUtc`);
      assert.equal(m.expiresAtUtc.getTime() - m.enqueuedTimeUtc.getTime(), ttl,
        `${m.messageId}: expiresAtUtc ${m.expiresAtUtc.toISOString()} should be enqueuedTimeUtc ${m.enqueuedTimeUtc.toISOString()} + ${ttl} ms`);
      await receiver.completeMessage(m);
    }
    assert.deepEqual(got.map((m) => m.messageId).sort(), ["long", "none", "short"]);
    await receiver.close();
  });

  ctx.test("an expired message is not delivered to receiveMessages (peek-lock); a live one sent before it is", async () => {
    const sb = ctx.client();
    await sb.createSender("exp-peeklock").sendMessages([
      { messageId: "dies", body: "10 s", timeToLive: 10000 },
      { messageId: "lives", body: "default 1 h" },
    ]);
    await advance(ctx.emu, "PT20S");
    const receiver = sb.createReceiver("exp-peeklock", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "lives", `expected only "lives" (FIFO would give "dies" first if it were delivered), got ${describe(m)}`);
    await receiver.completeMessage(m);
    await expectNothing(receiver, "exp-peeklock after the live message");
    await receiver.close();
    assert.deepEqual((await drain(sb, "exp-peeklock", { dlq: true })).map(describe), [],
      "DeadLetteringOnMessageExpiration is false: the DLQ must stay empty");
  });

  ctx.test("an expired message is not delivered to receiveAndDelete", async () => {
    const sb = ctx.client();
    await sb.createSender("exp-rnd").sendMessages([
      { messageId: "dies", body: "10 s", timeToLive: 10000 },
      { messageId: "lives", body: "default 1 h" },
    ]);
    await advance(ctx.emu, "PT20S");
    const receiver = sb.createReceiver("exp-rnd", { receiveMode: "receiveAndDelete" });
    const got = await pollReceive(receiver, 2, 3000);
    assert.deepEqual(got.map((m) => m.messageId), ["lives"], `receiveAndDelete got ${got.map(describe)}`);
    await receiver.close();
  });

  ctx.test("an expired message is not delivered to a streaming subscribe()", async () => {
    const sb = ctx.client();
    await sb.createSender("exp-stream").sendMessages([
      { messageId: "dies-1", body: "10 s", timeToLive: 10000 },
      { messageId: "dies-2", body: "10 s", timeToLive: 10000 },
      { messageId: "lives", body: "default 1 h" },
    ]);
    await advance(ctx.emu, "PT20S");
    const receiver = sb.createReceiver("exp-stream", PEEK_LOCK);
    const got = [];
    const errors = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`"lives" did not arrive in 15 s; got ${got}; errors ${errors}`)), 15000);
      receiver.subscribe({
        async processMessage(m) {
          got.push(m.messageId);
          await receiver.completeMessage(m);
          if (m.messageId === "lives") {
            clearTimeout(timer);
            setTimeout(resolve, 1000); // anything else that was going to come
          }
        },
        async processError(args) {
          errors.push(`${args.errorSource}: ${args.error.code || ""} ${args.error.message}`);
        },
      }, { autoCompleteMessages: false, maxConcurrentCalls: 1 });
    });
    await receiver.close();
    assert.deepEqual(got, ["lives"], "subscribe() must deliver only the live message");
    assert.deepEqual(errors, []);
  });

  ctx.test("without DeadLetteringOnMessageExpiration an expired message is dropped in the background; the DLQ stays empty", async () => {
    const sb = ctx.client();
    await sb.createSender("exp-drop-bg").sendMessages({ messageId: "dropped", body: "10 s", timeToLive: 10000 });
    assert.deepEqual(rowsOf(ctx.emu, "exp-drop-bg"), ["dropped@0"]);
    await advance(ctx.emu, "PT20S");
    // the sweep deletes it with no receiver looking: its row goes, and nothing reaches the DLQ
    assert.deepEqual(await rowsGone(ctx.emu, "exp-drop-bg"), [], "the expired message's row is still there");
    assert.deepEqual((await drain(sb, "exp-drop-bg", { dlq: true })).map(describe), [], "DLQ of exp-drop-bg");
  });

  ctx.test("with DeadLetteringOnMessageExpiration a receiver's look moves it to the DLQ with TTLExpiredException", async () => {
    const sb = ctx.client();
    await sb.createSender("exp-dlq").sendMessages({ messageId: "x1", body: "to the dlq", timeToLive: 10000 });
    await advance(ctx.emu, "PT20S");
    const receiver = sb.createReceiver("exp-dlq", PEEK_LOCK);
    await expectNothing(receiver, "exp-dlq after expiry");
    await receiver.close();
    const dlq = sb.createReceiver("exp-dlq", DLQ);
    const got = await pollReceive(dlq, 1, 5000);
    assert.equal(got.length, 1, `expected x1 in the DLQ of exp-dlq, got ${got.map(describe)}`);
    checkDeadLettered(got[0], "x1");
    assert.equal(got[0].body, "to the dlq");
    await dlq.completeMessage(got[0]);
    await expectNothing(dlq, "DLQ of exp-dlq after completing x1", 1000);
    await dlq.close();
  });

  ctx.test("expiry happens with no receiver looking: advance, and the message (queue default TTL) shows up in the DLQ", async () => {
    const sb = ctx.client();
    await sb.createSender("exp-dlq-bg").sendMessages([
      { messageId: "bg-1", body: "default PT1M" },
      { messageId: "bg-2", body: "own 30 s", timeToLive: 30000 },
    ]);
    await advance(ctx.emu, "PT2M");
    // Only the DLQ is looked at: moving the message is the background sweep's work.
    const dlq = sb.createReceiver("exp-dlq-bg", DLQ);
    const got = await pollReceive(dlq, 2, SWEEP_GRACE_MS + 3000);
    assert.deepEqual(got.map((m) => m.messageId), ["bg-1", "bg-2"],
      `expected bg-1 and bg-2 in the DLQ within ${SWEEP_GRACE_MS + 3000} ms of advancing, got ${got.map(describe)}`);
    for (const m of got) {
      checkDeadLettered(m, m.messageId);
      await dlq.completeMessage(m);
    }
    await dlq.close();
    assert.deepEqual((await drain(sb, "exp-dlq-bg")).map(describe), [], "exp-dlq-bg itself must be empty");
  });
});
