// A receive is activity (AutoDeleteOnIdle, AccessedAt), and the emulator
// stamps it on the entity's runtime row at most once a second
// (entities/ent_activity.h). Stamped per receive, that one row took an update
// per session for sessions of one message: as many as the messages. Counted
// by PostgreSQL's own statistics of the row's table, not by a clock; and the
// stamp still moves AccessedAt when the emulator's clock has moved on.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { advance, clockNow, psql, settledStat } = require("./qs_util");

const QUEUE = "stamps";
const SESSIONS = 60;
// Updates of entity_runtime per session of one message, received and deleted:
// the claim's own (the entity's size), and the stamp at most once a second.
// Measured here: 1.02 with the stamp once a second, 2.00 with a stamp per receive.
const UPDATES_PER_SESSION_MAX = 1.4;

const runtimeUpdates = (emu) =>
  settledStat(emu, "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'entity_runtime'");

const accessedMs = (emu) => Number(psql(emu, "SELECT sbemu_ms(r.accessed_at) FROM entity_runtime r" +
  ` JOIN entities e ON e.id = r.entity_id WHERE e.path = '${QUEUE}'`));

emulatorSuite("js activity stamps", { queues: [{ name: QUEUE, properties: { RequiresSession: true } }] }, (ctx) => {
  ctx.test(`${SESSIONS} sessions of one message: the entity's row is not updated twice per receive`, async () => {
    const sb = ctx.client();
    const sender = sb.createSender(QUEUE);
    await sender.sendMessages(Array.from({ length: SESSIONS }, (_, i) => ({ sessionId: `s${i}`, body: i })));
    const before = await runtimeUpdates(ctx.emu);
    let got = 0;
    for (let i = 0; i < SESSIONS; i++) {
      const r = await sb.acceptNextSession(QUEUE, { receiveMode: "receiveAndDelete" });
      got += (await r.receiveMessages(1, { maxWaitTimeInMs: 5000 })).length;
      await r.close();
    }
    assert.equal(got, SESSIONS, `received ${got} of ${SESSIONS} messages`);
    const perSession = ((await runtimeUpdates(ctx.emu)) - before) / SESSIONS;
    console.log(`# entity_runtime updates per session of one message: ${perSession.toFixed(2)}`);
    assert.ok(perSession <= UPDATES_PER_SESSION_MAX,
      `${perSession.toFixed(2)} updates of entity_runtime per session (at most ${UPDATES_PER_SESSION_MAX}):` +
      " every receive stamped its activity on the entity's row");

    // Two minutes later (the emulator's clock), a receive is activity again
    // (sent before the clock moves: a send stamps too).
    await sender.sendMessages({ sessionId: "later", body: "later" });
    const stamped = accessedMs(ctx.emu);
    await advance(ctx.emu, "PT2M");
    const now = (await clockNow(ctx.emu)).now.getTime();
    const r = await sb.acceptNextSession(QUEUE, { receiveMode: "receiveAndDelete" });
    assert.equal((await r.receiveMessages(1, { maxWaitTimeInMs: 5000 })).length, 1, "the later message");
    await r.close();
    const later = accessedMs(ctx.emu);
    assert.ok(later >= now && later >= stamped + 120000,
      `AccessedAt ${new Date(later).toISOString()} after a receive at ${new Date(now).toISOString()}` +
      ` (the send stamped ${new Date(stamped).toISOString()} two minutes before)`);
  }, 120000);
});
