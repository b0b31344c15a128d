/* router/record.c: one audit record per request, whatever its route or outcome. The result
 * is handed back only after its record committed, so a caller never holds an answer that the
 * ledger does not. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "common/json.h"
#include "parser/parser.h"
#include "router/router.h"

static char *dump_member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

static char *policy_json(const cr_engine *e, const cr_policy *pol, const cr_result *res)
{
    static const char *const tiers[] = {"auto", "ns", "kvm", "none"};
    cr_buf names;
    cr_buf_init(&names, 0);
    for (int i = 0; i < 3 && pol->answer_vars[i]; i++)
        cr_buf_printf(&names, "%s%s", i ? "," : "", pol->answer_vars[i]);
    json_t *o = json_object();
    int failed = !o;
    cr_json_set(o, "precision", json_integer(pol->precision), &failed);
    cr_json_set(o, "rounding", json_string(pol->rounding == CR_ROUND_HALF_UP ? "half-up"
                                                                             : "half-even"),
                &failed);
    cr_json_set(o, "answer_vars", cr_json_text(names.p, names.len, NULL), &failed);
    cr_json_set(o, "tier", json_string(tiers[e->tier]), &failed);
    cr_json_set(o, "timeout_s", json_real(e->timeout_s), &failed);
    cr_json_set(o, "memory_mib", json_integer((json_int_t)e->memory_mib), &failed);
    /* The seed a sandboxed run drew from, given or derived: replay passes it back. */
    if (res->has_seed) cr_json_set(o, "seed", json_integer(res->seed), &failed);
    cr_buf_free(&names);
    char *s = failed ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

cr_code router_record(cr_engine *e, const cr_request *req, const cr_policy *pol, cr_result *res,
                      cr_error *err)
{
    if (!e->audit) return CR_OK;
    static const char *const langs[] = {"auto", "python", "dsl"};
    unsigned char idb[16];
    char id[33];
    randombytes_buf(idb, sizeof idb);
    sodium_bin2hex(id, sizeof id, idb, sizeof idb);
    json_t *rj = router_result_to_json(res);
    char *bindings = req->nbinds ? router_bindings_json(req) : NULL;
    char *tables = router_table_json(req);
    char *policy = policy_json(e, pol, res);
    char *reasons = rj ? dump_member(rj, "reasons") : NULL;
    char *error = rj ? dump_member(rj, "error") : NULL;
    if (!error && rj && res->status == CR_ELIMIT) error = dump_member(rj, "limit");
    char *timings = rj ? dump_member(rj, "timings") : NULL;
    cr_code rc = CR_OK;
    if (!rj || !policy || !reasons || !timings || (req->nbinds && !bindings)) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit record");
        goto out;
    }
    audit_record rec;
    memset(&rec, 0, sizeof rec);
    AUDIT_SET(&rec, request_id, id);
    AUDIT_SET(&rec, engine_version, CR_VERSION_STRING);
    AUDIT_SET(&rec, grammar_version, parser_grammar_version());
    AUDIT_SET(&rec, lang, langs[res->lang]);
    rec.code = req->code ? req->code : "";
    rec.code_len = req->code_len;
    AUDIT_SET(&rec, bindings, bindings);
    AUDIT_SET(&rec, tables, tables);
    AUDIT_SET(&rec, policy, policy);
    AUDIT_SET(&rec, route, cr_route_name(res->route));
    AUDIT_SET(&rec, reasons, reasons);
    rec.status = res->status;
    AUDIT_SET(&rec, value_fraction, res->has_value ? res->value_fraction : NULL);
    AUDIT_SET(&rec, value_repr, res->has_value ? res->value_repr : NULL);
    AUDIT_SET(&rec, value_type, res->has_value ? res->value_type : NULL);
    rec.value_exact = res->has_value ? res->value_exact : -1;
    rec.out = res->stdout_text ? res->stdout_text : "";
    rec.out_len = res->stdout_len;
    rec.err_out = res->stderr_text ? res->stderr_text : "";
    rec.err_out_len = res->stderr_len;
    AUDIT_SET(&rec, error, error);
    AUDIT_SET(&rec, artifacts, res->artifacts_json ? res->artifacts_json : "[]");
    AUDIT_SET(&rec, timings, timings);
    uint8_t hash[AUDIT_HASH_LEN];
    rc = audit_append(e->audit, &rec, &res->audit_seq, hash, err);   /* shares commits */
    if (rc == CR_OK) audit_hex(hash, res->audit_hash);
out:
    json_decref(rj);
    free(bindings);
    free(tables);
    free(policy);
    free(reasons);
    free(error);
    free(timings);
    return rc;
}
