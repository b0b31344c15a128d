// Validates Kubernetes manifests offline: every YAML document against the schema of its
// apiVersion and kind (kubernetes-models' compiled OpenAPI validators, ajv), and every field
// name against the names some Kubernetes schema has, since those validators accept a field
// they do not know (a misspelt `hostUser: false` would otherwise pass, and be ignored by the
// API server's client-side apply). Usage: node validate.mjs FILE...; prints a line a document,
// exit 1 if any fails. node validate.mjs --settings FILE...: the security settings of every pod
// template, a line each, for tests/test_deploy.sh to compare exactly.
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import yaml from "js-yaml";

const require = createRequire(import.meta.url);
// Every property name the schemas test (`data.NAME` or `data["NAME"]` in the generated code),
// the API objects' and the metadata's.
const known = new Set();
for (const pkg of ["kubernetes-models", "@kubernetes-models/apimachinery"]) {
    const dir = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "_schemas");
    for (const f of readdirSync(dir)) {
        if (!f.endsWith(".js")) continue;
        const src = readFileSync(path.join(dir, f), "utf8");
        for (const m of src.matchAll(/data\.([A-Za-z_$][\w$]*)|data\["([^"]+)"\]/g)) known.add(m[1] ?? m[2]);
    }
}
// Maps whose keys are the user's, not the schema's.
const freeForm = new Set(["labels", "annotations", "matchLabels", "data", "stringData",
                          "nodeSelector", "limits", "requests", "selector"]);

function unknownFields(v, where, out) {
    if (Array.isArray(v)) { v.forEach((x, i) => unknownFields(x, `${where}/${i}`, out)); return; }
    if (!v || typeof v !== "object") return;
    for (const [k, x] of Object.entries(v)) {
        if (!known.has(k)) out.push(`${where}/${k}: no Kubernetes schema has this field`);
        if (!freeForm.has(k) || (k === "selector" && x && x.matchLabels)) unknownFields(x, `${where}/${k}`, out);
    }
}

async function modelOf(apiVersion, kind) {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : [null, apiVersion];
    const mod = `kubernetes-models/${group ? group + "/" : ""}${version}/${kind}`;
    try { return (await import(mod))[kind]; } catch { return null; }
}

function settings(file) {
    const line = (o) => Object.entries(o).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : v}`).join(" ");
    const prof = (p) => p ? p.type + (p.localhostProfile ? ":" + p.localhostProfile : "") : "unset";
    for (const doc of yaml.loadAll(readFileSync(file, "utf8"))) {
        const pod = doc?.spec?.template?.spec;
        if (!pod) continue;
        const sc = pod.securityContext ?? {};
        console.log(`${doc.kind}/${doc.metadata.name} ` + line({
            hostUsers: pod.hostUsers, automountServiceAccountToken: pod.automountServiceAccountToken,
            runAsNonRoot: sc.runAsNonRoot, runAsUser: sc.runAsUser, runAsGroup: sc.runAsGroup, fsGroup: sc.fsGroup,
            seccomp: prof(sc.seccompProfile), apparmor: prof(sc.appArmorProfile),
            hostNetwork: pod.hostNetwork ?? false, hostPID: pod.hostPID ?? false,
            volumes: (pod.volumes ?? []).map((v) => `${v.name}:${Object.keys(v).find((k) => k !== "name")}`) }));
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
            const cs = c.securityContext ?? {};
            console.log(`  ${c.name} ` + line({
                privileged: cs.privileged, allowPrivilegeEscalation: cs.allowPrivilegeEscalation,
                readOnlyRootFilesystem: cs.readOnlyRootFilesystem, drop: cs.capabilities?.drop ?? [],
                add: cs.capabilities?.add ?? [], procMount: cs.procMount,
                limits: Object.keys(c.resources?.limits ?? {}), requests: Object.keys(c.resources?.requests ?? {}) }));
        }
    }
}

if (process.argv[2] === "--settings") {
    for (const file of process.argv.slice(3)) settings(file);
    process.exit(0);
}

let failed = 0;
for (const file of process.argv.slice(2)) {
    let docs;
    try { docs = yaml.loadAll(readFileSync(file, "utf8")).filter((d) => d != null); }
    catch (e) { console.log(`FAIL ${file}: ${e.message.split("\n")[0]}`); failed++; continue; }
    for (const doc of docs) {
        const name = `${file} ${doc.kind}/${doc.metadata?.name}`;
        const Model = await modelOf(String(doc.apiVersion), String(doc.kind));
        const errors = [];
        if (!Model) errors.push(`no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
        else {
            try { new Model(doc).validate(); }
            catch (e) { errors.push(...(e.errors ?? [e]).map((x) => x.instancePath !== undefined ? `${x.instancePath} ${x.message}` : x.message)); }
        }
        unknownFields(doc, "", errors);
        if (errors.length) { failed++; console.log(`FAIL ${name}: ${errors.join("; ")}`); }
        else console.log(`ok ${name}`);
    }
}
process.exit(failed ? 1 : 0);
