/* sandbox/sandbox.c: the dispatch above the tiers: the table of their ops (SANDBOX_TIERS),
 * which tier a job runs in, and what auto resolves to on this host. */
#include <stdio.h>
#include <string.h>

#include "sandbox/sandbox.h"

#define TIER_OPS(id, word, route, ops) &sandbox_tier_##ops,
#define TIER_WORD(id, word, route, ops) word,
static const sandbox_tier *const tiers[] = { SANDBOX_TIERS(TIER_OPS) };
static const char *const words[] = { SANDBOX_TIERS(TIER_WORD) };
#define NTIERS (sizeof tiers / sizeof tiers[0])

/* The rows follow calcroute.h's enums, so a row's index is its tier's and its route's value
 * less the first one's, and the "tier" option's words (SANDBOX_TIER_CHOICES) are cr_tier's
 * in order. */
#define TIER_ROW(id, word, route, ops) ROW_##id,
enum { SANDBOX_TIERS(TIER_ROW) ROW_COUNT };
#define TIER_ORDER(id, word, route, ops)                                                    \
    _Static_assert(CR_TIER_##id == CR_TIER_NS + ROW_##id, "SANDBOX_TIERS in cr_tier's order"); \
    _Static_assert(CR_ROUTE_##route == CR_ROUTE_NS + ROW_##id, "SANDBOX_TIERS in cr_route's order");
SANDBOX_TIERS(TIER_ORDER)
_Static_assert(CR_TIER_AUTO == 0 && CR_TIER_NS == 1 && CR_TIER_NONE == CR_TIER_NS + ROW_COUNT,
               "cr_tier: auto, the rows, none");
_Static_assert(CR_ROUTE_REJECTED == CR_ROUTE_NS + ROW_COUNT, "cr_route: inprocess, the rows, rejected");

const sandbox_tier *sandbox_tier_ops(cr_tier tier)
{
    size_t i = (size_t)tier - CR_TIER_NS;
    return i < NTIERS ? tiers[i] : NULL;
}

const char *sandbox_tier_word(cr_tier tier)
{
    size_t i = (size_t)tier - CR_TIER_NS;
    if (tier == CR_TIER_AUTO) return "auto";
    if (tier == CR_TIER_NONE) return "none";
    return i < NTIERS ? words[i] : "unknown";
}

int sandbox_tier_find(const char *word, size_t len)
{
    for (size_t i = 0; i < NTIERS; i++)
        if (strlen(words[i]) == len && memcmp(words[i], word, len) == 0) return CR_TIER_NS + (int)i;
    return -1;
}

cr_route sandbox_tier_route(cr_tier tier)
{
    return sandbox_tier_ops(tier) ? (cr_route)(CR_ROUTE_NS + (tier - CR_TIER_NS)) : CR_ROUTE_REJECTED;
}

cr_tier sandbox_route_tier(cr_route route)
{
    size_t i = (size_t)route - CR_ROUTE_NS;
    return i < NTIERS ? (cr_tier)(CR_TIER_NS + i) : CR_TIER_NONE;
}

/* Auto takes the last row that can run here (rows go from the weakest isolation up), else
 * the first; its probes of the others keep their reasons to themselves. */
int sandbox_tier_available(cr_tier tier, char *why, size_t why_len)
{
    char tmp[256], other[256];
    const sandbox_tier *ops = sandbox_tier_ops(tier);
    if (!why || !why_len) { why = tmp; why_len = sizeof tmp; }
    why[0] = 0;
    if (ops) return ops->available(NULL, why, why_len);
    if (tier != CR_TIER_AUTO) {
        snprintf(why, why_len, "no sandbox tier (policy forbids sandboxes)");
        return 0;
    }
    for (size_t i = NTIERS; i-- > 1;)
        if (tiers[i]->available(NULL, other, sizeof other)) return 1;
    if (tiers[0]->available(NULL, why, why_len)) { why[0] = 0; return 1; }
    return 0;
}

cr_tier sandbox_tier_auto(const char *kvm_dir, char *why, size_t why_len)
{
    char other[256] = "";
    char tmp[256];
    if (!why || !why_len) { why = tmp; why_len = sizeof tmp; }
    for (size_t i = NTIERS; i-- > 1;)
        if (tiers[i]->available(kvm_dir, other, sizeof other)) {
            snprintf(why, why_len, "%s: %s", words[i], tiers[i]->chosen);
            return (cr_tier)(CR_TIER_NS + i);
        }
    snprintf(why, why_len, "%s: %s unavailable (%s)", words[0], words[NTIERS - 1], other);
    return CR_TIER_NS;
}

cr_tier sandbox_job_tier(const sandbox_job *job, char *why, size_t why_len)
{
    if (job->tier != CR_TIER_AUTO) return job->tier;
    if (sandbox_job_host_python(job)) {
        /* Only the ns tier runs the host's interpreters (the kvm guest has its own python). */
        snprintf(why, why_len, "ns: the configured interpreter runs in the ns tier only");
        return CR_TIER_NS;
    }
    return sandbox_tier_auto(job->kvm_dir, why, why_len);
}

cr_code sandbox_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    char why[256] = "";
    const sandbox_tier *ops;
    cr_tier tier;
    cr_code rc;

    memset(out, 0, sizeof *out);
    if (!job || (!job->code && job->code_len))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "sandbox: no code");
    tier = sandbox_job_tier(job, why, sizeof why);
    if (!(ops = sandbox_tier_ops(tier)))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "sandbox: tier %d is not a sandbox", (int)tier);
    rc = ops->run(job, out, err);
    if (rc == CR_OK && job->tier == CR_TIER_AUTO && !out->tier_note[0])
        snprintf(out->tier_note, sizeof out->tier_note, "%s", why);
    return rc;
}
