// The dashboard in a real browser: Debian's chromium driven by playwright-core
// (pinned in package-lock.json; no browser is downloaded). One flow, each
// step waiting with a deadline for what the page shows, never reloading it:
// sign in with the key; the JS SDK sends and the count appears live; peek it
// (properties, body as JSON and hex); the SDK dead-letters it and the
// dead-letter count changes live; resubmit it from the page and see the
// counts move back; send one from the page and receive it with the SDK; try
// a filter in the rule tester; move the clock; the connections view; the
// read-only and phone layouts. A screenshot of each page is kept in a
// directory the test prints (SBEMU_DASHBOARD_SHOTS, or a new one under /tmp),
// with the time each step took.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { after, before } = require("node:test");
const { emulatorSuite } = require("../harness");
const { PEEK_LOCK, receiveExact } = require("./util");
const { dash, ok } = require("./dashboard_util");

const CHROMIUM = "/usr/bin/chromium";
// How long the page may take to show what happened (the event stream reads counts every 500 ms).
const SHOW_MS = 10000;

const LONG = { DefaultMessageTimeToLive: "P10D" };
const queues = [{ name: "orders", properties: LONG }];
const topics = [{
  name: "events", properties: LONG,
  subscriptions: [
    { name: "all", properties: LONG },
    { name: "red", properties: LONG, rules: [{ Name: "only-red", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "color = 'red'" } } }] },
  ],
}];

const shotsDir = process.env.SBEMU_DASHBOARD_SHOTS || fs.mkdtempSync("/tmp/sbemu-dashboard-shots-");
fs.mkdirSync(shotsDir, { recursive: true });
const timings = [];

/** The step's time, kept for the summary. */
async function step(name, fn) {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    timings.push([name, Date.now() - t0]);
  }
}

