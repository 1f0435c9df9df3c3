// Auto-forwarding meets status, size and scheduling; duplicate detection meets scheduling
// and refused sends.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { clockNow, advance, expectNothing, describe, pollReceive, drain } = require("./qs_util");

const DLQ = { ...PEEK_LOCK, subQueueType: "deadLetter" };
const queues = [
  { name: "dst-disabled", properties: { Status: "SendDisabled" } },
  { name: "src-to-disabled", properties: { ForwardTo: "dst-disabled" } },
  { name: "dst-small", properties: { MaxSizeInMegabytes: 1 } },
  { name: "src-to-small", properties: { ForwardTo: "dst-small" } },
  { name: "fwd-sched-dst" },
  { name: "fwd-sched-src", properties: { ForwardTo: "fwd-sched-dst" } },
  { name: "dedup-sched", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT5M" } },
  { name: "dedup-race", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT5M" } },
  { name: "dedup-quota", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT5M", MaxSizeInMegabytes: 1 } },
];

/** Where a message went, for failure messages. */
async function whereIs(sb, names) {
  const out = [];
  for (const q of names) {
    for (const m of await drain(sb, q, { timeoutMs: 500 })) out.push(`${q}: ${describe(m)}`);
    for (const m of await drain(sb, q, { dlq: true, timeoutMs: 500 })) out.push(`${q}/$deadletterqueue: ${describe(m)}`);
  }
  return out.length ? out.join("; ") : "nowhere";
}

emulatorSuite("js forwarding and dedup, more", { queues }, (ctx) => {
  ctx.test("ForwardTo a SendDisabled destination: the send is accepted and the message lands in the source's DLQ", async () => {
    const sb = ctx.client();
    await sb.createSender("src-to-disabled").sendMessages({ messageId: "fd-1", body: "x" });
    const dlq = sb.createReceiver("src-to-disabled", DLQ);
    const got = await pollReceive(dlq, 1, 4000);
    await dlq.close();
    if (got.length !== 1) {
      assert.fail(`expected fd-1 in src-to-disabled/$deadletterqueue (destination disabled); found it in: ${await whereIs(sb, ["src-to-disabled", "dst-disabled"])}`);
    }
    assert.equal(got[0].messageId, "fd-1");
    assert.ok(typeof got[0].deadLetterReason === "string" && got[0].deadLetterReason.length > 0,
      `a DeadLetterReason should say why: ${describe(got[0])}`);
  });

  ctx.test("ForwardTo a full destination (MaxSizeInMegabytes 1): the overflow lands in the source's DLQ, nothing is lost", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("src-to-small");
    const payload = Buffer.alloc(200 * 1024, 0x63);
    for (let i = 0; i < 7; i++) {
      try {
        await sender.sendMessages({ messageId: `big-${i}`, body: payload });
      } catch (e) {
        const err = e instanceof AggregateError && e.errors && e.errors.length ? e.errors[e.errors.length - 1] : e;
        assert.fail(`send big-${i} to src-to-small (1024 MB, forwarding to the full 1 MB dst-small) was refused with ${err.code}: ${err.message}; ` +
          "the source should accept it and dead-letter what the destination cannot take");
      }
    }
    await sender.close();
    const inDst = await drain(sb, "dst-small", { timeoutMs: 3000 });
    const inDlq = await drain(sb, "src-to-small", { dlq: true, timeoutMs: 3000 });
    const ids = (ms) => ms.map((m) => m.messageId);
    assert.ok(inDst.length >= 4 && inDst.length <= 5, `dst-small (1 MB) should hold 4 or 5 of the 7 × 200 KB messages, holds ${inDst.length}: ${ids(inDst)}`);
    assert.deepEqual([...ids(inDst), ...ids(inDlq)].sort(), Array.from({ length: 7 }, (_, i) => `big-${i}`).sort(),
      `every message should be either forwarded or in the source's DLQ: dst ${ids(inDst)}, source DLQ ${ids(inDlq)}`);
  });

  ctx.test("a scheduled message sent to a forwarding queue reaches the destination once its time has come", async () => {
    const sb = ctx.client();
    const { now } = await clockNow(ctx.emu);
    await sb.createSender("fwd-sched-src").sendMessages({ messageId: "fs-1", body: "x", scheduledEnqueueTimeUtc: new Date(now.getTime() + 10 * 60000) });
    const receiver = sb.createReceiver("fwd-sched-dst", PEEK_LOCK);
    await expectNothing(receiver, "fwd-sched-dst before the scheduled time");
    await advance(ctx.emu, "PT11M");
    const got = await pollReceive(receiver, 1, 5000);
    if (got.length !== 1) assert.fail(`expected fs-1 in fwd-sched-dst after its time; found it in: ${await whereIs(sb, ["fwd-sched-src", "fwd-sched-dst"])}`);
    assert.equal(got[0].messageId, "fs-1");
    await receiver.completeMessage(got[0]);
    await receiver.close();
  });

  ctx.test("duplicate detection counts scheduled messages: a plain send with the id of a pending scheduled one is dropped", async () => {
    const sb = ctx.client();
    const { now } = await clockNow(ctx.emu);
    const sender = sb.createSender("dedup-sched");
    await sender.sendMessages({ messageId: "ds-1", body: "scheduled", scheduledEnqueueTimeUtc: new Date(now.getTime() + 2 * 60000) });
    await sender.sendMessages({ messageId: "ds-1", body: "plain duplicate" });
    const receiver = sb.createReceiver("dedup-sched", PEEK_LOCK);
    await expectNothing(receiver, "dedup-sched: the plain send of ds-1 is a duplicate of the scheduled one");
    await advance(ctx.emu, "PT3M");
    const got = await pollReceive(receiver, 2, 4000);
    assert.deepEqual(got.map((m) => `${m.messageId}:${m.body}`), ["ds-1:scheduled"]);
    await receiver.completeMessage(got[0]);
    await receiver.close();
    await sender.close();
  });

  ctx.test("duplicate detection under concurrency: 8 clients send the same 5 ids at once, each id arrives once", async () => {
    const clients = Array.from({ length: 8 }, () => ctx.client());
    const senders = clients.map((c) => c.createSender("dedup-race"));
    await Promise.all(senders.map((s) => s.sendMessages({ messageId: "warm-up", body: 0 }))); // links attached
    for (let round = 0; round < 5; round++) {
      await Promise.all(senders.map((s, i) => s.sendMessages({ messageId: `race-${round}`, body: i })));
    }
    await Promise.all(senders.map((s) => s.close()));
    const receiver = ctx.client().createReceiver("dedup-race", { receiveMode: "receiveAndDelete" });
    const got = [];
    for (;;) {
      const b = await receiver.receiveMessages(50, { maxWaitTimeInMs: 1500 });
      if (b.length === 0) break;
      got.push(...b);
    }
    await receiver.close();
    assert.deepEqual(got.map((m) => m.messageId).sort(), ["race-0", "race-1", "race-2", "race-3", "race-4", "warm-up"],
      "each MessageId sent concurrently by 8 clients must be kept exactly once");
  });

  ctx.test("a send refused with QuotaExceeded is not remembered by duplicate detection: the same id is accepted later", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("dedup-quota");
    const payload = Buffer.alloc(200 * 1024, 0x64);
    let refused = null;
    for (let i = 0; i < 8 && !refused; i++) {
      try {
        await sender.sendMessages({ messageId: `dq-${i}`, body: payload });
      } catch (e) {
        refused = `dq-${i}`;
        const err = e instanceof AggregateError && e.errors && e.errors.length ? e.errors[e.errors.length - 1] : e;
        assert.equal(err.code, "QuotaExceeded", `${refused}: expected QuotaExceeded, got ${err.code}: ${err.message}`);
      }
    }
    assert.ok(refused, "the 1 MB queue never refused a 200 KB send");
    const r = sb.createReceiver("dedup-quota", { receiveMode: "receiveAndDelete" });
    const first = await r.receiveMessages(2, { maxWaitTimeInMs: 3000 });
    assert.equal(first.length, 2, "could not take 2 messages out to make room");
    await sender.sendMessages({ messageId: refused, body: payload });
    const rest = [];
    for (let i = 0; i < 5; i++) {
      const b = await r.receiveMessages(10, { maxWaitTimeInMs: 1000 });
      if (b.length === 0) break;
      rest.push(...b);
    }
    await r.close();
    assert.ok(rest.map((m) => m.messageId).includes(refused),
      `${refused} was refused (QuotaExceeded), then re-sent after making room: it must arrive, got ${rest.map((m) => m.messageId)}`);
    await sender.close();
  });
});

