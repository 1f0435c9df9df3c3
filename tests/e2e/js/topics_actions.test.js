// Topic rules with actions (one copy per matching action rule, with RuleName and the
// action's changes; the matching rules without action share one copy), and filters that
// fail to evaluate (dead-lettered per DeadLetteringOnFilterEvaluationExceptions).
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { sqlRule, corrRule, drainSub, brief, storedCounts } = require("./topics_util");

const FILTER_REASON = "FilterEvaluationException";

const topics = [
  {
    name: "t-act",
    subscriptions: [
      {
        name: "act",
        rules: [
          sqlRule("plain", "k = 'act'"),
          sqlRule("set", "k = 'act'", "SET color = 'green'; SET sys.Label = 'relabeled'; SET n = n + 1"),
          sqlRule("remove", "k = 'act'", "REMOVE secret"),
          sqlRule("nomatch", "k = 'other'", "SET color = 'never'"),
        ],
      },
      { name: "two-noaction", rules: [sqlRule("a", "a = 1"), sqlRule("b", "b = 1")] },
      { name: "corr-action", rules: [corrRule("c", { Label: "tagme" }, "SET tagged = 'yes'; SET sys.CorrelationId = 'set-by-rule'")] },
      { name: "all-twice", rules: [sqlRule("all", "1 = 1"), sqlRule("stamp", "1 = 1", "SET stamped = true")] },
    ],
  },
  {
    name: "t-err",
    subscriptions: [
      { name: "all" },
      { name: "err-type", rules: [sqlRule("type", "color * 2 > 5")] },
      { name: "err-div", rules: [sqlRule("div", "qty / 0 = 1")] },
      { name: "err-skip", properties: { DeadLetteringOnFilterEvaluationExceptions: false }, rules: [sqlRule("div", "qty / 0 = 1")] },
      { name: "err-action", rules: [sqlRule("act", "1 = 1", "SET r = qty / 0")] },
      { name: "label-miss", rules: [sqlRule("lbl", "sys.Label = 'x'")] },
    ],
  },
];

/** Copies sorted by RuleName (the plain copy, without RuleName, last). */
const ruleKey = (m) => (m.applicationProperties.RuleName === undefined ? "\uffff" : String(m.applicationProperties.RuleName));
const byRule = (ms) => [...ms].sort((p, q) => (ruleKey(p) < ruleKey(q) ? -1 : ruleKey(p) > ruleKey(q) ? 1 : 0));

