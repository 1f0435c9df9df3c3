// Two emulators on one database: what the management API makes or changes on
// one is what the other serves over AMQP at once (the entity tables' NOTIFY),
// and what either lists.
"use strict";

const assert = require("node:assert/strict");
const { emulatorPairSuite, sleep } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { adminClient } = require("./admin_util");

/** Retries fn until it stops throwing or timeoutMs passed (the NOTIFY is asynchronous). */
async function eventually(fn, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await sleep(100);
    }
  }
}

emulatorPairSuite("js admin: two emulators on one database", { one: { name: "admin-pair-1" }, two: { name: "admin-pair-2" } }, (ctx) => {
  ctx.test("a queue made on one is served by the other; a change on one reaches the other's links", async () => {
    const admin1 = adminClient(ctx.one, "beta");
    await admin1.createQueue("pair-q");
    const sender = ctx.c2.createSender("pair-q");
    await sender.sendMessages({ body: "via two", messageId: "p1" });
    const receiver = ctx.c1.createReceiver("pair-q", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.body, "via two");
    await receiver.completeMessage(m);
    await receiver.close();
    const q = await admin1.getQueue("pair-q");
    q.status = "SendDisabled";
    await admin1.updateQueue(q);
    // Two hears of the change through its NOTIFY, a moment later: a probe sent before that is
    // still taken (and stored), one sent after is refused. Count the ones taken.
    let taken = 0;
    await eventually(async () => {
      try {
        await sender.sendMessages({ body: "probe" });
      } catch (e) {
        if (/SendDisabled|disabled/i.test(e.message)) return;
        throw e;
      }
      taken++;
      throw new Error(`send ${taken} was taken: two has not seen SendDisabled yet`);
    });
    await sender.close();
    const rt = await adminClient(ctx.two, "beta").getQueueRuntimeProperties("pair-q");
    assert.equal(rt.totalMessageCount, taken, "the queue holds the probes taken before the change, nothing after");
  });

  ctx.test("a subscription and its rule made on two route what is sent to one", async () => {
    const admin2 = adminClient(ctx.two, "7.9.5");
    await admin2.createTopic("pair-t");
    await admin2.createSubscription("pair-t", "reds", { defaultRuleOptions: { name: "red", filter: { sqlExpression: "color = 'red'" } } });
    // one knows the subscription and its rule once an attach to it there succeeds
    const rules = [];
    for await (const r of ctx.c1.createRuleManager("pair-t", "reds").listRules()) rules.push(r.name);
    assert.deepEqual(rules, ["red"]);
    const s = ctx.c1.createSender("pair-t");
    await s.sendMessages([{ body: "r", applicationProperties: { color: "red" } }, { body: "b", applicationProperties: { color: "blue" } }]);
    await s.close();
    const got = await receiveExact(ctx.c2.createReceiver("pair-t", "reds", PEEK_LOCK), 1);
    assert.equal(got[0].body, "r");
    const subs = [];
    for await (const s of adminClient(ctx.one, "7.9.5").listSubscriptions("pair-t")) subs.push(s.subscriptionName);
    assert.deepEqual(subs, ["reds"]);
  });
});
