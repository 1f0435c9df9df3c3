// The sbemu dashboard: plain JS, no build step, no network beyond the
// emulator. It signs SharedAccessSignature tokens with the namespace key
// (crypto.subtle, or sha256.js where the page is not a secure context),
// reads /$sbemu/api/..., and keeps itself true with the server-sent events
// of /$sbemu/api/events (read with fetch, which can send the token).
"use strict";

const API = "/$sbemu/api/";
const TOKEN_TTL_S = 3600;        // a signed token lives this long
const TOKEN_RENEW_S = 300;       // and is signed again this long before it ends
const LIVE_RETRY_MS = 2000;      // after the event stream drops
const PAGE = 20;                 // messages per page

const state = {
  keyName: null, key: null, token: null, tokenUntil: 0,
  doc: null,                 // the last "entities" document
  selected: null,            // the selected entity's path
  tab: "messages",
  page: { from: 1, next: null, back: [] },
  messages: [], openSeq: null, checked: new Set(),
  clockOffset: 0, readOnly: false,
  tester: { pick: null },
  liveAbort: null, reloadTimer: null,
};

// ---------------------------------------------------------------- helpers

const $ = (sel) => document.querySelector(sel);

/** An element: h("div", {class: "x", onclick: fn}, child, "text", ...). */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function toast(text, bad) {
  const t = $("#toast");
  t.textContent = text;
  t.className = bad ? "toast bad" : "toast";
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (t.hidden = true), bad ? 8000 : 3500);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function fmtTime(iso) {
  if (!iso) return "—";
  return iso.replace("T", " ").replace("Z", "");
}

function fmtDuration(ms) {
  if (ms === null || ms === undefined) return "—";
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
}

// ---------------------------------------------------------------- tokens

function b64(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

async function hmac(key, text) {
  const enc = new TextEncoder();
  if (window.crypto && crypto.subtle) {
    const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(text)));
  }
  return window.sbemuHmacSha256(enc.encode(key), enc.encode(text)); // not a secure context (http on the LAN)
}

/** A token for the namespace root (it covers every path), as the SDKs sign one. */
async function signToken(keyName, key) {
  const uri = `${location.protocol}//${location.host}/`;
  const sr = encodeURIComponent(uri.toLowerCase()).toLowerCase();
  const se = Math.round(Date.now() / 1000) + TOKEN_TTL_S;
  const sig = b64(await hmac(key, `${sr}\n${se}`));
  return { token: `SharedAccessSignature sr=${sr}&sig=${encodeURIComponent(sig)}&se=${se}&skn=${encodeURIComponent(keyName)}`, until: se };
}

async function authHeader() {
  if (state.key && Date.now() / 1000 > state.tokenUntil - TOKEN_RENEW_S) {
    const t = await signToken(state.keyName, state.key);
    state.token = t.token;
    state.tokenUntil = t.until;
  }
  return state.token;
}

// ---------------------------------------------------------------- the API

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(path, body) {
  const headers = { Authorization: await authHeader() };
  const init = { headers, cache: "no-store" };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path.startsWith("/") ? path : API + path, init); /* "/...": the emulator's own, as /$sbemu/story */
  let j = null;
  try { j = await res.json(); } catch { /* not JSON */ }
  if (res.status === 401) {
    signOut((j && j.error) || "The emulator refused the token.");
    throw new ApiError("unauthorized", 401);
  }
  if (!res.ok) throw new ApiError((j && j.error) || `HTTP ${res.status}`, res.status);
  return j;
}

/** Runs an action, says how it went. */
async function act(what, fn) {
  try {
    const r = await fn();
    toast(typeof what === "function" ? what(r) : what);
    return r;
  } catch (e) {
    if (e.status !== 401) toast(e.message, true);
    return null;
  }
}

// ---------------------------------------------------------------- sign in

function showLogin(message) {
  $("#login").hidden = false;
  $("#app").hidden = true;
  $("#sign-out").hidden = true;
  $("#login-error").textContent = message || "";
}

function signOut(message) {
  sessionStorage.removeItem("sbemu.auth");
  state.key = state.token = null;
  if (state.liveAbort) state.liveAbort.abort();
  setLive("offline");
  showLogin(message);
}

async function signIn(keyName, key, token) {
  state.keyName = keyName;
  state.key = key || null;
  state.token = token || null;
  state.tokenUntil = key ? 0 : Infinity;
  try {
    const doc = await api("entities");
    sessionStorage.setItem("sbemu.auth", JSON.stringify({ keyName, key, token }));
    $("#login").hidden = true;
    $("#app").hidden = false;
    $("#sign-out").hidden = false;
    applyDoc(doc);
    liveLoop();
    return true;
  } catch (e) {
    if (e.status !== 401) showLogin(e.message);
    return false;
  }
}

// ---------------------------------------------------------------- live updates

function setLive(s) {
  const el = $("#live");
  el.textContent = s === "live" ? "live" : s === "connecting" ? "connecting…" : s === "reconnecting" ? "reconnecting…" : "offline";
  el.className = "badge " + (s === "live" ? "ok" : s === "offline" ? "bad" : "warn");
}

