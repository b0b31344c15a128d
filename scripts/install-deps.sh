#!/bin/sh
# The one place that lists what calcroute needs from Debian 12. README and .ci/run both call it.
# The python3-* packages are what sandboxed code can import (README lists them); python3-venv
# makes the virtual environment the --interpreter tests use; setuptools, wheel, pip and pytest
# build, install and test the Python package offline (tests/test_python_binding.sh); nodejs and
# npm run the MCP SDK's client that tests `calc-route mcp` (tests/test_mcp_sdk.sh);
# libmicrohttpd-dev is `calc-route serve`'s HTTP server (its header to build; serve loads
# libmicrohttpd12, which it brings), curl what tests/test_serve.sh calls it with; mmdebstrap
# and podman build and run the OCI image (make image, tests/test_image.sh; runc where crun
# cannot run on the host's cgroups), apparmor's parser compiles deploy/'s profile
# (tests/test_deploy.sh); libpq-dev is the PostgreSQL ledger's client (its header to build; the
# library loads libpq5 when a postgresql:// ledger opens) and postgresql the throwaway server
# tests/test_audit_pg.sh starts (tests/pg-server.sh); erofs-utils builds the kvm tier's package
# image (make kvm-pkgs); haproxy is the load balancer in front of tests/test_fleet.sh's serve
# hosts, and iproute2's `ip` makes their network namespaces. libpython3.11-testsuite ships the IBM
# decTest files that tests/test_dectest.c runs against the evaluator's decimal.
set -eu
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential pkg-config clang llvm \
    libgmp-dev libmpfr-dev libtree-sitter-dev libsqlite3-dev sqlite3 libseccomp-dev libsodium-dev libssl-dev libjansson-dev \
    libmicrohttpd-dev curl libpq-dev postgresql \
    libunistring-dev python3 bubblewrap ca-certificates \
    python3-numpy python3-pandas python3-scipy python3-sympy python3-statsmodels \
    python3-matplotlib python3-dateutil python3-venv \
    python3-setuptools python3-wheel python3-pip python3-pytest \
    qemu-system-x86 busybox-static cpio openssl erofs-utils \
    mmdebstrap podman runc apparmor haproxy iproute2 libpython3.11-testsuite >/dev/null
# Debian's nodejs and npm, unless a nodejs that carries its own npm is installed already
# (NodeSource's package does, and conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 ||
    $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
