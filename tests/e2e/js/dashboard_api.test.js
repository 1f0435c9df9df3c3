// The dashboard's JSON API (/$sbemu/api/...) without a browser: the page and
// its assets served from the binary, the SAS check, a clear JSON refusal for
// each kind of bad input, a send from the dashboard taking the SDK's path
// (TTL cap, duplicate detection, ForwardTo, a topic's rules, sessions),
// paging and purging in batches, delete, resubmit of a selection and of all
// (ForwardingFailed dead letters brought back once the target takes sends
// again), sessions and connections as the JS SDK holds them, the event
// stream, and --dashboard-read-only refusing every action with 403.
"use strict";

const assert = require("node:assert/strict");
const http = require("node:http");
const { emulatorSuite, httpGet } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { dash, refused, ok, eventually, countsOf, rootToken } = require("./dashboard_util");

const LONG = { DefaultMessageTimeToLive: "P10D" };
const queues = [
  { name: "aq", properties: LONG },
  { name: "attl", properties: { DefaultMessageTimeToLive: "PT1M" } },
  { name: "adup", properties: { ...LONG, RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT10M" } },
  { name: "asess", properties: { ...LONG, RequiresSession: true } },
  { name: "fsrc", properties: { ...LONG, ForwardTo: "fdst" } },
  { name: "fdst", properties: LONG },
  { name: "big", properties: LONG },
];
const topics = [{
  name: "at", properties: LONG,
  subscriptions: [
    { name: "all", properties: LONG },
    { name: "red", properties: LONG, rules: [{ Name: "red", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "color = 'red'" } } }] },
  ],
}];

/** GET of path on the HTTP port, raw: {status, headers, body}. */
function get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    }).on("error", reject);
  });
}