async function liveLoop() {
  if (state.liveAbort) state.liveAbort.abort();
  const ctrl = new AbortController();
  state.liveAbort = ctrl;
  while (!ctrl.signal.aborted && state.token) {
    setLive("connecting");
    try {
      const res = await fetch(API + "events", { headers: { Authorization: await authHeader() }, signal: ctrl.signal, cache: "no-store" });
      if (res.status === 401) { signOut("The emulator refused the token."); return; }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      setLive("live");
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          onEvent(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (e) {
      if (ctrl.signal.aborted) return;
    }
    setLive("reconnecting");
    await sleep(LIVE_RETRY_MS);
  }
}

function onEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  if (!data.length) return;
  let j;
  try { j = JSON.parse(data.join("\n")); } catch { return; }
  if (name === "entities") applyDoc(j);
  else if (name === "connections") renderConnections(j);
  else if (name === "clock") setClock(j.offsetMs);
}

// ---------------------------------------------------------------- the clock

function setClock(offset) {
  state.clockOffset = offset;
  tickClock();
}

function tickClock() {
  const now = new Date(Date.now() + state.clockOffset);
  $("#clock-now").textContent = now.toISOString().replace("T", " ").slice(0, 19);
  $("#clock-offset").textContent = state.clockOffset ? `(+${fmtDuration(state.clockOffset)} ahead)` : "(real time)";
}

// ---------------------------------------------------------------- the tree

function entityByPath(path) {
  return state.doc && state.doc.entities.find((e) => e.path.toLowerCase() === (path || "").toLowerCase());
}

function countsOf(e) {
  return e.counts || { active: 0, deferred: 0, scheduled: 0, deadLetter: 0, transfer: 0, transferDeadLetter: 0 };
}

function countSpans(e) {
  const c = countsOf(e);
  const item = (cls, n, label) => h("span", { class: `${cls}${n ? " nz" : ""}`, "data-testid": `count-${cls}-${e.path}` }, `${n} ${label}`);
  const spans = [];
  if (e.kind !== "topic") spans.push(item("active", c.active, "active"));
  if (e.kind !== "topic") spans.push(item("dlq", c.deadLetter, "dead-letter"));
  spans.push(item("scheduled", c.scheduled, "scheduled"));
  if (e.kind !== "topic") spans.push(item("deferred", c.deferred, "deferred"));
  return h("span", { class: "counts" }, spans);
}

function treeNode(e) {
  const status = e.status && e.status !== "Active" ? h("span", { class: "badge warn" }, e.status) : null;
  return h("button", {
    type: "button", class: "node" + (state.selected === e.path ? " sel" : ""), "data-testid": `entity-${e.path}`,
    onclick: () => select(e.path),
  }, h("span", { class: "kind" }, e.kind === "subscription" ? "sub" : e.kind), h("span", { class: "name" }, e.name), " ", status, countSpans(e));
}

function renderTree() {
  const doc = state.doc;
  const tree = $("#tree");
  tree.replaceChildren();
  tree.append(h("h3", {}, `Namespace ${doc.namespace}`));
  if (!doc.countsRead) tree.append(h("p", { class: "error" }, "Counts could not be read (the database is away)."));
  const queues = doc.entities.filter((e) => e.kind === "queue");
  const topics = doc.entities.filter((e) => e.kind === "topic");
  tree.append(h("h3", {}, `Queues (${queues.length})`));
  for (const q of queues) tree.append(treeNode(q));
  tree.append(h("h3", {}, `Topics (${topics.length})`));
  for (const t of topics) {
    tree.append(treeNode(t));
    const subs = doc.entities.filter((e) => e.kind === "subscription" && e.topic && e.topic.toLowerCase() === t.path.toLowerCase());
    if (subs.length) tree.append(h("div", { class: "sub" }, subs.map(treeNode)));
  }
}

/** A new "entities" document: the tree, the header and, if the selected entity's counts moved, its messages. */
function applyDoc(doc) {
  const before = state.selected && entityByPath(state.selected);
  const beforeCounts = before ? JSON.stringify(countsOf(before)) : null;
  state.doc = doc;
  state.readOnly = !!doc.readOnly;
  $("#ro").hidden = !state.readOnly;
  document.body.classList.toggle("read-only", state.readOnly);
  $("#ns-name").textContent = doc.namespace;
  setClock(doc.clockOffsetMs || 0);
  renderTree();
  if (!state.selected) return;
  const now = entityByPath(state.selected);
  if (!now) { state.selected = null; $("#detail").replaceChildren(h("p", { class: "muted" }, "That entity is gone.")); return; }
  renderHeader(now);
  if (JSON.stringify(countsOf(now)) !== beforeCounts && (state.tab === "messages" || state.tab === "deadletter")) scheduleReload();
}

function scheduleReload() {
  clearTimeout(state.reloadTimer);
  state.reloadTimer = setTimeout(() => loadMessages(), 150);
}

// ---------------------------------------------------------------- an entity

function tabsFor(e) {
  const tabs = [];
  if (e.kind !== "topic") tabs.push(["messages", "Messages"], ["deadletter", "Dead letters"]);
  else tabs.push(["messages", "Scheduled"]);
  if (e.kind !== "subscription") tabs.push(["send", "Send"]);
  tabs.push(["rules", e.kind === "subscription" ? "Rules" : "Rule tester"]);
  if (e.kind !== "topic") tabs.push(["sessions", "Sessions"]);
  tabs.push(["properties", "Properties"]);
  return tabs;
}

function select(path) {
  state.selected = path;
  state.tab = "messages";
  state.page = { from: 1, next: null, back: [] };
  state.openSeq = null;
  state.checked.clear();
  renderTree();
  renderDetail();
}

function renderHeader(e) {
  const head = $("#entity-head");
  if (!head) return;
  const c = countsOf(e);
  head.replaceChildren(
    h("h2", {}, h("span", { class: "kind" }, e.kind), e.path),
    h("div", { class: "counts-line", "data-testid": "entity-counts" },
      h("span", {}, "Status ", h("b", { "data-testid": "entity-status" }, e.status || "?")),
      e.kind !== "topic" ? h("span", {}, "Active ", h("b", { "data-testid": "detail-active" }, c.active)) : null,
      e.kind !== "topic" ? h("span", {}, "Dead-letter ", h("b", { "data-testid": "detail-deadletter" }, c.deadLetter)) : null,
      h("span", {}, "Scheduled ", h("b", {}, c.scheduled)),
      e.kind !== "topic" ? h("span", {}, "Deferred ", h("b", {}, c.deferred)) : null,
      h("span", {}, "Transfer ", h("b", {}, c.transfer)),
      h("span", {}, "Transfer dead-letter ", h("b", {}, c.transferDeadLetter)),
      h("span", {}, "Size ", h("b", {}, fmtBytes(e.sizeBytes || 0))),
      e.requiresSession ? h("span", { class: "badge" }, "sessions") : null));
}

function renderDetail() {
  const e = entityByPath(state.selected);
  const d = $("#detail");
  if (!e) { d.replaceChildren(h("p", { class: "muted" }, "Pick a queue, topic or subscription.")); return; }
  const tabs = tabsFor(e);
  if (!tabs.find(([k]) => k === state.tab)) state.tab = tabs[0][0];
  d.replaceChildren(
    h("div", { id: "entity-head" }),
    h("div", { class: "tabs", role: "tablist" }, tabs.map(([k, label]) => h("button", {
      type: "button", role: "tab", class: state.tab === k ? "on" : "", "aria-selected": state.tab === k ? "true" : "false",
      "data-testid": `tab-${k}`, onclick: () => { state.tab = k; state.page = { from: 1, next: null, back: [] }; state.openSeq = null; state.checked.clear(); renderDetail(); },
    }, label))),
    h("div", { id: "tab-body" }));
  renderHeader(e);
  if (state.tab === "messages" || state.tab === "deadletter") { renderMessagesShell(e); loadMessages(); }
  else if (state.tab === "send") renderSend(e);
  else if (state.tab === "rules") renderRules(e);
  else if (state.tab === "sessions") renderSessions(e);
  else renderProperties(e);
}

// ---------------------------------------------------------------- messages

function subqueue() { return state.tab === "deadletter" ? "deadletter" : "active"; }

function renderMessagesShell(e) {
  const dlq = state.tab === "deadletter";
  const ro = state.readOnly;
  $("#tab-body").replaceChildren(
    h("div", { class: "toolbar" },
      h("button", { type: "button", onclick: () => { state.page = { from: 1, next: null, back: [] }; loadMessages(); } }, "First page"),
      h("button", { type: "button", id: "prev-page", onclick: () => { state.page.from = state.page.back.pop() || 1; loadMessages(); } }, "Previous"),
      h("button", { type: "button", id: "next-page", "data-testid": "next-page", onclick: () => { if (state.page.next) { state.page.back.push(state.page.from); state.page.from = state.page.next; loadMessages(); } } }, "Next"),
      h("label", { class: "inline" }, "From sequence number", h("input", { id: "from-seq", size: 8, inputmode: "numeric", onchange: (ev) => { state.page = { from: parseInt(ev.target.value, 10) || 1, next: null, back: [] }; loadMessages(); } })),
      h("span", { class: "muted", id: "page-info" })),
    h("div", { class: "toolbar" },
      dlq ? h("button", { type: "button", class: "action", disabled: ro, "data-testid": "resubmit-selected", onclick: () => resubmit(e, [...state.checked]) }, "Resubmit selected") : null,
      dlq ? h("button", { type: "button", class: "action", disabled: ro, "data-testid": "resubmit-all", onclick: () => { if (confirm(`Resubmit every dead letter of ${e.path}?`)) resubmit(e, null); } }, "Resubmit all") : null,
      h("button", { type: "button", class: "danger", disabled: ro, "data-testid": "delete-selected", onclick: () => deleteMessages(e, [...state.checked]) }, "Delete selected"),
      h("button", { type: "button", class: "danger", disabled: ro, "data-testid": "purge", onclick: () => { if (confirm(`Delete every ${dlq ? "dead letter" : "message"} of ${e.path}?`)) purge(e, subqueue()); } }, dlq ? "Purge dead letters" : "Purge messages"),
      ro ? h("span", { class: "muted" }, "read-only: actions are off") : null),
    h("div", { class: "table-wrap" }, h("table", { "data-testid": "messages" },
      h("thead", {}, h("tr", {},
        h("th", {}, h("span", { class: "sr" }, "Select")), h("th", {}, "Seq"), h("th", {}, "Message ID"), h("th", {}, "State"),
        h("th", {}, "Enqueued"), h("th", {}, "Deliveries"), h("th", {}, "Lock"), h("th", {}, "Session"), h("th", {}, "Size"),
        dlq ? h("th", {}, "Reason") : h("th", {}, "Expires"))),
      h("tbody", { id: "msg-rows" }))),
    h("div", { id: "msg-detail" }));
}

async function loadMessages() {
  const e = entityByPath(state.selected);
  if (!e || !(state.tab === "messages" || state.tab === "deadletter")) return;
  const path = e.path, tab = state.tab, from = state.page.from;
  let doc;
  try {
    doc = await api(`messages?entity=${encodeURIComponent(path)}&subqueue=${subqueue()}&from=${from}&top=${PAGE}`);
  } catch (err) {
    if (err.status !== 401) toast(err.message, true);
    return;
  }
  if (state.selected !== path || state.tab !== tab || state.page.from !== from) return; // the view moved on
  state.messages = doc.messages;
  state.page.next = doc.next;
  renderMessageRows();
}

function lockText(m) {
  if (!m.lock) return "—";
  if (!m.lock.held) return `lapsed ${fmtTime(m.lock.lockedUntil)}`;
  return `locked until ${fmtTime(m.lock.lockedUntil)}`;
}

function renderMessageRows() {
  const rows = $("#msg-rows");
  if (!rows) return;
  const dlq = state.tab === "deadletter";
  rows.replaceChildren(...state.messages.map((m) => h("tr", {
    class: "msg" + (state.openSeq === m.sequenceNumber ? " sel" : ""), "data-testid": `msg-${m.sequenceNumber}`,
    onclick: (ev) => { if (ev.target.type !== "checkbox") openMessage(m.sequenceNumber); },
  },
  h("td", {}, h("input", { type: "checkbox", "aria-label": `select message ${m.sequenceNumber}`, "data-testid": `check-${m.sequenceNumber}`,
    checked: state.checked.has(m.sequenceNumber), onchange: (ev) => { ev.target.checked ? state.checked.add(m.sequenceNumber) : state.checked.delete(m.sequenceNumber); } })),
  h("td", {}, m.sequenceNumber),
  h("td", { class: "mono" }, m.messageId || "—"),
  h("td", {}, m.state + (m.expired ? " (expired)" : "")),
  h("td", {}, fmtTime(m.enqueuedTime)),
  h("td", {}, m.deliveryCount),
  h("td", {}, lockText(m)),
  h("td", { class: "mono" }, m.sessionId || "—"),
  h("td", {}, fmtBytes(m.size)),
  dlq ? h("td", { class: "wrap" }, m.deadLetterReason || "—") : h("td", {}, fmtTime(m.expiresAt)))));
  if (!state.messages.length) rows.append(h("tr", {}, h("td", { colspan: 10, class: "muted" }, dlq ? "No dead letters." : "No messages.")));
  const info = $("#page-info");
  if (info) info.textContent = state.messages.length ? `#${state.messages[0].sequenceNumber}–#${state.messages[state.messages.length - 1].sequenceNumber}${state.page.next ? ", more follow" : ""}` : "";
  $("#next-page").disabled = !state.page.next;
  $("#prev-page").disabled = !state.page.back.length;
  if (state.openSeq !== null) {
    const m = state.messages.find((x) => x.sequenceNumber === state.openSeq);
    if (m) renderMessage(m); else $("#msg-detail").replaceChildren();
  }
}

function openMessage(seq) {
  state.openSeq = seq;
  renderMessageRows();
}

function typedText(v) {
  if (!v) return "";
  if (v.type === "map") return JSON.stringify((v.value || []).map((e) => [typedText(e.key), typedText(e.value)]));
  if (v.type === "list") return JSON.stringify((v.value || []).map(typedText));
  if (v.type === "described") return `${v.descriptor}: ${typedText(v.value)}`;
  return v.value === null ? "null" : String(v.value);
}

function bodyView(body, mode) {
  if (!body || body.kind === "none") return h("p", { class: "muted" }, "No body.");
  if (mode === "json") {
    if (body.json) {
      try { return h("pre", { "data-testid": "body-view" }, JSON.stringify(JSON.parse(body.text), null, 2)); } catch { /* shown as text below */ }
    }
    return h("p", { class: "muted" }, "The body is not JSON.");
  }
  if (mode === "hex") return h("pre", { "data-testid": "body-view" }, (body.hex || "").replace(/(..)/g, "$1 ").replace(/((?:.. ){16})/g, "$1\n"));
  if (body.text !== undefined && body.text !== null) return h("pre", { "data-testid": "body-view" }, body.text);
  if (body.value) return h("pre", { "data-testid": "body-view" }, `${body.value.type}: ${typedText(body.value)}`);
  return h("p", { class: "muted" }, "The body is not text: see it as hex.");
}

function renderMessage(m) {
  const e = entityByPath(state.selected);
  const msg = m.message || {};
  const sys = msg.system || {};
  const body = msg.body || {};
  const dlq = m.subqueue === "deadletter";
  const ro = state.readOnly;
  let mode = body.json ? "json" : "text";
  const bodyBox = h("div", {}, bodyView(body, mode));
  const modeButtons = ["text", "json", "hex"].map((k) => h("button", {
    type: "button", "data-testid": `body-${k}`, "aria-pressed": String(k === mode),
    onclick: () => { mode = k; bodyBox.replaceChildren(bodyView(body, mode)); modeButtons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.testid === `body-${mode}`))); },
  }, k === "json" ? "JSON" : k === "hex" ? "Hex" : "Text"));
  const rows = [
    ["Sequence number", m.sequenceNumber], ["Message ID", sys.messageId], ["Correlation ID", sys.correlationId],
    ["Subject", sys.subject], ["Content type", sys.contentType], ["To", sys.to], ["Reply to", sys.replyTo],
    ["Session ID", m.sessionId], ["Reply to session ID", sys.replyToSessionId], ["Partition key", sys.partitionKey],
    ["State", m.state + (m.expired ? " (expired, the sweep has not been by yet)" : "")],
    ["Enqueued", fmtTime(m.enqueuedTime)], ["Scheduled enqueue time", m.scheduledEnqueueTime ? fmtTime(m.scheduledEnqueueTime) : null],
    ["Time to live", m.timeToLiveMs !== null ? fmtDuration(m.timeToLiveMs) : "none"], ["Expires", fmtTime(m.expiresAt)],
    ["Delivery count", m.deliveryCount], ["Size", fmtBytes(m.size)],
    ["Lock", m.lock ? `${m.lock.held ? "held" : "lapsed"} until ${fmtTime(m.lock.lockedUntil)}` : "not locked"],
    ["Lock token", m.lock ? m.lock.token : null],
    ["Lock holder", m.lock ? (m.lock.holder ? `connection ${m.lock.holder.connection}, link ${m.lock.holder.link}` : "not a receiver of this emulator ($management, another replica, or lapsed)") : null],
    ["Dead-letter reason", m.deadLetterReason], ["Dead-letter description", m.deadLetterErrorDescription],
    ["Dead-letter source", m.deadLetterSource],
  ].filter(([, v]) => v !== undefined && v !== null && v !== "");
  const story = h("div", { class: "panel", "data-testid": "story" }, h("h3", {}, "Story"), h("p", { class: "muted" }, "Loading…"));
  loadStory(story, e, m);
  $("#msg-detail").replaceChildren(h("div", { class: "panel", "data-testid": "message-detail" },
    h("h3", {}, `Message #${m.sequenceNumber}`),
    h("div", { class: "toolbar" },
      dlq ? h("button", { type: "button", class: "action", disabled: ro, "data-testid": "resubmit-one", onclick: () => resubmit(e, [m.sequenceNumber]) }, "Resubmit") : null,
      h("button", { type: "button", class: "danger", disabled: ro, "data-testid": "delete-one", onclick: () => deleteMessages(e, [m.sequenceNumber]) }, "Delete"),
      h("button", { type: "button", "data-testid": "try-in-tester", onclick: () => tryInTester(e, m) }, "Try rules on it"),
      h("button", { type: "button", onclick: () => { state.openSeq = null; renderMessageRows(); $("#msg-detail").replaceChildren(); } }, "Close")),
    h("dl", { class: "props", "data-testid": "system-properties" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])),
    h("h3", {}, "Application properties"),
    (msg.applicationProperties || []).length
      ? h("div", { class: "table-wrap" }, h("table", { "data-testid": "app-properties" }, h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Type"), h("th", {}, "Value"))),
        h("tbody", {}, msg.applicationProperties.map((p) => h("tr", {}, h("td", { class: "mono" }, p.name), h("td", {}, p.type), h("td", { class: "mono wrap" }, typedText(p)))))))
      : h("p", { class: "muted" }, "None."),
    h("h3", {}, `Body (${body.kind || "none"}${body.size !== undefined ? `, ${fmtBytes(body.size)}` : ""}${body.truncated ? ", cut for display" : ""})`),
    h("div", { class: "toolbar" }, modeButtons), bodyBox,
    h("details", {}, h("summary", {}, "Every section (header, annotations, properties)"),
      h("pre", {}, JSON.stringify({ header: msg.header, deliveryAnnotations: msg.deliveryAnnotations, messageAnnotations: msg.messageAnnotations, properties: msg.properties, footer: msg.footer, error: msg.error }, null, 2))),
    story));
}

