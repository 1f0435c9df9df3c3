// Receivers of one queue on many connections take turns to claim
// (amqp10/link_claim_turn.c): every message reaches exactly one receiver, and
// the claims do not walk what the others hold. Before the turns, eight
// receivers' claims started from the same place in messages_ready and each
// read the entries of the messages the others had just locked: about one
// index entry read per receiver per message. The count comes from
// PostgreSQL's own statistics of the index, not from a clock.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite, sleep } = require("../harness");
const { PEEK_LOCK } = require("./util");
const { settledStat } = require("./qs_util");

const QUEUE = "turns";
const RECEIVERS = 8;
const COUNT = 4000;
// Entries of messages_ready a claimed message may cost: its own, and a few
// read again by a walk after a rewind. Measured here: 1.00 with the turns,
// 6.8 without them (the receivers wait first, so every send wakes all eight).
const READS_PER_MESSAGE_MAX = 1.5;

/** idx_tup_read of messages_ready, once PostgreSQL has counted the store's last claims. */
const readyReads = (emu) =>
  settledStat(emu, "SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelname = 'messages_ready'");

emulatorSuite("js claim turns", { queues: [QUEUE] }, (ctx) => {
  ctx.test(`${RECEIVERS} receivers on their own connections share ${COUNT} messages, each claimed once`, async () => {
    const before = await readyReads(ctx.emu);
    // The receivers wait first, so that every send wakes all of them at once.
    const seen = new Map(); // messageId -> receiver
    let twice = 0;
    const receivers = Array.from({ length: RECEIVERS }, () => ctx.client().createReceiver(QUEUE, PEEK_LOCK));
    const deadline = Date.now() + 60000;
    const receiving = Promise.all(receivers.map(async (r, k) => {
      while (seen.size < COUNT && Date.now() < deadline) {
        const batch = await r.receiveMessages(300, { maxWaitTimeInMs: 1000 });
        for (const m of batch) {
          if (seen.has(m.messageId)) twice++;
          seen.set(m.messageId, k);
        }
        await Promise.all(batch.map((m) => r.completeMessage(m)));
      }
    }));
    await sleep(500);
    const sender = ctx.client().createSender(QUEUE);
    for (let i = 0; i < COUNT; i += 250) {
      await sender.sendMessages(Array.from({ length: 250 }, (_, k) => ({ messageId: `m${i + k}`, body: i + k })));
    }
    await receiving;
    await Promise.all(receivers.map((r) => r.close()));
    assert.equal(twice, 0, `${twice} messages reached two receivers`);
    assert.equal(seen.size, COUNT, `received ${seen.size} of ${COUNT}`);
    const served = new Set(seen.values()).size;
    assert.ok(served > 1, `only ${served} of ${RECEIVERS} receivers got messages: the turns starved the others`);

    const reads = (await readyReads(ctx.emu)) - before;
    const perMessage = reads / COUNT;
    console.log(`# messages_ready entries read: ${reads} for ${COUNT} messages (${perMessage.toFixed(2)} each), ` +
      `${served} receivers served`);
    assert.ok(perMessage <= READS_PER_MESSAGE_MAX,
      `claims read ${perMessage.toFixed(2)} entries of messages_ready per message (at most ${READS_PER_MESSAGE_MAX}):` +
      " receivers of one queue walked what the others held");
  }, 120000);
});
