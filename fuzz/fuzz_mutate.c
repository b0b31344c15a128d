/* fuzz/fuzz_mutate.c: libFuzzer target for containers changed by the code that walks them.
 * The input bytes pick, from a small grammar, Python statements in which a callback (a sort
 * key, a min/max key, a map or filter function, a loop body, a comprehension or generator
 * element) appends to, pops from, empties or refills the list, dict or set being sorted or
 * walked; so nearly every input is a valid program of the in-process subset, and the fuzzer
 * spends its time on the evaluator's walks rather than on syntax errors. The program then
 * runs through the whole engine with fuzz_python's checks (fuzz_engine.h). */
#include <stdarg.h>

#include "fuzz/fuzz_engine.h"

/* What a callback does to a container; x is the item it was given. Each is an expression. */
static const char *const MUTATIONS[] = {
    "l.append(x)", "l.pop() if l else 0", "l.pop(0) if l else 0", "l.insert(0, x)",
    "l.extend(l)", "l.sort()", "l.reverse()", "cut(l)", "grow(l, x)", "swap()",
    "d.pop(x, 0)", "d.setdefault(x, 0)", "d.update({len(d): x})", "d.update({x: 1})",
    "d.pop(list(d)[0]) if d else 0", "s.update({len(s)})", "s.pop() if s else 0",
    "s.update({x})", "len(l) + len(d) + len(s)", "print(l, d, s)",
    "sorted(l, key=lambda y: l.append(y) or 0)", "max(l, key=lambda y: l.pop(), default=0)",
    "renew()",
};
#define NMUT (sizeof MUTATIONS / sizeof *MUTATIONS)

/* What is walked. */
static const char *const SOURCES[] = {
    "l", "d", "s", "d.keys()", "d.values()", "d.items()", "l[:]", "reversed(l)",
    "enumerate(l)", "zip(l, d)", "range(3)", "list(d)",
};
#define NSRC (sizeof SOURCES / sizeof *SOURCES)

/* Where a callback runs: %1$s is the mutation, %2$s the source. Each is one statement. */
static const char *const SITES[] = {
    "l.sort(key=lambda x: (%1$s, x)[1])",
    "l.sort(key=lambda x: (%1$s, x)[1], reverse=True)",
    "r = sorted(%2$s, key=lambda x: (%1$s, 0)[1])",
    "r = max(%2$s, key=lambda x: (%1$s, 0)[1], default=0)",
    "r = min(%2$s, key=lambda x: (%1$s, 0)[1], default=0)",
    "r = list(map(lambda x: %1$s, %2$s))",
    "r = list(map(lambda x, y: %1$s, %2$s, l))",
    "r = list(filter(lambda x: %1$s, %2$s))",
    "r = list(zip(%2$s, map(lambda x: %1$s, %2$s)))",
    "for x in %2$s:\n    %1$s",
    "for x in %2$s:\n    if %1$s:\n        break",
    "r = [%1$s for x in %2$s]",
    "r = {str(%1$s) for x in %2$s}",
    "r = {x: %1$s for x in %2$s}",
    "r = [y for x in %2$s for y in [%1$s]]",
    "r = sum(1 for x in %2$s if (%1$s, 1)[1])",
    "r = ''.join(str(%1$s) for x in %2$s)",
    "r = any((%1$s, 0)[1] for x in %2$s)",
    "r = all((%1$s, 1)[1] for x in %2$s)",
    "r = dict((x, %1$s) for x in %2$s)",
    "r = list(%1$s for x in %2$s)",
    "def f(x):\n    %1$s\n    return 0\nl.sort(key=f)",
    "r = sorted(%2$s, key=lambda x: (sorted(l, key=lambda x: (%1$s, 0)[1]), 0)[1])",
};
#define NSITE (sizeof SITES / sizeof *SITES)

/* Helpers the mutations call: statements that an expression cannot hold. */
static const char PRELUDE[] =
    "def cut(c):\n    del c[:]\n    return 0\n"
    "def grow(c, x):\n    c += [x, x]\n    return 0\n"
    "def swap():\n    global l\n    l = [9, 8]\n    return 0\n"
    "def renew():\n    global d, s\n    d = {7: 7}\n    s = {7}\n    return 0\n";

/* Appends to b[*n..cap), truncating; b stays NUL-terminated. */
static void put(char *b, size_t cap, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b + *n, cap - *n, fmt, ap);
    va_end(ap);
    if (k > 0) *n = (size_t)k < cap - *n ? *n + (size_t)k : cap - 1;
}

/* Writes the program the input spells to b (NUL-terminated; truncated at cap); its length. */
static size_t mutate_program(const uint8_t *data, size_t size, char *b, size_t cap)
{
    size_t n = 0, p = 0;
#define NEXT() (p < size ? data[p++] : 0)
#define PUT(...) put(b, cap, &n, __VA_ARGS__)
    unsigned nl = NEXT() % 6, nd = NEXT() % 6, ns = NEXT() % 6;
    PUT("%s", PRELUDE);
    PUT("l = [");
    for (unsigned i = 0; i < nl; i++) PUT("%s%u", i ? ", " : "", NEXT() % 8);
    PUT("]\nd = {");
    for (unsigned i = 0; i < nd; i++) PUT("%s%u: %u", i ? ", " : "", i, NEXT() % 8);
    PUT("}\ns = {");
    for (unsigned i = 0; i < ns; i++) PUT("%s%u", i ? ", " : "", i);
    PUT("}\n%s", ns ? "" : "s = set()\n");
    while (p < size && n + 1 < cap) {
        unsigned site = NEXT() % NSITE, mut = NEXT() % NMUT, src = NEXT() % NSRC;
        PUT(SITES[site], MUTATIONS[mut], SOURCES[src]);
        PUT("\n");
    }
    PUT("ans = (l, d, s)\n");
#undef NEXT
#undef PUT
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char prog[1 << 16];
    size_t n = mutate_program(data, size, prog, sizeof prog);
    cr_request *req = cr_request_new();
    if (!req) return 0;
    if (cr_request_set_code(req, prog, n) == CR_OK &&
        cr_request_set_lang(req, CR_LANG_PYTHON) == CR_OK)
        fuzz_run_checked(req);
    cr_request_free(req);
    return 0;
}
