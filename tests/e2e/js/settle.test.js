// Settlement: complete, abandon, dead-letter, MaxDeliveryCount, receiveAndDelete,
// competing receivers.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectMarkerNext, expectCode, rawManagementRequest, lockTokenBytes, lockTokenArray } = require("./util");
const { connect, completeTwiceRaw } = require("./raw_amqp");

const queues = [
  "complete",
  "complete-raw",
  "abandon",
  "deadletter",
  { name: "maxdelivery", properties: { MaxDeliveryCount: 2 } },
  "rnd",
  "compete",
  "modify",
  "closed-first",
  "closed-raw",
];

/** A delivery tag (the lock token in .NET's Guid byte order) as the lock token's RFC bytes. */
const tagToLockToken = (tag) =>
  Buffer.concat([Buffer.from(tag.subarray(0, 4)).reverse(), Buffer.from(tag.subarray(4, 6)).reverse(),
    Buffer.from(tag.subarray(6, 8)).reverse(), tag.subarray(8, 16)]);

emulatorSuite("js settlement", { queues }, (ctx) => {
  ctx.test("complete removes the message", async () => {
    const sb = ctx.client();
    await sb.createSender("complete").sendMessages({ messageId: "c-1", body: "to complete" });
    const receiver = sb.createReceiver("complete", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "c-1");
    await receiver.completeMessage(m);
    // Completing twice is refused by the SDK itself, before the emulator sees anything (an SDK fact).
    await assert.rejects(receiver.completeMessage(m), (e) => /deleted or already settled/i.test(e.message), "the SDK's own refusal");
    // The emulator's side: a complete of the same lock token through $management (what
    // .NET does once the receive link is gone) answers MessageLockLost.
    const err = await rawManagementRequest(sb, "complete", "com.microsoft:update-disposition", {
      "lock-tokens": lockTokenArray([lockTokenBytes(m.lockToken)]),
      "disposition-status": "completed",
    }).then(() => null, (e) => e);
    assert.ok(err, "a second complete through $management was accepted");
    assert.equal(err.code, "MessageLockLost", `${err.code}: ${err.message}`);
    await receiver.close();
    await expectMarkerNext(sb, "complete");
  });

  ctx.test("a second disposition of a delivery the emulator settled already changes nothing, and the link stays up", async () => {
    const sb = ctx.client();
    await sb.createSender("complete-raw").sendMessages([{ messageId: "r-1", body: 1 }, { messageId: "r-2", body: 2 }]);
    const { conn } = await connect(ctx.emu.amqpPort);
    try {
      const { messageId, first, link } = await completeTwiceRaw(conn, "complete-raw");
      assert.equal(messageId, "r-1");
      assert.equal(first, "accepted", "the broker's answer to the first complete");
      // the same link still delivers: the next message is r-2, not r-1 again
      const next = await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("nothing more on the link after the second disposition")), 10000);
        link.once("message", (ctx2) => { clearTimeout(t); ctx2.delivery.accept(); resolve(ctx2.message.message_id); });
        link.add_credit(1);
      });
      assert.equal(next, "r-2");
    } finally {
      conn.close();
    }
    await expectMarkerNext(sb, "complete-raw");
  });

  ctx.test("abandon redelivers the same message with deliveryCount + 1", async () => {
    const sb = ctx.client();
    await sb.createSender("abandon").sendMessages({ messageId: "a-1", body: { v: 1 } });
    const receiver = sb.createReceiver("abandon", PEEK_LOCK);
    const [first] = await receiveExact(receiver, 1);
    assert.equal(first.deliveryCount, 0);
    await receiver.abandonMessage(first);
    const [second] = await receiveExact(receiver, 1);
    assert.equal(second.messageId, "a-1");
    assert.deepEqual(second.body, { v: 1 });
    assert.equal(second.deliveryCount, 1);
    assert.equal(second.sequenceNumber.toString(), first.sequenceNumber.toString());
    assert.notEqual(second.lockToken, first.lockToken, "a redelivery carries a new lock token");
    await receiver.abandonMessage(second);
    const [third] = await receiveExact(receiver, 1);
    assert.equal(third.deliveryCount, 2);
    await receiver.completeMessage(third);
    await receiver.close();
    await expectMarkerNext(sb, "abandon");
  });

  ctx.test("dead-letter with reason and description, then receive from the DLQ", async () => {
    const sb = ctx.client();
    await sb.createSender("deadletter").sendMessages({
      messageId: "dl-1",
      body: { order: 7 },
      subject: "bad-order",
      applicationProperties: { customer: "c-42" },
    });
    const receiver = sb.createReceiver("deadletter", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.deadLetterMessage(m, {
      deadLetterReason: "InvalidOrder",
      deadLetterErrorDescription: "order 7 has no lines",
    });
    await receiver.close();

    const dlq = sb.createReceiver("deadletter", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    assert.equal(dlq.entityPath, "deadletter/$DeadLetterQueue");
    const [d] = await receiveExact(dlq, 1);
    assert.equal(d.messageId, "dl-1");
    assert.deepEqual(d.body, { order: 7 });
    assert.equal(d.subject, "bad-order");
    assert.equal(d.applicationProperties.customer, "c-42");
    assert.equal(d.deadLetterReason, "InvalidOrder");
    assert.equal(d.deadLetterErrorDescription, "order 7 has no lines");
    await dlq.completeMessage(d);
    await dlq.close();
    await expectMarkerNext(sb, "deadletter");
  });

  ctx.test("abandon and dead-letter on the receive link apply their properties to modify (modified.message-annotations, rejected error info)", async () => {
    const sb = ctx.client();
    await sb.createSender("modify").sendMessages({ messageId: "mod-1", body: "m", applicationProperties: { kept: "k", n: 1 } });
    const receiver = sb.createReceiver("modify", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.abandonMessage(m, { n: 2, added: "by-abandon" });
    const [again] = await receiveExact(receiver, 1);
    assert.deepEqual(again.applicationProperties, { kept: "k", n: 2, added: "by-abandon" });
    await receiver.deadLetterMessage(again, { deadLetterReason: "why", deadLetterErrorDescription: "how", n: 3, dl: true });
    await receiver.close();
    const dlq = sb.createReceiver("modify", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const [d] = await receiveExact(dlq, 1);
    assert.equal(d.deadLetterReason, "why");
    assert.equal(d.deadLetterErrorDescription, "how");
    // DeadLetterReason/-Description are carried as properties too (Service Bus adds them); the
    // properties to modify are merged in.
    assert.equal(d.applicationProperties.kept, "k");
    assert.equal(d.applicationProperties.n, 3);
    assert.equal(d.applicationProperties.added, "by-abandon");
    assert.equal(d.applicationProperties.dl, true);
    await dlq.completeMessage(d);
    await dlq.close();
  });

  ctx.test("MaxDeliveryCount 2: the message lands in the DLQ with MaxDeliveryCountExceeded", async () => {
    const sb = ctx.client();
    await sb.createSender("maxdelivery").sendMessages({ messageId: "mdc-1", body: "poison" });
    const receiver = sb.createReceiver("maxdelivery", PEEK_LOCK);
    for (let i = 0; i < 2; i++) {
      const [m] = await receiveExact(receiver, 1);
      assert.equal(m.messageId, "mdc-1");
      assert.equal(m.deliveryCount, i);
      await receiver.abandonMessage(m);
    }
    await receiver.close();
    // Delivered twice already: the next message the queue hands out must be a new one.
    await expectMarkerNext(sb, "maxdelivery");

    const dlq = sb.createReceiver("maxdelivery", { ...PEEK_LOCK, subQueueType: "deadLetter" });
    const [d] = await receiveExact(dlq, 1);
    assert.equal(d.messageId, "mdc-1");
    assert.equal(d.body, "poison");
    assert.equal(d.deadLetterReason, "MaxDeliveryCountExceeded");
    assert.ok(typeof d.deadLetterErrorDescription === "string" && d.deadLetterErrorDescription.length > 0,
      `deadLetterErrorDescription: ${d.deadLetterErrorDescription}`);
    await dlq.completeMessage(d);
    await dlq.close();
  });

  // A lock outlives the link that took it: the SDK settles such a message through
  // $management. Proton settles what a freed link still holds and, with its session
  // alive, tells the client so; rhea then took the messages for settled and the SDK
  // refused them ("already settled"): the JS SDK closes a link itself whenever a
  // drain goes unanswered for 200 ms, so a loaded machine lost its completions.
  ctx.test("messages received on a receiver closed before they were settled are completed and abandoned afterwards", async () => {
    const sb = ctx.client();
    await sb.createSender("closed-first").sendMessages([0, 1, 2].map((i) => ({ messageId: `cf-${i}`, body: i })));
    const first = sb.createReceiver("closed-first", PEEK_LOCK);
    const got = await receiveExact(first, 3);
    await first.close();
    const second = sb.createReceiver("closed-first", PEEK_LOCK);
    for (const m of got) assert.equal(m.delivery.remote_settled, false, `${m.messageId} was reported settled when its link closed`);
    await second.completeMessage(got[0]);
    await second.completeMessage(got[1]);
    await second.abandonMessage(got[2]);
    const [again] = await receiveExact(second, 1);
    assert.equal(again.messageId, "cf-2");
    assert.equal(again.deliveryCount, 1, "the abandon through $management counted a delivery");
    await second.completeMessage(again);
    await second.close();
    await expectMarkerNext(sb, "closed-first");
  });

  // The same when the session stays open (the Java SDK's receivers of one entity share
  // one): the link detaches, nothing is said of its deliveries, and the next link on the
  // session and $management work on.
  ctx.test("a link detached from a session that stays open leaves its messages locked, not settled", async () => {
    const sb = ctx.client();
    await sb.createSender("closed-raw").sendMessages([0, 1].map((i) => ({ messageId: `cr-${i}`, body: i })));
    const { conn } = await connect(ctx.emu.amqpPort);
    try {
      const session = conn.create_session();
      session.begin();
      const taken = await new Promise((resolve, reject) => {
        const got = [];
        const t = setTimeout(() => reject(new Error(`received ${got.length} of 2 on closed-raw`)), 10000);
        const link = session.attach_receiver({ source: { address: "closed-raw" }, autoaccept: false, credit_window: 0, rcv_settle_mode: 1 });
        link.once("receiver_open", () => link.add_credit(2));
        link.on("message", (c) => {
          got.push(c.delivery);
          if (got.length === 2) {
            clearTimeout(t);
            link.once("receiver_close", () => resolve(got));
            link.close();
          }
        });
      });
      // a second link on the same session: its attach and answer come after anything the
      // emulator would have said of the first link's deliveries
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("no attach answer for the second link")), 10000);
        const again = session.attach_receiver({ source: { address: "closed-raw" }, autoaccept: false, credit_window: 0 });
        again.once("receiver_open", () => { clearTimeout(t); resolve(); });
      });
      for (const d of taken) assert.equal(d.remote_settled, false, "a delivery of the detached link was reported settled");
      await rawManagementRequest(sb, "closed-raw", "com.microsoft:update-disposition", {
        "lock-tokens": lockTokenArray(taken.map((d) => tagToLockToken(d.tag))),
        "disposition-status": "completed",
      });
    } finally {
      conn.close();
    }
    await expectMarkerNext(sb, "closed-raw");
  });

  ctx.test("receiveAndDelete: messages are gone once received", async () => {
    const sb = ctx.client();
    await sb.createSender("rnd").sendMessages([0, 1, 2].map((i) => ({ messageId: `rnd-${i}`, body: i })));
    const receiver = sb.createReceiver("rnd", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(receiver, 3);
    assert.deepEqual(got.map((m) => m.body), [0, 1, 2]);
    for (const m of got) assert.equal(m.deliveryCount, 0);
    await receiver.close();
    await expectMarkerNext(sb, "rnd");
  });

  ctx.test("competing receivers never get the same message", async () => {
    const N = 60;
    const sb = ctx.client();
    const sender = sb.createSender("compete");
    await sender.sendMessages(Array.from({ length: N }, (_, i) => ({ messageId: `cmp-${i}`, body: i })));
    // Two clients = two AMQP connections, each with its own receiver.
    const receivers = [ctx.client(), ctx.client()].map((c) => c.createReceiver("compete", PEEK_LOCK));
    const seen = new Map(); // messageId -> receiver index
    const dups = [];
    const deadline = Date.now() + 30000;
    await Promise.all(
      receivers.map(async (r, idx) => {
        while (seen.size < N && Date.now() < deadline) {
          const batch = await r.receiveMessages(7, { maxWaitTimeInMs: 1000 });
          for (const m of batch) {
            if (seen.has(m.messageId)) dups.push(`${m.messageId} (receivers ${seen.get(m.messageId)} and ${idx})`);
            else seen.set(m.messageId, idx);
            await r.completeMessage(m);
          }
        }
      })
    );
    await Promise.all(receivers.map((r) => r.close()));
    assert.deepEqual(dups, [], "a message was handed to two receivers");
    assert.equal(seen.size, N, `received ${seen.size} of ${N}`);
    await expectMarkerNext(sb, "compete");
  });
});
