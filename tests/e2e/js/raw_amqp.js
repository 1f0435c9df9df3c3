// A raw AMQP 1.0 client (rhea, what the JS SDK is built on) for tests that
// must send what the SDK never would: oversized messages, mismatched tokens.
"use strict";

const crypto = require("node:crypto");
const rhea = require("rhea");
const { SAS_KEY, SAS_KEY_NAME } = require("../harness");

/** A SharedAccessSignature for audience, signed with the emulator's key (as the SDKs sign). */
function sasToken(audience, key = SAS_KEY) {
  const expiry = Math.floor(Date.now() / 1000) + 3600;
  const enc = encodeURIComponent(audience);
  const sig = crypto.createHmac("sha256", key).update(`${enc}\n${expiry}`).digest("base64");
  return `SharedAccessSignature sr=${enc}&sig=${encodeURIComponent(sig)}&se=${expiry}&skn=${SAS_KEY_NAME}`;
}

/**
 * Opens a connection and puts a token on $cbs: signed for tokenAudience, put
 * with the request's name (both the namespace by default). Resolves with
 * {conn, status, description} once $cbs answered.
 */
function connect(port, { name = "sb://localhost/", tokenAudience = name } = {}) {
  return new Promise((resolve, reject) => {
    const container = rhea.create_container();
    const conn = container.connect({ host: "127.0.0.1", port, reconnect: false, hostname: "localhost" });
    conn.on("connection_error", (ctx) => reject(new Error(`connection error: ${ctx.connection.error}`)));
    conn.once("connection_open", () => {
      const replyTo = "cbs-reply";
      const receiver = conn.open_receiver({ source: { address: "$cbs" }, target: { address: replyTo } });
      const sender = conn.open_sender({ target: { address: "$cbs" } });
      receiver.once("message", (ctx) => {
        const props = ctx.message.application_properties;
        resolve({ conn, status: props["status-code"], description: props["status-description"] });
      });
      sender.once("sendable", () => {
        sender.send({
          message_id: "put-1",
          reply_to: replyTo,
          application_properties: { operation: "put-token", type: "servicebus.windows.net:sastoken", name },
          body: sasToken(tokenAudience),
        });
      });
    });
  });
}

/** Sends one message of size bytes on a new link; resolves with how the delivery or the link ended.
 * fields: more message properties (e.g. message_id, group_id), over the defaults. */
function sendOne(conn, address, size, fields = {}) {
  return new Promise((resolve) => {
    const sender = conn.open_sender({ target: { address } });
    const started = Date.now();
    const done = (r) => resolve({ ...r, ms: Date.now() - started });
    sender.once("sendable", () => {
      sender.send({ message_id: `m-${size}`, body: rhea.message.data_section(Buffer.alloc(size, 7)), ...fields });
    });
    sender.on("accepted", () => done({ outcome: "accepted" }));
    sender.on("rejected", (ctx) => done({ outcome: "rejected", error: ctx.delivery.remote_state.error }));
    sender.on("sender_error", (ctx) => done({ outcome: "link-error", error: ctx.sender.error }));
    sender.on("sender_close", (ctx) => done({ outcome: "link-closed", error: ctx.sender.error }));
  });
}

/**
 * Receives one message in peek-lock on a new link (rcv-settle-mode second), completes it
 * as the SDKs do (accepted, unsettled) and waits for the broker's settled answer; then sends
 * the same delivery a second disposition, settled (what no SDK lets a user do). Resolves with
 * {messageId, first: the broker's answer to the first, link} once the second is on the wire.
 */
function completeTwiceRaw(conn, address) {
  return new Promise((resolve, reject) => {
    const receiver = conn.open_receiver({ source: { address }, autoaccept: false, credit_window: 0, rcv_settle_mode: 1 });
    const timer = setTimeout(() => reject(new Error(`no message on ${address}`)), 10000);
    receiver.once("receiver_open", () => receiver.add_credit(1));
    receiver.once("message", (ctx) => {
      const d = ctx.delivery;
      const messageId = ctx.message.message_id;
      receiver.once("settled", (sctx) => {
        clearTimeout(timer);
        const st = sctx.delivery.remote_state;
        const first = st && st.constructor && st.constructor.composite_type ? st.constructor.composite_type : JSON.stringify(st);
        d.update(true, rhea.message.accepted().described()); // the second disposition, settled
        resolve({ messageId, first, link: receiver });
      });
      d.update(false, rhea.message.accepted().described());
    });
    receiver.on("receiver_error", (ctx) => reject(new Error(`link error: ${ctx.receiver.error}`)));
  });
}

module.exports = { sasToken, connect, sendOne, completeTwiceRaw };