emulatorSuite("dashboard API", { queues, topics }, (ctx) => {
  const { emu } = ctx;

  ctx.test("the page and its assets need no token; the API asks for the management API's", async () => {
    const page = await get(emu.httpPort, "/");
    assert.equal(page.status, 200);
    assert.match(page.headers["content-type"], /^text\/html/);
    assert.match(page.body, /sbemu dashboard/);
    for (const [asset, type] of [["app.js", /javascript/], ["app.css", /text\/css/], ["sha256.js", /javascript/], ["icon.svg", /svg/]]) {
      const a = await get(emu.httpPort, `/$sbemu/dashboard/${asset}`);
      assert.equal(a.status, 200, asset);
      assert.match(a.headers["content-type"], type, asset);
    }
    // the AMQP port's HTTP plane shares the router: the page is there too
    const onAmqpPort = await get(emu.amqpPort, "/");
    assert.equal(onAmqpPort.status, 200);
    assert.match(onAmqpPort.body, /sbemu dashboard/);
    const missing = await get(emu.httpPort, "/$sbemu/dashboard/nope.js");
    assert.equal(missing.status, 404);
    assert.match(JSON.parse(missing.body).error, /no asset 'nope\.js'/);
    await refused(dash(emu, "entities", undefined, { auth: false }), 401, /no Authorization header/);
    await refused(dash(emu, "entities", undefined, { auth: rootToken(emu, { key: "wrong" }) }), 401, /Unauthorized/);
    const doc = await ok(dash(emu, "entities"));
    assert.equal(doc.namespace, "sbemulatorns");
    assert.equal(doc.readOnly, false);
    assert.deepEqual(doc.entities.filter((e) => e.topic === "at").map((e) => e.name), ["all", "red"]);
    // the management API's own answers are untouched: GET / with api-version is still its 404
    const mgmt = await httpGet(emu.httpPort, "/?api-version=2021-05");
    assert.notEqual(mgmt.status, 200);
  });

  ctx.test("bad input to every endpoint gets a JSON error naming the problem", async () => {
    const cases = [
      [dash(emu, "nope"), 404, /No dashboard resource \/\$sbemu\/api\/nope/],
      [dash(emu, "send", undefined), 405, /takes POST, not GET/],
      [dash(emu, "entities", {}), 405, /takes GET, not POST/],
      [dash(emu, "messages"), 400, /'entity' must name/],
      [dash(emu, "messages?entity=ghost"), 404, /No queue, topic or subscription 'ghost'/],
      [dash(emu, "messages?entity=aq&subqueue=dlq"), 400, /'subqueue' must be "active" or "deadletter", not "dlq"/],
      [dash(emu, "messages?entity=aq&top=101"), 400, /'top' must be a whole number from 1 to 100/],
      [dash(emu, "messages?entity=aq&from=x"), 400, /'from' must be a whole number/],
      [dash(emu, "sessions?entity=ghost"), 404, /'ghost'/],
      [dash(emu, "rules?entity=aq"), 400, /'aq' is a queue: rules belong to subscriptions/],
      [dash(emu, "send", "{not json"), 400, /not valid JSON: line 1, column \d+/],
      [dash(emu, "send", "[1]"), 400, /must be a JSON object/],
      [dash(emu, "send", ""), 400, /needs a JSON object as its body/],
      [dash(emu, "send", { body: "x" }), 400, /'entity' must name a queue or topic/],
      [dash(emu, "send", { entity: "aq", body: 1 }), 400, /'body' must be a string/],
      [dash(emu, "send", { entity: "aq", colour: "red" }), 400, /Unknown member 'colour'/],
      [dash(emu, "send", { entity: "aq", body: "%%%", bodyEncoding: "base64" }), 400, /not base64/],
      [dash(emu, "send", { entity: "aq", bodyEncoding: "latin1" }), 400, /'bodyEncoding' must be "utf8" or "base64"/],
      [dash(emu, "send", { entity: "aq", timeToLive: "soon" }), 400, /'timeToLive' must be an ISO-8601 duration/],
      [dash(emu, "send", { entity: "aq", timeToLive: 0 }), 400, /above 0/],
      [dash(emu, "send", { entity: "aq", scheduledEnqueueTime: "tomorrow" }), 400, /'scheduledEnqueueTime' must be an ISO 8601 time/],
      [dash(emu, "send", { entity: "aq", properties: [1] }), 400, /'properties' must be an object/],
      [dash(emu, "send", { entity: "aq", properties: { a: { b: 1 } } }), 400, /properties\.a must be a string, number, boolean or null/],
      [dash(emu, "send", { entity: "aq", properties: Object.fromEntries([...Array(65).keys()].map((i) => [`p${i}`, i])) }), 400, /holds 65 entries; at most 64/],
      [dash(emu, "send", { entity: "aq", messageId: "x".repeat(129) }), 400, /MessageId/],
      [dash(emu, "send", { entity: "at/Subscriptions/all", body: "x" }), 400, /is a subscription: send to its topic/],
      [dash(emu, "send", { entity: "asess", body: "x" }), 400, /[Ss]ession/],
      [dash(emu, "delete", { entity: "aq" }), 400, /'sequenceNumbers' must be a non-empty array/],
      [dash(emu, "delete", { entity: "aq", sequenceNumbers: [1, -2] }), 400, /'sequenceNumbers'\[1\] must be a sequence number/],
      [dash(emu, "delete", { entity: "aq", sequenceNumbers: [...Array(501).keys()].map((i) => i + 1) }), 400, /names 501 messages; at most 500/],
      [dash(emu, "delete", { entity: "aq", subqueue: 3, sequenceNumbers: [1] }), 400, /'subqueue' must be a string/],
      [dash(emu, "purge", { entity: "aq" }), 400, /'subqueue' must say what to purge/],
      [dash(emu, "purge", { entity: "aq", subqueue: "everything" }), 400, /"active" or "deadletter" or "all"/],
      [dash(emu, "resubmit", { entity: "aq" }), 400, /either 'sequenceNumbers' .* or "all": true/],
      [dash(emu, "resubmit", { entity: "aq", all: "yes" }), 400, /'all' must be true or false/],
      [dash(emu, "resubmit", { entity: "at", all: true }), 400, /'at' is a topic, which has no dead-letter subqueue/],
      [dash(emu, "resubmit", { entity: "adup", all: true }), 400, /duplicate detection/],
      [dash(emu, "status", { entity: "at", status: "ReceiveDisabled" }), 400, /not allowed for a topic \(allowed: Active, Disabled, SendDisabled\)/],
      [dash(emu, "status", { entity: "at/Subscriptions/all", status: "SendDisabled" }), 400, /not allowed for a subscription/],
      [dash(emu, "status", { entity: "aq", status: "Paused" }), 400, /"Paused" is not allowed for a queue/],
      [dash(emu, "status", { entity: "aq" }), 400, /\{"entity": <path>, "status"/],
      [dash(emu, "clock", { advanceBy: "-PT1M" }), 400, /'advanceBy' must be an ISO-8601 duration .*negative/],
      [dash(emu, "clock", {}), 400, /'advanceBy' must be an ISO-8601 duration/],
      [dash(emu, "rules/test", { message: {} }), 400, /either 'filter' .* or 'rule'/],
      [dash(emu, "rules/test", { filter: { sqlExpression: "a = 1" } }), 400, /either 'message' .* or 'pick'/],
      [dash(emu, "rules/test", { filter: { sqlExpression: "color = " }, message: {} }), 400, /filter: .*column 9/],
      [dash(emu, "rules/test", { filter: { type: "Regex" }, message: {} }), 400, /type' must be Sql, Correlation, True or False/],
      [dash(emu, "rules/test", { filter: { type: "Sql", sqlExpression: "a = @p", parameters: [1] }, message: {} }), 400, /'parameters' must be an object/],
      [dash(emu, "rules/test", { filter: { type: "Sql", sqlExpression: "a = 1" }, action: { sqlExpression: "SET" }, message: {} }), 400, /action: /],
      [dash(emu, "rules/test", { filter: { type: "True" }, message: { system: { Bogus: 1 } } }), 400, /unknown system property "Bogus"/],
      [dash(emu, "rules/test", { filter: { type: "True" }, message: { system: { EnqueuedTimeUtc: "when" } } }), 400, /EnqueuedTimeUtc must be an ISO 8601 time/],
      [dash(emu, "rules/test", { filter: { type: "True" }, message: { extra: {} } }), 400, /unknown member "extra"/],
      [dash(emu, "rules/test", { rule: { subscription: "at/Subscriptions/red", name: "blue" }, message: {} }), 404, /has no rule 'blue'/],
      [dash(emu, "rules/test", { rule: { subscription: "at/Subscriptions/none", name: "red" }, message: {} }), 404, /No subscription/],
      [dash(emu, "rules/test", { filter: { type: "True" }, pick: { entity: "aq" } }), 400, /'pick' must be/],
      [dash(emu, "rules/test", { filter: { type: "True" }, pick: { entity: "aq", sequenceNumber: 999999 } }), 404, /No message 999999 in 'aq'/],
    ];
    for (const [promise, status, re] of cases) await refused(promise, status, re);
    // a body over the API's limit: 413, in JSON, and the connection still serves
    await refused(dash(emu, "send", JSON.stringify({ entity: "aq", body: "x".repeat(300 * 1024) })), 413, /larger than 262144 bytes/);
    await ok(dash(emu, "entities"));
  });

  ctx.test("a send from the dashboard takes the SDK's path: TTL cap, duplicates, ForwardTo, a topic's rules, sessions", async () => {
    const client = ctx.client();
    // the entity's DefaultMessageTimeToLive caps the TTL asked
    await ok(dash(emu, "send", { entity: "attl", body: "t", timeToLive: "PT1H" }));
    const ttl = await ok(dash(emu, "messages?entity=attl"));
    assert.equal(ttl.messages[0].timeToLiveMs, 60000);
    // duplicate detection: the second send of one MessageId is accepted and dropped
    await ok(dash(emu, "send", { entity: "adup", body: "d", messageId: "dup-1" }));
    await ok(dash(emu, "send", { entity: "adup", body: "d", messageId: "dup-1" }));
    assert.equal((await countsOf(emu, "adup")).active, 1);
    // ForwardTo: the message lands at the chain's end
    await ok(dash(emu, "send", { entity: "fsrc", body: "f", messageId: "fwd-1" }));
    assert.equal((await countsOf(emu, "fsrc")).active, 0);
    const fdst = await ok(dash(emu, "messages?entity=fdst"));
    assert.deepEqual(fdst.messages.map((m) => m.messageId), ["fwd-1"]);
    // a topic routes by its subscriptions' rules
    await ok(dash(emu, "send", { entity: "at", body: "r", properties: { color: "red" } }));
    await ok(dash(emu, "send", { entity: "at", body: "b", properties: { color: "blue" } }));
    assert.equal((await countsOf(emu, "at/Subscriptions/all")).active, 2);
    assert.equal((await countsOf(emu, "at/Subscriptions/red")).active, 1);
    // a session-full queue takes a message with a SessionId
    await ok(dash(emu, "send", { entity: "asess", body: "s", sessionId: "s-1" }));
    // every property, as the SDK reads it
    const sent = {
      entity: "aq", body: JSON.stringify({ n: 1 }), contentType: "application/json", messageId: "full-1",
      correlationId: "c-1", subject: "subj", to: "someone", replyTo: "back", replyToSessionId: "rs",
      partitionKey: "pk", properties: { color: "red", qty: 5, price: 1.5, ok: true, none: null },
    };
    assert.equal((await ok(dash(emu, "send", sent))).messageId, "full-1");
    const receiver = client.createReceiver("aq", PEEK_LOCK);
    try {
      const [m] = await receiveExact(receiver, 1);
      assert.deepEqual(m.body, { n: 1 });
      assert.equal(m.contentType, "application/json");
      assert.equal(m.messageId, "full-1");
      assert.equal(m.correlationId, "c-1");
      assert.equal(m.subject, "subj");
      assert.equal(m.to, "someone");
      assert.equal(m.replyTo, "back");
      assert.equal(m.replyToSessionId, "rs");
      assert.equal(m.partitionKey, "pk");
      assert.equal(m.applicationProperties.color, "red");
      assert.equal(Number(m.applicationProperties.qty), 5);
      assert.equal(m.applicationProperties.price, 1.5);
      assert.equal(m.applicationProperties.ok, true);
      // the page shows the lock and who holds it
      const page = await ok(dash(emu, "messages?entity=aq"));
      const shown = page.messages.find((x) => x.messageId === "full-1");
      assert.ok(shown.lock && shown.lock.held, JSON.stringify(shown.lock));
      assert.equal(shown.lock.token, m.lockToken);
      assert.ok(shown.lock.holder && typeof shown.lock.holder.connection === "number", JSON.stringify(shown.lock));
      assert.deepEqual(shown.message.applicationProperties.map((p) => [p.name, p.type]),
        [["color", "string"], ["qty", "long"], ["price", "double"], ["ok", "boolean"], ["none", "null"]]);
      assert.equal(shown.message.body.json, true);
      assert.equal(shown.message.body.hex, Buffer.from('{"n":1}').toString("hex"));
      await receiver.completeMessage(m);
    } finally {
      await receiver.close();
    }
    // a scheduled send waits, then a receiver gets it once the clock passes it
    const at = new Date(Date.now() + 3600 * 1000).toISOString();
    await ok(dash(emu, "send", { entity: "aq", body: "later", messageId: "sched-1", scheduledEnqueueTime: at }));
    const sched = await ok(dash(emu, "messages?entity=aq"));
    const s = sched.messages.find((x) => x.messageId === "sched-1");
    assert.equal(s.state, "scheduled");
    assert.equal(new Date(s.scheduledEnqueueTime).getTime(), new Date(at).getTime());
  });

  ctx.test("sessions and connections show what the SDK holds", async () => {
    const client = ctx.client();
    const session = await client.acceptSession("asess", "s-1", PEEK_LOCK);
    try {
      const doc = await eventually("the session locked", async () => {
        const d = await ok(dash(emu, "sessions?entity=asess"));
        return d.sessions.find((x) => x.sessionId === "s-1" && x.lock && x.lock.held) && d;
      });
      const s = doc.sessions.find((x) => x.sessionId === "s-1");
      assert.equal(s.messages, 1);
      assert.ok(s.lock.holder && s.lock.holder.link, JSON.stringify(s));
      const conns = await ok(dash(emu, "connections"));
      const links = conns.connections.flatMap((c) => c.links);
      const rx = links.find((l) => l.address === "asess" && l.role === "receiver");
      assert.ok(rx, JSON.stringify(links));
      assert.equal(rx.session.id, "s-1");
      assert.ok(links.some((l) => l.role === "cbs"), "the SDK's $cbs link is listed");
    } finally {
      await session.close();
    }
  });

  ctx.test("pages follow sequence numbers; a purge deletes in batches", async () => {
    const client = ctx.client();
    const sender = client.createSender("big");
    const N = 1205;
    for (let i = 0; i < N; i += 300) {
      await sender.sendMessages([...Array(Math.min(300, N - i)).keys()].map((k) => ({ body: `b${i + k}`, messageId: `big-${i + k}` })));
    }
    await sender.close();
    const first = await ok(dash(emu, "messages?entity=big&top=100"));
    assert.equal(first.messages.length, 100);
    assert.equal(first.messages[0].messageId, "big-0");
    assert.equal(first.next, first.messages[99].sequenceNumber + 1);
    const second = await ok(dash(emu, `messages?entity=big&top=100&from=${first.next}`));
    assert.equal(second.messages[0].messageId, "big-100");
    const purged = await ok(dash(emu, "purge", { entity: "big", subqueue: "all" }));
    assert.equal(purged.deleted, N);
    assert.equal((await countsOf(emu, "big")).active, 0);
    assert.equal((await ok(dash(emu, "messages?entity=big"))).messages.length, 0);
  }, 90000);

  ctx.test("delete and resubmit: ForwardingFailed dead letters go back once the target takes sends", async () => {
    const client = ctx.client();
    await ok(dash(emu, "purge", { entity: "fdst", subqueue: "all" }));
    assert.equal((await ok(dash(emu, "status", { entity: "fdst", status: "SendDisabled" }))).status, "SendDisabled");
    const sender = client.createSender("fsrc");
    const N = 150;
    await sender.sendMessages([...Array(N).keys()].map((i) => ({ body: `f${i}`, messageId: `ff-${i}` })));
    await sender.close();
    assert.equal((await countsOf(emu, "fsrc")).deadLetter, N);
    const dl = await ok(dash(emu, "messages?entity=fsrc&subqueue=deadletter&top=3"));
    assert.equal(dl.messages[0].deadLetterReason, "ForwardingFailed");
    // resubmitting while the target still refuses: they come straight back as dead letters, not lost
    const again = await ok(dash(emu, "resubmit", { entity: "fsrc", sequenceNumbers: [dl.messages[0].sequenceNumber] }));
    assert.equal(again.resubmitted, 1);
    assert.equal((await countsOf(emu, "fsrc")).deadLetter, N);
    // one deleted, the target taken back, the rest resubmitted: one by selection, all the others
    const del = await ok(dash(emu, "delete", { entity: "fsrc", subqueue: "deadletter", sequenceNumbers: [dl.messages[1].sequenceNumber] }));
    assert.equal(del.deleted, 1);
    await ok(dash(emu, "status", { entity: "fdst", status: "Active" }));
    const one = await ok(dash(emu, "resubmit", { entity: "fsrc", sequenceNumbers: [dl.messages[2].sequenceNumber] }));
    assert.equal(one.resubmitted, 1);
    const all = await ok(dash(emu, "resubmit", { entity: "fsrc", all: true }));
    assert.equal(all.resubmitted, N - 2);
    assert.equal(all.deletedFromDeadLetter, N - 2);
    assert.deepEqual(await countsOf(emu, "fsrc"), { active: 0, deferred: 0, scheduled: 0, deadLetter: 0, transfer: 0, transferDeadLetter: 0 });
    assert.equal((await countsOf(emu, "fdst")).active, N - 1);
    // a receiver is woken as for any send
    const receiver = client.createReceiver("fdst", { receiveMode: "receiveAndDelete" });
    try {
      const got = await receiveExact(receiver, N - 1, 30000);
      assert.equal(new Set(got.map((m) => m.messageId)).size, N - 1);
    } finally {
      await receiver.close();
    }
  }, 90000);

  ctx.test("rules and the rule tester: a pasted message, a stored one, a rule in force", async () => {
    const rules = await ok(dash(emu, "rules?entity=at/Subscriptions/red"));
    assert.deepEqual(rules.rules.map((r) => [r.name, r.filter.type, r.filter.sqlExpression]), [["red", "Sql", "color = 'red'"]]);
    const pasted = await ok(dash(emu, "rules/test", {
      filter: { type: "Sql", sqlExpression: "color = @c AND qty > 3", parameters: { "@c": "red" } },
      action: { sqlExpression: "SET qty = qty + 1; SET sys.Label = 'seen'" },
      message: { system: { MessageId: "m" }, properties: { color: "red", qty: 5 } },
    }));
    assert.equal(pasted.result, "match");
    assert.deepEqual(pasted.after, { system: { MessageId: "m", Label: "seen" }, properties: { color: "red", qty: 6 } });
    assert.equal((await ok(dash(emu, "rules/test", { filter: { type: "Sql", sqlExpression: "missing = 1" }, message: {} }))).result, "unknown");
    const failing = await ok(dash(emu, "rules/test", { filter: { type: "Sql", sqlExpression: "sys.SequenceNumber > 1" }, message: {} }));
    assert.equal(failing.result, "error");
    assert.match(failing.error, /SequenceNumber/);
    const corr = await ok(dash(emu, "rules/test", { filter: { type: "Correlation", correlation: { Label: "x", Properties: { n: 1 } } }, message: { system: { Label: "x" }, properties: { n: 1 } } }));
    assert.equal(corr.result, "match");
    // a stored message, as routing reads it
    await ok(dash(emu, "send", { entity: "aq", body: "p", messageId: "pick-1", properties: { color: "red" } }));
    const page = await ok(dash(emu, "messages?entity=aq"));
    const seq = page.messages.find((m) => m.messageId === "pick-1").sequenceNumber;
    const inForce = await ok(dash(emu, "rules/test", { rule: { subscription: "at/Subscriptions/red", name: "red" }, pick: { entity: "aq", sequenceNumber: seq } }));
    assert.equal(inForce.result, "match");
    const withAction = await ok(dash(emu, "rules/test", { filter: { type: "True" }, action: { sqlExpression: "SET tag = 'x'" }, pick: { entity: "aq", sequenceNumber: seq } }));
    assert.deepEqual(withAction.after.applicationProperties.map((p) => [p.name, p.value]), [["color", "red"], ["tag", "x"]]);
  });

  ctx.test("the event stream pushes counts when messages move, and the clock", async () => {
    const events = [];
    const req = http.get({ host: "127.0.0.1", port: emu.httpPort, path: "/$sbemu/api/events", headers: { authorization: rootToken(emu) } });
    const res = await new Promise((resolve, reject) => { req.on("response", resolve); req.on("error", reject); });
    try {
      assert.equal(res.statusCode, 200);
      assert.match(res.headers["content-type"], /^text\/event-stream/);
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        buf += c;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const name = (block.match(/^event: (.*)$/m) || [])[1];
          const data = (block.match(/^data: (.*)$/m) || [])[1];
          if (name) events.push({ name, data: JSON.parse(data) });
        }
      });
      await eventually("the first events", () => ["entities", "connections", "clock"].every((n) => events.some((e) => e.name === n)), 5000);
      const aqActive = (d) => d.entities.find((e) => e.path === "aq").counts.active;
      const before = aqActive(events.filter((e) => e.name === "entities").pop().data);
      const sender = ctx.client().createSender("aq");
      await sender.sendMessages({ body: "live" });
      await sender.close();
      await eventually("the new count pushed", () => events.filter((e) => e.name === "entities").some((e) => aqActive(e.data) === before + 1), 5000);
      await ok(dash(emu, "clock", { advanceBy: "PT1M" }));
      await eventually("the clock pushed", () => events.some((e) => e.name === "clock" && e.data.offsetMs === 60000), 5000);
    } finally {
      req.destroy();
    }
  });
});

