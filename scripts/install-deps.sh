#!/bin/sh
# The one place that lists what calcroute needs from Debian 12. README and .ci/run both call it.
set -eu
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential pkg-config clang llvm \
    libgmp-dev libmpfr-dev libtree-sitter-dev libsqlite3-dev sqlite3 libseccomp-dev libsodium-dev libjansson-dev libunistring-dev \
    python3 python3-matplotlib bubblewrap ca-certificates \
    qemu-system-x86 busybox-static cpio >/dev/null