/** One event of a story as a line: its time, what happened, where, and what its kind tells (GET /$sbemu/story). */
function storyLine(x, entity) {
  const bits = [];
  if (x.entity !== entity) bits.push(`in ${x.entity}`);
  if (x.subqueue) bits.push(`(${x.subqueue})`);
  if (x.link) bits.push(x.connection ? `by connection ${x.connection}, link ${x.link}` : `by ${x.link}`);
  if (x.rule) bits.push(`rule ${x.rule}`);
  if (x.rules !== undefined) bits.push(x.rules ? `its rules did not match: ${x.rules}` : "it has no rules");
  if (x.topic && x.kind !== "not-routed" && x.kind !== "routed") bits.push(`from topic ${x.topic}`);
  if (x.from) bits.push(`from ${x.from}`);
  if (x.forwardedTo) bits.push(`to ${x.forwardedTo}`);
  if (x.deliveryCount !== undefined) bits.push(`delivery count ${x.deliveryCount}`);
  if (x.lockedUntil) bits.push(`until ${fmtTime(x.lockedUntil)}`);
  if (x.scheduledSequenceNumber !== undefined) bits.push(`was #${x.scheduledSequenceNumber}`);
  if (x.reason) bits.push(`reason ${x.reason}${x.description ? `: ${x.description}` : ""}`);
  if (x.traceparent) bits.push(`traceparent ${x.traceparent}`);
  return `${fmtTime(x.time)} ${x.kind}${bits.length ? " " + bits.join(", ") : ""}`;
}

