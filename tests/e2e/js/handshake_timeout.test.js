// A connection that does not finish the AMQP handshake (protocol header, SASL,
// open) within --handshake-timeout is closed; one that did is never closed by
// it. (500 connections that each sent one byte used to stay open for good.)
"use strict";

const assert = require("node:assert/strict");
const net = require("node:net");
const { emulatorSuite, sleep } = require("../harness");
const { connect, sendOne } = require("./raw_amqp");

const TIMEOUT_S = 2;

/** Connects, writes bytes, and resolves with how many ms passed until the server closed it (or null). */
function closedAfter(port, bytes, waitMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect({ host: "127.0.0.1", port });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(null);
    }, waitMs);
    sock.on("connect", () => sock.write(bytes));
    sock.on("data", () => {});
    sock.on("error", () => {});
    sock.on("close", () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

emulatorSuite("handshake timeout", { queues: ["hs"], args: ["--handshake-timeout", String(TIMEOUT_S)] }, (ctx) => {
  for (const [what, bytes] of [
    ["one byte", Buffer.from("A")],
    ["a SASL protocol header and nothing more", Buffer.from("AMQP\x03\x01\x00\x00", "latin1")],
  ]) {
    ctx.test(`a client that sends ${what} is closed after --handshake-timeout`, async () => {
      const ms = await closedAfter(ctx.emu.amqpPort, bytes, (TIMEOUT_S + 5) * 1000);
      assert.ok(ms !== null, `still open ${TIMEOUT_S + 5} s later`);
      assert.ok(ms >= (TIMEOUT_S - 1) * 1000, `closed after ${ms} ms, before the timeout`);
    });
  }

  ctx.test("a connection that opened is not closed by it", async () => {
    // A raw client that cannot reconnect (an SDK would, hiding a drop): the socket is watched.
    const { conn, status } = await connect(ctx.emu.amqpPort);
    assert.equal(status, 202);
    let dropped = null;
    const started = Date.now();
    conn.on("disconnected", () => { if (dropped === null) dropped = Date.now() - started; });
    conn.on("connection_close", () => { if (dropped === null) dropped = Date.now() - started; });
    await sleep((TIMEOUT_S + 2) * 1000);
    assert.equal(dropped, null, `the server closed an opened connection after ${dropped} ms`);
    const r = await sendOne(conn, "hs", 10, { message_id: "after" });
    assert.equal(r.outcome, "accepted", JSON.stringify(r));
    assert.equal(dropped, null);
    conn.close();
  });
});
