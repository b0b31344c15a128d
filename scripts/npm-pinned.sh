#!/bin/sh
# npm-pinned.sh DIR PACKAGE@VERSION...: installs npm packages, each at the version named, into
# DIR, once: the tests that hold calcroute to other projects' JavaScript (the MCP SDK's client,
# an OpenAPI validator) run them from there with Debian's node. Pinned, so a run is
# repeatable; a second call finds them there and does nothing, and npm's own cache lives in DIR
# too, so that a remade DIR needs no network. Exit 1 with the reason on stderr when node, npm
# or the registry is not to be had.
set -u
[ $# -ge 2 ] || { echo "usage: $0 DIR PACKAGE@VERSION..." >&2; exit 2; }
DIR=$1
shift
NODE=/usr/bin/node
[ -x "$NODE" ] || { echo "no $NODE (Debian's nodejs package)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "no npm (Debian's npm package)" >&2; exit 1; }
have=1
for spec; do
    name=${spec%@*}
    got=$("$NODE" -p 'require(process.argv[1]).version' \
          "$(realpath -m "$DIR/node_modules/$name/package.json")" 2>/dev/null)
    [ "$got" = "${spec##*@}" ] || have=0
done
[ "$have" = 1 ] && exit 0
mkdir -p "$DIR" || exit 1
printf '{"private": true, "type": "module"}\n' >"$DIR/package.json"
if ! timeout 300 npm install --prefix "$DIR" --cache "$DIR/.npm-cache" --prefer-offline \
        --no-audit --no-fund --loglevel=error --save-exact "$@" >"$DIR/npm.log" 2>&1; then
    echo "npm install $* failed (registry unreachable?):" \
         "$(tail -n 3 "$DIR/npm.log" | tr '\n' ' ')" >&2
    exit 1
fi
