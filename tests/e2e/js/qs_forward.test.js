// Auto-forwarding: ForwardTo (chains, and the 4-hop limit → MaxTransferHopCountExceeded)
// and ForwardDeadLetteredMessagesTo.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { advance, describe, pollReceive, drain, psql } = require("./qs_util");

const HOP_REASON = "MaxTransferHopCountExceeded";
const DLQ = { ...PEEK_LOCK, subQueueType: "deadLetter" };

// Destinations first, in case the Config.json upsert wants ForwardTo targets to exist.
const queues = [
  { name: "fwd-b" },
  { name: "fwd-a", properties: { ForwardTo: "fwd-b" } },
  { name: "chain-c" },
  { name: "chain-b", properties: { ForwardTo: "chain-c" } },
  { name: "chain-a", properties: { ForwardTo: "chain-b" } },
  { name: "hop6" },
  { name: "hop5", properties: { ForwardTo: "hop6" } },
  { name: "hop4", properties: { ForwardTo: "hop5" } },
  { name: "hop3", properties: { ForwardTo: "hop4" } },
  { name: "hop2", properties: { ForwardTo: "hop3" } },
  { name: "hop1", properties: { ForwardTo: "hop2" } },
  { name: "dlf-y" },
  { name: "dlf-x", properties: { ForwardDeadLetteredMessagesTo: "dlf-y" } },
  { name: "dlf-exp-y" },
  { name: "dlf-exp-x", properties: { ForwardDeadLetteredMessagesTo: "dlf-exp-y", DeadLetteringOnMessageExpiration: true } },
];

/**
 * What a forwarding queue holds, read from the store itself (a receiver there could
 * fail for reasons of its own and prove nothing): its messages outside the dead-letter
 * subqueue, as "MessageId@sequence number", in order. [] is right.
 */
function forwardingSourceHolds(emu, queue) {
  const rows = psql(emu, "SELECT coalesce(m.message_id, '') || '@' || m.sequence_number FROM messages m" +
    ` JOIN entities e ON e.id = m.entity_id WHERE e.path = '${queue}' AND m.subqueue = 0 ORDER BY m.sequence_number`);
  return rows ? rows.split("\n") : [];
}

