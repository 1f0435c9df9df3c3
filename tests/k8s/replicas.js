// The JS SDK against two emulator replicas of one release (tests/k8s/test_replicas.sh).
//   node replicas.js PHASE IP_A IP_B
// PHASE "traffic": a send on one is received on the other; competing consumers
//   on both never get one message twice and together get all; a queue made
//   over the management API on one serves on the other at once; a receiver
//   waiting on one wakes for a send on the other.
// PHASE "before-restart": sends messages through A for "after-restart".
// PHASE "after-restart": A was stopped and started again: they are all there.
// Prints "ok: ..." or "FAIL: ..." lines and "N passed, N failed" last.
"use strict";

const path = require("node:path");
const e2e = path.join(__dirname, "..", "e2e");
const { ServiceBusClient } = require(require.resolve("@azure/service-bus", { paths: [e2e] }));
const { ServiceBusAdministrationClient } = require(require.resolve("service-bus-beta", { paths: [e2e] }));

const [phase, ipA, ipB] = process.argv.slice(2);
const KEY = "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true";
const amqp = (ip) => `Endpoint=sb://${ip}:5672;${KEY}`;
const http = (ip) => `Endpoint=sb://${ip}:5300;${KEY}`;
const RESTART_COUNT = 50;
let passed = 0;
let failed = 0;
const clients = [];

function check(cond, what) {
  if (cond) passed++;
  else failed++;
  console.log(`${cond ? "ok" : "FAIL"}: ${what}`);
}

function client(ip) {
  const c = new ServiceBusClient(amqp(ip), { retryOptions: { maxRetries: 2, timeoutInMs: 20000 } });
  clients.push(c);
  return c;
}

/** Receives and completes until n came or maxMs passed; returns the messageIds. */
async function drain(receiver, n, maxMs) {
  const ids = [];
  const until = Date.now() + maxMs;
  while (ids.length < n && Date.now() < until) {
    const got = await receiver.receiveMessages(Math.min(50, n - ids.length), { maxWaitTimeInMs: 1000 });
    for (const m of got) {
      ids.push(m.messageId);
      await receiver.completeMessage(m);
    }
  }
  return ids;
}

async function send(sb, queue, prefix, n) {
  const sender = sb.createSender(queue);
  for (let i = 0; i < n; i += 50) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 50); j++) batch.push({ messageId: `${prefix}-${j}`, body: j });
    await sender.sendMessages(batch);
  }
  await sender.close();
}

async function traffic() {
  const a = client(ipA);
  const b = client(ipB);

  await send(a, "queue.1", "across", 200);
  const across = await drain(b.createReceiver("queue.1"), 200, 30000);
  check(across.length === 200 && new Set(across).size === 200, `200 sent on A, received on B: ${across.length} (${new Set(across).size} distinct)`);

  await send(a, "queue.1", "compete", 400);
  const [onA, onB] = await Promise.all([
    drain(a.createReceiver("queue.1"), 400, 30000),
    drain(b.createReceiver("queue.1"), 400, 30000),
  ]);
  const all = onA.concat(onB);
  check(all.length === 400 && new Set(all).size === 400,
    `competing consumers on A and B: ${onA.length} + ${onB.length} received, ${new Set(all).size} distinct, none twice`);
  check(onA.length > 0 && onB.length > 0, "both replicas served the competing consumers");

  const admin = new ServiceBusAdministrationClient(http(ipA));
  await admin.createQueue("made-on-a", { lockDuration: "PT30S" });
  await send(b, "made-on-a", "made", 1);
  const made = await drain(b.createReceiver("made-on-a"), 1, 10000);
  check(made.length === 1, "a queue made over the management API on A serves on B at once");
  const props = await new ServiceBusAdministrationClient(http(ipB)).getQueue("made-on-a");
  check(props.lockDuration === "PT30S", `B's management API reads A's queue back (LockDuration ${props.lockDuration})`);

  const waiting = b.createReceiver("queue.1");
  const started = Date.now();
  const pending = waiting.receiveMessages(1, { maxWaitTimeInMs: 10000 });
  await new Promise((r) => setTimeout(r, 1000));
  const sentAt = Date.now();
  await send(a, "queue.1", "wake", 1);
  const [woke] = await pending;
  const ms = Date.now() - sentAt;
  check(woke && woke.messageId === "wake-0", `a receiver waiting on B woke for a send on A (${ms} ms after the send, ${Date.now() - started} ms waiting)`);
  if (woke) await waiting.completeMessage(woke);
}

async function main() {
  if (phase === "traffic") await traffic();
  else if (phase === "before-restart") {
    await send(client(ipA), "queue.1", "restart", RESTART_COUNT);
    check(true, `${RESTART_COUNT} sent through A before it is stopped`);
  } else if (phase === "after-restart") {
    const got = await drain(client(ipA).createReceiver("queue.1"), RESTART_COUNT, 30000);
    check(got.length === RESTART_COUNT && new Set(got).size === RESTART_COUNT,
      `after A was stopped and started again, all ${RESTART_COUNT} are there: ${got.length}`);
  } else throw new Error(`unknown phase ${phase}`);
}

main()
  .catch((e) => check(false, `${phase}: ${e.code || e.name}: ${e.message}`))
  .finally(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