/** The message's story (GET /$sbemu/story, oldest first): why it is where it is. */
async function loadStory(panel, e, m) {
  const p = panel.querySelector("p");
  try {
    const s = await api(`/$sbemu/story?entity=${encodeURIComponent(e.path)}&sequenceNumber=${m.sequenceNumber}`);
    panel.replaceChildren(h("h3", {}, "Story"),
      h("ol", { class: "story" }, (s.events || []).map((x) => h("li", { "data-kind": x.kind }, storyLine(x, e.path)))),
      s.truncated ? h("p", { class: "muted" }, "Its first events only: the story is longer.") : null);
  } catch (err) {
    p.textContent = err.status === 404 ? `Not recorded: ${err.message}` : `Not available: ${err.message}`;
  }
}

async function resubmit(e, seqs) {
  if (seqs && !seqs.length) { toast("Select dead letters first (the boxes on the left).", true); return; }
  const body = seqs ? { entity: e.path, sequenceNumbers: seqs } : { entity: e.path, all: true };
  const r = await act((x) => `Resubmitted ${x.resubmitted} message(s) to ${x.entity}${x.leftLocked ? `; ${x.leftLocked} held by a receiver left alone` : ""}.`, () => api("resubmit", body));
  if (r) { state.checked.clear(); state.openSeq = null; loadMessages(); }
}

