// Topic filters from Config.json: SQL filters over sys.* and user properties, and
// correlation filters on every system field and on user properties. Each message
// carries an application property `tag`; each subscription must get exactly the tags
// its filter matches.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { sqlRule, corrRule, drainSub } = require("./topics_util");

const SQL_SUBS = {
  "sql-sys": "sys.Label = 'urgent' AND sys.CorrelationId = 'c1'",
  "sql-user": "color = 'red' AND qty > 5",
  "sql-like-in": "sys.MessageId LIKE 'ord-%' AND region IN ('eu', 'us')",
  "sql-exists-null": "EXISTS(flag) AND missing IS NULL",
  "sql-not": "NOT (color = 'red')",
  "sql-user-prefix": "user.color = 'blue' OR sys.To = 'dest-1'",
  "sql-false": "1 = 0",
  "sql-ct-reply": "sys.ContentType = 'text/plain' AND sys.ReplyTo LIKE 'reply%'",
};

const CORR_SUBS = {
  "corr-cid": { CorrelationId: "cid-1" },
  "corr-mid": { MessageId: "mid-1" },
  "corr-to": { To: "to-1" },
  "corr-replyto": { ReplyTo: "rt-1" },
  "corr-label": { Label: "lbl-1" },
  "corr-session": { SessionId: "sess-1" },
  "corr-rtsid": { ReplyToSessionId: "rts-1" },
  "corr-ct": { ContentType: "ct/1" },
  "corr-props": { Properties: { color: "red", size: "L" } },
  "corr-multi": { CorrelationId: "cm", Label: "lm", Properties: { p: "x" } },
};

const topics = [
  { name: "t-sql", subscriptions: Object.entries(SQL_SUBS).map(([name, e]) => ({ name, rules: [sqlRule("f", e)] })) },
  { name: "t-corr", subscriptions: Object.entries(CORR_SUBS).map(([name, c]) => ({ name, rules: [corrRule("f", c)] })) },
];

/** Drains every subscription of topic and compares the tags it got (in order) with want[sub]. */
async function checkTags(client, topic, want) {
  const wrong = [];
  for (const [sub, tags] of Object.entries(want)) {
    let got;
    try {
      got = (await drainSub(client, topic, sub, tags.length, { timeoutMs: 4000, quietMs: 600 })).map((m) => m.applicationProperties.tag);
    } catch (e) {
      wrong.push(`${sub}: ${e.message}`);
      continue;
    }
    if (JSON.stringify(got) !== JSON.stringify(tags)) wrong.push(`${sub}: expected ${JSON.stringify(tags)}, got ${JSON.stringify(got)}`);
    const dlq = await drainSub(client, topic, sub, 0, { dlq: true, quietMs: 300 }).catch((e) => e);
    if (dlq instanceof Error) wrong.push(`${sub} DLQ: ${dlq.message}`);
  }
  assert.deepEqual(wrong, [], `subscriptions of ${topic} with the wrong messages:\n  ${wrong.join("\n  ")}`);
}