emulatorSuite("js topics: rule actions and filter errors", { topics }, (ctx) => {
  ctx.test("three matching rules (no action, SET, REMOVE): three copies; action copies carry RuleName and their own changes only", async () => {
    const sb = ctx.client();
    await sb.createSender("t-act").sendMessages({
      messageId: "a1", subject: "orig", body: { keep: "me" },
      applicationProperties: { k: "act", color: "red", secret: "s", n: 1 },
    });
    const got = byRule(await drainSub(sb, "t-act", "act", 3));
    const [remove, set, plain] = got;
    for (const m of got) {
      assert.equal(m.messageId, "a1");
      assert.deepEqual(m.body, { keep: "me" }, `${m.applicationProperties.RuleName}: the body is never changed by an action`);
    }
    assert.deepEqual(plain.applicationProperties, { k: "act", color: "red", secret: "s", n: 1 }, "the no-action copy: as sent, no RuleName");
    assert.equal(plain.subject, "orig");
    assert.deepEqual(set.applicationProperties, { k: "act", color: "green", secret: "s", n: 2, RuleName: "set" }, "the SET copy");
    assert.equal(set.subject, "relabeled", "SET sys.Label changes the subject of that copy");
    assert.deepEqual(remove.applicationProperties, { k: "act", color: "red", n: 1, RuleName: "remove" }, "the REMOVE copy");
    assert.equal(remove.subject, "orig");
    // all-twice matched a1 too (1 = 1 twice): the plain copy and the stamped one.
    const twice = byRule(await drainSub(sb, "t-act", "all-twice", 2));
    assert.deepEqual(twice.map((m) => m.applicationProperties.RuleName), ["stamp", undefined]);
  });

  ctx.test("a message matched by no rule of 'act' (k = 'zzz') gives no copy there; rule 'nomatch' alone gives one copy", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-act");
    await sender.sendMessages({ messageId: "z1", body: "z", applicationProperties: { k: "zzz" } });
    await sender.sendMessages({ messageId: "o1", body: "o", applicationProperties: { k: "other", color: "red" } });
    await sender.close();
    const [m] = await drainSub(sb, "t-act", "act", 1);
    assert.deepEqual(brief(m).messageId, "o1");
    assert.deepEqual(m.applicationProperties, { k: "other", color: "never", RuleName: "nomatch" });
    // Both went to all-twice (two copies each); clear it for the next tests.
    const all = await drainSub(sb, "t-act", "all-twice", 4);
    assert.deepEqual(all.map((x) => `${x.messageId}:${x.applicationProperties.RuleName ?? "-"}`).sort(),
      ["o1:-", "o1:stamp", "z1:-", "z1:stamp"]);
  });

  ctx.test("two matching rules without action give ONE copy; either one alone gives one; neither gives none", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-act");
    await sender.sendMessages([
      { messageId: "ab", body: 1, applicationProperties: { a: 1, b: 1 } },
      { messageId: "b-only", body: 2, applicationProperties: { b: 1 } },
      { messageId: "a-only", body: 3, applicationProperties: { a: 1 } },
      { messageId: "neither", body: 4, applicationProperties: { a: 2, b: 2 } },
    ]);
    await sender.close();
    const got = await drainSub(sb, "t-act", "two-noaction", 3);
    assert.deepEqual(got.map((m) => m.messageId), ["ab", "b-only", "a-only"]);
    for (const m of got) assert.equal(m.applicationProperties.RuleName, undefined, `${m.messageId}: no action, no RuleName`);
    await drainSub(sb, "t-act", "all-twice", 8);
  });

  ctx.test("a correlation rule with an action: RuleName, SET user property and SET sys.CorrelationId", async () => {
    const sb = ctx.client();
    await sb.createSender("t-act").sendMessages([
      { messageId: "t1", subject: "tagme", correlationId: "orig-cid", body: "x", applicationProperties: { q: 1 } },
      { messageId: "t2", subject: "other", body: "y" },
    ]);
    const [m] = await drainSub(sb, "t-act", "corr-action", 1);
    assert.equal(m.messageId, "t1");
    assert.deepEqual(m.applicationProperties, { q: 1, tagged: "yes", RuleName: "c" });
    assert.equal(m.correlationId, "set-by-rule");
    assert.equal(m.subject, "tagme");
    await drainSub(sb, "t-act", "all-twice", 4);
  });

  ctx.test("a rule with action next to a no-action rule matching the same message (all-twice): two copies, one stamped", async () => {
    const sb = ctx.client();
    await sb.createSender("t-act").sendMessages({ messageId: "tw", body: "twice", applicationProperties: { v: "1" } });
    const got = byRule(await drainSub(sb, "t-act", "all-twice", 2));
    assert.deepEqual(got.map((m) => m.applicationProperties), [{ v: "1", stamped: true, RuleName: "stamp" }, { v: "1" }]);
    assert.deepEqual(got.map((m) => m.messageId), ["tw", "tw"]);
  });

  ctx.test(`filter 'color * 2 > 5' on a string color (a type error): dead-lettered in err-type with ${FILTER_REASON}; 'all' still gets it`, async () => {
    const sb = ctx.client();
    await sb.createSender("t-err").sendMessages({ messageId: "e-type", body: "string color", applicationProperties: { color: "red" } });
    assert.equal((await drainSub(sb, "t-err", "all", 1))[0].messageId, "e-type");
    // err-div, err-skip: qty is missing, so qty / 0 is NULL (unknown, no error): no match.
    for (const sub of ["err-div", "err-skip", "label-miss"]) {
      assert.equal(storedCounts(ctx.emu, `t-err/Subscriptions/${sub}`), "0,0", `${sub} takes nothing of e-type`);
    }
    // err-action: 1 = 1 matches; SET r = qty / 0 with qty missing is NULL, no error: one copy.
    const [c] = await drainSub(sb, "t-err", "err-action", 1);
    assert.equal(c.messageId, "e-type");
    assert.equal(c.applicationProperties.RuleName, "act");
    await drainSub(sb, "t-err", "err-type", 0, { quietMs: 500 });
    const [d] = await drainSub(sb, "t-err", "err-type", 1, { dlq: true });
    assert.equal(d.messageId, "e-type");
    assert.equal(d.body, "string color");
    assert.equal(d.deadLetterReason, FILTER_REASON);
    assert.ok(typeof d.deadLetterErrorDescription === "string" && d.deadLetterErrorDescription.length > 0,
      `deadLetterErrorDescription should say what failed, got ${JSON.stringify(d.deadLetterErrorDescription)}`);
  });

  ctx.test(`an arithmetic error (qty / 0): err-div dead-letters it (${FILTER_REASON}), err-skip (flag false) skips it; 'sys.Label = x' without Label neither matches nor dead-letters`, async () => {
    const sb = ctx.client();
    await sb.createSender("t-err").sendMessages({ messageId: "e-div", body: "qty 3", applicationProperties: { qty: 3 } });
    assert.equal((await drainSub(sb, "t-err", "all", 1))[0].messageId, "e-div");
    await drainSub(sb, "t-err", "err-div", 0, { quietMs: 500 });
    const [d] = await drainSub(sb, "t-err", "err-div", 1, { dlq: true });
    assert.equal(d.messageId, "e-div");
    assert.equal(d.deadLetterReason, FILTER_REASON);
    assert.match(String(d.deadLetterErrorDescription), /div/i, "the description should name the division by zero");
    assert.equal(storedCounts(ctx.emu, "t-err/Subscriptions/err-skip"), "0,0", "err-skip (DeadLetteringOnFilterEvaluationExceptions false) takes nothing");
    assert.equal(storedCounts(ctx.emu, "t-err/Subscriptions/label-miss"), "0,0", "label-miss: no Label is no match, not an error");
    assert.equal(storedCounts(ctx.emu, "t-err/Subscriptions/err-type"), "0,0", "err-type: no color is no match (unknown)");
    // err-action: the filter matches, the action divides by zero: dead-lettered there too.
    await drainSub(sb, "t-err", "err-action", 0, { quietMs: 500 });
    const [a] = await drainSub(sb, "t-err", "err-action", 1, { dlq: true });
    assert.equal(a.messageId, "e-div");
    assert.equal(a.deadLetterReason, FILTER_REASON, "an action that fails dead-letters like a filter that fails");
  });

  ctx.test("sys.Label = 'x' matches a message with Label x; a numeric color passes 'color * 2 > 5'", async () => {
    const sb = ctx.client();
    await sb.createSender("t-err").sendMessages([
      { messageId: "lx", subject: "x", body: 1 },
      { messageId: "c7", body: 2, applicationProperties: { color: 7 } },
    ]);
    assert.deepEqual((await drainSub(sb, "t-err", "all", 2)).map((m) => m.messageId), ["lx", "c7"]);
    assert.deepEqual((await drainSub(sb, "t-err", "label-miss", 1)).map((m) => m.messageId), ["lx"]);
    assert.deepEqual((await drainSub(sb, "t-err", "err-type", 1)).map((m) => m.messageId), ["c7"]);
    assert.deepEqual((await drainSub(sb, "t-err", "err-action", 2)).map((m) => m.messageId), ["lx", "c7"]);
    for (const sub of ["err-type", "err-div", "err-skip", "label-miss"]) {
      assert.equal(storedCounts(ctx.emu, `t-err/Subscriptions/${sub}`), "0,0", `${sub} holds nothing more`);
    }
  });
});
