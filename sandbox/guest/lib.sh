# sandbox/guest/lib.sh: what build.sh and build-pkgs.sh share (sourced; $root is the tree).
copy() {   # a file at the same path in the tree, symlinks resolved
    [ -e "$root$1" ] && return 0
    mkdir -p "$root$(dirname "$1")"
    cp -L "$1" "$root$1"
}
copy_libs() {   # the shared libraries $1 loads, each at its own path
    ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' |
    while read -r lib; do copy "$lib"; done
}
