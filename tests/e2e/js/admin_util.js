// Helpers for the management API (ATOM) tests: the two JS admin clients as
// they dial the emulator, and raw HTTP requests signed as the SDKs sign them.
//   "7.9.5"  @azure/service-bus 7.9.5: always https, to the Endpoint's host:port:
//            here the AMQP port, which tells TLS from plain bytes and HTTP from
//            AMQP; the emulator's certificate is trusted through tlsOptions.ca.
//   "beta"   7.10.0-beta.2 (service-bus-beta): plain http to the Endpoint's port
//            with UseDevelopmentEmulator=true; here the HTTP port.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const http = require("node:http");
const { SAS_KEY, SAS_KEY_NAME } = require("../harness");

const FLAVOURS = ["7.9.5", "beta"];

function adminClient(emu, flavour, { key = SAS_KEY, keyName = SAS_KEY_NAME } = {}) {
  const retryOptions = { maxRetries: 0 };
  if (flavour === "beta") {
    const { ServiceBusAdministrationClient } = require("service-bus-beta");
    return new ServiceBusAdministrationClient(
      `Endpoint=sb://localhost:${emu.httpPort};SharedAccessKeyName=${keyName};SharedAccessKey=${key};UseDevelopmentEmulator=true`,
      { retryOptions });
  }
  const { ServiceBusAdministrationClient } = require("@azure/service-bus");
  return new ServiceBusAdministrationClient(
    `Endpoint=sb://localhost:${emu.amqpPort};SharedAccessKeyName=${keyName};SharedAccessKey=${key}`,
    { retryOptions, tlsOptions: { ca: fs.readFileSync(emu.certPath) } });
}

/** The SAS token JS signs for a URL (sr = the lowercased, encoded URL). */
function sasToken(url, { key = SAS_KEY, keyName = SAS_KEY_NAME, expiresIn = 300 } = {}) {
  const sr = encodeURIComponent(url.toLowerCase()).toLowerCase();
  const se = Math.round(Date.now() / 1000) + expiresIn;
  const sig = encodeURIComponent(crypto.createHmac("sha256", key).update(`${sr}\n${se}`).digest("base64"));
  return `SharedAccessSignature sig=${sig}&se=${se}&skn=${keyName}&sr=${sr}`;
}

/**
 * One HTTP request to the emulator's HTTP port; resolves {status, headers, body}.
 * opts: method, body (string or Buffer), headers, auth (false: no Authorization).
 */
function rawRequest(emu, path, { method = "GET", body, headers = {}, auth = true } = {}) {
  const url = `http://localhost:${emu.httpPort}/${path}`;
  const h = { ...headers };
  if (auth) h.authorization = typeof auth === "string" ? auth : sasToken(url);
  if (body !== undefined && !h["content-length"] && !h["transfer-encoding"]) h["content-length"] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: h, timeout: 15000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on("timeout", () => req.destroy(new Error(`${method} /${path}: timeout`)));
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** An Atom entry holding one description, as the SDKs write it. */
function entry(description, inner, attrs = "") {
  return `<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">` +
    `<${description} xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" ` +
    `xmlns:i="http://www.w3.org/2001/XMLSchema-instance"${attrs}>${inner}</${description}></content></entry>`;
}

/** The <Detail> of a Service Bus error body (and checks its shape and code). */
function errorDetail(res, code) {
  const m = /^<\?xml[^>]*\?><Error><Code>(\d+)<\/Code><Detail>([\s\S]*)<\/Detail><\/Error>$/.exec(res.body);
  if (!m) throw new Error(`not a Service Bus error body (status ${res.status}): ${res.body}`);
  if (Number(m[1]) !== code || res.status !== code) throw new Error(`expected ${code}, got status ${res.status} / Code ${m[1]}: ${m[2]}`);
  return m[2].replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
}

/** Awaits promise and returns the error it fails with, or fails. */
async function failure(promise, what) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error(`${what}: expected an error, but it succeeded`);
}

/** Every item of a paged iterator. */
async function all(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}

module.exports = { FLAVOURS, adminClient, sasToken, rawRequest, entry, errorDetail, failure, all };
