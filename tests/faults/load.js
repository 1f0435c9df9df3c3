// One side of the faults script's load (tests/faults/faults.js), run as a
// child so that the parent can kill the emulator under it and read what was
// acknowledged from its output, line by line (a pipe is written synchronously
// on Linux: nothing printed is lost when the child is killed).
//
//   node load.js send     CONN QUEUE TAG   prints "ACK <id>" per acknowledged send
//   node load.js receive  CONN QUEUE       prints "RECV <id>" per message received
//                                          and "DONE <id>" per acknowledged completion
//
// Either runs until killed. Errors (the emulator is down, a lock was lost)
// are expected: the client is rebuilt and the loop goes on.
"use strict";

const { ServiceBusClient } = require("@azure/service-bus");

const [role, conn, queue, tag] = process.argv.slice(2);
const SENDERS = 4; // concurrent sends
const BODY = Buffer.alloc(1024, 7);
const RETRY = { maxRetries: 0, timeoutInMs: 5000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
process.on("uncaughtException", () => {}); // an SDK whose server vanished may throw from its timers
process.on("unhandledRejection", () => {});

async function send() {
  let sb = new ServiceBusClient(conn, { retryOptions: RETRY });
  let sender = sb.createSender(queue);
  let next = 0;
  let failures = 0;
  const worker = async () => {
    for (;;) {
      const id = `${tag}-${next++}`;
      try {
        await sender.sendMessages({ messageId: id, body: BODY });
        process.stdout.write(`ACK ${id}\n`);
        failures = 0;
      } catch {
        if (++failures % 20 === 0) {
          // rebuild the connection if the SDK's own recovery did not
          const old = sb;
          sb = new ServiceBusClient(conn, { retryOptions: RETRY });
          sender = sb.createSender(queue);
          old.close().catch(() => {});
        }
        await sleep(50);
      }
    }
  };
  for (let i = 0; i < SENDERS; i++) worker();
}

async function receive() {
  for (;;) {
    const sb = new ServiceBusClient(conn, { retryOptions: RETRY });
    try {
      const r = sb.createReceiver(queue, { receiveMode: "peekLock" });
      for (;;) {
        const batch = await r.receiveMessages(50, { maxWaitTimeInMs: 500 });
        for (const m of batch) process.stdout.write(`RECV ${m.messageId}\n`);
        for (const m of batch) {
          await r.completeMessage(m);
          process.stdout.write(`DONE ${m.messageId}\n`);
        }
      }
    } catch {
      sb.close().catch(() => {});
      await sleep(100);
    }
  }
}

(role === "send" ? send : receive)();