async function deleteMessages(e, seqs) {
  if (!seqs.length) { toast("Select messages first (the boxes on the left).", true); return; }
  if (!confirm(`Delete ${seqs.length} message(s) of ${e.path}?`)) return;
  const r = await act((x) => `Deleted ${x.deleted} message(s).`, () => api("delete", { entity: e.path, subqueue: subqueue(), sequenceNumbers: seqs }));
  if (r) { state.checked.clear(); state.openSeq = null; loadMessages(); }
}

async function purge(e, sq) {
  const r = await act((x) => `Purged ${x.deleted} message(s) of ${x.entity}.`, () => api("purge", { entity: e.path, subqueue: sq }));
  if (r) loadMessages();
}

// ---------------------------------------------------------------- send

function renderSend(e) {
  const f = (id, label, attrs = {}) => h("label", {}, label, h("input", { id, ...attrs }));
  const form = h("form", { class: "stack", id: "send-form", "data-testid": "send-form" },
    h("label", {}, "Body", h("textarea", { id: "send-body", rows: 5, "data-testid": "send-body" })),
    h("div", { class: "grid2" },
      h("label", {}, "Body encoding", h("select", { id: "send-encoding" }, h("option", { value: "utf8" }, "text (UTF-8)"), h("option", { value: "base64" }, "base64 bytes"))),
      f("send-content-type", "Content type", { placeholder: "application/json" }),
      f("send-message-id", "Message ID", { "data-testid": "send-message-id" }),
      f("send-session-id", "Session ID", { placeholder: e.requiresSession ? "required by this entity" : "" }),
      f("send-subject", "Subject (Label)"),
      f("send-correlation-id", "Correlation ID"),
      f("send-ttl", "Time to live", { placeholder: "PT1H" }),
      f("send-scheduled", "Scheduled enqueue time", { type: "datetime-local", step: 1 })),
    h("label", {}, "Application properties (JSON object)", h("textarea", { id: "send-props", rows: 3, placeholder: '{"color": "red", "qty": 5}', "data-testid": "send-props" })),
    h("div", { class: "toolbar" }, h("button", { type: "submit", class: "action", disabled: state.readOnly, "data-testid": "send-submit" }, "Send"),
      state.readOnly ? h("span", { class: "muted" }, "read-only: sending is off") : null,
      h("span", { class: "muted" }, `Goes through the same path as an SDK's send: ${e.path}'s TTL cap, duplicate detection, forwarding${e.kind === "topic" ? " and its subscriptions' rules" : ""}.`)));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = (id) => $(id).value.trim();
    const msg = { entity: e.path, body: $("#send-body").value, bodyEncoding: v("#send-encoding") };
    const set = (k, id) => { if (v(id)) msg[k] = v(id); };
    set("contentType", "#send-content-type"); set("messageId", "#send-message-id"); set("sessionId", "#send-session-id");
    set("subject", "#send-subject"); set("correlationId", "#send-correlation-id"); set("timeToLive", "#send-ttl");
    if (v("#send-scheduled")) msg.scheduledEnqueueTime = new Date(v("#send-scheduled")).toISOString();
    if (v("#send-props")) {
      try { msg.properties = JSON.parse(v("#send-props")); } catch (err) { toast(`Application properties: not JSON (${err.message}).`, true); return; }
    }
    const r = await act((x) => `Sent to ${x.entity}.`, () => api("send", msg));
    if (r) $("#send-body").value = "";
  });
  $("#tab-body").replaceChildren(form);
}

