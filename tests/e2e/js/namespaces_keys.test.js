// Namespaces made, listed and deleted over HTTP (PUT/GET/DELETE /$sbemu/namespaces/{name}), each with
// SAS keys of its own, and deleted after an idle time (README "Namespaces"), through the real JS SDK and
// admin client: a namespace with keys of its own takes only them (the emulator's key no longer), a token
// for one namespace is refused by another, and every bad input is a clear error that changes nothing.
"use strict";

const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const { emulatorSuite, SAS_KEY } = require("../harness");
const { PEEK_LOCK, receiveExact, expectCode } = require("./util");
const { adminClient, sasToken, rawRequest } = require("./admin_util");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function connStr(port, keyName, key, host = "localhost") {
  return `Endpoint=sb://${host}:${port};SharedAccessKeyName=${keyName};SharedAccessKey=${key};UseDevelopmentEmulator=true;`;
}

/** A $sbemu request; auth: a key name (signed with key) or false. Resolves {status, json, body}. */
async function api(emu, method, rest, { body, keyName = "RootManageSharedAccessKey", key = SAS_KEY, auth = true } = {}) {
  const url = `http://localhost:${emu.httpPort}/$sbemu/${rest}`;
  const opts = { method, auth: auth ? sasToken(url, { keyName, key }) : false };
  if (body !== undefined) opts.body = typeof body === "string" ? body : JSON.stringify(body);
  const r = await rawRequest(emu, `$sbemu/${rest}`, opts);
  let json = null;
  try {
    json = JSON.parse(r.body);
  } catch {}
  return { status: r.status, json, body: r.body };
}

