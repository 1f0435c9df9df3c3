// Sessions through the JS SDK: acceptSession / acceptNextSession, order within a
// session, one holder at a time, session state, renewSessionLock, lock expiry
// (session-lock-lost, and the session free for others), abandon and
// MaxDeliveryCount in a session, peek within a session, deferral, scheduling,
// sends without a SessionId and non-session receivers refused, session
// subscriptions.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { advance, expectNothing, psql } = require("./qs_util");

const S = { RequiresSession: true };
const queues = [
  { name: "s-basic", properties: S },
  { name: "s-next", properties: S },
  { name: "s-hold", properties: S },
  { name: "s-state", properties: S },
  { name: "s-lock", properties: { ...S, LockDuration: "PT30S" } },
  { name: "s-abandon", properties: { ...S, MaxDeliveryCount: 2 } },
  { name: "s-close", properties: S },
  { name: "s-close-some", properties: S },
  { name: "s-peek", properties: S },
  { name: "s-defer", properties: S },
  { name: "s-refuse", properties: S },
  { name: "plain" },
  { name: "s-empty", properties: S },
  { name: "s-restart", properties: S },
  { name: "s-first", properties: S },
  { name: "s-first-lapse", properties: { ...S, LockDuration: "PT30S" } },
];
const topics = [{
  name: "s-topic",
  subscriptions: [{ name: "sess", properties: S }, { name: "all" }],
}];

