#!/bin/sh
# cli/openapi.json, the OpenAPI 3.1 description of `calc-route serve`, against the standard and
# against the service: it parses with Debian's python3 (no key twice) and every $ref in it
# resolves; GET /openapi.json serves its very bytes; every path and method it lists answers
# (not 404) and a path it does not list answers 404; the token is wanted exactly where it
# says; and with npm's @seriousme/openapi-schema-validator (pinned, installed once into
# build/openapi-validator by scripts/npm-pinned.sh) and Ajv it is a valid OpenAPI 3.1 document,
# its schemas compile in strict mode, its examples fit them, and every answer gathered here
# fits the schema it gives for that path, method, status and Content-Type
# (tests/openapi/validate.mjs). Without node, npm or the registry those last checks are
# skipped, saying why, but fail under CI=true.
B=${BUILD:-build}
R="$B/calc-route"
DOC=cli/openapi.json
DIR=${OPENAPI_VALIDATOR_DIR:-build/openapi-validator}
PY=/usr/bin/python3
. tests/lib.sh
serve_test test_openapi

# The document read by Python's json (a key given twice refused), each $ref followed as a JSON
# pointer; the operations listed in $tmp/ops: METHOD PATH, and "public" when the operation
# wants no token (its own security is empty), else "token".
expect "parses, every \$ref resolves" "" "$("$PY" - "$DOC" "$tmp/ops" <<'EOF' 2>&1
import json, sys

def no_twice(pairs):
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError("keys given twice: " + ", ".join(twice))
    return dict(pairs)

doc = json.load(open(sys.argv[1], encoding="utf-8"), object_pairs_hook=no_twice)

def resolve(ref):
    if not ref.startswith("#/"):
        raise KeyError("not a reference inside the document")
    node = doc
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node

def walk(node, at):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                resolve(ref)
            except (KeyError, IndexError, TypeError) as e:
                print(f"{at}: $ref {ref} does not resolve ({e})")
        for k, v in node.items():
            walk(v, f"{at}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk(v, f"{at}/{i}")

walk(doc, "#")
methods = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
with open(sys.argv[2], "w") as out:
    for path, item in doc["paths"].items():
        for m in methods:
            if m in item:
                public = item[m].get("security") == []
                out.write(f"{m.upper()} {path} {'public' if public else 'token'}\n")
EOF
)"

# ask NAME METHOD PATH QUERY [CURL ARGS...]: the answer's status. Its headers and body are
# kept in $(at NAME).h and .b, and a line for validate.mjs in $tmp/answers.
TAB=$(printf '\t')
at() { printf '%s/%s' "$tmp" "$(printf '%s' "$1" | tr -c 'A-Za-z0-9' _)"; }
ask() {
    name=$1 method=$2 path=$3 query=$4
    shift 4
    f=$(at "$name")
    out=$(curl -s -X "$method" -o "$f.b" -D "$f.h" -w "%{http_code}$TAB%{content_type}" "$@" \
        "$url$path$query")
    code=${out%%"$TAB"*} lines=""
    [ "$path" = /v1/batch ] && [ "$code" = 200 ] && lines="${TAB}BatchLine"
    printf '%s\t%s\t%s\t%s\t%s%s\n' "$name" "$method" "$path" "$out" "$f.b" "$lines" \
        >>"$tmp/answers"
    printf '%s' "$code"
}
# What each operation is sent: a request, or JSON lines of them (one not a request, one that
# raises).
body_of() {
    case "$1" in
    "POST /v1/batch") printf '%s\n' '{"id":1,"code":"2**100"}' '{"id":2,"code":' \
                                    '{"id":3,"code":"1/0"}' ;;
    "POST /mcp") printf '%s' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' ;;
    POST*) printf '%s' '{"id":"q1","code":"a + b","vars":{"a":0.1,"b":0.2}}' ;;
    esac
}

