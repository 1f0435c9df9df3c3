// A put-token grants what its signature covers: the token's own audience (sr).
// The request's name may narrow that, never widen it: a valid token signed for
// sb://host/other, put with name=sb://host/secured, must not allow sending to
// 'secured' (it once did: the grant followed the name).
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { connect, sendOne } = require("./raw_amqp");

emulatorSuite("raw client: $cbs grants what the token was signed for", { queues: ["secured", "other"] }, (ctx) => {
  ctx.test("a token signed for another entity is refused (401) and grants nothing", async () => {
    const { conn, status, description } = await connect(ctx.emu.amqpPort, {
      name: "sb://localhost/secured",
      tokenAudience: "sb://localhost/other",
    });
    try {
      assert.equal(status, 401, `put-token answered ${status}: ${description}`);
      assert.match(String(description), /other/, "the refusal names the token's audience");
      const r = await sendOne(conn, "secured", 100);
      assert.notEqual(r.outcome, "accepted", "a send to 'secured' was accepted without a token for it");
      assert.equal(r.error && r.error.condition, "amqp:unauthorized-access", JSON.stringify(r));
    } finally {
      conn.close();
    }
  });

  ctx.test("a token signed for the entity, or for the namespace, still works", async () => {
    for (const opts of [
      { name: "sb://localhost/secured", tokenAudience: "sb://localhost/secured" },
      { name: "sb://localhost/secured", tokenAudience: "sb://localhost/" },
      { name: "amqps://localhost:5671/secured", tokenAudience: "sb://localhost/secured" },
    ]) {
      const { conn, status, description } = await connect(ctx.emu.amqpPort, opts);
      try {
        assert.equal(status, 202, `${JSON.stringify(opts)}: ${description}`);
        const r = await sendOne(conn, "secured", 100);
        assert.equal(r.outcome, "accepted", `${JSON.stringify(opts)}: ${JSON.stringify(r)}`);
      } finally {
        conn.close();
      }
    }
  });
});
