// AutoDeleteOnIdle (on the emulator's clock) and MaxSizeInMegabytes (QuotaExceeded).
// Idle deletion is watched through the queues table (psql), because every SDK call on
// the queue would itself count as activity.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { SWEEP_GRACE_MS, sleep, advance, psql } = require("./qs_util");

const queues = [
  { name: "idle-5", properties: { AutoDeleteOnIdle: "PT5M" } },
  { name: "idle-10", properties: { AutoDeleteOnIdle: "PT10M" } },
  { name: "never-idle" },
  { name: "size-1", properties: { MaxSizeInMegabytes: 1 } },
];

const exists = (emu, q) => psql(emu, `SELECT count(*) FROM queues WHERE name = '${q}'`) === "1";

/** Polls the queues table until q is gone (true) or timeoutMs passed (false). */
async function waitGone(emu, q, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!exists(emu, q)) return true;
    await sleep(200);
  }
  return !exists(emu, q);
}

emulatorSuite("js auto-delete-on-idle and max size", { queues }, (ctx) => {
  ctx.test("AutoDeleteOnIdle PT5M: 6 min without activity deletes the queue and its messages; send then gives MessagingEntityNotFound", async () => {
    const sb = ctx.client();
    await sb.createSender("idle-5").sendMessages([
      { messageId: "dead", body: "dead-lettered, deleted with the queue" },
      { messageId: "lost", body: "deleted with the queue" },
    ]);
    const r5 = sb.createReceiver("idle-5", PEEK_LOCK);
    const [d] = await receiveExact(r5, 1);
    assert.equal(d.messageId, "dead");
    await r5.deadLetterMessage(d, { deadLetterReason: "Test", deadLetterErrorDescription: "in the DLQ when the queue goes" });
    await r5.close();
    const id = psql(ctx.emu, "SELECT id FROM queues WHERE name = 'idle-5'");
    assert.ok(id, "idle-5 should be a row in queues");
    assert.equal(psql(ctx.emu, `SELECT count(*) FROM messages WHERE entity_id = ${id}`), "2", "idle-5 holds one active and one dead-lettered message");
    await sb.createSender("idle-10").sendMessages({ messageId: "anchor", body: "activity at the start" });
    await advance(ctx.emu, "PT6M");
    const gone = await waitGone(ctx.emu, "idle-5", SWEEP_GRACE_MS + 1500);
    assert.ok(gone, `idle-5 (AutoDeleteOnIdle PT5M) should be deleted within ${SWEEP_GRACE_MS + 1500} ms of advancing 6 min; it is still in the queues table`);
    assert.equal(psql(ctx.emu, `SELECT count(*) FROM messages WHERE entity_id = ${id}`), "0", "its messages (active and dead-lettered) should be gone with it");
    await expectCode(sb.createSender("idle-5").sendMessages({ body: "too late" }), "MessagingEntityNotFound");
    assert.ok(exists(ctx.emu, "never-idle"), "a queue without AutoDeleteOnIdle must not be deleted");
    assert.ok(exists(ctx.emu, "idle-10"), "idle-10 (PT10M) was idle only 6 min and must still exist");
  });

  ctx.test("activity resets idleness: PT10M queue, send at +6 min, +6 more min → it still exists with both messages", async () => {
    // The previous test sent "anchor" to idle-10 and then advanced 6 min.
    const sb = ctx.client();
    await sb.createSender("idle-10").sendMessages({ messageId: "keepalive", body: "activity at +6 min" });
    await advance(ctx.emu, "PT6M"); // 12 min since anchor, 6 since keepalive
    await sleep(SWEEP_GRACE_MS);
    assert.ok(exists(ctx.emu, "idle-10"), "idle-10 was active 6 min ago (idle window 10 min): it must still exist");
    const receiver = sb.createReceiver("idle-10", PEEK_LOCK);
    const got = await receiveExact(receiver, 2);
    assert.deepEqual(got.map((m) => m.messageId), ["anchor", "keepalive"]);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
    // Control: left alone for 11 min it does go.
    await advance(ctx.emu, "PT11M");
    assert.ok(await waitGone(ctx.emu, "idle-10", SWEEP_GRACE_MS + 1500),
      "idle-10 left idle for 11 min (AutoDeleteOnIdle PT10M) should be deleted");
    assert.ok(exists(ctx.emu, "never-idle"), "never-idle must survive 23 min without activity");
  });

  ctx.test("MaxSizeInMegabytes 1: 200 KB messages fail with QuotaExceeded by the 6th; receiving some makes room", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("size-1");
    const payload = Buffer.alloc(200 * 1024, 0x61);
    let accepted = 0;
    let err = null;
    for (let i = 1; i <= 8 && !err; i++) {
      try {
        await sender.sendMessages({ messageId: `big-${i}`, body: payload });
        accepted++;
      } catch (e) {
        err = e instanceof AggregateError && e.errors && e.errors.length ? e.errors[e.errors.length - 1] : e;
      }
    }
    assert.ok(err, `all 8 sends of 200 KB into a 1 MB queue were accepted (${accepted * 200} KB)`);
    assert.equal(err.code, "QuotaExceeded", `the refused send failed with ${err.code} (${err.name}: ${err.message}), expected QuotaExceeded`);
    assert.ok(accepted >= 4 && accepted <= 5,
      `a 1 MB queue must take 4 messages of 200 KB and refuse by the 6th; it accepted ${accepted} before refusing`);
    assert.match(String(err.message), /size|quota|MaxSizeInMegabytes|MB/i, `the error should say which limit was hit: ${err.message}`);

    // Nothing was stored for the refused send.
    const receiver = sb.createReceiver("size-1", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(receiver, 2);
    assert.deepEqual(got.map((m) => m.messageId), ["big-1", "big-2"]);
    await sender.sendMessages({ messageId: "fits-again", body: payload });
    const rest = [];
    while (rest.length < accepted - 1) {
      const b = await receiver.receiveMessages(accepted - 1 - rest.length, { maxWaitTimeInMs: 3000 });
      if (b.length === 0) break;
      rest.push(...b);
    }
    const want = [];
    for (let i = 3; i <= accepted; i++) want.push(`big-${i}`);
    want.push("fits-again");
    assert.deepEqual(rest.map((m) => m.messageId), want, "the queue should hold the accepted messages and fits-again, not the refused one");
    assert.deepEqual((await receiver.receiveMessages(1, { maxWaitTimeInMs: 1000 })).map((m) => m.messageId), []);
    await receiver.close();
    // Empty again: a full 1 MB worth fits.
    for (let i = 0; i < 4; i++) await sender.sendMessages({ messageId: `refill-${i}`, body: payload });
    await sender.close();
  });
});

