// Faults on demand beyond sends (README "Faults on demand"), through the real
// JS SDK: a receive link detached with an error, which the SDK's subscriber
// attaches again and receives on; a lock that ends N ms after delivery, which
// the SDK's complete reports as lock-lost; a $management operation answered
// with an error (peek); a $cbs put-token refused; a connection closed at its
// open, once, which the SDK opens again.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { putRule, getRule, deleteRule, failureOf, firedLines } = require("./faults_util");

const QUEUES = ["r-detach", "r-lock", "r-peek", "r-cbs", "r-connect", "r-never", "r-rad"];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits (with a deadline) until cond() is true. */
async function until(cond, what, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

emulatorSuite("js faults: receive, settle, $management, $cbs, connect", { queues: QUEUES }, (ctx) => {
  ctx.test("a receive link detached with an error: the SDK's subscriber attaches again and receives", async () => {
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 3, retryDelayInMs: 100, timeoutInMs: 10000 } });
    await client.createSender("r-detach").sendMessages({ body: "through the fault", messageId: "d-1" });
    await putRule(ctx.emu, "drop", {
      entity: "r-detach", operation: "receive", effect: "detach", error: "com.microsoft:server-busy", times: 1,
    });
    const receiver = client.createReceiver("r-detach", PEEK_LOCK);
    const errors = [];
    const got = [];
    const sub = receiver.subscribe({
      async processMessage(m) {
        got.push(m);
      },
      async processError(args) {
        errors.push(args.error);
      },
    }, { autoCompleteMessages: false });
    try {
      await until(() => got.length > 0, "the message after the detach");
    } finally {
      await sub.close();
    }
    assert.equal(got[0].messageId, "d-1");
    assert.ok(errors.some((e) => e.code === "ServiceBusy"), `the subscriber saw the detach: ${errors.map((e) => `${e.code}: ${e.message}`)}`);
    assert.equal((await getRule(ctx.emu, "drop")).fired, 1);
    assert.match(firedLines(ctx.emu, "drop")[0], /fired: receive on 'r-detach': detach com\.microsoft:server-busy/);
    await receiver.completeMessage(got[0]);
    await deleteRule(ctx.emu, "drop");
  });

  ctx.test("lose-lock after 300 ms: the delivered message's complete is the SDK's lock-lost error", async () => {
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    await client.createSender("r-lock").sendMessages({ body: "short lock", messageId: "l-1" });
    await putRule(ctx.emu, "lost", { entity: "r-lock", operation: "receive", effect: "lose-lock", afterMs: 300, times: 1 });
    const receiver = client.createReceiver("r-lock", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    const deliveredAt = Date.now();
    assert.equal(m.messageId, "l-1");
    // its lock duration is a minute, so only the rule can have ended it
    assert.ok(m.lockedUntilUtc.getTime() - Date.now() > 30000, `locked until ${m.lockedUntilUtc.toISOString()}`);
    await sleep(Math.max(0, 300 + 500 - (Date.now() - deliveredAt)));
    const err = await failureOf(receiver.completeMessage(m), "a complete after the lock ended");
    assert.equal(err.code, "MessageLockLost", `${err.code}: ${err.message}`);
    assert.equal((await getRule(ctx.emu, "lost")).fired, 1);
    await deleteRule(ctx.emu, "lost");
    // as if the lock had expired: the message comes again, its delivery counted
    const [again] = await receiveExact(receiver, 1);
    assert.equal(again.messageId, "l-1");
    assert.equal(again.deliveryCount, 1);
    await receiver.completeMessage(again);
  });

  ctx.test("a $management fault: peek fails with the named error, once, then peeks again", async () => {
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    await client.createSender("r-peek").sendMessages({ body: "peek me", messageId: "p-1" });
    await putRule(ctx.emu, "nopeek", {
      entity: "r-peek", operation: "com.microsoft:peek-message", effect: "error", error: "com.microsoft:entity-disabled",
      description: "Peeking is off for this test.", times: 1,
    });
    const receiver = client.createReceiver("r-peek", PEEK_LOCK);
    const err = await failureOf(receiver.peekMessages(1), "a peek a rule refuses");
    assert.equal(err.code, "MessagingEntityDisabled", `${err.code}: ${err.message}`);
    assert.match(err.message, /Peeking is off for this test\./);
    const [p] = await receiver.peekMessages(1);
    assert.equal(p && p.messageId, "p-1");
    assert.equal((await getRule(ctx.emu, "nopeek")).fired, 1);
    await deleteRule(ctx.emu, "nopeek");
  });

  ctx.test("a $cbs fault: the token is refused (UnauthorizedAccess) until the rule is removed", async () => {
    await putRule(ctx.emu, "notoken", { entity: "r-cbs", operation: "cbs", effect: "error", error: "amqp:unauthorized-access" });
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    const err = await failureOf(client.createSender("r-cbs").sendMessages({ body: "x" }), "a send whose token is refused");
    assert.equal(err.code, "UnauthorizedAccess", `${err.code}: ${err.message}`);
    assert.ok((await getRule(ctx.emu, "notoken")).fired >= 1);
    // another entity's token is not this rule's
    await client.createSender("r-connect").sendMessages({ body: "fine" });
    await deleteRule(ctx.emu, "notoken");
    const fresh = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    await fresh.createSender("r-cbs").sendMessages({ body: "taken now" });
    const receiver = fresh.createReceiver("r-connect", { receiveMode: "receiveAndDelete" });
    await receiveExact(receiver, 1);
  });

  ctx.test("close-connection on connect, once: the SDK connects again and the send succeeds", async () => {
    // amqp:connection:forced is the close rhea (under the JS SDK) takes as passing and reconnects after;
    // any other condition is fatal to the connection there, and the client's calls time out
    await putRule(ctx.emu, "noconn", { operation: "connect", effect: "close", error: "amqp:connection:forced", times: 1 });
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 3, retryDelayInMs: 100, timeoutInMs: 10000 } });
    await client.createSender("r-connect").sendMessages({ body: "after a closed open", messageId: "c-1" });
    const rule = await getRule(ctx.emu, "noconn");
    assert.equal(rule.fired, 1);
    assert.match(firedLines(ctx.emu, "noconn")[0], /fired: connect: close amqp:connection:forced/);
    await deleteRule(ctx.emu, "noconn");
    const receiver = client.createReceiver("r-connect", { receiveMode: "receiveAndDelete" });
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "c-1");
  });

  ctx.test("receive-and-delete: the claim's messages are delivered before the rule detaches the link", async () => {
    // the claim took them for good, so the emulator delivers them first; a subscriber handles each as
    // it comes (a receiveMessages batch cut short by the detach is dropped by the SDK: at most once)
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 3, retryDelayInMs: 100, timeoutInMs: 10000 } });
    await client.createSender("r-rad").sendMessages([{ body: 1, messageId: "rad-1" }, { body: 2, messageId: "rad-2" }]);
    await putRule(ctx.emu, "radcut", { entity: "r-rad", operation: "receive", effect: "detach", error: "com.microsoft:server-busy", times: 1 });
    const receiver = client.createReceiver("r-rad", { receiveMode: "receiveAndDelete" });
    const got = [];
    const errors = [];
    const sub = receiver.subscribe({
      async processMessage(m) {
        got.push(m.messageId);
      },
      async processError(args) {
        errors.push(args.error);
      },
    });
    try {
      await until(() => got.length === 2 && errors.length > 0, "both messages and the detach");
    } finally {
      await sub.close();
    }
    assert.deepEqual(got.sort(), ["rad-1", "rad-2"]);
    assert.equal(errors[0].code, "ServiceBusy", `${errors[0].code}: ${errors[0].message}`);
    assert.equal((await getRule(ctx.emu, "radcut")).fired, 1);
    await deleteRule(ctx.emu, "radcut");
  });

  ctx.test("a receive never answered: the receiver gets nothing, then or later; the messages stay for another", async () => {
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    await client.createSender("r-never").sendMessages({ body: "kept", messageId: "n-1" });
    await putRule(ctx.emu, "mute", { entity: "r-never", operation: "receive", effect: "never", times: 1 });
    const muted = client.createReceiver("r-never", PEEK_LOCK);
    const none = await muted.receiveMessages(1, { maxWaitTimeInMs: 1500 });
    assert.equal(none.length, 0, "the rule holds the delivery");
    assert.equal((await getRule(ctx.emu, "mute")).fired, 1);
    // The rule fired its one time; the link it muted still delivers nothing more.
    await client.createSender("r-never").sendMessages({ body: "later", messageId: "n-2" });
    const still = await muted.receiveMessages(1, { maxWaitTimeInMs: 1500 });
    assert.deepEqual(still.map((x) => x.messageId), [], "the muted link delivered again");
    await muted.close();
    await deleteRule(ctx.emu, "mute");
    const other = client.createReceiver("r-never", PEEK_LOCK);
    const got = await receiveExact(other, 2);
    assert.deepEqual(got.map((x) => x.messageId), ["n-1", "n-2"]);
    assert.equal(got[0].deliveryCount, 0, "given back, not counted as a delivery");
    await Promise.all(got.map((x) => other.completeMessage(x)));
  });
});