// ---------------------------------------------------------------- rules

function ruleText(rule) {
  const f = rule.filter || {};
  let text = f.type === "Sql" ? f.sqlExpression : f.type === "Correlation" ? `correlation ${JSON.stringify(f.correlation)}` : `${f.type} filter`;
  if (f.parameters) text += `  with ${JSON.stringify(f.parameters)}`;
  return text;
}

async function renderRules(e) {
  const body = $("#tab-body");
  if (e.kind !== "subscription") {
    body.replaceChildren(h("p", { class: "muted" }, "Rules belong to subscriptions; here a filter and an action can be tried on any message (paste one, or pick one with \"Try rules on it\")."), testerPanel(e));
    return;
  }
  body.replaceChildren(h("p", { class: "muted" }, "Loading rules…"));
  let doc;
  try { doc = await api(`rules?entity=${encodeURIComponent(e.path)}`); } catch (err) { body.replaceChildren(h("p", { class: "error" }, err.message)); return; }
  if (state.selected !== e.path || state.tab !== "rules") return;
  const list = h("div", { class: "table-wrap" }, h("table", { "data-testid": "rules" },
    h("thead", {}, h("tr", {}, h("th", {}, "Rule"), h("th", {}, "Filter"), h("th", {}, "Action"), h("th", {}, ""))),
    h("tbody", {}, doc.rules.map((r) => h("tr", {},
      h("td", { class: "mono" }, r.name),
      h("td", { class: "mono wrap" }, ruleText(r)),
      h("td", { class: "mono wrap" }, r.action ? r.action.sqlExpression : "—"),
      h("td", {}, h("button", { type: "button", onclick: () => useRule(e, r) }, "Test this rule")))))));
  body.replaceChildren(h("h3", {}, `Rules of ${e.path}`), list, testerPanel(e));
}