emulatorSuite("js namespaces with keys of their own", {}, (ctx) => {
  const secret = crypto.randomBytes(32).toString("base64");

  ctx.test("PUT makes a namespace with its keys (201), again changes it (200), GET lists and reads it", async () => {
    let r = await api(ctx.emu, "PUT", "namespaces/team-x", { body: { keys: [{ name: "team-x", key: secret }, { name: "sender", key: "s3nd" }] } });
    assert.equal(r.status, 201, r.body);
    assert.equal(r.json.name, "team-x");
    assert.equal(r.json.autoDeleteOnIdle, null);
    assert.deepEqual(r.json.keys.map((k) => k.name), ["sender", "team-x"]);
    r = await api(ctx.emu, "PUT", "namespaces/team-x", { body: { keys: [{ name: "team-x", key: secret }], autoDeleteOnIdle: "PT1H" } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.autoDeleteOnIdle, "PT1H");
    assert.deepEqual(r.json.keys, [{ name: "team-x", key: secret }]);
    r = await api(ctx.emu, "GET", "namespaces/TEAM-X");
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.name, "team-x");
    r = await api(ctx.emu, "GET", "namespaces");
    assert.equal(r.status, 200, r.body);
    const names = r.json.namespaces.map((n) => n.name);
    assert.ok(names.includes("sbemulatorns") && names.includes("team-x"), JSON.stringify(names));
    assert.equal(r.json.namespaces.find((n) => n.default).name, "sbemulatorns");
  });

  ctx.test("its own key works with an unmodified connection string; the emulator's key no longer does", async () => {
    const admin = adminClient(ctx.emu, "beta", { keyName: "team-x", key: secret });
    await admin.createQueue("jobs");
    const sb = ctx.client(connStr(ctx.emu.amqpPort, "team-x", secret));
    await sb.createSender("jobs").sendMessages({ messageId: "j1", body: "job" });
    const [m] = await receiveExact(sb.createReceiver("jobs", PEEK_LOCK), 1);
    assert.equal(m.messageId, "j1");
    // the emulator's key under the namespace's key name: refused, on AMQP and on the admin API
    const emuKey = ctx.client(connStr(ctx.emu.amqpPort, "team-x", SAS_KEY));
    await expectCode(emuKey.createSender("jobs").sendMessages({ body: "x" }), "UnauthorizedAccess");
    const adminEmu = adminClient(ctx.emu, "beta", { keyName: "team-x" });
    let err;
    try {
      await adminEmu.getQueue("jobs");
    } catch (e) {
      err = e;
    }
    assert.equal(err && err.statusCode, 401, String(err));
    assert.match(err.message, /signature does not match the key of 'team-x'/);
    // by host name, a key name of its own other than its name
    await api(ctx.emu, "PUT", "namespaces/team-x", { body: { keys: [{ name: "team-x", key: secret }, { name: "sender", key: "s3nd" }] } });
    const viaHost = ctx.client(connStr(ctx.emu.amqpPort, "sender", "s3nd", "team-x.localhost"),
      { customEndpointAddress: `sb://127.0.0.1:${ctx.emu.amqpPort}` });
    await viaHost.createSender("jobs").sendMessages({ messageId: "j2", body: "by host" });
    const rootOnHost = ctx.client(connStr(ctx.emu.amqpPort, "RootManageSharedAccessKey", SAS_KEY, "team-x.localhost"),
      { customEndpointAddress: `sb://127.0.0.1:${ctx.emu.amqpPort}` });
    await expectCode(rootOnHost.createSender("jobs").sendMessages({ body: "x" }), "UnauthorizedAccess");
  });

  ctx.test("a token for one namespace is refused by another", async () => {
    await api(ctx.emu, "PUT", "namespaces/team-y", { body: { keys: [{ name: "team-y", key: "why-key" }] } });
    // team-x's key on team-y's host
    const crossed = ctx.client(connStr(ctx.emu.amqpPort, "team-x", secret, "team-y.localhost"),
      { customEndpointAddress: `sb://127.0.0.1:${ctx.emu.amqpPort}` });
    await expectCode(crossed.createSender("jobs").sendMessages({ body: "x" }), "UnauthorizedAccess");
    // team-x's token on team-y's routes
    const r = await api(ctx.emu, "POST", "namespaces/team-y/reset", { keyName: "team-x", key: secret });
    assert.equal(r.status, 401, r.body);
    assert.match(r.json.error, /the token is for namespace 'team-x'.*not 'team-y'/);
    // team-x's token lists only team-x
    const list = await api(ctx.emu, "GET", "namespaces", { keyName: "team-x", key: secret });
    assert.deepEqual(list.json.namespaces.map((n) => n.name), ["team-x"]);
  });

  ctx.test("DELETE takes a namespace with everything in it, and its keys", async () => {
    const sb = ctx.client(connStr(ctx.emu.amqpPort, "team-x", secret));
    const r = await api(ctx.emu, "DELETE", "namespaces/team-x");
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(r.json, { deleted: "team-x" });
    assert.equal((await api(ctx.emu, "GET", "namespaces/team-x")).status, 404);
    // a client with its old key: the name now makes an empty namespace that takes the emulator's key
    await expectCode(sb.createSender("jobs").sendMessages({ body: "x" }), "UnauthorizedAccess");
    const fresh = ctx.client(connStr(ctx.emu.amqpPort, "team-x", SAS_KEY));
    await expectCode(fresh.createSender("jobs").sendMessages({ body: "x" }), "MessagingEntityNotFound");
  });

  ctx.test("a namespace with an idle time is deleted once idle that long on its own clock", async () => {
    let r = await api(ctx.emu, "PUT", "namespaces/brief", { body: { autoDeleteOnIdle: "PT1M" } });
    assert.equal(r.status, 201, r.body);
    const admin = adminClient(ctx.emu, "beta", { keyName: "brief" });
    await admin.createQueue("q");
    // a minute of real time would pass: move its clock instead (its own, no other's)
    r = await rawRequest(ctx.emu, "$sbemu/namespaces/brief/clock/advance?by=PT2M", { method: "POST", auth: false });
    assert.equal(r.status, 200, r.body);
    const deadline = Date.now() + 15000;
    let status;
    while (Date.now() < deadline && (status = (await api(ctx.emu, "GET", "namespaces/brief")).status) !== 404) await sleep(250);
    assert.equal(status, 404, "deleted by the sweep");
    assert.match(ctx.emu.log(), /namespace 'brief' was idle for its AutoDeleteOnIdle and is deleted/);
    assert.equal((await api(ctx.emu, "GET", "namespaces/team-y")).status, 200, "another namespace stays");
  });

  ctx.test("every bad input is a clear error and changes nothing", async () => {
    const tooMany = Array.from({ length: 13 }, (_, i) => ({ name: `k${i}`, key: "v" }));
    const cases = [
      ["PUT", "namespaces/bad.name", {}, 400, /The namespace name 'bad\.name' holds '\.' at position 4/],
      ["PUT", "namespaces/-x", {}, 400, /must start with a letter or a digit/],
      ["PUT", "namespaces/default", {}, 400, /'default' is the default namespace, the emulator's own/],
      ["DELETE", "namespaces/sbemulatorns", {}, 400, /the default namespace.*never deleted/],
      ["DELETE", "namespaces/no-such-ns", {}, 404, /The namespace 'no-such-ns' does not exist; nothing was deleted/],
      ["GET", "namespaces/no-such-ns", {}, 404, /The namespace 'no-such-ns' does not exist/],
      ["PUT", "namespaces/ok-ns", { body: "{nope" }, 400, /The body is not JSON/],
      ["PUT", "namespaces/ok-ns", { body: [1] }, 400, /must be a JSON object/],
      ["PUT", "namespaces/ok-ns", { body: { color: 1 } }, 400, /Unknown key "color"/],
      ["PUT", "namespaces/ok-ns", { body: { keys: "k" } }, 400, /"keys" must be an array/],
      ["PUT", "namespaces/ok-ns", { body: { keys: [{ name: "a b", key: "v" }] } }, 400, /The key name 'a b' holds ' '/],
      ["PUT", "namespaces/ok-ns", { body: { keys: [{ name: "a", key: "x;y" }] } }, 400, /without spaces or ';'/],
      ["PUT", "namespaces/ok-ns", { body: { keys: [{ name: "a" }] } }, 400, /keys\[0\] must be \{"name"/],
      ["PUT", "namespaces/ok-ns", { body: { keys: [{ name: "a", key: "1" }, { name: "a", key: "2" }] } }, 400, /The key name 'a' is given twice/],
      ["PUT", "namespaces/ok-ns", { body: { keys: tooMany } }, 400, /A namespace has at most 12 keys, not 13/],
      ["PUT", "namespaces/ok-ns", { body: { autoDeleteOnIdle: "PT10S" } }, 400, /the least is 60000 \(PT1M\)/],
      ["PUT", "namespaces/ok-ns", { body: { autoDeleteOnIdle: "soon" } }, 400, /ISO-8601 duration/],
      ["POST", "namespaces/ok-ns", {}, 405, /A namespace takes GET, PUT and DELETE/],
      ["PUT", "namespaces", {}, 405, /The list of namespaces takes GET/],
      ["PUT", "namespaces/ok-ns", { auth: false }, 401, /no Authorization header/],
      ["DELETE", "namespaces/team-y", { keyName: "someone-else" }, 401, /the token is for namespace 'someone-else'/],
    ];
    for (const [method, rest, opts, status, why] of cases) {
      const r = await api(ctx.emu, method, rest, opts);
      assert.equal(r.status, status, `${method} ${rest} ${JSON.stringify(opts)}: ${r.status} ${r.body}`);
      assert.match(r.json ? r.json.error : r.body, why, `${method} ${rest}: ${r.body}`);
    }
    assert.equal((await api(ctx.emu, "GET", "namespaces/ok-ns")).status, 404, "nothing was made");
    assert.equal((await api(ctx.emu, "GET", "namespaces/team-y")).status, 200, "nothing was deleted");
  });
});
