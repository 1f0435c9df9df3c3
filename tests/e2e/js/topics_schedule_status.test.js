// Topics: duplicate detection, MaxSizeInMegabytes (QuotaExceeded), Status Disabled /
// SendDisabled (MessagingEntityDisabled), and scheduled messages that fan out when they
// become due (emulator clock), by the rules of that moment.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, expectCode, entitiesReloaded } = require("./util");
const { clockNow, advance, expectNothing, psql } = require("./qs_util");
const { sqlRule, drainSub, storedCounts } = require("./topics_util");

const MIN = 60000;
const topics = [
  { name: "t-dedup", properties: { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" }, subscriptions: [{ name: "a" }, { name: "b" }] },
  { name: "t-size", properties: { MaxSizeInMegabytes: 1 }, subscriptions: [{ name: "s" }] },
  { name: "t-disabled", properties: { Status: "Disabled" }, subscriptions: [{ name: "s" }] },
  { name: "t-senddis", properties: { Status: "SendDisabled" }, subscriptions: [{ name: "s" }] },
  { name: "t-sched", subscriptions: [{ name: "a" }, { name: "b", rules: [sqlRule("pick", "pick = 'yes'")] }] },
];

emulatorSuite("js topics: dedup, size, status, scheduled", { topics }, (ctx) => {
  ctx.test("duplicate detection on the topic: d1 twice and d2 → each subscription gets d1 (first) and d2; past the window d1 is new", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-dedup");
    await sender.sendMessages({ messageId: "d1", body: "first" });
    await sender.sendMessages({ messageId: "d1", body: "second" });
    await sender.sendMessages([{ messageId: "d2", body: "other" }, { messageId: "d2", body: "dup in batch" }]);
    for (const sub of ["a", "b"]) {
      assert.deepEqual((await drainSub(sb, "t-dedup", sub, 2)).map((m) => `${m.messageId}:${m.body}`), ["d1:first", "d2:other"], sub);
    }
    await sender.sendMessages({ messageId: "d1", body: "within window" });
    assert.equal(storedCounts(ctx.emu, "t-dedup/Subscriptions/a"), "0,0", "d1 within the window is dropped");
    await advance(ctx.emu, "PT2M");
    await sender.sendMessages({ messageId: "d1", body: "after window" });
    for (const sub of ["a", "b"]) {
      assert.deepEqual((await drainSub(sb, "t-dedup", sub, 1)).map((m) => `${m.messageId}:${m.body}`), ["d1:after window"], sub);
    }
    await sender.close();
  });

  ctx.test("MaxSizeInMegabytes 1 on the topic: 200 KB sends fail with QuotaExceeded by the 6th; receiving makes room", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("t-size");
    const payload = Buffer.alloc(200 * 1024, 0x62);
    let accepted = 0;
    let err = null;
    for (let i = 1; i <= 8 && !err; i++) {
      try {
        await sender.sendMessages({ messageId: `big-${i}`, body: payload });
        accepted++;
      } catch (e) {
        err = e instanceof AggregateError && e.errors && e.errors.length ? e.errors[e.errors.length - 1] : e;
      }
    }
    assert.ok(err, `all 8 sends of 200 KB into a 1 MB topic were accepted`);
    assert.equal(err.code, "QuotaExceeded", `refused with ${err.code} (${err.name}: ${err.message})`);
    assert.ok(accepted >= 4 && accepted <= 5, `a 1 MB topic takes 4 or 5 messages of 200 KB; it accepted ${accepted}`);
    assert.equal(storedCounts(ctx.emu, "t-size/Subscriptions/s"), `${accepted},0`, "the refused message is stored nowhere");
    const r = sb.createReceiver("t-size", "s", { receiveMode: "receiveAndDelete" });
    const got = [];
    while (got.length < accepted) {
      const b = await r.receiveMessages(accepted - got.length, { maxWaitTimeInMs: 3000 });
      if (b.length === 0) break;
      got.push(...b);
    }
    assert.equal(got.length, accepted);
    await r.close();
    await sender.sendMessages({ messageId: "fits-again", body: payload });
    assert.deepEqual((await drainSub(sb, "t-size", "s", 1)).map((m) => m.messageId), ["fits-again"]);
    await sender.close();
  });

  ctx.test("Status Disabled topic: send fails with MessagingEntityDisabled; SendDisabled: send fails, its subscription still receives", async () => {
    const sb = ctx.client();
    await expectCode(sb.createSender("t-disabled").sendMessages({ body: "x" }), "MessagingEntityDisabled");
    await expectCode(sb.createSender("t-senddis").sendMessages({ body: "x" }), "MessagingEntityDisabled");
    const r = sb.createReceiver("t-senddis", "s", PEEK_LOCK);
    assert.deepEqual((await r.receiveMessages(1, { maxWaitTimeInMs: 1500 })).map((m) => m.messageId), []);
    await r.close();
    assert.equal(storedCounts(ctx.emu, "t-senddis/Subscriptions/s"), "0,0");
    psql(ctx.emu, "UPDATE topics SET status = 'Active' WHERE name = 't-senddis'");
    await entitiesReloaded(sb);
    await sb.createSender("t-senddis").sendMessages({ messageId: "ok", body: "active now" });
    assert.deepEqual((await drainSub(sb, "t-senddis", "s", 1)).map((m) => m.messageId), ["ok"]);
  });

  // Moves the clock 11 min: last.
  ctx.test("scheduled on a topic: nothing in subscriptions until due; cancel works; rules changed and a subscription added meanwhile decide", async () => {
    const sb = ctx.client();
    const { now } = await clockNow(ctx.emu);
    const at = new Date(now.getTime() + 10 * MIN);
    const sender = sb.createSender("t-sched");
    const seqs = await sender.scheduleMessages([
      { messageId: "m1", body: 1, applicationProperties: { pick: "no" } },
      { messageId: "m2", body: 2, applicationProperties: { pick: "no" } },
      { messageId: "m3", body: 3, applicationProperties: { pick: "no" } },
    ], at);
    assert.equal(seqs.length, 3);
    await sender.sendMessages({ messageId: "m4", body: 4, scheduledEnqueueTimeUtc: at, applicationProperties: { pick: "yes" } });
    await sender.cancelScheduledMessages(seqs[2]);
    for (const sub of ["a", "b"]) assert.equal(storedCounts(ctx.emu, `t-sched/Subscriptions/${sub}`), "0,0", `${sub} before the due time`);
    const ra = sb.createReceiver("t-sched", "a", PEEK_LOCK);
    await expectNothing(ra, "t-sched/a before the due time", 1000);
    await ra.close();
    // Between scheduling and the due time: b's rule now takes pick = 'no' (not 'yes'), and c is created.
    psql(ctx.emu, `UPDATE rules SET sql_expression = 'pick = ''no''' WHERE name = 'pick' AND subscription_id =
      (SELECT s.id FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.name = 't-sched' AND s.name = 'b')`);
    psql(ctx.emu, "INSERT INTO subscriptions (topic_id, name) SELECT id, 'c' FROM topics WHERE name = 't-sched'");
    await entitiesReloaded(sb);
    await advance(ctx.emu, "PT5M");
    assert.equal(storedCounts(ctx.emu, "t-sched/Subscriptions/a"), "0,0", "a at +5 min (due at +10)");
    await advance(ctx.emu, "PT6M");
    const got = {};
    for (const [sub, ids] of [["a", ["m1", "m2", "m4"]], ["b", ["m1", "m2"]], ["c", ["m1", "m2", "m4"]]]) {
      got[sub] = await drainSub(sb, "t-sched", sub, ids.length, { timeoutMs: 8000 });
      assert.deepEqual(got[sub].map((m) => m.messageId), ids, `${sub} at +11 min`);
      for (const m of got[sub]) {
        assert.ok(m.scheduledEnqueueTimeUtc instanceof Date && m.scheduledEnqueueTimeUtc.getTime() === at.getTime(),
          `${sub}/${m.messageId}: scheduledEnqueueTimeUtc ${m.scheduledEnqueueTimeUtc && m.scheduledEnqueueTimeUtc.toISOString()} should be ${at.toISOString()}`);
      }
    }
    assert.equal(got.b[0].sequenceNumber.toString(), got.a[0].sequenceNumber.toString(), "m1's copies share a sequence number");
    assert.equal(got.c[0].sequenceNumber.toString(), got.a[0].sequenceNumber.toString(), "m1's copies share a sequence number");
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM messages m JOIN entities e ON e.id = m.entity_id WHERE e.path LIKE 't-sched%'"), "0",
      "nothing left at rest in t-sched (m3 was cancelled)");
    await sender.close();
  });
});
