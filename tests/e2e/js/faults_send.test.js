// Faults on demand, on sends (README "Faults on demand"), through the real JS
// SDK: what the SDK does with each effect. server-busy is retried and the
// send goes through (the rule fired exactly the N times it was given); a
// delay within the SDK's timeout makes the send take at least that long; a
// send never answered runs into the SDK's own timeout; a seeded probability
// fails the same sends every time it is put.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { putRule, getRule, deleteRule, failureOf, firedLines } = require("./faults_util");

const QUEUES = ["f-busy", "f-delay", "f-never", "f-seed", "f-other"];

emulatorSuite("js faults: sends", { queues: QUEUES }, (ctx) => {
  ctx.test("server-busy on send twice: the SDK retries and the send succeeds; the rule fired 2 times", async () => {
    await putRule(ctx.emu, "busy", {
      entity: "f-busy", operation: "send", effect: "error", error: "com.microsoft:server-busy", times: 2,
    });
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 3, retryDelayInMs: 50, timeoutInMs: 10000 } });
    const sender = client.createSender("f-busy");
    await sender.sendMessages({ body: "after two refusals", messageId: "busy-1" });
    const rule = await getRule(ctx.emu, "busy");
    assert.equal(rule.fired, 2, `fired: ${JSON.stringify(rule)}`);
    assert.equal(rule.remaining, 0, `remaining: ${JSON.stringify(rule)}`);
    assert.equal(firedLines(ctx.emu, "busy").length, 2, "one log line per firing");
    assert.match(firedLines(ctx.emu, "busy")[0], /fired: send on 'f-busy': error com\.microsoft:server-busy/);
    // the rule is used up: the next send is not refused, and each message is there once
    await sender.sendMessages({ body: "plain", messageId: "busy-2" });
    const receiver = client.createReceiver("f-busy", PEEK_LOCK);
    const got = await receiveExact(receiver, 2);
    assert.deepEqual(got.map((m) => m.messageId).sort(), ["busy-1", "busy-2"]);
    for (const m of got) await receiver.completeMessage(m);
    // other entities were never touched by it
    await client.createSender("f-other").sendMessages({ body: "x" });
    assert.equal((await getRule(ctx.emu, "busy")).fired, 2);
    await deleteRule(ctx.emu, "busy");
  });

  ctx.test("a delay within the SDK's timeout: the send takes at least the delay, and succeeds", async () => {
    await putRule(ctx.emu, "slow", { entity: "f-delay", operation: "send", effect: "delay", delayMs: 1500, times: 1 });
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    const sender = client.createSender("f-delay");
    const t0 = Date.now();
    await sender.sendMessages({ body: "late" });
    const took = Date.now() - t0;
    assert.ok(took >= 1500, `the delayed send took only ${took} ms`);
    assert.ok(took < 9000, `the delayed send took ${took} ms`);
    // used up: the next send is on time again
    const t1 = Date.now();
    await sender.sendMessages({ body: "on time" });
    const onTime = Date.now() - t1;
    assert.ok(onTime < 1500, `the send after the rule was used up took ${onTime} ms`);
    const rule = await getRule(ctx.emu, "slow");
    assert.equal(rule.fired, 1);
    assert.match(firedLines(ctx.emu, "slow")[0], /fired: send on 'f-delay': delay 1500 ms \(0 more times\)/);
    await deleteRule(ctx.emu, "slow");
    const receiver = client.createReceiver("f-delay", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(receiver, 2);
    assert.deepEqual(got.map((m) => m.body), ["late", "on time"]);
  });

  ctx.test("never answered: the SDK's own timeout fires, and the next send works once the rule is gone", async () => {
    await putRule(ctx.emu, "hang", { entity: "f-never", operation: "send", effect: "never" });
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 1500 } });
    const sender = client.createSender("f-never");
    const t0 = Date.now();
    const err = await failureOf(sender.sendMessages({ body: "lost in the void" }), "a send never answered");
    const took = Date.now() - t0;
    assert.equal(err.code, "ServiceTimeout", `${err.name}: ${err.code}: ${err.message}`);
    assert.ok(took >= 1400 && took < 10000, `the SDK gave up after ${took} ms (its timeout is 1500)`);
    assert.ok((await getRule(ctx.emu, "hang")).fired >= 1);
    await deleteRule(ctx.emu, "hang");
    const fresh = ctx.client(undefined, { retryOptions: { maxRetries: 2, retryDelayInMs: 50, timeoutInMs: 5000 } });
    await fresh.createSender("f-never").sendMessages({ body: "heard" });
    const receiver = fresh.createReceiver("f-never", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(receiver, 1);
    assert.equal(got[0].body, "heard", "the send never answered was never stored");
  });

  ctx.test("probability with a seed: the same seed fails the same sends of 20, put after put", async () => {
    const rule = {
      entity: "f-seed", operation: "send", effect: "error", error: "com.microsoft:server-busy", probability: 0.5, seed: 20261126,
    };
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 5000 } });
    const sender = client.createSender("f-seed");
    const pattern = async () => {
      const out = [];
      for (let i = 0; i < 20; i++) {
        try {
          await sender.sendMessages({ body: i });
          out.push(".");
        } catch (e) {
          assert.equal(e.code, "ServiceBusy", `${e.code}: ${e.message}`);
          out.push("x");
        }
      }
      return out.join("");
    };
    await putRule(ctx.emu, "coin", rule);
    const first = await pattern();
    const fired = (await getRule(ctx.emu, "coin")).fired;
    await putRule(ctx.emu, "coin", rule, 200); // replaced: its draws and counts start again
    assert.equal((await getRule(ctx.emu, "coin")).fired, 0);
    const second = await pattern();
    await deleteRule(ctx.emu, "coin");
    assert.equal(second, first, "the same seed, the same pattern");
    assert.match(first, /x/, `some sends fail: ${first}`);
    assert.match(first, /\./, `some sends pass: ${first}`);
    assert.equal(fired, [...first].filter((c) => c === "x").length, `fired ${fired} times for ${first}`);
    await putRule(ctx.emu, "coin", { ...rule, seed: 7 });
    const other = await pattern();
    await deleteRule(ctx.emu, "coin");
    assert.notEqual(other, first, "another seed, another pattern");
  }, 60000);
});
