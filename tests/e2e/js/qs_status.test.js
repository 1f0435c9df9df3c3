// Entity status from Config.json: Disabled, SendDisabled, ReceiveDisabled refuse the
// matching operations with com.microsoft:entity-disabled (JS code MessagingEntityDisabled);
// the allowed direction keeps working.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { psql } = require("./qs_util");

const CODE = "MessagingEntityDisabled";
const queues = [
  { name: "st-active", properties: { Status: "Active" } },
  { name: "st-disabled", properties: { Status: "Disabled" } },
  { name: "st-send-disabled", properties: { Status: "SendDisabled" } },
  { name: "st-receive-disabled", properties: { Status: "ReceiveDisabled" } },
];

emulatorSuite("js entity status", { queues }, (ctx) => {
  ctx.test(`send to a Disabled queue fails with ${CODE}`, async () => {
    const err = await expectCode(ctx.client().createSender("st-disabled").sendMessages({ body: "x" }), CODE);
    assert.ok(err.message && err.message.length > 0, "the error should carry a description");
  });

  ctx.test(`receive from a Disabled queue fails with ${CODE}`, async () => {
    const receiver = ctx.client().createReceiver("st-disabled", PEEK_LOCK);
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 3000 }), CODE);
    await receiver.close().catch(() => {});
  });

  ctx.test(`send to a SendDisabled queue fails with ${CODE}`, async () => {
    await expectCode(ctx.client().createSender("st-send-disabled").sendMessages({ body: "x" }), CODE);
  });

  ctx.test("receive from a SendDisabled queue works (it is empty: no error, no message)", async () => {
    const receiver = ctx.client().createReceiver("st-send-disabled", PEEK_LOCK);
    const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 1500 });
    assert.deepEqual(got.map((m) => m.messageId), []);
    await receiver.close();
  });

  ctx.test(`send to a ReceiveDisabled queue works; receiving from it fails with ${CODE}`, async () => {
    const sb = ctx.client();
    await sb.createSender("st-receive-disabled").sendMessages({ messageId: "kept", body: "accepted" });
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM messages m JOIN queues q ON q.id = m.entity_id WHERE q.name = 'st-receive-disabled'"),
      "1", "the accepted message should be stored in st-receive-disabled");
    const receiver = sb.createReceiver("st-receive-disabled", PEEK_LOCK);
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 3000 }), CODE);
    await receiver.close().catch(() => {});
  });

  ctx.test(`receiveAndDelete from a ReceiveDisabled queue fails with ${CODE} too`, async () => {
    const receiver = ctx.client().createReceiver("st-receive-disabled", { receiveMode: "receiveAndDelete" });
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 3000 }), CODE);
    await receiver.close().catch(() => {});
  });

  ctx.test(`subscribe() on a ReceiveDisabled queue reports ${CODE} to processError and delivers nothing`, async () => {
    const receiver = ctx.client().createReceiver("st-receive-disabled", PEEK_LOCK);
    const got = [];
    const codes = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no error reported in 10 s; codes ${codes}, messages ${got}`)), 10000);
      receiver.subscribe({
        async processMessage(m) { got.push(m.messageId); },
        async processError(args) {
          codes.push(args.error.code);
          clearTimeout(timer);
          resolve();
        },
      }, { autoCompleteMessages: false });
    });
    await receiver.close().catch(() => {});
    assert.deepEqual(got, [], "a ReceiveDisabled queue must deliver nothing");
    assert.equal(codes[0], CODE, `processError got codes ${JSON.stringify(codes)}`);
  });

  ctx.test("an Active queue (Status given explicitly) sends and receives", async () => {
    const sb = ctx.client();
    await sb.createSender("st-active").sendMessages({ messageId: "a1", body: "ok" });
    const receiver = sb.createReceiver("st-active", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "a1");
    await receiver.completeMessage(m);
    await receiver.close();
  });
});
