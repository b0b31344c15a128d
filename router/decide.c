/* router/decide.c: the routing decision. It reads the parse (the constructs outside the
 * in-process subset) and the policy (the tier option, and for `auto` the host's answer), and
 * nothing else: --explain shows exactly what cr_run() then does. */
#include <stdio.h>
#include <string.h>

#include "router/router.h"

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
                 tier == CR_TIER_KVM ? "kvm" : "ns");
    }
    d->route = d->tier == CR_TIER_KVM ? CR_ROUTE_KVM : CR_ROUTE_NS;
}
