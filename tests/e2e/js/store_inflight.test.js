// Large amounts of message bytes in flight at once: every send is accepted and
// every message comes back intact (the store once wedged past ~1 MB in flight,
// when libpq could not write a whole batch at once), and a message larger than
// the limit is refused at once instead of stalling the link.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");

// The emulator runs with a raised --max-message-size so that multi-megabyte
// messages reach the store.
const MAX_MESSAGE_SIZE = 6 * 1024 * 1024;

function body(size, seed) {
  const b = Buffer.alloc(size);
  crypto.createHash("sha256").update(seed).digest().copy(b);
  b.fill(seed.length & 0xff, 32);
  return b;
}

/** Sends count messages of size bytes with at most window sends unsettled at a time. */
async function sendWindowed(sender, prefix, count, size, window) {
  let next = 0;
  async function worker() {
    while (next < count) {
      const i = next++;
      await sender.sendMessages({ messageId: `${prefix}-${i}`, body: body(size, `${prefix}-${i}`) });
    }
  }
  await Promise.all(Array.from({ length: window }, worker));
}

async function drainAndCheck(sb, queue, prefix, count, size) {
  const receiver = sb.createReceiver(queue, PEEK_LOCK);
  const seen = new Set();
  const deadline = Date.now() + 60000;
  while (seen.size < count && Date.now() < deadline) {
    const batch = await receiver.receiveMessages(Math.min(100, count - seen.size), { maxWaitTimeInMs: 3000 });
    for (const m of batch) {
      assert.ok(m.messageId.startsWith(`${prefix}-`), `unexpected message ${m.messageId}`);
      assert.equal(m.body.length, size, `${m.messageId} came back with ${m.body.length} bytes`);
      assert.ok(m.body.equals(body(size, m.messageId)), `${m.messageId} came back altered`);
      seen.add(m.messageId);
    }
    await Promise.all(batch.map((m) => receiver.completeMessage(m)));
  }
  await receiver.close();
  assert.equal(seen.size, count, `received ${seen.size} of ${count} distinct messages`);
}

emulatorSuite(
  "js store with megabytes in flight",
  { queues: ["big", "many", "huge", "credit"], args: ["--max-message-size", String(MAX_MESSAGE_SIZE)] },
  (ctx) => {
    for (const [count, size, window] of [
      [40, 100 * 1024, 10],
      [40, 100 * 1024, 20],
      [80, 50 * 1024, 40],
      [2000, 10 * 1024, 1000],
    ]) {
      ctx.test(`${count} x ${size / 1024} KB with ${window} sends in flight are all accepted and received`, async () => {
        const sb = ctx.client();
        const queue = size >= 50 * 1024 ? "big" : "many";
        const prefix = `w${window}s${size}`;
        const sender = sb.createSender(queue);
        await sendWindowed(sender, prefix, count, size, window);
        await sender.close();
        await drainAndCheck(sb, queue, prefix, count, size);
      }, 90000);
    }

    // What a receiver's credit asks for is claimed only as fast as the socket
    // takes it (AMQP_OUTPUT_AHEAD_MAX): with credit for 600 x 64 KiB (39 MB)
    // the emulator once held all of it in Proton's output buffer and its
    // delivery copies at once (peak RSS +180 MB at credit 1000), and moved
    // the rest of that buffer on every 64 KiB written (receives ran 7 times
    // slower than with credit 10).
    ctx.test("a receiver with credit for 600 x 64 KiB does not make the emulator hold them all", async () => {
      const sb = ctx.client();
      const sender = sb.createSender("credit");
      const count = 600, size = 64 * 1024;
      await sendWindowed(sender, "credit", count, size, 20);
      await sender.close();
      const pid = ctx.emu.proc.pid;
      const status = () => fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const kb = (field) => parseInt(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status())[1], 10);
      fs.writeFileSync(`/proc/${pid}/clear_refs`, "5"); // VmHWM starts again from VmRSS
      const before = kb("VmRSS");
      const receiver = sb.createReceiver("credit", { receiveMode: "receiveAndDelete" });
      const seen = new Set();
      const deadline = Date.now() + 60000;
      while (seen.size < count && Date.now() < deadline) {
        // one call asks for everything left: that much credit at once
        for (const m of await receiver.receiveMessages(count - seen.size, { maxWaitTimeInMs: 5000 })) {
          assert.equal(m.body.length, size);
          seen.add(m.messageId);
        }
      }
      await receiver.close();
      assert.equal(seen.size, count, `received ${seen.size} of ${count}`);
      const grew = kb("VmHWM") - before;
      console.log(`  emulator peak RSS grew ${grew} kB while ${count} x 64 KiB were received with credit ${count}`);
      assert.ok(grew < (count * size) / 1024 / 2, `peak RSS grew by ${grew} kB: the emulator held what the receiver's credit asked for`);
    }, 90000);

    ctx.test("a 5 MB message under a raised --max-message-size is stored and received", async () => {
      const sb = ctx.client();
      const sender = sb.createSender("huge");
      await sender.sendMessages({ messageId: "huge-0", body: body(5 * 1024 * 1024, "huge-0") });
      await sender.close();
      await drainAndCheck(sb, "huge", "huge", 1, 5 * 1024 * 1024);
    }, 60000);

    ctx.test("a message over --max-message-size is refused at once, naming the limit", async () => {
      const sb = ctx.client();
      const sender = sb.createSender("huge");
      const started = Date.now();
      let err = null;
      try {
        await sender.sendMessages({ messageId: "too-big", body: body(MAX_MESSAGE_SIZE + 1024, "too-big") });
      } catch (e) {
        err = e;
      }
      assert.ok(err, "an oversized send must fail");
      assert.equal(err.code, "MessageSizeExceeded", `${err.code}: ${err.message}`);
      assert.ok(Date.now() - started < 10000, `refused after ${Date.now() - started} ms`);
      // the queue still works
      await sender.sendMessages({ messageId: "after-big", body: "small" });
      await sender.close();
      const receiver = sb.createReceiver("huge", PEEK_LOCK);
      const [m] = await receiveExact(receiver, 1);
      assert.equal(m.messageId, "after-big");
      await receiver.completeMessage(m);
      await receiver.close();
    }, 60000);
  },
);
