#!/bin/sh
# The one place that lists what calcroute needs from Debian 12; README and .ci/run call it.
#   sh scripts/install-deps.sh          what building and running need (about a minute)
#   sh scripts/install-deps.sh --test   that, and what the whole test suite needs
# One package list a purpose below, each with why; a new package goes into the list it serves.
set -eu
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
test=0
case "${1:-}" in
--test) test=1 ;;
"") ;;
*) echo "usage: sh scripts/install-deps.sh [--test]" >&2; exit 2 ;;
esac

# step WHAT PACKAGES...: one apt-get install, announced, with apt's own progress.
step() {
    what=$1
    shift
    echo "install-deps: $what: $*"
    $SUDO apt-get install -y --no-install-recommends "$@"
}

echo "install-deps: updating the package lists"
$SUDO apt-get update

# The compiler, make, binutils (objcopy, ld -r) and pkg-config.
step "the compiler" build-essential pkg-config
# What libcalcroute links (Makefile's DEP_LIBS) and the headers of the two libraries it loads
# when needed: libmicrohttpd (calc-route serve; it brings libmicrohttpd12) and libpq (a
# postgresql:// ledger; it brings libpq5).
step "the libraries" libgmp-dev libmpfr-dev libtree-sitter-dev libsqlite3-dev libseccomp-dev \
    libsodium-dev libssl-dev libjansson-dev libunistring-dev libmicrohttpd-dev libpq-dev
# Debian's python3: what the sandboxes run code with, and the binding's interpreter.
step "python3" python3

[ "$test" = 1 ] || { echo "install-deps: done (--test adds what the test suite needs)"; exit 0; }

# What sandboxed code can import (README lists them; the OCI image carries the same,
# tests/test_deploy.sh holds them equal); the tests run it.
step "the sandboxes' packages" python3-numpy python3-pandas python3-scipy python3-sympy \
    python3-statsmodels python3-matplotlib python3-dateutil
# The Python package's build, install and test offline (tests/test_python_binding.sh); venv
# makes the virtual environment the --interpreter tests use.
step "Python packaging" python3-venv python3-setuptools python3-wheel python3-pip python3-pytest
# clang and llvm: libFuzzer (make fuzz) and ThreadSanitizer (make check-tsan).
step "clang" clang llvm
# curl: tests/test_serve.sh's client. sqlite3 and openssl: the ledger tests' second opinion.
step "test tools" curl sqlite3 openssl ca-certificates
# postgresql: the throwaway server of tests/test_audit_pg.sh (tests/pg-server.sh).
step "PostgreSQL" postgresql
# The kvm tier: qemu is make check-kvm's nested test host (with busybox and cpio its
# initramfs), cpio and erofs-utils build the guest's initramfs and package image.
step "the kvm tier" qemu-system-x86 busybox-static cpio erofs-utils
# The OCI image: mmdebstrap builds its root, podman runs it (runc where crun cannot run on the
# host's cgroups); apparmor's parser compiles deploy/'s profile (tests/test_deploy.sh).
step "the OCI image" mmdebstrap podman runc apparmor
# haproxy: the load balancer of tests/test_fleet.sh's serve hosts, iproute2's ip their
# network namespaces.
step "the fleet" haproxy iproute2
# CPython's own test data: the IBM decTest files tests/test_dectest.c runs the evaluator's
# decimal against (as test_decimal.py reads them), and math_testcases.txt and
# cmath_testcases.txt, which tests/test_math_cases.c checks every math function against.
step "CPython's test data" libpython3.11-testsuite
# Go and its x/mod: tests/interop, built offline, checks the ledger's checkpoints, proofs and
# tiles with Go's sumdb/note and sumdb/tlog (code we did not write; tests/test_interop.sh).
step "Go's x/mod" golang-go golang-golang-x-mod-dev
# The Debian packages (make deb, tests/test_deb.sh): debhelper and dh-python build them,
# lintian checks them; the test's root is mmdebstrap's.
step "Debian packaging" debhelper dh-python lintian
# bubblewrap: a peer make bench measures the ns tier against (bench/bench_sandbox.sh).
step "the benchmarks' peers" bubblewrap
# stress-ng loads both cores while tests/stress.sh runs the suite, to show its verdicts do not
# depend on a quiet machine.
step "the stress run" stress-ng
# Debian's nodejs and npm run the MCP SDK's client (tests/test_mcp_sdk.sh), unless a nodejs
# that carries its own npm is installed already (NodeSource's does, and conflicts with
# Debian's npm).
command -v npm >/dev/null 2>&1 || step "node" nodejs npm
echo "install-deps: done"
