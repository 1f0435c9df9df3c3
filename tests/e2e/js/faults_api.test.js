// Faults on demand, the HTTP API and Config.json (README "Faults on demand"):
// PUT, GET and DELETE of /$sbemu/faults[/name] behind the management API's
// SAS check; every rule that names nothing known answered 400 with exactly
// why, changing nothing; Config.json's UserConfig.Faults in force from the
// start, and a bad one refusing the start with the reason. Then the
// operations not covered by the other faults files: an attach refused, a
// complete answered with lock-lost, an abandon delayed, a renew-lock refused.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { emulatorSuite, makeConfig, freePort, BIN } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { rawRequest } = require("./admin_util");
const { faults, putRule, getRule, deleteRule, failureOf, firedLines } = require("./faults_util");

const QUEUES = ["cfg-q", "a-attach", "a-settle", "a-renew"];
const config = makeConfig(QUEUES);
config.UserConfig.Faults = [
  { name: "from-config", entity: "cfg-q", operation: "send", effect: "error", error: "amqp:not-allowed",
    description: "Config.json says no." },
];

const BAD = [
  [{ operation: "publish", effect: "never" }, /^unknown operation 'publish': use connect, attach, send, receive/],
  [{ operation: "com.microsoft:frobnicate", effect: "never" }, /^unknown operation 'com\.microsoft:frobnicate'/],
  [{ operation: "send", effect: "explode" }, /^unknown effect 'explode': use error, delay, never, detach, close or lose-lock/],
  [{ operation: "send", effect: "error", error: "com.microsoft:bogus" }, /^unknown error 'com\.microsoft:bogus': name a Service Bus error condition \(.*com\.microsoft:server-busy/],
  [{ namespace: "no.such", operation: "send", effect: "never" }, /^The namespace name 'no\.such' holds '\.' at position 3: a namespace name is made of letters, digits, '-' and '_'/],
  [{ entity: "ord[e]rs", operation: "send", effect: "never" }, /^entity glob 'ord\[e\]rs' has '\[' at position 4/],
  [{ entity: "t//s", operation: "send", effect: "never" }, /^entity glob 't\/\/s' has an empty path segment/],
  [{ entity: "", operation: "send", effect: "never" }, /^"entity" must not be empty/],
  [{ operation: "send", effect: "never", times: -1 }, /^"times" must be from 1 to 1000000000, not -1/],
  [{ operation: "send", effect: "never", times: "2" }, /^"times" must be a whole number, not a string/],
  [{ operation: "send", effect: "never", times: [2] }, /^"times" must be a whole number, not/],
  [{ operation: "send", effect: "delay", delayMs: -5 }, /^"delayMs" must be from 1 to 3600000, not -5/],
  [{ operation: "receive", effect: "lose-lock", afterMs: -1 }, /^"afterMs" must be from 0 to 3600000, not -1/],
  [{ operation: "send", effect: "never", seed: -3 }, /^"seed" must be from 0/],
  [{ operation: "send", effect: "never", probability: 2 }, /^"probability" must be above 0 and at most 1/],
  [{ operation: "send", effect: "never", until: "soon" }, /^"until" 'soon' is not an ISO-8601 time/],
  [{ effect: "never" }, /^a fault rule needs an "operation"/],
  [{ operation: "send" }, /^a fault rule needs an "effect"/],
  [{ operation: "send", effect: "error" }, /^the effect error needs an "error"/],
  [{ operation: "send", effect: "delay" }, /^the effect delay needs "delayMs"/],
  [{ operation: "send", effect: "never", error: "server-busy" }, /^"error" applies only to the effects error, detach and close/],
  [{ operation: "send", effect: "lose-lock", afterMs: 10 }, /^the effect lose-lock applies only to the operation receive/],
  [{ operation: "connect", effect: "detach", error: "server-busy" }, /^the effect detach needs a link, and the operation connect has none: use close/],
  [{ entity: "q1", operation: "connect", effect: "never" }, /^the operation connect has no entity/],
  [{ operation: "send", effect: "never", color: "red" }, /^unknown key "color"/],
  [{ name: "other-name", operation: "send", effect: "never" }, /^The body names the rule 'other-name', the URL 'bad': they must agree/],
  ["{\"operation\": \"send\"", /^The body is not JSON: line 1/],
  ["[1, 2]", /^The body must be a JSON object/],
  ["", /^A PUT needs a body/],
];

emulatorSuite("js faults: the HTTP API and Config.json", { config }, (ctx) => {
  ctx.test("each rule that names nothing known is answered 400 with the reason, and nothing changes", async () => {
    const before = await faults(ctx.emu, "GET");
    assert.equal(before.status, 200, before.body);
    for (const [body, why] of BAD) {
      const res = await faults(ctx.emu, "PUT", "bad", body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.status} ${res.body}`);
      assert.match(res.headers["content-type"], /^application\/json/);
      assert.match(res.json.error, why, `${JSON.stringify(body)}`);
    }
    const badName = await faults(ctx.emu, "PUT", "bad%20name", { operation: "send", effect: "never" });
    assert.equal(badName.status, 400, badName.body);
    assert.match(badName.json.error, /^a fault rule's name may hold letters, digits, '\.', '_' and '-' only; 'bad name' has ' ' at position 4/);
    assert.equal((await faults(ctx.emu, "GET", "bad")).status, 404, "nothing was made by a refused PUT");
    assert.deepEqual((await faults(ctx.emu, "GET")).json, before.json, "the rules are as they were");
  });

  ctx.test("PUT creates (201) and replaces (200, counts from 0), GET lists and reads, DELETE removes", async () => {
    const rule = { entity: "nowhere*", operation: "send", effect: "error", error: "server-busy", times: 3 };
    const made = await putRule(ctx.emu, "life", rule);
    assert.deepEqual(made, {
      name: "life", entity: "nowhere*", operation: "send", effect: "error", error: "com.microsoft:server-busy",
      times: 3, remaining: 3, fired: 0,
    });
    assert.deepEqual(await getRule(ctx.emu, "LIFE"), made, "names are case-insensitive");
    const replaced = await putRule(ctx.emu, "life", { ...rule, effect: "delay", delayMs: 10, error: undefined, times: undefined,
      probability: 0.25, seed: 5, until: "2099-01-01T00:00:00Z" }, 200);
    assert.deepEqual(replaced, {
      name: "life", entity: "nowhere*", operation: "send", effect: "delay", delayMs: 10, probability: 0.25, seed: 5,
      until: "2099-01-01T00:00:00.000Z", fired: 0,
    });
    await putRule(ctx.emu, "life2", { operation: "com.microsoft:peek-message", effect: "never", namespace: "default" });
    const list = (await faults(ctx.emu, "GET")).json.faults.map((f) => f.name);
    assert.deepEqual(list, ["from-config", "life", "life2"]);
    assert.deepEqual(await deleteRule(ctx.emu, "life"), { deleted: 1 });
    assert.equal((await faults(ctx.emu, "GET", "life")).status, 404);
    const again = await faults(ctx.emu, "DELETE", "life");
    assert.equal(again.status, 404, again.body);
    assert.match(again.json.error, /There is no fault rule named 'life'/);
    // the other methods, the collection's PUT, and no token
    assert.equal((await faults(ctx.emu, "POST", "life2")).status, 405);
    const putAll = await faults(ctx.emu, "PUT", undefined, { operation: "send", effect: "never" });
    assert.equal(putAll.status, 405, putAll.body);
    assert.match(putAll.json.error, /PUT names a rule/);
    assert.equal((await rawRequest(ctx.emu, "$sbemu/faults", { auth: false })).status, 401);
    await deleteRule(ctx.emu, "life2");
  });

  ctx.test("Config.json's UserConfig.Faults are in force from the start, and removed like any other", async () => {
    const rule = await getRule(ctx.emu, "from-config");
    assert.equal(rule.error, "amqp:not-allowed");
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    const sender = client.createSender("cfg-q");
    const err = await failureOf(sender.sendMessages({ body: "no" }), "a send Config.json's rule refuses");
    assert.match(err.message, /Config\.json says no\./);
    assert.equal(firedLines(ctx.emu, "from-config").length, 1);
    assert.deepEqual(await deleteRule(ctx.emu, undefined), { deleted: 1 }, "DELETE /$sbemu/faults removes every rule");
    assert.deepEqual((await faults(ctx.emu, "GET")).json, { faults: [] });
    await sender.sendMessages({ body: "yes" });
  });

  ctx.test("a Config.json fault rule that names nothing known refuses the start, saying why", async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sbemu-e2e-badfault-"));
    fs.chmodSync(tmp, 0o755);
    try {
      const bad = makeConfig(["q"]);
      bad.UserConfig.Faults = [{ name: "boom", operation: "send", effect: "explode" }];
      fs.writeFileSync(path.join(tmp, "Config.json"), JSON.stringify(bad));
      const r = spawnSync(BIN, ["--config", path.join(tmp, "Config.json"), "--data-dir", path.join(tmp, "data"),
        "--amqp-port", String(await freePort()), "--amqps-port", "0", "--http-port", String(await freePort())],
      { encoding: "utf8", timeout: 60000 });
      assert.notEqual(r.status, 0, `sbemu started with a bad fault rule: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout + r.stderr, /Config\.json: UserConfig\.Faults\[0\] \("boom"\): unknown effect 'explode'/);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 90000);

  ctx.test("attach refused, complete answered lock-lost, abandon delayed, renew-lock refused", async () => {
    const client = ctx.client(undefined, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });
    // an attach a rule refuses: the SDK's send fails with the rule's error
    await putRule(ctx.emu, "noattach", { entity: "a-attach", operation: "attach", effect: "error", error: "com.microsoft:entity-disabled", times: 1 });
    const err = await failureOf(client.createSender("a-attach").sendMessages({ body: "x" }), "a send whose attach is refused");
    assert.equal(err.code, "MessagingEntityDisabled", `${err.code}: ${err.message}`);
    await client.createSender("a-attach").sendMessages({ body: "attached now" });
    assert.equal((await getRule(ctx.emu, "noattach")).fired, 1);
    await deleteRule(ctx.emu, "noattach");

    await client.createSender("a-settle").sendMessages([{ body: 1, messageId: "s-1" }, { body: 2, messageId: "s-2" }]);
    await putRule(ctx.emu, "nocomplete", { entity: "a-settle", operation: "complete", effect: "error", error: "com.microsoft:message-lock-lost", times: 1 });
    await putRule(ctx.emu, "slowabandon", { entity: "a-settle", operation: "abandon", effect: "delay", delayMs: 800, times: 1 });
    const receiver = client.createReceiver("a-settle", PEEK_LOCK);
    const [m1, m2] = await receiveExact(receiver, 2);
    const lost = await failureOf(receiver.completeMessage(m1), "a complete a rule refuses");
    assert.equal(lost.code, "MessageLockLost", `${lost.code}: ${lost.message}`);
    const t0 = Date.now();
    await receiver.abandonMessage(m2);
    assert.ok(Date.now() - t0 >= 800, `the abandon took ${Date.now() - t0} ms`);
    const [back] = await receiveExact(receiver, 1);
    assert.equal(back.messageId, "s-2", "abandoned after the delay: back in the queue");
    await putRule(ctx.emu, "norenew", { entity: "a-settle", operation: "renew-lock", effect: "error", error: "com.microsoft:timeout" });
    const renew = await failureOf(receiver.renewMessageLock(back), "a renew a rule refuses");
    assert.equal(renew.code, "ServiceTimeout", `${renew.code}: ${renew.message}`);
    assert.match(firedLines(ctx.emu, "norenew")[0], /fired: com\.microsoft:renew-lock on 'a-settle': error com\.microsoft:timeout/);
    await deleteRule(ctx.emu, undefined);
    await receiver.completeMessage(back); // the rules are gone: this complete is not refused
    await receiver.close();
  });
});
