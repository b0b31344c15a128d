// tests/openapi/validate.mjs DOC ANSWERS: holds cli/openapi.json to the OpenAPI 3.1 schema
// (@seriousme/openapi-schema-validator, strict: no member the specification does not define),
// compiles each of its schemas with Ajv in strict mode (the OpenAPI schema leaves a Schema
// Object's own keywords unchecked, so a misspelt one would pass it), and checks each answer a
// running `calc-route serve` gave against what the document says of that path, method and
// status. ANSWERS holds one answer a line, tab-separated: NAME METHOD PATH STATUS CONTENT-TYPE
// BODY-FILE [LINE-SCHEMA]; a path the document does not list is held to
// components/responses/NotFound, a method it does not list on a path to MethodNotAllowed;
// LINE-SCHEMA (a components/schemas name) holds each line of a JSON-lines body to it. Prints
// "ok NAME" or "FAIL NAME: why" a check; the shell test counts them.
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [docPath, answersPath] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const say = (name, why) => console.log(why ? `FAIL ${name}: ${why}` : `ok ${name}`);

const oas = new Validator();
const res = await oas.validate(doc);
say("openapi-3.1-schema", res.valid ? (oas.version === "3.1" ? "" : `version ${oas.version}`)
                                    : JSON.stringify(res.errors));

// The document as one schema, its OpenAPI members no-op keywords, so that a $ref such as
// #/components/schemas/Value resolves inside it.
const ID = "https://calcroute.invalid/openapi.json";
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats(ajv);
ajv.addVocabulary(Object.keys(doc).filter((k) => k !== "$schema"));
ajv.addSchema({ ...doc, $id: ID });
const schema = (pointer) => ajv.getSchema(`${ID}#${pointer}`);
for (const name of Object.keys(doc.components.schemas)) {
    try {
        schema(`/components/schemas/${name}`);
        say(`schema ${name}`);
    } catch (e) {
        say(`schema ${name}`, e.message);
    }
}

const deref = (o) => {
    while (o && o.$ref) o = o.$ref.slice(2).split("/").reduce((x, k) => x?.[k], doc);
    return o;
};
const compiled = (s) => (s.$ref ? schema(s.$ref.slice(1)) : ajv.compile(s));
const errors = (validate, value) =>
    validate(value) ? "" : ajv.errorsText(validate.errors, { dataVar: "body" });

// The examples the document gives are held to the schemas beside them.
const walk = (o, at) => {
    if (!o || typeof o !== "object") return;
    if (o.schema && "example" in o) say(`example ${at}`, errors(compiled(o.schema), o.example));
    for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
};
walk(doc.paths, "#/paths");
walk(doc.components, "#/components");

for (const line of readFileSync(answersPath, "utf8").split("\n").filter(Boolean)) {
    const [name, method, path, status, ctype, file, lineSchema] = line.split("\t");
    const item = doc.paths[path];
    const op = item?.[method.toLowerCase()];
    const response = deref(!item ? { $ref: "#/components/responses/NotFound" }
                         : !op ? { $ref: "#/components/responses/MethodNotAllowed" }
                         : op.responses[status]);
    if (!response) {
        say(name, `${method} ${path} answered ${status}, which the document does not list`);
        continue;
    }
    const media = ctype.split(";")[0].trim();
    const content = response.content?.[media];
    if (!content) {
        say(name, `${method} ${path} ${status} answered ${ctype || "no Content-Type"}; the ` +
                  `document lists ${Object.keys(response.content ?? {}).join(", ") || "none"}`);
        continue;
    }
    const body = readFileSync(file, "utf8");
    let why = "";
    try {
        if (lineSchema) {
            const v = schema(`/components/schemas/${lineSchema}`);
            body.split("\n").filter(Boolean).forEach((l, i) => {
                const e = errors(v, JSON.parse(l));
                if (e && !why) why = `line ${i + 1}: ${e}`;
            });
        } else if (media.endsWith("json")) {
            why = errors(compiled(content.schema), JSON.parse(body));
        } else if (content.schema?.type !== "string") {
            why = "a text body the document does not give as a string";
        }
    } catch (e) {
        why = e.message;
    }
    say(name, why);
}