emulatorSuite("js topics: SQL and correlation filters", { topics }, (ctx) => {
  ctx.test("SQL filters over sys.Label/CorrelationId/MessageId/To/ContentType/ReplyTo, user properties, LIKE, IN, EXISTS, IS NULL, NOT", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-sql");
    await sender.sendMessages([
      { messageId: "ord-1", subject: "urgent", correlationId: "c1", body: 1,
        applicationProperties: { tag: "s1", color: "red", qty: 10, region: "eu", flag: true } },
      { messageId: "ord-2", subject: "urgent", correlationId: "c2", body: 2,
        applicationProperties: { tag: "s2", color: "red", qty: 5, region: "asia" } },
      { messageId: "x-3", body: 3, applicationProperties: { tag: "s3", color: "blue", qty: 6, region: "us", flag: false } },
      { messageId: "ord-4", body: 4, applicationProperties: { tag: "s4", region: "us" } },
      { messageId: "x-5", to: "dest-1", contentType: "text/plain", replyTo: "reply-q", body: 5,
        applicationProperties: { tag: "s5", color: "red", qty: 6 } },
      { messageId: "x-6", contentType: "text/plain", replyTo: "other", subject: "Urgent", correlationId: "c1", body: 6,
        applicationProperties: { tag: "s6" } },
    ]);
    await sender.close();
    await checkTags(sb, "t-sql", {
      "sql-sys": ["s1"], // s6's Label is "Urgent": string comparison is case-sensitive
      "sql-user": ["s1", "s5"],
      "sql-like-in": ["s1", "s4"],
      "sql-exists-null": ["s1", "s3"],
      "sql-not": ["s3"], // NOT(unknown) is unknown: s4 and s6 have no color
      "sql-user-prefix": ["s3", "s5"],
      "sql-false": [],
      "sql-ct-reply": ["s5"],
    });
  });

  ctx.test("correlation filters: CorrelationId, MessageId, To, ReplyTo, Label, SessionId, ReplyToSessionId, ContentType, properties, all ANDed, case-sensitive", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-corr");
    const msgs = [
      { tag: "cid", correlationId: "cid-1" },
      { tag: "cid-case", correlationId: "CID-1" },
      { tag: "mid", messageId: "mid-1" },
      { tag: "to", to: "to-1" },
      { tag: "replyto", replyTo: "rt-1" },
      { tag: "label", subject: "lbl-1" },
      { tag: "session", sessionId: "sess-1" },
      { tag: "rtsid", replyToSessionId: "rts-1" },
      { tag: "ct", contentType: "ct/1" },
      { tag: "props", props: { color: "red", size: "L", extra: 1 } },
      { tag: "props-partial", props: { color: "red" } },
      { tag: "props-other", props: { color: "red", size: "M" } },
      { tag: "multi", correlationId: "cm", subject: "lm", props: { p: "x" } },
      { tag: "multi-missing-prop", correlationId: "cm", subject: "lm" },
      { tag: "multi-wrong-label", correlationId: "cm", subject: "LM", props: { p: "x" } },
    ];
    for (const { tag, props, ...fields } of msgs) {
      await sender.sendMessages({ messageId: `m-${tag}`, body: tag, ...fields, applicationProperties: { tag, ...(props || {}) } });
    }
    await sender.close();
    await checkTags(sb, "t-corr", {
      "corr-cid": ["cid"],
      "corr-mid": ["mid"],
      "corr-to": ["to"],
      "corr-replyto": ["replyto"],
      "corr-label": ["label"],
      "corr-session": ["session"],
      "corr-rtsid": ["rtsid"],
      "corr-ct": ["ct"],
      "corr-props": ["props"],
      "corr-multi": ["multi"],
    });
  });

  ctx.test("a received copy keeps every system field the correlation filter looked at", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-corr");
    await sender.sendMessages({
      messageId: "mid-1", correlationId: "cid-1", to: "to-1", replyTo: "rt-1", subject: "lbl-1",
      replyToSessionId: "rts-1", contentType: "ct/1", body: { all: true }, applicationProperties: { tag: "all", color: "red", size: "L" },
    });
    await sender.close();
    for (const sub of ["corr-cid", "corr-mid", "corr-to", "corr-replyto", "corr-label", "corr-rtsid", "corr-ct", "corr-props"]) {
      const [m] = await drainSub(sb, "t-corr", sub, 1);
      assert.deepEqual(
        { messageId: m.messageId, correlationId: m.correlationId, to: m.to, replyTo: m.replyTo, subject: m.subject,
          replyToSessionId: m.replyToSessionId, contentType: m.contentType, body: m.body, app: m.applicationProperties },
        { messageId: "mid-1", correlationId: "cid-1", to: "to-1", replyTo: "rt-1", subject: "lbl-1",
          replyToSessionId: "rts-1", contentType: "ct/1", body: { all: true }, app: { tag: "all", color: "red", size: "L" } },
        `${sub}: the copy as sent`);
    }
    await drainSub(sb, "t-corr", "corr-session", 0);
    await drainSub(sb, "t-corr", "corr-multi", 0);
  });
});
