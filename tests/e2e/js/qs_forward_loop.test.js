// A ForwardTo loop (loop-a → loop-b → loop-a) must not spin: the hop limit (4) stops the
// message, dead-lettered with MaxTransferHopCountExceeded. Its own emulator, since a
// Config.json that refused the loop would take every other test down with it.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { describe, drain } = require("./qs_util");

const queues = [
  { name: "loop-a", properties: { ForwardTo: "loop-b" } },
  { name: "loop-b", properties: { ForwardTo: "loop-a" } },
  { name: "plain" },
];

emulatorSuite("js forwarding loop", { queues }, (ctx) => {
  ctx.test("loop-a ⇄ loop-b: the message stops after 4 hops in a DLQ with MaxTransferHopCountExceeded; the emulator stays responsive", async () => {
    const sb = ctx.client();
    await sb.createSender("loop-a").sendMessages({ messageId: "round", body: "and round" });
    const found = [];
    const deadline = Date.now() + 6000;
    while (found.length === 0 && Date.now() < deadline) {
      for (const q of ["loop-a", "loop-b"]) {
        for (const m of await drain(sb, q, { dlq: true, timeoutMs: 500 })) found.push({ q, m });
      }
    }
    assert.equal(found.length, 1, `expected "round" in exactly one DLQ of the loop, found ${found.map((f) => `${f.q}: ${describe(f.m)}`)}`);
    const { q, m } = found[0];
    assert.equal(m.messageId, "round");
    assert.equal(m.deadLetterReason, "MaxTransferHopCountExceeded", `deadLetterReason in ${q}'s DLQ`);
    // 4 hops a→b→a→b→a end in loop-a; the 5th (a→b) is refused there.
    assert.equal(q, "loop-a", "the hop limit is hit in loop-a (after 4 hops the message sits in loop-a and its 5th forward is refused)");
    // Still alive and well.
    await sb.createSender("plain").sendMessages({ messageId: "alive", body: 1 });
    const r = sb.createReceiver("plain", PEEK_LOCK);
    const got = await r.receiveMessages(1, { maxWaitTimeInMs: 3000 });
    assert.deepEqual(got.map((x) => x.messageId), ["alive"]);
    await r.completeMessage(got[0]);
    await r.close();
  });
});
