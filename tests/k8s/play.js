// Turns `helm template` output into what podman 4.3's `kube play` runs, the
// way a cluster would run it, for tests/k8s/test_replicas.sh:
//   - a Secret becomes a podman secret (kube play reads a secretKeyRef from
//     podman's store, as a JSON map of base64 values): written to DIR/secrets/NAME.json;
//   - a StatefulSet becomes a Deployment with a PersistentVolumeClaim per
//     claim template (kube play runs no StatefulSet);
//   - Services are left out (kube play has none): the test gives the
//     emulators the database Service's name through hostAliases instead;
//   - container ports are left out (kube play would publish each on the
//     host; the pods are reached by their own addresses).
// Writes DIR/postgres.yaml (the database) and DIR/emulators.yaml.
//   node play.js RENDERED.yaml DIR [POSTGRES_IP]
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const YAML = require("yaml");

const [rendered, dir, postgresIp] = process.argv.slice(2);
const docs = YAML.parseAllDocuments(fs.readFileSync(rendered, "utf8")).map((d) => d.toJS()).filter(Boolean);
fs.mkdirSync(path.join(dir, "secrets"), { recursive: true });

const postgres = [];
const emulators = [];
let postgresService = null;

function withoutPorts(podSpec) {
  for (const c of podSpec.containers) delete c.ports;
}

for (const d of docs) {
  switch (d.kind) {
    case "Secret": {
      const data = { ...(d.data || {}) };
      for (const [k, v] of Object.entries(d.stringData || {})) data[k] = Buffer.from(String(v)).toString("base64");
      fs.writeFileSync(path.join(dir, "secrets", `${d.metadata.name}.json`), JSON.stringify(data));
      break;
    }
    case "Service":
      if (d.spec.ports.some((p) => p.port === 5432)) postgresService = d.metadata.name;
      break;
    case "StatefulSet": {
      const claims = d.spec.volumeClaimTemplates || [];
      const spec = d.spec.template.spec;
      withoutPorts(spec);
      spec.volumes = (spec.volumes || []).concat(
        claims.map((c) => ({ name: c.metadata.name, persistentVolumeClaim: { claimName: `${d.metadata.name}-${c.metadata.name}` } })));
      for (const c of claims)
        postgres.push({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: `${d.metadata.name}-${c.metadata.name}` }, spec: c.spec });
      postgres.push({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: d.metadata,
        spec: { replicas: d.spec.replicas, selector: d.spec.selector, template: d.spec.template },
      });
      break;
    }
    case "Deployment":
      withoutPorts(d.spec.template.spec);
      emulators.push(d);
      break;
    default:
      emulators.push(d);
  }
}
if (postgresIp && postgresService)
  for (const d of emulators)
    if (d.kind === "Deployment") d.spec.template.spec.hostAliases = [{ ip: postgresIp, hostnames: [postgresService] }];

const write = (name, list) => fs.writeFileSync(path.join(dir, name), list.map((d) => YAML.stringify(d)).join("---\n"));
write("postgres.yaml", postgres);
write("emulators.yaml", emulators);
console.log(JSON.stringify({ postgres: postgres.length, emulators: emulators.length, postgresService }));
