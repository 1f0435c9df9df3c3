// The management API (ATOM over HTTP) with both JS admin clients: 7.9.5 over
// https on the AMQP port, 7.10.0-beta.2 over http on the HTTP port. Queues:
// create with every option and read each back, update, runtime counts from
// real traffic, list pages, exists, delete; a queue made here is usable over
// AMQP at once, and one made by Config.json or plain SQL reads back the same;
// the namespace; and the errors the SDKs turn into their codes.
"use strict";

const assert = require("node:assert/strict");
const { emulatorSuite } = require("../harness");
const { psql } = require("./qs_util");
const { PEEK_LOCK, receiveExact } = require("./util");
const { FLAVOURS, adminClient, failure, all } = require("./admin_util");

const CONFIG_QUEUE = {
  name: "from-config",
  properties: { LockDuration: "PT30S", MaxDeliveryCount: 4, DefaultMessageTimeToLive: "PT2H", RequiresSession: true },
};

emulatorSuite("js admin: queues", { queues: [CONFIG_QUEUE] }, (ctx) => {
  for (const flavour of FLAVOURS) {
    const p = flavour === "beta" ? "b-" : "s-"; // names of this flavour's entities

    ctx.test(`${flavour}: create a queue with every option and read each back`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const options = {
        lockDuration: "PT45S",
        maxSizeInMegabytes: 2048,
        requiresDuplicateDetection: true,
        requiresSession: false,
        defaultMessageTimeToLive: "PT1H",
        deadLetteringOnMessageExpiration: true,
        duplicateDetectionHistoryTimeWindow: "PT2M",
        maxDeliveryCount: 7,
        enableBatchedOperations: false,
        status: "SendDisabled",
        userMetadata: "meta & <x> é",
        autoDeleteOnIdle: "PT10M",
        enablePartitioning: false,
      };
      const created = await admin.createQueue(`${p}every`, options);
      const got = await admin.getQueue(`${p}every`);
      for (const q of [created, got]) {
        assert.equal(q.name, `${p}every`);
        for (const [k, v] of Object.entries(options)) assert.deepEqual(q[k], v, `${k}`);
        assert.equal(q.forwardTo, undefined);
        assert.equal(q.enableExpress, false);
        assert.equal(q.availabilityStatus, "Available");
      }
      // the row the store keeps is the same
      assert.equal(psql(ctx.emu, `SELECT lock_duration, max_delivery_count, status, user_metadata FROM queues WHERE name = '${p}every'`),
        "00:00:45|7|SendDisabled|meta & <x> é");
    });

    ctx.test(`${flavour}: defaults are Service Bus's`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const q = await admin.createQueue(`${p}defaults`);
      assert.equal(q.lockDuration, "PT1M");
      assert.equal(q.maxDeliveryCount, 10);
      assert.equal(q.maxSizeInMegabytes, 1024);
      assert.equal(q.defaultMessageTimeToLive, "P10675199DT2H48M5.4775807S");
      assert.equal(q.autoDeleteOnIdle, "P10675199DT2H48M5.4775807S");
      assert.equal(q.duplicateDetectionHistoryTimeWindow, "PT10M");
      assert.equal(q.enableBatchedOperations, true);
      assert.equal(q.status, "Active");
    });

    ctx.test(`${flavour}: update with If-Match, forwarding included; RequiresSession stays`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      await admin.createQueue(`${p}target`);
      const q = await admin.createQueue(`${p}upd`);
      q.maxDeliveryCount = 12;
      q.lockDuration = "PT2M";
      q.forwardTo = `${p}target`;
      q.userMetadata = "changed";
      const updated = await admin.updateQueue(q);
      assert.equal(updated.maxDeliveryCount, 12);
      const got = await admin.getQueue(`${p}upd`);
      assert.equal(got.maxDeliveryCount, 12);
      assert.equal(got.lockDuration, "PT2M");
      assert.equal(got.userMetadata, "changed");
      assert.match(got.forwardTo, new RegExp(`^sb://localhost:\\d+/${p}target$`));
      assert.equal(psql(ctx.emu, `SELECT forward_to FROM queues WHERE name = '${p}upd'`), `${p}target`);
      // what came back goes back unchanged (the absolute ForwardTo too)
      await admin.updateQueue(got);
      assert.equal(psql(ctx.emu, `SELECT forward_to FROM queues WHERE name = '${p}upd'`), `${p}target`);
      got.requiresSession = true;
      const err = await failure(admin.updateQueue(got), "RequiresSession change");
      assert.equal(err.statusCode, 400);
      assert.match(err.message, /RequiresSession cannot be changed/);
      const missing = await failure(admin.updateQueue({ ...got, name: `${p}no-such` }), "update of a missing queue");
      assert.equal(missing.statusCode, 404);
    });

    ctx.test(`${flavour}: a queue made here is usable over AMQP at once, and counts its messages`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const name = `${p}traffic`;
      await admin.createQueue(name);
      const sb = ctx.client();
      const sender = sb.createSender(name);
      await sender.sendMessages([1, 2, 3].map((i) => ({ body: `m${i}`, messageId: `m${i}` })));
      await sender.scheduleMessages({ body: "later" }, new Date(Date.now() + 3600 * 1000));
      const receiver = sb.createReceiver(name, PEEK_LOCK);
      const [m] = await receiveExact(receiver, 1);
      await receiver.deadLetterMessage(m, { deadLetterReason: "test" });
      await receiver.close();
      await sender.close();
      const rt = await admin.getQueueRuntimeProperties(name);
      assert.equal(rt.name, name);
      assert.equal(rt.activeMessageCount, 2);
      assert.equal(rt.deadLetterMessageCount, 1);
      assert.equal(rt.scheduledMessageCount, 1);
      assert.equal(rt.transferMessageCount, 0);
      assert.equal(rt.transferDeadLetterMessageCount, 0);
      assert.equal(rt.totalMessageCount, 4);
      assert.ok(rt.sizeInBytes > 0, `sizeInBytes ${rt.sizeInBytes}`);
      assert.ok(rt.createdAt instanceof Date && !isNaN(rt.createdAt), "createdAt");
      assert.ok(rt.accessedAt >= rt.createdAt, "accessedAt moves with traffic");
      const listed = (await all(admin.listQueuesRuntimeProperties())).find((x) => x.name === name);
      assert.equal(listed.activeMessageCount, 2);
      assert.equal(listed.deadLetterMessageCount, 1);
    });

    ctx.test(`${flavour}: a change made here reaches attached links at once`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const name = `${p}status`;
      const q = await admin.createQueue(name);
      const sender = ctx.client().createSender(name);
      await sender.sendMessages({ body: "before" });
      q.status = "SendDisabled";
      await admin.updateQueue(q);
      await assert.rejects(sender.sendMessages({ body: "after" }), (e) => /disabled/i.test(e.message) || e.code === "MessagingEntityDisabledError");
      await sender.close();
      await admin.deleteQueue(name);
      const err = await failure(ctx.client().createSender(name).sendMessages({ body: "gone" }), "send to a deleted queue");
      assert.equal(err.code, "MessagingEntityNotFound");
    });

    ctx.test(`${flavour}: list pages follow the next link, in name order`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const names = [3, 1, 4, 0, 2].map((i) => `${p}page-${i}`);
      for (const n of names) await admin.createQueue(n);
      const pages = [];
      for await (const page of admin.listQueues().byPage({ maxPageSize: 2 })) pages.push(page.map((q) => q.name));
      const flat = pages.flat();
      assert.ok(pages.every((pg) => pg.length <= 2), JSON.stringify(pages));
      const mine = flat.filter((n) => n.startsWith(`${p}page-`));
      assert.deepEqual(mine, [...names].sort());
      const everything = (await all(admin.listQueues())).map((q) => q.name);
      assert.deepEqual(flat, everything, "pages of 2 list what one page lists");
      assert.deepEqual(everything, [...everything].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
      // a continuation token picks up where a page ended
      const first = (await admin.listQueues().byPage({ maxPageSize: 2 }).next()).value;
      const rest = (await admin.listQueues().byPage({ continuationToken: first.continuationToken, maxPageSize: 100 }).next()).value;
      assert.deepEqual([...first.map((q) => q.name), ...rest.map((q) => q.name)], everything);
    });

    ctx.test(`${flavour}: exists, delete, and the not-found and conflict errors`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      await admin.createQueue(`${p}gone`);
      assert.equal(await admin.queueExists(`${p}gone`), true);
      assert.equal(await admin.queueExists(`${p}GONE`), true, "names are case-insensitive");
      const dup = await failure(admin.createQueue(`${p}Gone`), "create twice");
      assert.equal(dup.code, "MessageEntityAlreadyExistsError");
      assert.equal(dup.statusCode, 409);
      await admin.deleteQueue(`${p}gone`);
      assert.equal(await admin.queueExists(`${p}gone`), false);
      const missing = await failure(admin.getQueue(`${p}gone`), "get a deleted queue");
      assert.equal(missing.code, "MessageEntityNotFoundError");
      const missingRt = await failure(admin.getQueueRuntimeProperties(`${p}gone`), "runtime of a deleted queue");
      assert.equal(missingRt.code, "MessageEntityNotFoundError");
      const del = await failure(admin.deleteQueue(`${p}gone`), "delete twice");
      assert.equal(del.code, "MessageEntityNotFoundError");
      // a topic's name is taken for queues too
      await admin.createTopic(`${p}named`);
      const clash = await failure(admin.createQueue(`${p}named`), "a queue named as a topic");
      assert.equal(clash.code, "MessageEntityAlreadyExistsError");
    });

    ctx.test(`${flavour}: a bad value is refused with the property named (400)`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      for (const [opts, word] of [
        [{ lockDuration: "PT1S" }, /LockDuration "PT1S" is below the minimum PT5S/],
        [{ maxDeliveryCount: 0 }, /MaxDeliveryCount 0 is below the minimum 1/],
        [{ autoDeleteOnIdle: "PT1M" }, /AutoDeleteOnIdle/],
        [{ defaultMessageTimeToLive: "soon" }, /DefaultMessageTimeToLive "soon" is not an ISO-8601 duration/],
        [{ userMetadata: "x".repeat(1025) }, /UserMetadata is 1025 characters, above the maximum 1024/],
        [{ forwardTo: `${p}bad-fwd` }, /ForwardTo "[^"]+" cannot be the queue itself/],
      ]) {
        const name = opts.forwardTo ? `${p}bad-fwd` : `${p}bad`;
        const err = await failure(admin.createQueue(name, opts), JSON.stringify(opts));
        assert.equal(err.statusCode, 400, `${JSON.stringify(opts)}: ${err.message}`);
        assert.match(err.message, word);
      }
      const badName = await failure(admin.createQueue(`${p}bad name`), "a name with a space");
      assert.equal(badName.statusCode, 400);
      assert.equal(await admin.queueExists(`${p}bad`), false, "nothing was made");
    });

    ctx.test(`${flavour}: a wrong key is 401 (UnauthorizedRequestError)`, async () => {
      const admin = adminClient(ctx.emu, flavour, { key: "not-the-key" });
      const err = await failure(admin.getQueue("from-config"), "a wrong key");
      assert.equal(err.statusCode, 401);
      assert.equal(err.code, "UnauthorizedRequestError");
      assert.match(err.message, /signature does not match/);
      // any other key name that may name a namespace is one (README "Namespaces"); this one cannot
      const other = adminClient(ctx.emu, flavour, { keyName: "Someone.Else" });
      assert.equal((await failure(other.listQueues().next(), "a key name no namespace may have")).statusCode, 401);
    });

    ctx.test(`${flavour}: Config.json and plain SQL queues read back the same`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const q = await admin.getQueue("from-config");
      assert.equal(q.lockDuration, "PT30S");
      assert.equal(q.maxDeliveryCount, 4);
      assert.equal(q.defaultMessageTimeToLive, "PT2H");
      assert.equal(q.requiresSession, true);
      psql(ctx.emu, `INSERT INTO queues (name, lock_duration, max_delivery_count, user_metadata) VALUES ('${p}from-sql', '90 seconds', 5, 'by SQL')`);
      const s = await admin.getQueue(`${p}from-sql`);
      assert.equal(s.lockDuration, "PT1M30S");
      assert.equal(s.maxDeliveryCount, 5);
      assert.equal(s.userMetadata, "by SQL");
      const rt = await admin.getQueueRuntimeProperties(`${p}from-sql`);
      assert.equal(rt.totalMessageCount, 0);
    });

    ctx.test(`${flavour}: namespace properties`, async () => {
      const admin = adminClient(ctx.emu, flavour);
      const ns = await admin.getNamespaceProperties();
      assert.equal(ns.name, "sbemulatorns");
      assert.equal(ns.messagingSku, "Standard");
      assert.ok(ns.createdAt instanceof Date && !isNaN(ns.createdAt));
      assert.ok(ns.modifiedAt >= ns.createdAt);
      assert.equal(ns.messagingUnits, undefined);
    });
  }
});
