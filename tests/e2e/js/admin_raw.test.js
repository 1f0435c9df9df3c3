// The management API at the HTTP level: what no SDK sends but a client may.
// Every refusal is the Service Bus error body <Error><Code/><Detail/></Error>
// naming the problem; nothing malformed, oversized or cut short brings the
// emulator down (its /health answers after each, and it exits cleanly).
"use strict";

const assert = require("node:assert/strict");
const net = require("node:net");
const { emulatorSuite, httpGet } = require("../harness");
const { rawRequest, sasToken, entry, errorDetail } = require("./admin_util");

const QD = (inner, attrs) => entry("QueueDescription", inner, attrs);

emulatorSuite("js admin: raw HTTP", { queues: ["plain"] }, (ctx) => {
  const healthy = async () => assert.equal((await httpGet(ctx.emu.httpPort, "/health")).status, 200);

  ctx.test("SAS: none, a bad signature, an expired token, another entity's token: 401", async () => {
    const url = (p) => `http://localhost:${ctx.emu.httpPort}/${p}`;
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain", { auth: false }), 401), /no Authorization header/);
    const bad = sasToken(url("plain"), { key: "wrong" });
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain", { auth: bad }), 401), /signature does not match/);
    const expired = sasToken(url("plain"), { expiresIn: -60 });
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain", { auth: expired }), 401), /expired/);
    const other = sasToken(url("other"));
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain", { auth: other }), 401), /does not cover '\/plain'/);
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain", { auth: "Bearer abc" }), 401), /not a SharedAccessSignature/);
    // the namespace root covers everything (Python signs it), a .NET-style URL without query too
    assert.equal((await rawRequest(ctx.emu, "plain", { auth: sasToken(url("")) })).status, 200);
    assert.equal((await rawRequest(ctx.emu, "plain?api-version=2021-05&enrich=False", { auth: sasToken(url("plain")) })).status, 200);
  });

  ctx.test("malformed and hostile bodies: 400 with the reason", async () => {
    const cases = [
      ["", /needs a body/],
      ["not xml", /not a valid Atom entry: line 1: the body is not an XML document/],
      ["<entry><content><QueueDescription>", /is not closed/],
      ["<entry><content><QueueDescription></Queue></content></entry>", /does not close <QueueDescription>/],
      ['<!DOCTYPE x [<!ENTITY a "aa">]><entry/>', /document type declarations are not accepted/],
      ["<entry><content><QueueDescription>&bogus;</QueueDescription></content></entry>", /unknown entity '&bogus;'/],
      ["<feed/>", /must be an Atom <entry>/],
      [Buffer.from([0x3c, 0x65, 0xff, 0x3e]), /not UTF-8/],
      [QD("<LockDuration>PT1M</LockDuration><Bogus>1</Bogus>"), /QueueDescription has no property Bogus/],
      [QD("<MaxDeliveryCount>1</MaxDeliveryCount><MaxDeliveryCount>2</MaxDeliveryCount>"), /MaxDeliveryCount is given twice/],
      [QD("<MaxDeliveryCount>many</MaxDeliveryCount>"), /MaxDeliveryCount "many" is not an integer/],
      [QD("<RequiresSession>yes</RequiresSession>"), /RequiresSession must be true or false/],
      [QD("<LockDuration><x/></LockDuration>"), /LockDuration must hold a value, not elements/],
      [QD("<EnableExpress>true</EnableExpress>"), /EnableExpress must be false: the emulator has no express entities/],
      [QD("<AuthorizationRules><AuthorizationRule/></AuthorizationRules>"), /AuthorizationRules must be empty/],
      [QD("<MaxMessageSizeInKilobytes>1024</MaxMessageSizeInKilobytes>"), /not the emulator's message size limit, 256 KB/],
      [QD("<ForwardTo>sb://host</ForwardTo>"), /ForwardTo "sb:\/\/host" names no entity/],
      [entry("TopicDescription", "<LockDuration>PT1M</LockDuration>"), /TopicDescription has no property LockDuration/],
      [entry("SubscriptionDescription", ""), /takes a <QueueDescription> or a <TopicDescription>, not a <SubscriptionDescription>/],
    ];
    for (const [body, why] of cases) {
      const res = await rawRequest(ctx.emu, "raw-bad", { method: "PUT", body });
      assert.match(errorDetail(res, 400), why, `body: ${body}`);
    }
    // the read-only figures an SDK sends back on update are taken, and a matching size too
    const ok = await rawRequest(ctx.emu, "raw-ok", { method: "PUT", body: QD(
      "<LockDuration>PT10S</LockDuration><SizeInBytes>5</SizeInBytes><MessageCount>1</MessageCount>" +
      "<CountDetails xmlns:d2p1=\"http://schemas.microsoft.com/netservices/2011/06/servicebus\"><d2p1:ActiveMessageCount>1</d2p1:ActiveMessageCount></CountDetails>" +
      "<AuthorizationRules/><EnableExpress>false</EnableExpress><MaxMessageSizeInKilobytes>256</MaxMessageSizeInKilobytes>" +
      "<EntityAvailabilityStatus>Available</EntityAvailabilityStatus><CreatedAt>2020-01-01T00:00:00Z</CreatedAt>") });
    assert.equal(ok.status, 201, ok.body);
    assert.match(ok.headers["content-type"], /^application\/atom\+xml;type=entry/);
    assert.match(ok.body, /<LockDuration>PT10S<\/LockDuration>/);
    assert.match(ok.body, /<CountDetails xmlns:d2p1="http:\/\/schemas.microsoft.com\/netservices\/2011\/06\/servicebus"><d2p1:ActiveMessageCount>0<\/d2p1:ActiveMessageCount>/);
    assert.equal((await rawRequest(ctx.emu, "raw-bad")).status, 404, "nothing was made by a refused PUT");
    await healthy();
  });

  ctx.test("rules: bad types and shapes are named", async () => {
    assert.equal((await rawRequest(ctx.emu, "rt", { method: "PUT", body: entry("TopicDescription", "") })).status, 201);
    assert.equal((await rawRequest(ctx.emu, "rt/Subscriptions/s", { method: "PUT", body: entry("SubscriptionDescription", "") })).status, 201);
    const rd = (inner) => entry("RuleDescription", inner);
    const kv = (key, type, value) => `<KeyValueOfstringanyType><Key>${key}</Key><Value i:type="d6p1:${type}" xmlns:d6p1="http://www.w3.org/2001/XMLSchema">${value}</Value></KeyValueOfstringanyType>`;
    const cases = [
      [rd(`<Filter i:type="CorrelationFilter"><Properties>${kv("n", "int", "abc")}</Properties></Filter>`), /the value of 'n' is not an int: "abc"/],
      [rd(`<Filter i:type="CorrelationFilter"><Properties>${kv("x", "base64Binary", "AA==")}</Properties></Filter>`), /'x' has the type 'base64Binary', which a rule cannot hold/],
      [rd(`<Filter i:type="SqlFilter"></Filter>`), /a SqlFilter needs its SqlExpression/],
      [rd(`<Filter i:type="Nonsense"/>`), /the Filter's type 'Nonsense' is not SqlFilter, CorrelationFilter, TrueFilter or FalseFilter/],
      [rd(`<Filter i:type="SqlFilter"><SqlExpression>1=1</SqlExpression><Label>x</Label></Filter>`), /Filter has no element Label/],
      [rd(`<Filter i:type="SqlFilter"><SqlExpression>a = @p</SqlExpression></Filter>`), /parameter '@p' is not defined/],
      [rd(`<Action i:type="SqlRuleAction"/>`), /a SqlRuleAction needs its SqlExpression/],
      [rd(`<Priority>1</Priority>`), /RuleDescription has no property Priority/],
      [entry("QueueDescription", ""), /takes a <RuleDescription>, not a <QueueDescription>/],
    ];
    for (const [body, why] of cases)
      assert.match(errorDetail(await rawRequest(ctx.emu, "rt/Subscriptions/s/Rules/r", { method: "PUT", body }), 400), why, body);
    const good = rd(`<Filter i:type="SqlFilter"><SqlExpression>a = @p</SqlExpression><Parameters>${kv("@p", "long", "9000000000")}</Parameters></Filter>`);
    const res = await rawRequest(ctx.emu, "rt/Subscriptions/s/Rules/r", { method: "PUT", body: good });
    assert.equal(res.status, 201, res.body);
    assert.match(res.body, /<Value i:type="d6p1:long" xmlns:d6p1="http:\/\/www.w3.org\/2001\/XMLSchema">9000000000<\/Value>/);
    // Python's lowercase paths
    const py = await rawRequest(ctx.emu, "rt/subscriptions/s/rules/r");
    assert.equal(py.status, 200);
    assert.match(py.body, /<id>http:\/\/localhost:\d+\/rt\/Subscriptions\/s\/Rules\/r\?api-version=2021-05<\/id>/);
    assert.match(py.body, /<title type="text">r<\/title>/);
  });

  ctx.test("paths, methods, paging arguments", async () => {
    assert.match(errorDetail(await rawRequest(ctx.emu, "$Resources/Nothing"), 404), /No collection/);
    // "/" is the dashboard's page (text/html), with or without a token
    const root = await rawRequest(ctx.emu, "");
    assert.equal(root.status, 200);
    assert.match(root.headers["content-type"], /^text\/html/);
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain", { method: "POST", body: "" }), 405), /takes GET, PUT, DELETE/);
    assert.equal((await rawRequest(ctx.emu, "$Resources/Queues", { method: "DELETE" })).status, 405);
    assert.match(errorDetail(await rawRequest(ctx.emu, "$Resources/Queues?$top=abc"), 400), /\$top must be a whole number/);
    assert.match(errorDetail(await rawRequest(ctx.emu, "$Resources/Queues?%24skip=-1"), 400), /\$skip must be a whole number/);
    assert.match(errorDetail(await rawRequest(ctx.emu, "plain?enrich=maybe"), 400), /enrich must be true or false/);
    const feed = await rawRequest(ctx.emu, "$resources/queues?%24top=1000");
    assert.equal(feed.status, 200);
    assert.match(feed.headers["content-type"], /^application\/atom\+xml;type=feed/);
    assert.match(feed.body, /<link rel="self" href="http:\/\/localhost:\d+\/\$Resources\/Queues\?\$skip=0&amp;\$top=100&amp;api-version=2021-05"\/>/);
    const one = await rawRequest(ctx.emu, "$Resources/Queues?$top=1");
    assert.match(one.body, /<link rel="next" href="[^"]*\$skip=1&amp;\$top=1&amp;api-version=2021-05"\/>/);
    const last = await rawRequest(ctx.emu, "$Resources/Queues?$skip=50");
    assert.doesNotMatch(last.body, /rel="next"/);
    assert.doesNotMatch(last.body, /<entry/);
  });

  ctx.test("bodies too large: 413; chunked bodies: 400; clients that vanish", async () => {
    const big = QD(`<UserMetadata>${"x".repeat(300 * 1024)}</UserMetadata>`);
    assert.match(errorDetail(await rawRequest(ctx.emu, "huge", { method: "PUT", body: big }), 413), /larger than 262144 bytes/);
    // declared far beyond what is read: answered at once, the connection closed
    const res = await new Promise((resolve, reject) => {
      const s = net.connect(ctx.emu.httpPort, "127.0.0.1", () => {
        s.write(`PUT /huge HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000000\r\nAuthorization: ${sasToken(`http://localhost:${ctx.emu.httpPort}/huge`)}\r\n\r\n<entry>`);
      });
      let text = "";
      s.on("data", (d) => (text += d));
      s.on("close", () => resolve(text));
      s.on("error", reject);
      s.setTimeout(10000, () => s.destroy(new Error("no answer")));
    });
    assert.match(res, /^HTTP\/1.1 413/);
    assert.match(res, /<Code>413<\/Code>/);
    const chunked = await rawRequest(ctx.emu, "chunky", { method: "PUT", body: QD(""), headers: { "transfer-encoding": "chunked" } });
    assert.match(errorDetail(chunked, 400), /chunked are not taken; send a Content-Length/);
    // clients that close before the answer, mid-body or mid-request
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => {
        const s = net.connect(ctx.emu.httpPort, "127.0.0.1", () => {
          const auth = sasToken(`http://localhost:${ctx.emu.httpPort}/`);
          if (i % 2) s.write(`GET /$Resources/Queues HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\n\r\n`);
          else s.write(`PUT /vanish${i} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 500\r\nAuthorization: ${auth}\r\n\r\n<entry>`);
          s.destroy();
          resolve();
        });
        s.on("error", resolve);
      });
    }
    await healthy();
    assert.equal((await rawRequest(ctx.emu, "plain")).status, 200);
  });
});
