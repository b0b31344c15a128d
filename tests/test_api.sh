#!/bin/sh
# The public C API as an embedder meets it: libcalcroute.a defines no global but the header's
# functions, so a program with its own tree_sitter_python (and a function named like one of
# ours inside) links against it; the man page covers every function of the header and every
# engine option; the header's option list is the library's.
B=${BUILD:-build}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { if [ "$1" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s: got [%s] want [%s]\n' "$3" "$1" "$2" >&2; fi; }
# Not the calling make's flags (a jobserver, -w): this make only prints the list.
LIBS=$(MAKEFLAGS= MAKELEVEL= make -s --no-print-directory print-libs)
# A sanitized build's objects need their runtime (make check-asan, check-tsan).
case "$B" in *asan*) LIBS="-fsanitize=address,undefined $LIBS" ;; *tsan*) LIBS="-fsanitize=thread $LIBS" ;; esac

# Every defined global of the archive is a function of the header; what it needs from other
# libraries (libc, tree-sitter, SQLite, ...) stays undefined, as it must.
funcs=$(sed -n 's/^CR_API .*[ *]\(cr_[a-z0-9_]*\)(.*/\1/p' include/calcroute.h | sort)
ok "$(nm -g --defined-only "$B/libcalcroute.a" | awk 'NF == 3 {print $3}' | sort)" "$funcs" \
   "libcalcroute.a's globals are the header's functions"

# An embedder with its own grammar (tree_sitter_python) and a function named like one of the
# library's internal ones (audit_open, pulled in by cr_engine_open).
cat >"$tmp/embed.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "calcroute.h"
const void *tree_sitter_python(void) { return "mine"; }
int audit_open(void) { return 42; }
int main(void)
{
    cr_config *cfg = cr_config_new();
    cr_error err = {0};
    if (cr_config_set(cfg, "tier", "none", &err) != CR_OK) return 1;
    cr_engine *e = cr_engine_open(cfg, &err);
    cr_config_free(cfg);
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    cr_request_set_code(req, "ans = 0.1 + 0.2", 15);
    if (!e || cr_run(e, req, &res, &err) != CR_OK) return 1;
    printf("%s %s %d\n", cr_result_value_fraction(res), (const char *)tree_sitter_python(),
           audit_open());
    cr_result_free(res);
    cr_request_free(req);
    cr_engine_close(e);
    for (size_t i = 0; cr_config_option(i); i++) printf("option %s\n", cr_config_option(i));
    return 0;
}
EOF
cc -std=c11 -Iinclude -o "$tmp/embed" "$tmp/embed.c" "$B/libcalcroute.a" $LIBS 2>"$tmp/cc.err"
ok "$?" 0 "an embedder with its own tree_sitter_python links against libcalcroute.a"
[ -s "$tmp/cc.err" ] && cat "$tmp/cc.err" >&2
"$tmp/embed" >"$tmp/out"
ok "$(head -n 1 "$tmp/out")" "3/10 mine 42" "the library's grammar and the embedder's, each its own"
# The same program against the objects as they are compiled: audit_open clashes (and the
# library's parser would silently take the embedder's tree_sitter_python, a grammar of
# another version): what the localisation prevents.
cc -std=c11 -Iinclude -o "$tmp/clash" "$tmp/embed.c" "$B/libcalcroute-dev.a" $LIBS 2>"$tmp/clash.err"
ok "$? $(grep -c 'multiple definition of .audit_open' "$tmp/clash.err")" "1 1" \
   "without the localisation, audit_open clashes"

# The library exports exactly what the Debian symbols file records (dpkg-gensymbols -c4
# fails the package's build on any difference; here it fails at once).
ok "$(nm -D --defined-only "$B/libcalcroute.so" | awk '$3 !~ /^CALCROUTE/ {sub(/@.*/, "", $3); print $3}' | sort | paste -sd' ')" \
   "$(sed -n 's/^ \(cr_[a-z0-9_]*\)@.*/\1/p' debian/libcalcroute0.symbols | sort | paste -sd' ')" \
   "the exported symbols are debian/libcalcroute0.symbols' list"
# The man page covers every function of the header and every engine option; the header
# lists every option the library has.
missing=
for f in $funcs; do grep -q "\\\\fB$f\\\\fR\|^\.B .*[ *]$f(" docs/libcalcroute.3 || missing="$missing $f"; done
ok "$missing" "" "functions of calcroute.h missing from docs/libcalcroute.3"
missing= undocumented=
for o in $(sed -n 's/^option //p' "$tmp/out"); do
    grep -q "^\.B $o\$\|^\.BR $o " docs/libcalcroute.3 || missing="$missing $o"
    grep -q "^ \*   $o " include/calcroute.h || undocumented="$undocumented $o"
done
ok "$missing" "" "engine options missing from docs/libcalcroute.3"
ok "$undocumented" "" "engine options missing from calcroute.h's list"
ok "$(grep -c '^option ' "$tmp/out")" \
   "$(sed -n '/---- engine options/,/^typedef struct cr_config/p' include/calcroute.h | grep -c '^ \*   [a-z_][a-z_]* ')" \
   "as many options in the header's list as in the library"
echo "$pass passed, $fail failed, 0 skipped"
