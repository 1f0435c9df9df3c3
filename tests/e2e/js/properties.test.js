// Message properties and bodies survive the round trip through sbemu unchanged.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");

emulatorSuite("js properties", { queues: ["props", "bodies", "big"] }, (ctx) => {
  ctx.test("system and application properties round trip", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("props");
    const when = new Date("2024-05-06T07:08:09.123Z");
    const sent = {
      body: { hello: "world", n: 42, list: [1, 2.5, "three", null, true], nested: { a: { b: "c" } } },
      messageId: "msg-props-1",
      correlationId: "corr-1",
      subject: "the-subject",
      contentType: "application/json",
      to: "someone@example",
      replyTo: "reply-queue",
      timeToLive: 30 * 60 * 1000,
      applicationProperties: {
        int: 42,
        negative: -7,
        long: 2 ** 40,
        double: 3.25,
        bool: true,
        boolFalse: false,
        str: "text with ünïcödé and \"quotes\"",
        empty: "",
        date: when,
      },
    };
    const before = Date.now();
    await sender.sendMessages(sent);
    const after = Date.now();

    const receiver = sb.createReceiver("props", { ...PEEK_LOCK, skipConvertingDate: true });
    const [m] = await receiveExact(receiver, 1);
    assert.deepEqual(m.body, sent.body);
    assert.equal(m.messageId, sent.messageId);
    assert.equal(m.correlationId, sent.correlationId);
    assert.equal(m.subject, sent.subject);
    assert.equal(m.contentType, sent.contentType);
    assert.equal(m.to, sent.to);
    assert.equal(m.replyTo, sent.replyTo);
    assert.equal(m.timeToLive, sent.timeToLive);

    const p = m.applicationProperties;
    assert.equal(p.int, 42);
    assert.equal(p.negative, -7);
    assert.equal(p.long, 2 ** 40);
    assert.equal(p.double, 3.25);
    assert.equal(p.bool, true);
    assert.equal(p.boolFalse, false);
    assert.equal(p.str, sent.applicationProperties.str);
    assert.equal(p.empty, "");
    assert.ok(p.date instanceof Date, `date property came back as ${typeof p.date}: ${p.date}`);
    assert.equal(p.date.getTime(), when.getTime());
    assert.deepEqual(Object.keys(p).sort(), Object.keys(sent.applicationProperties).sort());

    // Broker-stamped properties.
    assert.equal(m.deliveryCount, 0, "first delivery has deliveryCount 0");
    assert.ok(m.sequenceNumber !== undefined && m.sequenceNumber.toNumber() >= 1, `sequenceNumber ${m.sequenceNumber}`);
    assert.match(m.lockToken || "", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, `lockToken ${m.lockToken}`);
    assert.ok(m.enqueuedTimeUtc instanceof Date, "enqueuedTimeUtc is set");
    const enq = m.enqueuedTimeUtc.getTime();
    assert.ok(enq >= before - 2000 && enq <= after + 2000, `enqueuedTimeUtc ${m.enqueuedTimeUtc.toISOString()} not near the send`);
    assert.ok(m.lockedUntilUtc instanceof Date, "lockedUntilUtc is set");
    const lockLeft = m.lockedUntilUtc.getTime() - Date.now();
    assert.ok(lockLeft > 30000 && lockLeft <= 62000, `lockedUntilUtc should be ~60 s ahead (LockDuration PT1M), is ${lockLeft} ms`);
    assert.equal(m.expiresAtUtc.getTime(), enq + sent.timeToLive);
    await receiver.completeMessage(m);
    await receiver.close();
  });

  ctx.test("string, Buffer and JSON bodies keep their type", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("bodies");
    const binary = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7b, 0x01, 0xfe]); // not JSON
    await sender.sendMessages([
      { messageId: "string", body: "plain string body" },
      { messageId: "buffer", body: binary },
      { messageId: "json", body: { a: 1, b: [true, false], c: "x" } },
      { messageId: "number", body: 12345.5 },
      { messageId: "array", body: ["x", 1, { y: null }] },
    ]);
    const receiver = sb.createReceiver("bodies", PEEK_LOCK);
    const got = await receiveExact(receiver, 5);
    const byId = Object.fromEntries(got.map((m) => [m.messageId, m]));
    assert.equal(byId.string.body, "plain string body");
    assert.ok(Buffer.isBuffer(byId.buffer.body), `Buffer body came back as ${typeof byId.buffer.body}`);
    assert.ok(binary.equals(byId.buffer.body), `Buffer body changed: ${byId.buffer.body.toString("hex")}`);
    assert.deepEqual(byId.json.body, { a: 1, b: [true, false], c: "x" });
    assert.equal(byId.number.body, 12345.5);
    assert.deepEqual(byId.array.body, ["x", 1, { y: null }]);
    for (const m of got) await receiver.completeMessage(m);
    await receiver.close();
  });

  ctx.test("a 200 KB message round trips byte for byte", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("big");
    const payload = crypto.randomBytes(200 * 1024);
    const digest = crypto.createHash("sha256").update(payload).digest("hex");
    await sender.sendMessages({ messageId: "big-1", body: payload, applicationProperties: { sha256: digest } });
    const receiver = sb.createReceiver("big", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, "big-1");
    assert.ok(Buffer.isBuffer(m.body), `body came back as ${typeof m.body}`);
    assert.equal(m.body.length, payload.length);
    assert.equal(crypto.createHash("sha256").update(m.body).digest("hex"), digest);
    assert.equal(m.applicationProperties.sha256, digest);
    await receiver.completeMessage(m);
    await receiver.close();
  });
});
