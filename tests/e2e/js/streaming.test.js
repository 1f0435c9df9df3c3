// receiver.subscribe(): the streaming (credit-refilling) receive path.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, expectMarkerNext } = require("./util");

emulatorSuite("js streaming", { queues: ["stream", "stream-late"] }, (ctx) => {
  ctx.test("subscribe() receives 20 messages in order and completes them", async () => {
    const sb = ctx.client();
    await sb.createSender("stream").sendMessages(Array.from({ length: 20 }, (_, i) => ({ messageId: `s-${i}`, body: i })));
    const receiver = sb.createReceiver("stream", PEEK_LOCK);
    const got = [];
    const errors = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${got.length} of 20 messages arrived in 30 s; errors: ${errors}`)), 30000);
      receiver.subscribe(
        {
          async processMessage(m) {
            await receiver.completeMessage(m);
            got.push(m);
            if (got.length === 20) {
              clearTimeout(timer);
              resolve();
            }
          },
          async processError(args) {
            errors.push(`${args.errorSource}: ${args.error.code || ""} ${args.error.message}`);
          },
        },
        { autoCompleteMessages: false, maxConcurrentCalls: 1 }
      );
    });
    await receiver.close();
    assert.deepEqual(got.map((m) => m.body), Array.from({ length: 20 }, (_, i) => i));
    assert.deepEqual(errors, []);
    await expectMarkerNext(sb, "stream");
  });

  ctx.test("subscribe() wakes up for messages sent after it started", async () => {
    const sb = ctx.client();
    const receiver = sb.createReceiver("stream-late", PEEK_LOCK);
    const got = [];
    const done = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${got.length} of 5 late messages arrived in 20 s`)), 20000);
      receiver.subscribe(
        {
          async processMessage(m) {
            await receiver.completeMessage(m);
            got.push(m.body);
            if (got.length === 5) {
              clearTimeout(timer);
              resolve();
            }
          },
          async processError() {},
        },
        { autoCompleteMessages: false }
      );
    });
    const sender = sb.createSender("stream-late");
    for (let i = 0; i < 5; i++) await sender.sendMessages({ body: `late-${i}` });
    await done;
    await receiver.close();
    assert.deepEqual(got, [0, 1, 2, 3, 4].map((i) => `late-${i}`));
  });
});