emulatorSuite("js auto-forwarding", { queues }, (ctx) => {
  ctx.test("ForwardTo: a message sent to fwd-a is received from fwd-b; fwd-a stays empty", async () => {
    const sb = ctx.client();
    await sb.createSender("fwd-a").sendMessages({ messageId: "f1", body: "via a", applicationProperties: { k: "v" } });
    const receiver = sb.createReceiver("fwd-b", PEEK_LOCK);
    const got = await pollReceive(receiver, 1, 5000);
    assert.equal(got.length, 1, `expected f1 in fwd-b, got nothing`);
    assert.equal(got[0].messageId, "f1");
    assert.equal(got[0].body, "via a");
    assert.deepEqual(got[0].applicationProperties, { k: "v" });
    assert.equal(got[0].deliveryCount, 0, "a forwarded message starts with deliveryCount 0");
    await receiver.completeMessage(got[0]);
    await receiver.close();
    assert.deepEqual(forwardingSourceHolds(ctx.emu, "fwd-a"), [], "fwd-a must stay empty");
    assert.deepEqual((await drain(sb, "fwd-a", { dlq: true, timeoutMs: 1000 })).map(describe), [], "DLQ of fwd-a");
  });

  ctx.test("ForwardTo chain chain-a → chain-b → chain-c delivers to chain-c, in order", async () => {
    const sb = ctx.client();
    await sb.createSender("chain-a").sendMessages([1, 2, 3].map((i) => ({ messageId: `c${i}`, body: i })));
    const receiver = sb.createReceiver("chain-c", PEEK_LOCK);
    const got = await pollReceive(receiver, 3, 5000);
    assert.deepEqual(got.map((m) => m.messageId), ["c1", "c2", "c3"], "chain-c should get c1..c3 in order");
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    assert.deepEqual(forwardingSourceHolds(ctx.emu, "chain-a"), [], "chain-a must be empty");
    assert.deepEqual(forwardingSourceHolds(ctx.emu, "chain-b"), [], "chain-b must be empty");
  });

  ctx.test(`5 hops hop1 → … → hop6: after 4 hops the message is dead-lettered in hop5's DLQ with ${HOP_REASON}`, async () => {
    const sb = ctx.client();
    await sb.createSender("hop1").sendMessages({ messageId: "far", body: "too many hops" });
    for (const q of ["hop1", "hop2", "hop3", "hop4", "hop5"]) {
      assert.deepEqual(forwardingSourceHolds(ctx.emu, q), [], `${q} (forwarding to the next hop) must hold nothing`);
    }
    const dlq = sb.createReceiver("hop5", DLQ);
    const got = await pollReceive(dlq, 1, 5000);
    if (got.length === 0) {
      // Say where it went instead.
      const where = [];
      for (const q of ["hop6"]) for (const m of await drain(sb, q, { timeoutMs: 1000 })) where.push(`${q}: ${describe(m)}`);
      for (const q of ["hop1", "hop2", "hop3", "hop4", "hop6"]) {
        for (const m of await drain(sb, q, { dlq: true, timeoutMs: 500 })) where.push(`${q}/$deadletterqueue: ${describe(m)}`);
      }
      assert.fail(`expected "far" in hop5/$deadletterqueue; found it in: ${where.length ? where.join("; ") : "nowhere"}`);
    }
    const m = got[0];
    assert.equal(m.messageId, "far");
    assert.equal(m.body, "too many hops");
    assert.equal(m.deadLetterReason, HOP_REASON, `deadLetterReason`);
    assert.equal(m.deadLetterErrorDescription,
      "The maximum number of allowed hops when forwarding between queues has been exceeded. This value is set to 4.",
      "deadLetterErrorDescription");
    await dlq.completeMessage(m);
    await dlq.close();
    assert.deepEqual((await drain(sb, "hop6", { timeoutMs: 1000 })).map(describe), [], "hop6 (5 hops away) must get nothing");
  });

  ctx.test("ForwardDeadLetteredMessagesTo: a message dead-lettered on dlf-x arrives in dlf-y, not in dlf-x's DLQ", async () => {
    const sb = ctx.client();
    await sb.createSender("dlf-x").sendMessages({ messageId: "dl1", body: "reject me" });
    const receiver = sb.createReceiver("dlf-x", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deadLetterMessage(m, { deadLetterReason: "Rejected", deadLetterErrorDescription: "by the test" });
    await receiver.close();
    const y = sb.createReceiver("dlf-y", PEEK_LOCK);
    const got = await pollReceive(y, 1, 5000);
    assert.equal(got.length, 1, "expected dl1 in dlf-y");
    assert.equal(got[0].messageId, "dl1");
    assert.equal(got[0].body, "reject me");
    assert.equal(got[0].deadLetterReason, "Rejected", "the forwarded message keeps its DeadLetterReason");
    assert.equal(got[0].deadLetterErrorDescription, "by the test", "the forwarded message keeps its DeadLetterErrorDescription");
    assert.equal(got[0].deadLetterSource, "dlf-x", "DeadLetterSource (x-opt-deadletter-source) names the queue it was dead-lettered on");
    await y.completeMessage(got[0]);
    await y.close();
    assert.deepEqual((await drain(sb, "dlf-x", { dlq: true, timeoutMs: 1500 })).map(describe), [], "dlf-x's DLQ must stay empty");
  });

  ctx.test("ForwardDeadLetteredMessagesTo also carries expired messages (DeadLetteringOnMessageExpiration)", async () => {
    const sb = ctx.client();
    await sb.createSender("dlf-exp-x").sendMessages({ messageId: "exp1", body: "10 s", timeToLive: 10000 });
    await advance(ctx.emu, "PT20S");
    const y = sb.createReceiver("dlf-exp-y", PEEK_LOCK);
    const got = await pollReceive(y, 1, 5000);
    assert.equal(got.length, 1, "expected exp1 in dlf-exp-y within 5 s of advancing past its TTL");
    assert.equal(got[0].messageId, "exp1");
    assert.equal(got[0].deadLetterReason, "TTLExpiredException");
    await y.completeMessage(got[0]);
    await y.close();
    assert.deepEqual((await drain(sb, "dlf-exp-x", { dlq: true, timeoutMs: 1000 })).map(describe), [], "dlf-exp-x's DLQ must stay empty");
  });
});
