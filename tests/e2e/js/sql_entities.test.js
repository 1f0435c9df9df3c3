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
    assert.equal(psql(ctx.emu, "SELECT count(*) FROM messages m JOIN queues q ON q.id = m.queue_id WHERE q.name = 'made-by-sql'"), "0");
  });
});
