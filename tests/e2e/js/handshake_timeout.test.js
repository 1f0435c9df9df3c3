// A connection that does not finish the AMQP handshake (protocol header, SASL,
// open) within --handshake-timeout is closed; one that did is never closed by
// it. (500 connections that each sent one byte used to stay open for good.)
"use strict";

const assert = require("node:assert/strict");
const net = require("node:net");
const { emulatorSuite, sleep } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");

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

  ctx.test("an SDK connection that opened is not closed by it", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("hs");
    await sender.sendMessages({ messageId: "before", body: "before" });
    await sleep((TIMEOUT_S + 2) * 1000);
    await sender.sendMessages({ messageId: "after", body: "after" });
    const receiver = sb.createReceiver("hs", PEEK_LOCK);
    const got = await receiveExact(receiver, 2);
    assert.deepEqual(got.map((m) => m.messageId), ["before", "after"]);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
  });
});
