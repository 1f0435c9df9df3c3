// Each message's story: GET /$sbemu/story (README "Each message's story"), through the real JS SDK.
// What happens to a message is recorded by the statements that do it, so these tests drive the
// SDK and read back the events: sent (who, traceparent), locked (who, until, delivery count),
// abandoned, dead-lettered (reason), routed and not routed (which rule), forwarded, expired on the
// movable clock, completed; --story off records nothing; retention prunes; bad input is refused
// with a JSON error; two emulators on one database tell the same story.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite, emulatorPairSuite } = require("../harness");
const { PEEK_LOCK, receiveExact, uniqueId, rawManagementRequest } = require("./util");
const { dash } = require("./dashboard_util");
const { advance } = require("./qs_util");
const { rawRequest } = require("./admin_util");

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** GET /$sbemu/story?<query> with the management API's SAS token; {status, json, body}. */
async function story(emu, query, opts = {}) {
  const res = await rawRequest(emu, `$sbemu/story${query === undefined ? "" : `?${query}`}`, opts);
  let json = null;
  try {
    json = JSON.parse(res.body);
  } catch {}
  return { status: res.status, json, body: res.body, headers: res.headers };
}

/** The story of messageId, expected 200; its events. */
async function eventsOf(emu, messageId) {
  const res = await story(emu, `messageId=${encodeURIComponent(messageId)}`);
  assert.equal(res.status, 200, `story of ${messageId}: ${res.status} ${res.body}`);
  assert.equal(res.json.messageId, messageId, res.body);
  return res.json.events;
}

/** Polls the story of messageId until pred(events) holds (background work: the sweep), or fails with what it saw. */
async function eventsUntil(emu, messageId, pred, what, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  let last = null;
  while (Date.now() < deadline) {
    const res = await story(emu, `messageId=${encodeURIComponent(messageId)}`);
    if (res.status === 200 && pred(res.json.events)) return res.json.events;
    last = res.body;
    await sleep(200);
  }
  assert.fail(`${what}: not within ${timeoutMs} ms; the story said ${last}`);
}

const kinds = (events) => events.map((e) => e.kind);

