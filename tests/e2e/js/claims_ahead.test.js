// A peek-lock receiver of large messages sends its next claim before the
// last one answers (amqp10/link_sender.c, AMQP_LINK_CLAIMS_MAX): the store's
// backend reads the next bodies while the emulator hands the last ones to
// Proton. What must hold, whatever the two claims do: every message reaches
// the client once, in sequence order, none counted as a second delivery;
// receivers of one queue on other connections still share it; small
// messages never go ahead. The claims that went ahead are counted in
// GET /metrics (sbemu_receive_claims_ahead_total), which says the path ran.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite, httpGet } = require("../harness");
const { PEEK_LOCK } = require("./util");

const QUEUE = "ahead";
const LARGE = 64 * 1024;
const COUNT = 240;

/** sbemu_receive_claims_ahead_total of the AMQP door. */
async function claimsAhead(emu) {
  const r = await httpGet(emu.httpPort, "/metrics");
  assert.equal(r.status, 200, `GET /metrics answered ${r.status}: ${r.body}`);
  const m = r.body.match(/^sbemu_receive_claims_ahead_total\{door="amqp"\} (\d+)$/m);
  assert.ok(m, "GET /metrics has no sbemu_receive_claims_ahead_total for the amqp door");
  return Number(m[1]);
}

async function sendAll(client, prefix, size) {
  const sender = client.createSender(QUEUE);
  const body = Buffer.alloc(size, 7);
  for (let i = 0; i < COUNT; i += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, k) => sender.sendMessages({ messageId: `${prefix}${i + k}`, body })));
  }
  await sender.close();
}

/** Receives and completes until every one of prefix's COUNT messages came; returns them per receiver. */
async function receiveAll(receivers, prefix) {
  const got = receivers.map(() => []);
  const ids = new Set();
  const deadline = Date.now() + 90000;
  await Promise.all(receivers.map(async (r, k) => {
    while (ids.size < COUNT && Date.now() < deadline) {
      const batch = await r.receiveMessages(100, { maxWaitTimeInMs: 2000 });
      for (const m of batch) {
        assert.ok(String(m.messageId).startsWith(prefix), `an unexpected message: ${m.messageId}`);
        assert.ok(!ids.has(m.messageId), `${m.messageId} reached a receiver twice`);
        ids.add(m.messageId);
        got[k].push(m);
      }
      await Promise.all(batch.map((m) => r.completeMessage(m)));
    }
  }));
  assert.equal(ids.size, COUNT, `received ${ids.size} of ${COUNT}`);
  return got;
}

async function nothingLeft(client) {
  const probe = client.createReceiver(QUEUE, PEEK_LOCK);
  const left = await probe.receiveMessages(10, { maxWaitTimeInMs: 1000 });
  await probe.close();
  assert.deepEqual(left.map((m) => m.messageId), [], "messages were left in the queue");
}

emulatorSuite("js claims ahead", { queues: [QUEUE] }, (ctx) => {
  ctx.test(`one receiver, ${COUNT} x 64 KiB: claims go ahead, each message once, in order, first delivery`, async () => {
    const client = ctx.client();
    await sendAll(client, "big-", LARGE);
    const before = await claimsAhead(ctx.emu);
    const receiver = client.createReceiver(QUEUE, PEEK_LOCK);
    const [got] = await receiveAll([receiver], "big-");
    await receiver.close();
    const ahead = (await claimsAhead(ctx.emu)) - before;
    console.log(`# ${ahead} claims went ahead for ${COUNT} messages of 64 KiB`);
    assert.ok(ahead > 0, "no claim went ahead of the one in the store for 64 KiB messages");
    for (let i = 1; i < got.length; i++) {
      assert.ok(got[i].sequenceNumber.greaterThan(got[i - 1].sequenceNumber),
        `out of order: ${got[i - 1].sequenceNumber} then ${got[i].sequenceNumber}`);
    }
    const counted = got.filter((m) => m.deliveryCount !== 0).map((m) => `${m.messageId}:${m.deliveryCount}`);
    assert.deepEqual(counted, [], "messages came as a second delivery: a claim's lock was lost or given back counted");
    assert.ok(got.every((m) => m.body.length === LARGE), "a body came back with another length");
    await nothingLeft(client);
  }, 180000);

  ctx.test("two receivers on their own connections share 64 KiB messages, each once", async () => {
    await sendAll(ctx.client(), "pair-", LARGE);
    const receivers = [ctx.client().createReceiver(QUEUE, PEEK_LOCK), ctx.client().createReceiver(QUEUE, PEEK_LOCK)];
    const got = await receiveAll(receivers, "pair-");
    await Promise.all(receivers.map((r) => r.close()));
    const counted = got.flat().filter((m) => m.deliveryCount !== 0).map((m) => m.messageId);
    assert.deepEqual(counted, [], "messages came as a second delivery");
    await nothingLeft(ctx.client());
  }, 180000);

  ctx.test("1 KiB messages never go ahead", async () => {
    const client = ctx.client();
    await sendAll(client, "small-", 1024);
    const before = await claimsAhead(ctx.emu);
    const receiver = client.createReceiver(QUEUE, PEEK_LOCK);
    await receiveAll([receiver], "small-");
    await receiver.close();
    assert.equal((await claimsAhead(ctx.emu)) - before, 0, "a claim of 1 KiB messages went ahead");
  }, 180000);
});