function testerPanel(e) {
  const t = state.tester;
  const pickNote = h("span", { class: "muted", id: "tester-pick" }, t.pick ? `Picked: ${t.pick.entity} #${t.pick.sequenceNumber} (${t.pick.subqueue}); it is evaluated as stored.` : "");
  const form = h("form", { class: "panel stack", id: "tester", "data-testid": "tester" },
    h("h3", {}, "Try a filter and action on a message"),
    h("div", { class: "grid2" },
      h("label", {}, "Filter type", h("select", { id: "t-type", "data-testid": "tester-type" }, ["Sql", "Correlation", "True", "False"].map((x) => h("option", { value: x }, x)))),
      h("label", {}, "Rule in force (instead)", h("select", { id: "t-rule" }, h("option", { value: "" }, "— the filter below —")))),
    h("label", {}, "SQL filter, or correlation (JSON: {\"CorrelationId\": ..., \"Label\": ..., \"Properties\": {...}})", h("textarea", { id: "t-filter", rows: 2, "data-testid": "tester-filter", placeholder: "color = 'red' AND qty > 3" })),
    h("label", {}, "@parameters (JSON, optional)", h("input", { id: "t-params", placeholder: '{"@min": 3}' })),
    h("label", {}, "Action (optional)", h("input", { id: "t-action", "data-testid": "tester-action", placeholder: "SET qty = qty + 1" })),
    h("label", {}, "Message (JSON: {\"system\": {...}, \"properties\": {...}})", h("textarea", { id: "t-message", rows: 4, "data-testid": "tester-message", placeholder: '{"system": {"MessageId": "m1", "Label": "x"}, "properties": {"color": "red", "qty": 5}}' })),
    h("div", { class: "toolbar" }, h("button", { type: "submit", class: "action", "data-testid": "tester-run" }, "Test"),
      h("button", { type: "button", onclick: () => { state.tester.pick = null; pickNote.textContent = ""; } }, "Forget the picked message"), pickNote),
    h("div", { id: "t-result", "data-testid": "tester-result", role: "status" }));
  const ruleSel = form.querySelector("#t-rule");
  if (e.kind === "subscription") fillRuleOptions(ruleSel, e);
  else ruleSel.closest("label").hidden = true;
  if (t.message) form.querySelector("#t-message").value = t.message;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const req = {};
    const rule = ruleSel.value;
    if (rule) {
      const [sub, name] = rule.split("\u0000");
      req.rule = { subscription: sub, name };
    } else {
      const type = form.querySelector("#t-type").value;
      const text = form.querySelector("#t-filter").value.trim();
      req.filter = { type };
      try {
        if (type === "Sql") req.filter.sqlExpression = text;
        if (type === "Correlation") req.filter.correlation = JSON.parse(text || "{}");
        const params = form.querySelector("#t-params").value.trim();
        if (params) req.filter.parameters = JSON.parse(params);
      } catch (err) { toast(`Not JSON: ${err.message}`, true); return; }
      const action = form.querySelector("#t-action").value.trim();
      if (action) req.action = { sqlExpression: action };
    }
    const m = form.querySelector("#t-message").value.trim();
    if (state.tester.pick && !m) req.pick = state.tester.pick;
    else {
      try { req.message = JSON.parse(m || "{}"); } catch (err) { toast(`Message: not JSON (${err.message}).`, true); return; }
    }
    const out = form.querySelector("#t-result");
    try {
      const r = await api("rules/test", req);
      const cls = r.result === "match" ? "match" : r.result === "error" ? "error" : "nomatch";
      out.replaceChildren(...[h("p", { class: `result ${cls}`, "data-testid": "tester-verdict" }, r.result === "match" ? "Match" : r.result === "unknown" ? "No match (unknown: a property it reads is missing)" : r.result === "error" ? `Error: ${r.error}` : "No match"),
        r.note ? h("p", { class: "muted" }, r.note) : null,
        r.actionError ? h("p", { class: "error" }, `Action failed: ${r.actionError}`) : null,
        r.after ? h("div", {}, h("p", {}, "After the action:"), h("pre", {}, JSON.stringify(r.after.system && r.after.properties ? r.after : { system: r.after.system, applicationProperties: r.after.applicationProperties }, null, 2))) : null].filter(Boolean));
    } catch (err) {
      out.replaceChildren(h("p", { class: "result error", "data-testid": "tester-verdict" }, err.message));
    }
  });
  return form;
}

function fillRuleOptions(sel, e) {
  api(`rules?entity=${encodeURIComponent(e.path)}`).then((doc) => {
    for (const r of doc.rules) sel.append(h("option", { value: `${e.path}\u0000${r.name}` }, `${e.path} › ${r.name}`));
    if (state.tester.rule) { sel.value = state.tester.rule; state.tester.rule = null; }
  }).catch(() => {});
}

function useRule(e, r) {
  const sel = $("#t-rule");
  sel.value = `${e.path}\u0000${r.name}`;
  $("#tester").scrollIntoView({ behavior: "smooth" });
}

/** A message's properties into the tester, and the message itself as the picked one. */
function tryInTester(e, m) {
  const sys = (m.message && m.message.system) || {};
  const system = {};
  const names = { messageId: "MessageId", correlationId: "CorrelationId", subject: "Label", to: "To", replyTo: "ReplyTo", sessionId: "SessionId", replyToSessionId: "ReplyToSessionId", contentType: "ContentType" };
  for (const [k, v] of Object.entries(names)) if (sys[k] !== undefined && sys[k] !== null) system[v] = String(sys[k]);
  const properties = {};
  for (const p of (m.message && m.message.applicationProperties) || []) properties[p.name] = p.type === "map" || p.type === "list" ? typedText(p) : p.value;
  state.tester.message = JSON.stringify({ system, properties }, null, 1);
  state.tester.pick = { entity: e.path, subqueue: m.subqueue, sequenceNumber: m.sequenceNumber };
  state.tab = "rules";
  renderDetail();
}

// ---------------------------------------------------------------- sessions

