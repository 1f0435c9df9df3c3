// Errors the SDK must be able to recognise by code.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");

emulatorSuite("js errors", { queues: ["exists"] }, (ctx) => {
  ctx.test("send to an unknown queue fails with MessagingEntityNotFound", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("no-such-queue");
    await expectCode(sender.sendMessages({ body: "x" }), "MessagingEntityNotFound");
  });

  ctx.test("receive from an unknown queue fails with MessagingEntityNotFound", async () => {
    const sb = ctx.client();
    const receiver = sb.createReceiver("no-such-queue-either", PEEK_LOCK);
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 }), "MessagingEntityNotFound");
  });

  ctx.test("a wrong SAS key fails with UnauthorizedAccess", async () => {
    const bad = ctx.client(ctx.emu.connectionStringWith("d3Jvbmcga2V5IQ=="));
    await expectCode(bad.createSender("exists").sendMessages({ body: "x" }), "UnauthorizedAccess");
  });

  // A key name other than RootManageSharedAccessKey names a namespace (README "Namespaces"): one
  // that no namespace may be called is refused, any other is a namespace of its own, without the
  // default namespace's queues.
  ctx.test("a SAS key name that cannot name a namespace fails with UnauthorizedAccess", async () => {
    const bad = ctx.client(ctx.emu.connectionStringWith(undefined, "No.Such.Policy"));
    await expectCode(bad.createReceiver("exists", PEEK_LOCK).receiveMessages(1, { maxWaitTimeInMs: 5000 }), "UnauthorizedAccess");
  });

  ctx.test("another SAS key name is another namespace: the default's queue is not found there", async () => {
    const other = ctx.client(ctx.emu.connectionStringWith(undefined, "NoSuchPolicy"));
    await expectCode(other.createReceiver("exists", PEEK_LOCK).receiveMessages(1, { maxWaitTimeInMs: 5000 }), "MessagingEntityNotFound");
  });

  ctx.test("the right key still works after the refusals", async () => {
    const sb = ctx.client();
    await sb.createSender("exists").sendMessages({ messageId: "ok-1", body: "fine" });
    const receiver = sb.createReceiver("exists", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "ok-1");
    assert.equal(m.body, "fine");
    await receiver.completeMessage(m);
    await receiver.close();
  });
});
