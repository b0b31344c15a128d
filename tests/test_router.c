/* tests/test_router.c: router_decide(), the routing decision, on real parses: the route and
 * the sandbox tier with its reason, for every tier option; and --explain's decision is the
 * one a run acts on. */
#include "parser/parser.h"
#include "router/router.h"
#include "testlib.h"

static ir_module *parse(const char *src)
{
    cr_policy pol;
    cr_error err = {0};
    ir_module *m = NULL;
    cr_policy_default(&pol);
    if (parser_parse_python(src, strlen(src), &pol.limits, &m, &err) != CR_OK) {
        fprintf(stderr, "parse %s: %s\n", src, err.message);
        return NULL;
    }
    return m;
}

static void test_inprocess(void)
{
    ir_module *m = parse("ans = 1 + 1");
    router_decision d;
    CHECK(m != NULL);
    if (!m) return;
    for (cr_tier t = CR_TIER_AUTO; t <= CR_TIER_NONE; t++) {
        CHECK_INT(router_needs_host(m, t), 0);
        router_decide(m, t, NULL, &d);
        CHECK_INT(d.route, CR_ROUTE_INPROCESS);
        CHECK_INT(d.status, CR_OK);
        CHECK_STR(d.tier_why, "");
    }
    ir_module_free(m);
}

static void test_sandbox(void)
{
    ir_module *m = parse("import os\nprint(os.getpid())");
    router_decision d;
    CHECK(m != NULL);
    if (!m) return;
    CHECK_INT(router_needs_host(m, CR_TIER_AUTO), 1);
    CHECK_INT(router_needs_host(m, CR_TIER_NS), 0);

    router_decide(m, CR_TIER_NONE, NULL, &d);
    CHECK_INT(d.route, CR_ROUTE_REJECTED);
    CHECK_INT(d.status, CR_EUNSUPPORTED);
    CHECK_STR(d.error.message, "2 constructs outside the in-process subset and sandboxes are "
                               "off; first import:os");
    CHECK_INT(d.error.line, 1);
    CHECK_INT(d.error.col, 1);
    CHECK_STR(d.tier_why, "");

    router_decide(m, CR_TIER_NS, NULL, &d);
    CHECK_INT(d.route, CR_ROUTE_NS);
    CHECK_INT(d.tier, CR_TIER_NS);
    CHECK_STR(d.tier_why, "ns: the tier option asks for it");

    router_decide(m, CR_TIER_KVM, NULL, &d);
    CHECK_INT(d.route, CR_ROUTE_KVM);
    CHECK_INT(d.tier, CR_TIER_KVM);
    CHECK_STR(d.tier_why, "kvm: the tier option asks for it");

    /* auto: whatever the host answered, with its reason */
    router_host kvm = { CR_TIER_KVM, "kvm: /dev/kvm runs a guest" };
    router_decide(m, CR_TIER_AUTO, &kvm, &d);
    CHECK_INT(d.route, CR_ROUTE_KVM);
    CHECK_INT(d.tier, CR_TIER_KVM);
    CHECK_STR(d.tier_why, "kvm: /dev/kvm runs a guest");
    router_host ns = { CR_TIER_NS, "ns: kvm unavailable (no /dev/kvm)" };
    router_decide(m, CR_TIER_AUTO, &ns, &d);
    CHECK_INT(d.route, CR_ROUTE_NS);
    CHECK_STR(d.tier_why, "ns: kvm unavailable (no /dev/kvm)");
    ir_module_free(m);
}

/* A sandboxed program is lean (a warm pool's worker without the preload list serves it)
 * when every import, nested ones too, names a common standard module; numpy (which the
 * subset knows, so no reason names its import), a module of its own, __import__ or a coding
 * cookie (the parse is the cookie alone) make it not. */
static void test_lean(void)
{
    static const struct { const char *src; int lean; } progs[] = {
        { "import os\nprint(1)", 1 },
        { "import os.path, json\nfrom datetime import date\nprint(date.today())", 1 },
        { "import os\ndef f():\n    import statistics\n    return statistics.mean([1, 2])\nprint(f())", 1 },
        { "import os\nimport numpy as np\nprint(np.int64(1))", 0 },
        { "import os\ntry:\n    import pandas\nexcept ImportError:\n    pass", 0 },
        { "from scipy import optimize\nprint(optimize)", 0 },
        { "import mymodule\nprint(1)", 0 },
        { "m = __import__('pandas')\nprint(m)", 0 },
        { "# -*- coding: latin-1 -*-\nimport os\nprint(1)", 0 },
    };
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        ir_module *m = parse(progs[i].src);
        router_decision d;
        CHECK(m != NULL);
        if (!m) continue;
        router_decide(m, CR_TIER_NS, NULL, &d);
        CHECK_INT(d.route, CR_ROUTE_NS);
        if (d.lean != progs[i].lean) fprintf(stderr, "lean %d: %s\n", d.lean, progs[i].src);
        CHECK_INT(d.lean, progs[i].lean);
        ir_module_free(m);
    }
}

/* The engine's explain and its run share the decision: the same route and tier_why, and the
 * tier_why is what the host says auto means for this engine. */
static void test_engine(void)
{
    cr_error err = {0};
    cr_engine *e = t_engine(&err, "tier", "auto", NULL);
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    CHECK(e && req);
    if (!e || !req) goto out;
    router_host host;
    router_host_tier(e, &host);
    const char *tier = host.tier == CR_TIER_KVM ? "kvm: " : "ns: ";
    CHECK(strncmp(host.why, tier, strlen(tier)) == 0);
    CHECK_INT(cr_request_set_code(req, "import os", 9), CR_OK);
    CHECK_INT(cr_request_set_explain(req, 1), CR_OK);
    CHECK_INT(cr_run(e, req, &res, &err), CR_OK);
    if (!res) goto out;
    CHECK_INT(cr_result_route(res), host.tier == CR_TIER_KVM ? CR_ROUTE_KVM : CR_ROUTE_NS);
    CHECK_STR(res->tier_why, host.why);
    CHECK_INT(res->explained, 1);
    cr_result_free(res);
    res = NULL;
    /* in-process: no tier, no reason for one */
    CHECK_INT(cr_request_set_code(req, "ans = 2", 7), CR_OK);
    CHECK_INT(cr_run(e, req, &res, &err), CR_OK);
    if (res) CHECK(res->tier_why == NULL && cr_result_route(res) == CR_ROUTE_INPROCESS);
out:
    cr_result_free(res);
    cr_request_free(req);
    cr_engine_close(e);
}

int main(void)
{
    test_inprocess();
    test_sandbox();
    test_lean();
    test_engine();
    return TEST_SUMMARY();
}