async function renderSessions(e) {
  const body = $("#tab-body");
  body.replaceChildren(h("p", { class: "muted" }, "Loading sessions…"));
  let doc;
  try { doc = await api(`sessions?entity=${encodeURIComponent(e.path)}`); } catch (err) { body.replaceChildren(h("p", { class: "error" }, err.message)); return; }
  if (state.selected !== e.path || state.tab !== "sessions") return;
  if (!doc.sessions.length) { body.replaceChildren(h("p", { class: "muted" }, e.requiresSession ? "No sessions with messages, state or a lock." : "This entity does not require sessions, and none of its messages has a SessionId.")); return; }
  body.replaceChildren(h("div", { class: "table-wrap" }, h("table", { "data-testid": "sessions" },
    h("thead", {}, h("tr", {}, h("th", {}, "Session"), h("th", {}, "Messages"), h("th", {}, "Lock"), h("th", {}, "Holder"), h("th", {}, "State"), h("th", {}, "State changed"))),
    h("tbody", {}, doc.sessions.map((s) => h("tr", {},
      h("td", { class: "mono" }, s.sessionId), h("td", {}, s.messages),
      h("td", {}, s.lock ? `${s.lock.held ? "held" : "lapsed"} until ${fmtTime(s.lock.lockedUntil)}` : "free"),
      h("td", {}, s.lock && s.lock.holder ? `connection ${s.lock.holder.connection}, ${s.lock.holder.link}` : "—"),
      h("td", { class: "mono wrap" }, s.state ? (s.state.text !== undefined ? s.state.text : s.state.hex) + ` (${fmtBytes(s.state.size)})` : "none"),
      h("td", {}, fmtTime(s.updatedAt))))))),
  doc.more ? h("p", { class: "muted" }, "More sessions than shown.") : null);
}

// ---------------------------------------------------------------- properties and status

function renderProperties(e) {
  const skip = new Set(["counts", "id"]);
  const rows = Object.entries(e).filter(([k]) => !skip.has(k));
  const statuses = e.kind === "topic" ? ["Active", "Disabled", "SendDisabled"] : e.kind === "subscription" ? ["Active", "Disabled", "ReceiveDisabled"] : ["Active", "Disabled", "SendDisabled", "ReceiveDisabled"];
  const sel = h("select", { id: "status-select", "data-testid": "status-select" }, statuses.map((s) => h("option", { value: s, selected: s === e.status }, s)));
  $("#tab-body").replaceChildren(
    h("div", { class: "panel" }, h("h3", {}, "Status"), h("div", { class: "toolbar" }, h("label", { class: "inline" }, "Status", sel),
      h("button", { type: "button", class: "action", disabled: state.readOnly, "data-testid": "status-apply", onclick: () => act((x) => `${x.entity} is ${x.status}.`, () => api("status", { entity: e.path, status: sel.value })) }, "Apply"))),
    h("div", { class: "panel" }, h("h3", {}, "Properties"), h("dl", { class: "props" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "object" ? JSON.stringify(v) : String(v))]))),
    h("div", { class: "panel" }, h("h3", {}, "Purge"), h("div", { class: "toolbar" },
      h("button", { type: "button", class: "danger", disabled: state.readOnly, onclick: () => { if (confirm(`Delete every message of ${e.path}, dead letters included?`)) purge(e, "all"); } }, "Purge everything"))));
}

// ---------------------------------------------------------------- connections

function renderConnections(doc) {
  state.connections = doc;
  const box = $("#connections");
  if (!box) return;
  const list = doc.connections || [];
  box.replaceChildren(h("div", { class: "card" }, h("h2", {}, `Connections (${list.length})`),
    list.length ? list.map((c) => h("div", { class: "panel", "data-testid": `connection-${c.id}` },
      h("h3", {}, `Connection ${c.id} `, h("span", { class: "muted" }, `${c.remote || "?"} · ${c.transport} · container ${c.container || "—"}`)),
      h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Link"), h("th", {}, "Role"), h("th", {}, "Address"), h("th", {}, "State"), h("th", {}, "Credit"), h("th", {}, "Unsettled"), h("th", {}, "Session"))),
        h("tbody", {}, c.links.map((l) => h("tr", {}, h("td", { class: "mono wrap" }, l.name), h("td", {}, l.role), h("td", { class: "mono" }, l.address), h("td", {}, l.open ? "attached" : "detaching"),
          h("td", {}, l.credit), h("td", {}, l.unsettled), h("td", {}, l.session ? `${l.session.id} until ${fmtTime(l.session.lockedUntil)}` : "—")))))))) : h("p", { class: "muted" }, "No AMQP connection is open.")));
}

// ---------------------------------------------------------------- start

function wire() {
  $("#login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const keyName = $("#key-name").value.trim() || "RootManageSharedAccessKey";
    const key = $("#key").value;
    const token = $("#token").value.trim();
    if (!key && !token) { showLogin("Give the key (or a token)."); return; }
    await signIn(keyName, key, token && !key ? token : null);
  });
  $("#sign-out").addEventListener("click", () => signOut(""));
  $("#clock-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await act((x) => `The clock is ${fmtDuration(x.offsetMs)} ahead.`, () => api("clock", { advanceBy: $("#clock-by").value.trim() }));
    if (r) setClock(r.offsetMs);
  });
  for (const b of document.querySelectorAll(".views button")) {
    b.addEventListener("click", async () => {
      for (const x of document.querySelectorAll(".views button")) x.classList.toggle("on", x === b);
      $("#view-entities").hidden = b.dataset.view !== "entities";
      $("#view-connections").hidden = b.dataset.view !== "connections";
      if (b.dataset.view === "connections") {
        try { renderConnections(await api("connections")); } catch (err) { if (err.status !== 401) toast(err.message, true); }
      }
    });
  }
  setInterval(tickClock, 1000);
  tickClock();
}

(async function start() {
  wire();
  let saved = null;
  try { saved = JSON.parse(sessionStorage.getItem("sbemu.auth") || "null"); } catch { /* none */ }
  if (saved && (saved.key || saved.token) && (await signIn(saved.keyName, saved.key, saved.token))) return;
  showLogin("");
})();