start open --tier none --max-body 4096 || finish
: >"$tmp/answers"

# The document as served.
curl -s -o "$tmp/served" -w '%{http_code} %{content_type}' "$url/openapi.json" >"$tmp/code"
expect "GET /openapi.json" "200 application/json" "$(cat "$tmp/code")"
if cmp -s "$tmp/served" "$DOC"; then ok; else bad "GET /openapi.json: not the bytes of $DOC"; fi

# Every operation listed answers, and the answers are kept to be held to the document.
while read -r method path _; do
    body_of "$method $path" >"$tmp/body"
    if [ "$method" = POST ]; then set -- --data-binary @"$tmp/body"; else set --; fi
    code=$(ask "$method$path" "$method" "$path" "" "$@")
    if [ "$code" != 404 ] && [ "$code" != 000 ]; then ok
    else bad "$method $path, which the document lists, answered $code"; fi
done <"$tmp/ops"
code=$(ask readyz-verbose GET /readyz '?verbose')
case "$code" in 200|503) ok ;; *) bad "GET /readyz?verbose answered $code" ;; esac
expect "readyz?verbose lists the checks" "draining ledger pool signer" "$("$PY" -c '
import json, sys
print(*sorted(c["name"] for c in json.load(sys.stdin)["checks"]))' <"$(at readyz-verbose).b" 2>&1)"

# What the document does not list, and requests it describes as refused.
expect "a path not listed" 404 "$(ask not-listed GET /v1/nope '')"
expect "a method not listed" "405 POST" \
    "$(c=$(ask wrong-method GET /v1/run ''); printf '%s %s' "$c" \
       "$(tr -d '\r' <"$(at wrong-method).h" | sed -n 's/^Allow: //p')")"
expect "bad JSON" 400 "$(ask bad-json POST /v1/run '' --data-binary '{"code":1')"
head -c 5000 /dev/zero | tr '\0' ' ' >"$tmp/big"
expect "too large" 413 "$(ask too-large POST /v1/run '' --data-binary @"$tmp/big")"

# The token: wanted by every operation but those whose security is empty.
echo secret-token >"$tmp/token"
start token --tier none --token-file "$tmp/token" || finish
while read -r method path need; do
    body_of "$method $path" >"$tmp/body"
    if [ "$method" = POST ]; then set -- --data-binary @"$tmp/body"; else set --; fi
    code=$(ask "token$method$path" "$method" "$path" "" "$@")
    scheme=$(tr -d '\r' <"$(at "token$method$path").h" | sed -n 's/^WWW-Authenticate: //p')
    if [ "$need" = token ]; then
        expect "$method $path without the token" "401 Bearer" "$code $scheme"
    elif [ "$code" = 401 ] || [ "$code" = 404 ]; then
        bad "$method $path, public in the document, answered $code without the token"
    else ok; fi
done <"$tmp/ops"

# The document and every answer above held to the OpenAPI schema and to the document.
if why=$(scripts/npm-pinned.sh "$DIR" @seriousme/openapi-schema-validator@2.11.0 ajv@8.20.0 \
         ajv-formats@3.0.1 2>&1); then
    # Node resolves the packages from the script's own directory.
    cp tests/openapi/validate.mjs "$DIR/validate.mjs" || exit 1
    /usr/bin/node "$DIR/validate.mjs" "$DOC" "$tmp/answers" >"$tmp/validated" 2>&1
    rc=$?
    while read -r verdict rest; do
        case "$verdict" in
        ok) ok ;;
        FAIL) bad "$rest" ;;
        *) bad "validate.mjs: $verdict $rest" ;;
        esac
    done <"$tmp/validated"
    [ "$rc" = 0 ] || bad "validate.mjs exited $rc"
    grep -q '^ok openapi-3.1-schema$' "$tmp/validated" || bad "validate.mjs did not validate"
else
    unavailable "test_openapi validator" "$why"
fi
finish