emulatorSuite("js sessions", { queues, topics }, (ctx) => {
  ctx.test("acceptSession: a named session's messages in order, and only its own", async () => {
    const sb = ctx.client();
    const s = sb.createSender("s-basic");
    await s.sendMessages([
      { body: "a1", sessionId: "A" }, { body: "b1", sessionId: "B" }, { body: "a2", sessionId: "A" },
      { body: "a3", sessionId: "A" }, { body: "b2", sessionId: "B" },
    ]);
    const a = await sb.acceptSession("s-basic", "A", PEEK_LOCK);
    assert.equal(a.sessionId, "A");
    assert.ok(a.sessionLockedUntilUtc instanceof Date && a.sessionLockedUntilUtc > new Date(Date.now() - 5000),
      `locked until ${a.sessionLockedUntilUtc}`);
    const got = await receiveExact(a, 3);
    assert.deepEqual(got.map((m) => `${m.sessionId}:${m.body}`), ["A:a1", "A:a2", "A:a3"]);
    for (const m of got) await a.completeMessage(m);
    await expectNothing(a, "session A after three", 1000);
    await a.close();
    const b = await sb.acceptSession("s-basic", "B", { receiveMode: "receiveAndDelete" });
    const gb = await receiveExact(b, 2);
    assert.deepEqual(gb.map((m) => m.body), ["b1", "b2"]);
    await b.close();
  });

  ctx.test("acceptNextSession: the oldest session with a message nobody holds; none left: a timeout error", async () => {
    const sb = ctx.client();
    const s = sb.createSender("s-next");
    await s.sendMessages([{ body: 1, sessionId: "n2" }]);
    await s.sendMessages([{ body: 2, sessionId: "n1" }]);
    const first = await sb.acceptNextSession("s-next", PEEK_LOCK);
    assert.equal(first.sessionId, "n2");
    const second = await sb.acceptNextSession("s-next", PEEK_LOCK);
    assert.equal(second.sessionId, "n1");
    const t0 = Date.now();
    await assert.rejects(sb.acceptNextSession("s-next", { ...PEEK_LOCK, maxAutoLockRenewalDurationInMs: 0 }),
      (e) => { assert.equal(e.code, "ServiceTimeout", `${e.code}: ${e.message}`); return true; });
    assert.ok(Date.now() - t0 >= 1000, "it waited for a session");
    await first.close();
    // closing lets the session go: next-available finds it again
    const again = await sb.acceptNextSession("s-next", PEEK_LOCK);
    assert.equal(again.sessionId, "n2");
    await again.close();
    await second.close();
  });

  ctx.test("a next-available receiver waiting gets a session sent after it started waiting", async () => {
    const sb = ctx.client();
    const waiting = sb.acceptNextSession("s-empty", PEEK_LOCK);
    await new Promise((r) => setTimeout(r, 700));
    await sb.createSender("s-empty").sendMessages({ body: "late", sessionId: "late" });
    const r = await waiting;
    assert.equal(r.sessionId, "late");
    const [m] = await receiveExact(r, 1);
    assert.equal(m.body, "late");
    await r.completeMessage(m);
    await r.close();
  });

  ctx.test("a session held by one receiver cannot be accepted by another (SessionCannotBeLocked)", async () => {
    const sb = ctx.client();
    await sb.createSender("s-hold").sendMessages({ body: 1, sessionId: "H" });
    const h = await sb.acceptSession("s-hold", "H", PEEK_LOCK);
    await expectCode(ctx.client().acceptSession("s-hold", "H", PEEK_LOCK), "SessionCannotBeLocked");
    await h.close();
    const h2 = await ctx.client().acceptSession("s-hold", "H", PEEK_LOCK);
    assert.equal(h2.sessionId, "H");
    await h2.close();
  });

  ctx.test("session state: set, get, kept across receivers, cleared with null", async () => {
    const sb = ctx.client();
    const r = await sb.acceptSession("s-state", "st", PEEK_LOCK);
    assert.equal(await r.getSessionState(), null);
    await r.setSessionState("step-2");
    assert.equal(Buffer.from(await r.getSessionState()).toString(), "step-2");
    await r.close();
    const r2 = await sb.acceptSession("s-state", "st", PEEK_LOCK);
    assert.equal(Buffer.from(await r2.getSessionState()).toString(), "step-2");
    await r2.setSessionState(null);
    assert.equal(await r2.getSessionState(), null);
    await r2.close();
  });

  ctx.test("renewSessionLock extends the lock; when it lapses, settling fails with SessionLockLost and the session is free", async () => {
    const sb = ctx.client();
    await sb.createSender("s-lock").sendMessages([{ body: 1, sessionId: "L" }, { body: 2, sessionId: "L" }]);
    const r = await sb.acceptSession("s-lock", "L", { ...PEEK_LOCK, maxAutoLockRenewalDurationInMs: 0 });
    const before = r.sessionLockedUntilUtc.getTime();
    await advance(ctx.emu, "PT10S");
    const renewed = await r.renewSessionLock();
    assert.ok(renewed.getTime() >= before + 9000, `renewed to ${renewed.toISOString()} from ${new Date(before).toISOString()}`);
    const [m] = await receiveExact(r, 1);
    assert.equal(m.body, 1);
    await advance(ctx.emu, "PT45S");
    await new Promise((res) => setTimeout(res, 1500)); // the lapse detaches the link within a poll
    await expectCode(r.completeMessage(m), "SessionLockLost");
    const other = await ctx.client().acceptSession("s-lock", "L", PEEK_LOCK);
    const again = await receiveExact(other, 2);
    assert.deepEqual(again.map((x) => `${x.body}:${x.deliveryCount}`), ["1:1", "2:0"]);
    for (const x of again) await other.completeMessage(x);
    await other.close();
  });

  ctx.test("the lock takes a session's first messages with it: what the credit leaves, what waits past a second and what a closed receiver never asked for go back in order, uncounted", async () => {
    // link_session.c: a peek-lock receiver's lock claims up to 32 of its messages (or what its
    // connection's last session receiver first asked for) in the same statement; they wait on the
    // link for the client's first credit (link_sender.c, amqp_held).
    const locked = "SELECT count(*) FROM messages m JOIN entities e ON e.id = m.entity_id" +
      " WHERE e.path = 's-first' AND m.lock_token IS NOT NULL";
    const sb = ctx.client();
    const send = (sid, n) => sb.createSender("s-first").sendMessages(
      Array.from({ length: n }, (_, i) => ({ body: `${sid}${i + 1}`, sessionId: sid })));
    const shown = (ms) => ms.map((x) => `${x.body}:${x.deliveryCount}`);
    await send("H", 6);
    const a = await ctx.client().acceptSession("s-first", "H", PEEK_LOCK); // a fresh connection: it takes 32
    const two = await receiveExact(a, 2); // credit 2: four go back
    assert.deepEqual(shown(two), ["H1:0", "H2:0"]);
    const rest = await receiveExact(a, 4);
    assert.deepEqual(shown(rest), ["H3:0", "H4:0", "H5:0", "H6:0"], "what the first credit left came next, uncounted");
    for (const x of [...two, ...rest]) await a.completeMessage(x);
    await a.close();

    await send("W", 3);
    const b = await ctx.client().acceptSession("s-first", "W", PEEK_LOCK);
    let held = psql(ctx.emu, locked);
    assert.equal(held, "3", "the lock took the session's messages");
    for (const end = Date.now() + 5000; held !== "0" && Date.now() < end; held = psql(ctx.emu, locked))
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(held, "0", "unasked for a second, they went back to the store");
    const w = await receiveExact(b, 3);
    assert.deepEqual(shown(w), ["W1:0", "W2:0", "W3:0"]);
    for (const x of w) await b.completeMessage(x);
    await b.close();

    await send("C", 2);
    const c = await ctx.client().acceptSession("s-first", "C", PEEK_LOCK);
    await c.close(); // before any credit
    const d = await ctx.client().acceptSession("s-first", "C", PEEK_LOCK);
    const cs = await receiveExact(d, 2);
    assert.deepEqual(shown(cs), ["C1:0", "C2:0"], "a closed receiver's untaken messages went back uncounted");
    for (const x of cs) await d.completeMessage(x);
    await d.close();
  });

  ctx.test("a session lock that lapses before the client's first credit still ends the link (SessionLockLost) and frees the session", async () => {
    // The first messages wait in sbemu, not in Proton: Proton 0.37 sends no detach for a sender
    // link with deliveries it has not sent yet (pni_process_link_teardown).
    const sb = ctx.client();
    await sb.createSender("s-first-lapse").sendMessages([1, 2].map((body) => ({ body, sessionId: "X" })));
    const r = await ctx.client().acceptSession("s-first-lapse", "X", { ...PEEK_LOCK, maxAutoLockRenewalDurationInMs: 0 });
    await advance(ctx.emu, "PT45S");
    await new Promise((res) => setTimeout(res, 1500)); // the lapse detaches the link within a poll
    await expectCode(r.receiveMessages(1, { maxWaitTimeInMs: 3000 }), "SessionLockLost");
    const other = await ctx.client().acceptSession("s-first-lapse", "X", PEEK_LOCK);
    const again = await receiveExact(other, 2);
    assert.deepEqual(again.map((x) => x.body), [1, 2]);
    for (const x of again) await other.completeMessage(x);
    await other.close();
  });

  ctx.test("closing a session receiver with unsettled messages frees them without raising their DeliveryCount", async () => {
    // Service Bus counts no delivery for a session closed unsettled (docs: message-sessions,
    // "Impact of delivery count"; azure-sdk-for-js #15116); a lapsed session lock does count (above).
    const sb = ctx.client();
    await sb.createSender("s-close").sendMessages([{ body: 1, sessionId: "K" }, { body: 2, sessionId: "K" }]);
    const r = await sb.acceptSession("s-close", "K", PEEK_LOCK);
    const first = await receiveExact(r, 2);
    assert.deepEqual(first.map((x) => `${x.body}:${x.deliveryCount}`), ["1:0", "2:0"]);
    await r.close();
    const other = await ctx.client().acceptSession("s-close", "K", PEEK_LOCK);
    const again = await receiveExact(other, 2);
    assert.deepEqual(again.map((x) => `${x.body}:${x.deliveryCount}`), ["1:0", "2:0"]);
    await other.abandonMessage(again[0]);
    const [third] = await receiveExact(other, 1);
    assert.equal(`${third.body}:${third.deliveryCount}`, "1:1", "an abandon still counts");
    for (const x of [third, again[1]]) await other.completeMessage(x);
    await other.close();
  });

  ctx.test("a receiver that settled only some of what it received frees the rest when it closes; one that settled all leaves no lock behind", async () => {
    // A session's release looks for locked messages only when its receiver still holds some
    // (link_session.c); both ways the session is free at once and nothing stays locked.
    const sb = ctx.client();
    await sb.createSender("s-close-some").sendMessages([1, 2, 3].map((body) => ({ body, sessionId: "P" })));
    const r = await sb.acceptSession("s-close-some", "P", PEEK_LOCK);
    const first = await receiveExact(r, 3);
    await r.completeMessage(first[0]);
    await r.close();
    const other = await ctx.client().acceptSession("s-close-some", "P", PEEK_LOCK);
    const again = await receiveExact(other, 2);
    assert.deepEqual(again.map((x) => `${x.body}:${x.deliveryCount}`), ["2:0", "3:0"]);
    for (const x of again) await other.completeMessage(x);
    await other.close();
    const locked = "SELECT count(*) FROM lock_batches b JOIN entities e ON e.id = b.entity_id" +
      " WHERE e.path = 's-close-some'";
    // (the release commits just after the detach is answered, on the store's connection: wait for it)
    let left = psql(ctx.emu, locked);
    for (const end = Date.now() + 5000; left !== "0" && Date.now() < end; left = psql(ctx.emu, locked))
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(left, "0", "the settled receiver's lock batches went with its session");
    await sb.createSender("s-close-some").sendMessages({ body: 4, sessionId: "P" });
    const third = await ctx.client().acceptSession("s-close-some", "P", PEEK_LOCK);
    const [last] = await receiveExact(third, 1);
    assert.equal(`${last.body}:${last.deliveryCount}`, "4:0");
    await third.completeMessage(last);
    await third.close();
  });

  ctx.test("abandon returns a message to its session with DeliveryCount + 1; MaxDeliveryCount dead-letters it (the DLQ has no sessions)", async () => {
    const sb = ctx.client();
    await sb.createSender("s-abandon").sendMessages([{ body: "x", sessionId: "ab", messageId: "ab1" }]);
    const r = await sb.acceptSession("s-abandon", "ab", PEEK_LOCK);
    let [m] = await receiveExact(r, 1);
    assert.equal(m.deliveryCount, 0);
    await r.abandonMessage(m);
    [m] = await receiveExact(r, 1);
    assert.equal(m.deliveryCount, 1);
    await r.abandonMessage(m);
    await expectNothing(r, "after MaxDeliveryCount", 1000);
    await r.close();
    const dlq = sb.createReceiver("s-abandon", { subQueueType: "deadLetter", receiveMode: "receiveAndDelete" });
    const [d] = await receiveExact(dlq, 1);
    assert.equal(d.messageId, "ab1");
    assert.equal(d.sessionId, "ab");
    assert.equal(d.deadLetterReason, "MaxDeliveryCountExceeded");
    await dlq.close();
  });

  ctx.test("peekMessages on a session receiver shows only its session", async () => {
    const sb = ctx.client();
    await sb.createSender("s-peek").sendMessages([
      { body: "p1", sessionId: "P" }, { body: "q1", sessionId: "Q" }, { body: "p2", sessionId: "P" },
    ]);
    const r = await sb.acceptSession("s-peek", "P", PEEK_LOCK);
    const peeked = await r.peekMessages(10);
    assert.deepEqual(peeked.map((m) => m.body), ["p1", "p2"]);
    await r.close();
  });

  ctx.test("defer and receiveDeferredMessages in a session; scheduled messages with a SessionId", async () => {
    const sb = ctx.client();
    const s = sb.createSender("s-defer");
    await s.sendMessages({ body: "d", sessionId: "D" });
    const at = new Date(Date.now() + 20000);
    await s.scheduleMessages({ body: "later", sessionId: "D" }, at);
    const r = await sb.acceptSession("s-defer", "D", PEEK_LOCK);
    const [m] = await receiveExact(r, 1);
    await r.deferMessage(m);
    const [d] = await r.receiveDeferredMessages([m.sequenceNumber]);
    assert.equal(d.body, "d");
    await r.completeMessage(d);
    await advance(ctx.emu, "PT30S"); // within the session's lock (PT1M)
    const [late] = await receiveExact(r, 1);
    assert.equal(late.body, "later");
    assert.equal(late.sessionId, "D");
    await r.completeMessage(late);
    await r.close();
  });

  ctx.test("a send without SessionId and a non-session receiver are refused; a session receiver on a plain queue too", async () => {
    const sb = ctx.client();
    await assert.rejects(sb.createSender("s-refuse").sendMessages({ body: "no session" }),
      (e) => /SessionId was not set/.test(e.message));
    const r = sb.createReceiver("s-refuse", PEEK_LOCK);
    await assert.rejects(r.receiveMessages(1, { maxWaitTimeInMs: 2000 }),
      (e) => /requires sessions/.test(e.message));
    await r.close();
    // JS reports any attach without the session as "may be locked by another
    // receiver"; the emulator's detach and log say why
    await assert.rejects(sb.acceptSession("plain", "x", PEEK_LOCK));
    assert.match(ctx.emu.log(), /does not require sessions .*Entity: 'plain'/);
  });

  ctx.test("session subscriptions: acceptSession on a subscription; a copy without a SessionId goes only to the others", async () => {
    const sb = ctx.client();
    const s = sb.createSender("s-topic");
    await s.sendMessages([{ body: "with", sessionId: "T1" }, { body: "without" }]);
    const r = await sb.acceptSession("s-topic", "sess", "T1", PEEK_LOCK);
    const [m] = await receiveExact(r, 1);
    assert.equal(m.body, "with");
    await r.completeMessage(m);
    await expectNothing(r, "session subscription", 800);
    await r.close();
    const all = sb.createReceiver("s-topic", "all", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(all, 2);
    assert.deepEqual(got.map((x) => x.body).sort(), ["with", "without"]);
    await all.close();
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM sessions WHERE lock_token IS NOT NULL"), "0");
  });

  ctx.test("session state and a session's messages survive a restart of the emulator", async () => {
    const sb = ctx.client();
    await sb.createSender("s-restart").sendMessages([{ body: "m1", sessionId: "R" }, { body: "m2", sessionId: "R" }]);
    const r = await sb.acceptSession("s-restart", "R", PEEK_LOCK);
    await r.setSessionState("kept");
    const [m] = await receiveExact(r, 1);
    await r.completeMessage(m);
    await r.close();
    await sb.close();
    await ctx.emu.stop();
    await ctx.emu.start();
    const after = ctx.client();
    const r2 = await after.acceptSession("s-restart", "R", PEEK_LOCK);
    assert.equal(Buffer.from(await r2.getSessionState()).toString(), "kept");
    const [m2] = await receiveExact(r2, 1);
    assert.equal(m2.body, "m2");
    await r2.completeMessage(m2);
    await r2.close();
  });
});
