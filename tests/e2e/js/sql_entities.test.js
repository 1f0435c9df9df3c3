// Entities are rows: a queue INSERTed with plain SQL into the running emulator's
// embedded PostgreSQL is usable at once, without a restart.
"use strict";

const assert = require("node:assert/strict");
const path = require("node:path");
const { execFileSync } = require("node:child_process");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");

/** psql on the embedded cluster: socket in <data-dir>/pg/run, user and database sbemu. */
function psql(emu, sql) {
  return execFileSync("psql", ["-h", path.join(emu.dataDir, "pg", "run"), "-U", "sbemu", "-d", "sbemu",
    "-v", "ON_ERROR_STOP=1", "-Atc", sql], { stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
}

emulatorSuite("js entities from SQL", { queues: ["from-config"] }, (ctx) => {
  ctx.test("Config.json queues are rows in the queues table", async () => {
    assert.equal(psql(ctx.emu, "SELECT name FROM queues ORDER BY name"), "from-config");
  });

  ctx.test("INSERT INTO queues (name) makes a queue the SDK can use at once", async () => {
    const sb = ctx.client();
    await expectCode(sb.createSender("made-by-sql").sendMessages({ body: "too early" }), "MessagingEntityNotFound");
    psql(ctx.emu, "INSERT INTO queues (name) VALUES ('made-by-sql')");
    await sb.createSender("made-by-sql").sendMessages({ messageId: "sql-1", body: { via: "sql" } });
    const receiver = sb.createReceiver("made-by-sql", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "sql-1");
    assert.deepEqual(m.body, { via: "sql" });
    await receiver.completeMessage(m);
    await receiver.close();
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM messages m JOIN queues q ON q.id = m.entity_id WHERE q.name = 'made-by-sql'"), "0");
  });

  ctx.test("UPDATE queues SET status is seen by a sender already attached", async () => {
    psql(ctx.emu, "INSERT INTO queues (name) VALUES ('live-status')");
    const sb = ctx.client();
    const sender = sb.createSender("live-status");
    await sender.sendMessages({ messageId: "before", body: "before" });
    psql(ctx.emu, "UPDATE queues SET status = 'SendDisabled' WHERE name = 'live-status'");
    let refused = false;
    for (let i = 0; i < 50 && !refused; i++) {
      try {
        await sender.sendMessages({ body: `probe-${i}` });
        await new Promise((r) => setTimeout(r, 100));
      } catch (e) {
        assert.equal(e.code, "MessagingEntityDisabled", `${e.code}: ${e.message}`);
        refused = true;
      }
    }
    assert.ok(refused, "the attached sender kept sending to a SendDisabled queue");
    psql(ctx.emu, "UPDATE queues SET status = 'Active' WHERE name = 'live-status'");
    let sent = false;
    for (let i = 0; i < 50 && !sent; i++) {
      try {
        await sb.createSender("live-status").sendMessages({ messageId: "after", body: "after" });
        sent = true;
      } catch (e) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(sent, "sending works again once the queue is Active");
  });

  ctx.test("DELETE FROM queues detaches a receiver already attached", async () => {
    psql(ctx.emu, "INSERT INTO queues (name) VALUES ('live-delete')");
    const sb = ctx.client();
    const receiver = sb.createReceiver("live-delete", PEEK_LOCK);
    await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 }); // attached and parked
    psql(ctx.emu, "DELETE FROM queues WHERE name = 'live-delete'");
    await expectCode(receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 }), "MessagingEntityNotFound");
    await receiver.close();
  });
});
