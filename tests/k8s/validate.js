// Validates rendered manifests (multi-document YAML on stdin) against the
// Kubernetes schemas of kubernetes-models, offline. Prints one line per
// object and one per problem; exits 1 if any object is invalid or of a kind
// it does not know.
"use strict";

const YAML = require("yaml");

const GROUPS = {
  v1: "kubernetes-models/v1",
  "apps/v1": "kubernetes-models/apps/v1",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1",
};

let text = "";
process.stdin.on("data", (d) => (text += d));
process.stdin.on("end", () => {
  let bad = 0;
  for (const doc of YAML.parseAllDocuments(text)) {
    const obj = doc.toJS();
    if (!obj) continue;
    const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
    const mod = GROUPS[obj.apiVersion];
    const Kind = mod && require(mod)[obj.kind];
    if (!Kind) {
      console.log(`UNKNOWN ${name} (${obj.apiVersion})`);
      bad++;
      continue;
    }
    try {
      new Kind(obj).validate();
      console.log(`ok ${name}`);
    } catch (e) {
      console.log(`INVALID ${name}: ${e.message}`);
      bad++;
    }
  }
  process.exit(bad ? 1 : 0);
});
