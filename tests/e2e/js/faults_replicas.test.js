// Faults on demand across replicas (README "Faults on demand"): two
// emulators on one database. A rule put on one is in force on the other (the
// table's NOTIFY), its "next N times" count is shared (N firings between
// them, not N each), and a removal on either ends it on both.
"use strict";

const assert = require("node:assert/strict");
const { emulatorPairSuite, makeConfig, sleep } = require("../harness");
const { putRule, getRule, deleteRule, firedLines } = require("./faults_util");

const config = makeConfig(["shared-q"]);

/** Waits until emu's log has a line matching re (the rules it holds change only by NOTIFY). */
async function logSays(emu, re, what, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (!re.test(emu.log())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

emulatorPairSuite("js faults: two emulators, one database", { one: { config }, two: { config } }, (ctx) => {
  ctx.test("a rule put on one fires on both, N times between them, and a DELETE on either ends it", async () => {
    await putRule(ctx.one, "shared", {
      entity: "shared-q", operation: "send", effect: "error", error: "com.microsoft:server-busy", times: 3,
    });
    await logSays(ctx.two, /fault rules: 1 in force/, "the second emulator to load the rule");
    const { ServiceBusClient } = require("@azure/service-bus");
    const retryOptions = { maxRetries: 0, timeoutInMs: 10000 };
    const clients = [new ServiceBusClient(ctx.one.connectionString, { retryOptions }),
      new ServiceBusClient(ctx.two.connectionString, { retryOptions })];
    try {
      const senders = clients.map((c) => c.createSender("shared-q"));
      let refused = 0;
      const by = [0, 0];
      for (let i = 0; i < 10; i++) {
        try {
          await senders[i % 2].sendMessages({ body: i });
        } catch (e) {
          assert.equal(e.code, "ServiceBusy", `${e.code}: ${e.message}`);
          refused++;
          by[i % 2]++;
        }
      }
      assert.equal(refused, 3, "three firings between the two emulators");
      assert.ok(by[0] > 0 && by[1] > 0, `both emulators fired it: ${by}`);
      assert.equal(firedLines(ctx.one, "shared").length + firedLines(ctx.two, "shared").length, 3);
      const rule = await getRule(ctx.two, "shared");
      assert.equal(rule.fired, 3);
      assert.equal(rule.remaining, 0);

      await deleteRule(ctx.two, "shared");
      await logSays(ctx.one, /fault rules: 0 in force/, "the first emulator to drop the rule");
      await senders[0].sendMessages({ body: "after" });
      await senders[1].sendMessages({ body: "after" });
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
    }
  });
});