emulatorSuite("js story", {
  queues: ["story-q", "story-fwd-dest", { name: "story-fwd-in", properties: { ForwardTo: "story-fwd-dest" } }, "story-ttl",
    "story-gone", { name: "story-sess", properties: { RequiresSession: true } }],
  topics: [{
    name: "story-t",
    subscriptions: [
      { name: "all" },
      { name: "red", rules: [{ Name: "red-only", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "color = 'red'" } } }] },
      { name: "blue", rules: [{ Name: "blue-only", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "color = 'blue'" } } }] },
    ],
  }],
}, (ctx) => {
  ctx.test("send (traceparent), receive, abandon, receive again, dead-letter: the story tells each, in order", async () => {
    const sb = ctx.client();
    const id = uniqueId("life");
    await sb.createSender("story-q").sendMessages({ messageId: id, body: "hello", applicationProperties: { traceparent: TRACEPARENT } });
    const receiver = sb.createReceiver("story-q", PEEK_LOCK);
    const [first] = await receiveExact(receiver, 1);
    assert.equal(first.messageId, id);
    await receiver.abandonMessage(first);
    const [second] = await receiveExact(receiver, 1);
    assert.equal(second.deliveryCount, first.deliveryCount + 1); // the SDK's count starts at 0, Service Bus's at 1
    await receiver.deadLetterMessage(second, { deadLetterReason: "NotMyJob", deadLetterErrorDescription: "nobody handles it" });
    await receiver.close();

    const events = await eventsOf(ctx.emu, id);
    assert.deepEqual(kinds(events), ["sent", "locked", "abandoned", "locked", "dead-lettered"], JSON.stringify(events));
    const [sent, lock1, abandoned, lock2, dead] = events;
    for (const e of events) {
      assert.equal(e.entity, "story-q", JSON.stringify(e));
      assert.equal(e.messageId, id);
      assert.equal(e.sequenceNumber, Number(first.sequenceNumber), JSON.stringify(e));
      assert.ok(!Number.isNaN(Date.parse(e.time)), `time ${e.time}`);
    }
    for (let i = 1; i < events.length; i++) assert.ok(Date.parse(events[i].time) >= Date.parse(events[i - 1].time), "in time order");
    assert.equal(sent.traceparent, TRACEPARENT);
    assert.ok(Number.isInteger(sent.connection) && sent.connection > 0, JSON.stringify(sent));
    assert.match(sent.link, /\S/, "the sender's link name");
    assert.equal(lock1.deliveryCount, 1);
    assert.equal(lock2.deliveryCount, 2);
    assert.equal(lock1.lockToken, first.lockToken);
    assert.equal(lock2.lockToken, second.lockToken);
    assert.equal(lock1.connection, sent.connection, "one client, one connection");
    assert.notEqual(lock1.link, sent.link, "the receiver's link, not the sender's");
    assert.equal(lock2.link, lock1.link);
    assert.ok(Date.parse(lock1.lockedUntil) > Date.parse(lock1.time) + 50000, `a lock of a minute: ${JSON.stringify(lock1)}`);
    assert.equal(abandoned.deliveryCount, 1);
    assert.equal(dead.reason, "NotMyJob");
    assert.equal(dead.description, "nobody handles it");

    // The same story through the entity and the sequence number.
    const bySeq = await story(ctx.emu, `entity=story-q&sequenceNumber=${first.sequenceNumber}`);
    assert.equal(bySeq.status, 200, bySeq.body);
    assert.deepEqual(bySeq.json.events, events);
    // ...and through the dead-letter subqueue's path, which is its entity's.
    const byDlq = await story(ctx.emu, `entity=${encodeURIComponent("story-q/$DeadLetterQueue")}&sequenceNumber=${first.sequenceNumber}`);
    assert.equal(byDlq.status, 200, byDlq.body);
    assert.deepEqual(kinds(byDlq.json.events), kinds(events));
  });

  ctx.test("an entity's latest events come newest first, paged by 'next' to the end", async () => {
    const sb = ctx.client();
    const ids = [1, 2, 3].map((i) => uniqueId(`page${i}`));
    const sender = sb.createSender("story-q");
    for (const id of ids) await sender.sendMessages({ messageId: id, body: id }); // three sends, three commits
    const receiver = sb.createReceiver("story-q", { receiveMode: "receiveAndDelete" });
    const got = await receiveExact(receiver, 3);
    assert.deepEqual(got.map((m) => m.messageId), ids);
    await receiver.close();
    // newest first: the receive (its three messages, in reverse), then the three sends
    const page1 = await story(ctx.emu, "entity=story-q&top=4");
    assert.equal(page1.status, 200, page1.body);
    assert.equal(page1.json.entity, "story-q");
    assert.deepEqual(page1.json.events.map((e) => `${e.kind} ${e.messageId}`),
      [`received-and-deleted ${ids[2]}`, `received-and-deleted ${ids[1]}`, `received-and-deleted ${ids[0]}`, `sent ${ids[2]}`]);
    assert.match(page1.json.next, /^\d+-\d+$/, page1.body);
    const page2 = await story(ctx.emu, `entity=story-q&top=2&page=${page1.json.next}`);
    assert.equal(page2.status, 200, page2.body);
    assert.deepEqual(page2.json.events.map((e) => `${e.kind} ${e.messageId}`), [`sent ${ids[1]}`, `sent ${ids[0]}`]);
    // walking on reaches the first test's events and then the end: a page without "next"
    let next = page2.json.next, pages = 0, seen = 6;
    while (next && pages++ < 20) {
      const p = await story(ctx.emu, `entity=story-q&top=3&page=${next}`);
      assert.equal(p.status, 200, p.body);
      seen += p.json.events.length;
      next = p.json.next;
    }
    assert.equal(next, undefined, "the last page has no next");
    const all = await story(ctx.emu, "entity=story-q&top=1000");
    assert.equal(all.status, 200, all.body);
    assert.equal(all.json.next, undefined, all.body);
    assert.equal(seen, all.json.events.length, "the pages hold every event of story-q, each once");
  });

  ctx.test("a topic publish: routed to the subscriptions whose rules match (naming the rule), not to the one whose filter did not", async () => {
    const sb = ctx.client();
    const id = uniqueId("topic");
    await sb.createSender("story-t").sendMessages({ messageId: id, body: "x", applicationProperties: { color: "red" } });
    const events = await eventsOf(ctx.emu, id);
    const byEntity = Object.fromEntries(events.filter((e) => e.kind !== "sent").map((e) => [e.entity, e]));
    assert.deepEqual(kinds(events), ["sent", "routed", "routed", "not-routed"], JSON.stringify(events));
    assert.equal(events[0].entity, "story-t");
    assert.equal(byEntity["story-t/Subscriptions/all"].kind, "routed");
    assert.equal(byEntity["story-t/Subscriptions/all"].rule, "$Default");
    assert.equal(byEntity["story-t/Subscriptions/red"].kind, "routed");
    assert.equal(byEntity["story-t/Subscriptions/red"].rule, "red-only");
    assert.equal(byEntity["story-t/Subscriptions/blue"].kind, "not-routed");
    assert.equal(byEntity["story-t/Subscriptions/blue"].rules, "blue-only", "the rules that did not match");
    for (const e of events.slice(1)) assert.equal(e.topic, "story-t", JSON.stringify(e));
    // a subscription's copy: its own story through the subscription's path, received there
    const receiver = sb.createReceiver("story-t", "red", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.completeMessage(m);
    await receiver.close();
    const sub = await story(ctx.emu, `entity=${encodeURIComponent("story-t/Subscriptions/red")}&sequenceNumber=${m.sequenceNumber}`);
    assert.equal(sub.status, 200, sub.body);
    assert.deepEqual(sub.json.events.filter((e) => e.entity === "story-t/Subscriptions/red").map((e) => e.kind),
      ["routed", "locked", "completed"], sub.body);
    // each subscription's latest events hold what its topic told of it (one row per publish for every copy)
    const redPage = await story(ctx.emu, `entity=${encodeURIComponent("story-t/Subscriptions/red")}&top=10`);
    assert.equal(redPage.status, 200, redPage.body);
    assert.deepEqual(redPage.json.events.filter((e) => e.messageId === id).map((e) => `${e.kind} ${e.entity}`),
      ["completed story-t/Subscriptions/red", "locked story-t/Subscriptions/red", "routed story-t/Subscriptions/red"]);
    const bluePage = await story(ctx.emu, `entity=${encodeURIComponent("story-t/Subscriptions/blue")}`);
    assert.equal(bluePage.status, 200, bluePage.body);
    assert.deepEqual(bluePage.json.events.map((e) => `${e.kind} ${e.messageId} ${e.rules}`), [`not-routed ${id} blue-only`]);
    const topicPage = await story(ctx.emu, "entity=story-t");
    assert.deepEqual(topicPage.json.events.map((e) => `${e.kind} ${e.entity}`),
      ["not-routed story-t/Subscriptions/blue", "routed story-t/Subscriptions/red", "routed story-t/Subscriptions/all",
        "sent story-t"], topicPage.body);
  });

  ctx.test("ForwardTo: sent to the entity the client named, then forwarded into the destination", async () => {
    const sb = ctx.client();
    const id = uniqueId("fwd");
    await sb.createSender("story-fwd-in").sendMessages({ messageId: id, body: "f" });
    const events = await eventsOf(ctx.emu, id);
    assert.deepEqual(events.map((e) => `${e.kind} ${e.entity}`), ["sent story-fwd-in", "forwarded story-fwd-dest"], JSON.stringify(events));
    assert.equal(events[1].from, "story-fwd-in");
    assert.ok(events[1].sequenceNumber >= 1);
  });

  ctx.test("a message that expires on the movable clock: expired", async () => {
    const sb = ctx.client();
    const id = uniqueId("ttl");
    await sb.createSender("story-ttl").sendMessages({ messageId: id, body: "t", timeToLive: 60000 });
    assert.deepEqual(kinds(await eventsOf(ctx.emu, id)), ["sent"]);
    await advance(ctx.emu, "PT2M");
    const events = await eventsUntil(ctx.emu, id, (ev) => ev.some((e) => e.kind === "expired"), "the expiry");
    assert.deepEqual(kinds(events), ["sent", "expired"], JSON.stringify(events));
    assert.equal(events[1].entity, "story-ttl");
  });

  ctx.test("defer, receive deferred, complete; schedule, cancel; receive-and-delete; a session: each told", async () => {
    const sb = ctx.client();
    const sender = sb.createSender("story-q");
    const [d, r] = [uniqueId("defer"), uniqueId("rad")];
    await sender.sendMessages([{ messageId: d, body: "d" }, { messageId: r, body: "r" }]);
    const receiver = sb.createReceiver("story-q", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    assert.equal(m.messageId, d);
    await receiver.deferMessage(m);
    const [again] = await receiver.receiveDeferredMessages([m.sequenceNumber]);
    await receiver.completeMessage(again);
    await receiver.close();
    assert.deepEqual(kinds(await eventsOf(ctx.emu, d)), ["sent", "locked", "deferred", "locked", "completed"]);
    const rad = sb.createReceiver("story-q", { receiveMode: "receiveAndDelete" });
    assert.deepEqual((await receiveExact(rad, 1)).map((x) => x.messageId), [r]);
    await rad.close();
    const rEvents = await eventsOf(ctx.emu, r);
    assert.deepEqual(kinds(rEvents), ["sent", "received-and-deleted"]);
    assert.match(rEvents[1].link, /\S/, "who received it");

    const c = uniqueId("cancel");
    const [seq] = await sender.scheduleMessages({ messageId: c, body: "c" }, new Date(Date.now() + 3600000));
    await sender.cancelScheduledMessages(seq);
    const cEvents = await eventsOf(ctx.emu, c);
    assert.deepEqual(kinds(cEvents), ["scheduled", "cancelled"]);
    assert.equal(cEvents[1].sequenceNumber, Number(seq));

    const sid = uniqueId("sess");
    await sb.createSender("story-sess").sendMessages({ messageId: sid, body: "s", sessionId: "S1" });
    const session = await sb.acceptSession("story-sess", "S1");
    const [sm] = await receiveExact(session, 1);
    await session.completeMessage(sm);
    await session.close();
    assert.deepEqual(kinds(await eventsOf(ctx.emu, sid)), ["sent", "locked", "completed"]);
  });

  ctx.test("deleted through $management (batch delete) and from the dashboard (delete, purge)", async () => {
    const sb = ctx.client();
    const { types } = require("rhea-promise");
    const ids = [1, 2, 3].map((i) => uniqueId(`gone${i}`));
    await sb.createSender("story-gone").sendMessages(ids.map((id) => ({ messageId: id, body: id })));
    const res = await rawManagementRequest(sb, "story-gone", "com.microsoft:batch-delete-messages", {
      "message-count": types.wrap_int(1),
      // (a day ahead: an earlier test moved the emulator's clock)
      "enqueued-time-utc": types.wrap_timestamp(new Date(Date.now() + 86400000)),
    });
    assert.equal(res.body["message-count"], 1);
    assert.deepEqual(kinds(await eventsOf(ctx.emu, ids[0])), ["sent", "purged"]);
    const peek = await sb.createReceiver("story-gone").peekMessages(5);
    const second = peek.find((x) => x.messageId === ids[1]);
    const del = await dash(ctx.emu, "delete", { entity: "story-gone", subqueue: "active", sequenceNumbers: [Number(second.sequenceNumber)] });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(kinds(await eventsOf(ctx.emu, ids[1])), ["sent", "deleted"]);
    const purge = await dash(ctx.emu, "purge", { entity: "story-gone", subqueue: "all" });
    assert.equal(purge.status, 200, purge.text);
    assert.deepEqual(kinds(await eventsOf(ctx.emu, ids[2])), ["sent", "purged"]);
    // a send from the dashboard tells who sent it
    const fromPage = uniqueId("page");
    const sent = await dash(ctx.emu, "send", { entity: "story-gone", body: "hi", messageId: fromPage });
    assert.equal(sent.status, 200, sent.text);
    const pe = await eventsOf(ctx.emu, fromPage);
    assert.deepEqual(kinds(pe), ["sent"]);
    assert.equal(pe[0].link, "(dashboard)");
    assert.equal(pe[0].connection, undefined);
  });

  ctx.test("bad input: a JSON error naming the problem, and the server goes on", async () => {
    const cases = [
      [undefined, 400, /name what to tell/],
      ["sequenceNumber=1", 400, /name what to tell/],
      ["entity=story-q&sequenceNumber=abc", 400, /sequenceNumber must be a whole number .* not 'abc'/],
      ["entity=story-q&sequenceNumber=-1", 400, /sequenceNumber/],
      ["entity=story-q&sequenceNumber=99999999999999999999", 400, /sequenceNumber/],
      ["entity=story-q&messageId=a&sequenceNumber=1", 400, /not both/],
      ["entity=story-q&top=0", 400, /top must be a whole number from 1 to 1000/],
      ["entity=story-q&page=oops", 400, /page must be the 'next' value/],
      ["messageId=", 400, /messageId is empty/],
      ["messageId=a&top=5", 400, /page and top apply to an entity/],
      ["entity=story-q&seqNumber=1", 400, /Unknown argument 'seqNumber'/],
      ["entity=no-such-queue", 404, /no queue, topic or subscription 'no-such-queue'/],
      ["entity=no-such-topic%2FSubscriptions%2Fx&sequenceNumber=1", 404, /no queue, topic or subscription/],
      ["messageId=never-sent", 404, /Nothing is recorded of messageId 'never-sent'/],
      ["entity=story-q&sequenceNumber=999999", 404, /Nothing is recorded of sequence number 999999 in 'story-q'/],
    ];
    for (const [query, status, pattern] of cases) {
      const res = await story(ctx.emu, query);
      assert.equal(res.status, status, `${query}: ${res.status} ${res.body}`);
      assert.match(String(res.headers["content-type"]), /application\/json/, `${query}: ${res.headers["content-type"]}`);
      assert.equal(typeof res.json?.error, "string", `${query}: ${res.body}`);
      assert.match(res.json.error, pattern, `${query}: ${res.body}`);
    }
    const post = await story(ctx.emu, "messageId=x", { method: "POST", body: "" });
    assert.equal(post.status, 405, post.body);
    assert.match(post.json.error, /GET only/);
    const anon = await story(ctx.emu, "messageId=x", { auth: false });
    assert.equal(anon.status, 401, anon.body);
    // still serving
    const ok = await story(ctx.emu, "entity=story-q&top=1");
    assert.equal(ok.status, 200, ok.body);
  });
});

emulatorSuite("js story off", { queues: ["off-q"], args: ["--story", "off"] }, (ctx) => {
  ctx.test("--story off: messages move as ever and nothing is recorded", async () => {
    const sb = ctx.client();
    const id = uniqueId("off");
    await sb.createSender("off-q").sendMessages({ messageId: id, body: "o", applicationProperties: { traceparent: TRACEPARENT } });
    const receiver = sb.createReceiver("off-q", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.abandonMessage(m);
    const [again] = await receiveExact(receiver, 1);
    await receiver.completeMessage(again);
    await receiver.close();
    const res = await story(ctx.emu, `messageId=${id}`);
    assert.equal(res.status, 404, res.body);
    assert.match(res.json.error, /--story off/);
    const page = await story(ctx.emu, "entity=off-q");
    assert.equal(page.status, 200, page.body);
    assert.deepEqual(page.json.events, []);
  });
});

emulatorSuite("js story retention", { queues: ["keep-q"], args: ["--story-retention", "30s"] }, (ctx) => {
  ctx.test("events older than --story-retention (on the emulator's clock) are pruned by the sweep", async () => {
    const sb = ctx.client();
    const old = uniqueId("old");
    await sb.createSender("keep-q").sendMessages({ messageId: old, body: "o" });
    assert.deepEqual(kinds(await eventsOf(ctx.emu, old)), ["sent"]);
    await advance(ctx.emu, "PT1M");
    const fresh = uniqueId("fresh");
    await sb.createSender("keep-q").sendMessages({ messageId: fresh, body: "f" });
    const deadline = Date.now() + 10000;
    let res;
    while (Date.now() < deadline) {
      res = await story(ctx.emu, `messageId=${old}`);
      if (res.status === 404) break;
      await sleep(200);
    }
    assert.equal(res.status, 404, `the old story should be pruned: ${res.body}`);
    assert.deepEqual(kinds(await eventsOf(ctx.emu, fresh)), ["sent"], "a story inside the window stays");
  });
});

emulatorPairSuite("js story: two emulators on one database", { one: { name: "story-pair-1", queues: ["pair-q"] }, two: { name: "story-pair-2" } }, (ctx) => {
  ctx.test("sent through one, received through the other: either tells the whole story", async () => {
    const id = uniqueId("pair");
    await ctx.c1.createSender("pair-q").sendMessages({ messageId: id, body: "p" });
    const receiver = ctx.c2.createReceiver("pair-q", PEEK_LOCK);
    const [m] = await receiveExact(receiver, 1);
    await receiver.completeMessage(m);
    await receiver.close();
    const one = await eventsOf(ctx.one, id);
    const two = await eventsOf(ctx.two, id);
    assert.deepEqual(kinds(one), ["sent", "locked", "completed"], JSON.stringify(one));
    assert.deepEqual(two, one);
  });
});

// Namespaces: the story is the database's, each namespace sees its own entities' events.
function nsConfig() {
  const { makeConfig } = require("../harness");
  const base = makeConfig(["orders"]);
  base.UserConfig.Namespaces.push({ Name: "story-ns", Queues: [{ ...base.UserConfig.Namespaces[0].Queues[0] }] });
  return base;
}

emulatorSuite("js story in namespaces", { config: nsConfig() }, (ctx) => {
  ctx.test("one MessageId sent in two namespaces: each namespace's story tells its own", async () => {
    const { SAS_KEY } = require("../harness");
    const { sasToken } = require("./admin_util");
    const connStr = (keyName) =>
      `Endpoint=sb://localhost:${ctx.emu.amqpPort};SharedAccessKeyName=${keyName};SharedAccessKey=${SAS_KEY};UseDevelopmentEmulator=true;`;
    const id = uniqueId("twice");
    await ctx.client().createSender("orders").sendMessages({ messageId: id, body: "default" });
    const other = ctx.client(connStr("story-ns"));
    await other.createSender("orders").sendMessages({ messageId: id, body: "story-ns" });
    const inNs = other.createReceiver("orders", { receiveMode: "receiveAndDelete" });
    assert.deepEqual((await receiveExact(inNs, 1)).map((m) => m.body), ["story-ns"]);
    await inNs.close();
    // the default namespace's token: its own send only
    assert.deepEqual(kinds(await eventsOf(ctx.emu, id)), ["sent"]);
    // the other namespace's (its key name): its send and receive
    const url = `http://localhost:${ctx.emu.httpPort}/$sbemu/story`;
    const res = await story(ctx.emu, `messageId=${id}`, { auth: sasToken(url, { keyName: "story-ns" }) });
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(kinds(res.json.events), ["sent", "received-and-deleted"]);
    const page = await story(ctx.emu, "entity=orders", { auth: sasToken(url, { keyName: "story-ns" }) });
    assert.equal(page.status, 200, page.body);
    assert.deepEqual(page.json.events.map((e) => e.kind), ["received-and-deleted", "sent"]);
  });
});