async function shot(page, name) {
  const file = path.join(shotsDir, `${name}.png`);
  await page.evaluate(() => { document.getElementById("toast").hidden = true; }); // a passing notice is not the page
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Waits until the element's text matches re (the page updates itself). */
async function textBecomes(page, selector, re, timeout = SHOW_MS) {
  await page.waitForFunction(([sel, src, flags]) => {
    const el = document.querySelector(sel);
    return el && new RegExp(src, flags).test(el.textContent);
  }, [selector, re.source, re.flags], { timeout });
}

const tid = (id) => `[data-testid="${id}"]`;

let chromium;
before(() => {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/install-deps.sh (apt-get install chromium)`);
  ({ chromium } = require("playwright-core"));
});

after(() => {
  process.stdout.write(`\ndashboard screenshots: ${shotsDir}\n`);
  for (const [name, ms] of timings) process.stdout.write(`  ${String(ms).padStart(6)} ms  ${name}\n`);
});

emulatorSuite("dashboard in chromium", { queues, topics }, (ctx) => {
  const { emu } = ctx;
  let browser, page, client;

  ctx.test("the flow: SDK traffic shows live, peek, dead-letter, resubmit, send from the page, rules, clock", async () => {
    // chromium refuses to run as root with its sandbox on: the test machine runs e2e as root
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      const errors = [];
      page.on("pageerror", (e) => errors.push(e.message));
      client = ctx.client();
      const base = `http://localhost:${emu.httpPort}/`;

      await step("sign in", async () => {
        await page.goto(base);
        await page.waitForSelector(tid("key"));
        await shot(page, "01-sign-in");
        await page.fill(tid("key"), "SAS_KEY_VALUE");
        await page.click(tid("sign-in"));
        await page.waitForSelector(tid("entity-orders"));
        await textBecomes(page, tid("live"), /^live$/);
      });

      await step("an SDK send appears live", async () => {
        await page.click(tid("entity-orders"));
        await textBecomes(page, tid("count-active-orders"), /^0 active$/);
        const sender = client.createSender("orders");
        await sender.sendMessages({ body: { item: "book", qty: 2 }, messageId: "order-1", subject: "new-order", contentType: "application/json", applicationProperties: { color: "red", qty: 2 } });
        await sender.close();
        await textBecomes(page, tid("count-active-orders"), /^1 active$/);
        await page.waitForSelector(tid("msg-1"));
        await shot(page, "02-messages");
      });

      await step("peek it: properties, the body as JSON and hex", async () => {
        await page.click(tid("msg-1"));
        await page.waitForSelector(tid("message-detail"));
        const props = await page.textContent(tid("system-properties"));
        assert.match(props, /order-1/);
        assert.match(props, /new-order/);
        const app = await page.textContent(tid("app-properties"));
        assert.match(app, /color\s*string\s*red/);
        await page.click(tid("body-json"));
        assert.match(await page.textContent(tid("body-view")), /"item": "book"/);
        await page.click(tid("body-hex"));
        assert.match(await page.textContent(tid("body-view")), /7b 22/); // {"
        await page.click(tid("body-text"));
        await textBecomes(page, tid("story"), /sent by connection \d+, link \S+/); // its story (GET /$sbemu/story)
        await shot(page, "03-message");
      });

      await step("the SDK dead-letters it: the counts change live", async () => {
        const receiver = client.createReceiver("orders", PEEK_LOCK);
        try {
          const [m] = await receiveExact(receiver, 1);
          await receiver.deadLetterMessage(m, { deadLetterReason: "OutOfStock", deadLetterErrorDescription: "no book left" });
        } finally {
          await receiver.close();
        }
        await textBecomes(page, tid("count-dlq-orders"), /^1 dead-letter$/);
        await textBecomes(page, tid("count-active-orders"), /^0 active$/);
        await page.click(tid("tab-deadletter"));
        await page.waitForSelector(tid("msg-1"));
        assert.match(await page.textContent(tid("messages")), /OutOfStock/);
        await page.click(tid("msg-1"));
        await textBecomes(page, tid("system-properties"), /no book left/);
        // why is it in the dead-letter queue? its story says, in order
        await textBecomes(page, tid("story"), /sent[\s\S]*locked[\s\S]*dead-lettered reason OutOfStock: no book left/);
        await shot(page, "04-dead-letters");
      });

      await step("resubmit it from the page: the counts move back", async () => {
        await page.check(tid("check-1"));
        await page.click(tid("resubmit-selected"));
        await textBecomes(page, tid("count-dlq-orders"), /^0 dead-letter$/);
        await textBecomes(page, tid("count-active-orders"), /^1 active$/);
        await page.click(tid("tab-messages"));
        await textBecomes(page, tid("messages"), /order-1/);
        const receiver = client.createReceiver("orders", { receiveMode: "receiveAndDelete" });
        try {
          const [m] = await receiveExact(receiver, 1);
          assert.equal(m.messageId, "order-1");
          assert.deepEqual(m.body, { item: "book", qty: 2 });
          assert.equal(m.deliveryCount, 0); // a fresh message
        } finally {
          await receiver.close();
        }
        await textBecomes(page, tid("count-active-orders"), /^0 active$/);
      });

      await step("send one from the page, receive it with the SDK", async () => {
        await page.click(tid("tab-send"));
        await page.fill(tid("send-body"), JSON.stringify({ from: "page" }));
        await page.fill(tid("send-message-id"), "from-page-1");
        await page.fill(tid("send-props"), JSON.stringify({ color: "blue", n: 3 }));
        await shot(page, "05-send");
        await page.click(tid("send-submit"));
        await textBecomes(page, tid("count-active-orders"), /^1 active$/);
        const receiver = client.createReceiver("orders", PEEK_LOCK);
        try {
          const [m] = await receiveExact(receiver, 1);
          assert.equal(m.messageId, "from-page-1");
          assert.deepEqual(m.body, { from: "page" });
          assert.equal(m.applicationProperties.color, "blue");
          assert.equal(Number(m.applicationProperties.n), 3);
          await receiver.completeMessage(m);
        } finally {
          await receiver.close();
        }
        await textBecomes(page, tid("count-active-orders"), /^0 active$/);
      });

      await step("test a filter in the rules box", async () => {
        await page.click(tid("entity-events/Subscriptions/red"));
        await page.click(tid("tab-rules"));
        await page.waitForSelector(tid("rules"));
        assert.match(await page.textContent(tid("rules")), /only-red[\s\S]*color = 'red'/);
        await page.fill(tid("tester-filter"), "color = 'red' AND qty > @min");
        await page.fill("#t-params", JSON.stringify({ "@min": 1 }));
        await page.fill(tid("tester-action"), "SET qty = qty * 10");
        await page.fill(tid("tester-message"), JSON.stringify({ system: { MessageId: "x" }, properties: { color: "red", qty: 2 } }));
        await page.click(tid("tester-run"));
        await textBecomes(page, tid("tester-verdict"), /^Match$/);
        assert.match(await page.textContent(tid("tester-result")), /"qty": 20/);
        await page.fill(tid("tester-message"), JSON.stringify({ properties: { color: "blue", qty: 2 } }));
        await page.click(tid("tester-run"));
        await textBecomes(page, tid("tester-verdict"), /^No match$/);
        await shot(page, "06-rules");
      });

      await step("move the clock from the page", async () => {
        await page.fill("#clock-by", "PT10M");
        await page.click(tid("clock-advance"));
        await textBecomes(page, tid("clock-offset"), /\+10 min ahead/);
        const clock = await ok(dash(emu, "entities"));
        assert.equal(clock.clockOffsetMs, 600000);
      });

      await step("connections", async () => {
        const receiver = client.createReceiver("events/Subscriptions/all", PEEK_LOCK);
        await receiver.receiveMessages(1, { maxWaitTimeInMs: 200 }); // attaches its link
        try {
          await page.click("nav.views button[data-view=connections]");
          await textBecomes(page, tid("connections"), /receiver\s*events\/Subscriptions\/all/);
          await textBecomes(page, tid("connections"), /\$cbs/);
          await shot(page, "07-connections");
        } finally {
          await receiver.close();
        }
        await page.click("nav.views button[data-view=entities]");
      });

      await step("a phone's screen", async () => {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.click(tid("entity-orders"));
        await page.waitForSelector(tid("tab-messages"));
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 1, `the page is ${overflow}px wider than a phone's screen`);
        await shot(page, "08-phone");
        await page.setViewportSize({ width: 1366, height: 900 });
      });

      assert.deepEqual(errors, [], "the page raised no error");
      // the README's picture: the messages view with a message open
      await step("the README's screenshot", async () => {
        const sender = client.createSender("orders");
        await sender.sendMessages([1, 2, 3].map((i) => ({ body: { item: `item-${i}`, qty: i }, messageId: `order-${100 + i}`, subject: "new-order", contentType: "application/json", applicationProperties: { color: i === 2 ? "red" : "green", qty: i } })));
        await sender.close();
        await page.click(tid("entity-orders"));
        await textBecomes(page, tid("count-active-orders"), /^3 active$/);
        await page.waitForSelector(tid("msg-4"));
        await page.click(tid("msg-4"));
        await page.waitForSelector(tid("message-detail"));
        await shot(page, "00-dashboard");
      });
    } finally {
      await browser.close();
    }
  }, 120000);

});

emulatorSuite("dashboard in chromium, read-only", { queues, topics, args: ["--dashboard-read-only"] }, (ctx) => {
  const { emu } = ctx;

  ctx.test("read-only: the page says so, its actions are off, reading works", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      const sender = ctx.client().createSender("orders");
      await sender.sendMessages({ body: "seen", messageId: "ro-1" });
      await sender.close();
      await step("read-only page", async () => {
        await page.goto(`http://localhost:${emu.httpPort}/`);
        await page.fill(tid("key"), "SAS_KEY_VALUE");
        await page.click(tid("sign-in"));
        await page.click(tid("entity-orders"));
        await page.waitForSelector(tid("msg-1"));
        assert.equal(await page.isVisible("#ro"), true);
        assert.equal(await page.isDisabled(tid("purge")), true);
        assert.equal(await page.isDisabled(tid("delete-selected")), true);
        await page.click(tid("tab-send"));
        assert.equal(await page.isDisabled(tid("send-submit")), true);
        // the clock is an action too: the server says no, and the page shows why
        await page.click(tid("clock-advance"));
        await textBecomes(page, "#toast", /read-only/);
        await shot(page, "09-read-only");
      });
    } finally {
      await browser.close();
    }
  });
});
