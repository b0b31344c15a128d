#!/bin/sh
# Installs the Kubernetes manifest validator (deploy/validate: kubernetes-models' schemas and
# js-yaml, at the versions deploy/validate/package-lock.json pins) into DIR (default
# build/deploy-validate) with `npm ci`, once: tests/test_deploy.sh runs it with node. A second
# call finds it there and only refreshes the script. Exit 1 with the reason on stderr when
# node, npm or the registry is not to be had.
set -u
DIR=${1:-build/deploy-validate}
SRC=deploy/validate
NODE=/usr/bin/node
[ -x "$NODE" ] || { echo "no $NODE (Debian's nodejs package)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "no npm (Debian's npm package)" >&2; exit 1; }
mkdir -p "$DIR" || exit 1
cp "$SRC/validate.mjs" "$DIR/" || exit 1
# Installed already from this very lockfile: nothing to do.
if [ -d "$DIR/node_modules" ] && cmp -s "$SRC/package-lock.json" "$DIR/package-lock.json"; then
    exit 0
fi
cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/" || exit 1
# npm's own cache lives in the build directory too, so that a reinstall needs no network.
if ! timeout 300 npm ci --prefix "$DIR" --cache "$DIR/.npm-cache" --prefer-offline \
        --no-audit --no-fund --loglevel=error >"$DIR/npm.log" 2>&1; then
    rm -f "$DIR/package-lock.json"
    echo "npm ci in $DIR failed (registry unreachable?): $(tail -n 3 "$DIR/npm.log" | tr '\n' ' ')" >&2
    exit 1
fi