emulatorSuite("dashboard API, read-only", { queues: [{ name: "rq", properties: LONG }], args: ["--dashboard-read-only"] }, (ctx) => {
  const { emu } = ctx;

  ctx.test("--dashboard-read-only refuses every action with 403 and says why; reading works", async () => {
    const sender = ctx.client().createSender("rq");
    await sender.sendMessages({ body: "r", messageId: "r-1" });
    await sender.close();
    const actions = [
      ["send", { entity: "rq", body: "x" }],
      ["resubmit", { entity: "rq", all: true }],
      ["delete", { entity: "rq", sequenceNumbers: [1] }],
      ["purge", { entity: "rq", subqueue: "all" }],
      ["status", { entity: "rq", status: "Disabled" }],
      ["clock", { advanceBy: "PT1M" }],
    ];
    for (const [path, body] of actions) {
      const j = await refused(dash(emu, path, body), 403, new RegExp(`read-only \\(--dashboard-read-only\\): ${path} is refused`));
      assert.equal(j.code, "forbidden");
    }
    const doc = await ok(dash(emu, "entities"));
    assert.equal(doc.readOnly, true);
    assert.equal(doc.entities.find((e) => e.path === "rq").counts.active, 1); // nothing was purged or sent
    assert.equal((await ok(dash(emu, "messages?entity=rq"))).messages[0].messageId, "r-1");
    assert.equal((await ok(dash(emu, "rules/test", { filter: { type: "True" }, message: {} }))).result, "match");
    assert.equal(doc.entities.find((e) => e.path === "rq").status, "Active");
    // the refusal comes before the body is read: even bad input is a 403
    await refused(dash(emu, "send", "{not json"), 403, /read-only/);
  });
});
