/* router/decide.c: the routing decision. It reads the parse (the constructs outside the
 * in-process subset) and the policy (the tier option, and for `auto` the host's answer), and
 * nothing else: --explain shows exactly what cr_run() then does. */
#include <stdio.h>
#include <string.h>

#include "router/router.h"

/* Standard modules whose import loads nothing of a finance stack, for a warm pool's lean
 * workers (sandbox_job.lean): one not named here goes to a worker with the preload list,
 * which any code runs on alike, at more CPU. */
static const char *const lean_modules[] = {
    "abc", "array", "base64", "bisect", "calendar", "cmath", "collections", "contextlib",
    "copy", "csv", "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions",
    "functools", "hashlib", "heapq", "io", "itertools", "json", "locale", "math", "numbers",
    "operator", "os", "pprint", "random", "re", "statistics", "string", "struct", "sys",
    "textwrap", "time", "typing", "unicodedata", "uuid", "zoneinfo",
};

/* 1 when every import under n names a module of lean_modules (its top level). */
static int imports_lean(const ir_node *n, int depth)
{
    if (!n) return 1;
    if (depth > 200) return 0;
    if ((n->kind == IR_IMPORT || n->kind == IR_IMPORT_FROM) && n->text) {
        size_t len = strcspn(n->text, ".");
        size_t i = 0;
        for (; i < sizeof lean_modules / sizeof lean_modules[0]; i++)
            if (strlen(lean_modules[i]) == len && !strncmp(lean_modules[i], n->text, len)) break;
        if (i == sizeof lean_modules / sizeof lean_modules[0]) return 0;
    }
    for (uint32_t i = 0; i < n->n; i++)
        if (!imports_lean(n->kid[i], depth + 1)) return 0;
    return 1;
}

/* 1 when the code imports only lean_modules: no reason names __import__ (an import the walk
 * cannot see) or a coding cookie (under which the parse is the cookie alone), and no import
 * statement names another. */
static int code_lean(const ir_module *m)
{
    for (size_t i = 0; i < m->nreasons; i++)
        if (strstr(m->reasons[i].code, "__import__") || !strncmp(m->reasons[i].code, "coding:", 7))
            return 0;
    return imports_lean(m->root, 0);
}

int router_needs_host(const ir_module *m, cr_tier tier)
{
    return m->nreasons && tier == CR_TIER_AUTO;
}

void router_decide(const ir_module *m, cr_tier tier, const router_host *host,
                   router_decision *d)
{
    memset(d, 0, sizeof *d);
    if (!m->nreasons) {
        d->route = CR_ROUTE_INPROCESS;
        return;
    }
    if (tier == CR_TIER_NONE) {
        d->route = CR_ROUTE_REJECTED;
        d->status = cr_error_set(&d->error, CR_EUNSUPPORTED, m->reasons[0].line,
                                 m->reasons[0].col,
                                 "%zu construct%s outside the in-process subset and sandboxes "
                                 "are off; first %s", m->nreasons, m->nreasons == 1 ? "" : "s",
                                 m->reasons[0].code);
        return;
    }
    if (tier == CR_TIER_AUTO) {
        d->tier = host->tier;
        snprintf(d->tier_why, sizeof d->tier_why, "%s", host->why);
    } else {
        d->tier = tier;
        snprintf(d->tier_why, sizeof d->tier_why, "%s: the tier option asks for it",
                 sandbox_tier_word(tier));
    }
    d->route = sandbox_tier_route(d->tier);
    d->lean = code_lean(m);
}
