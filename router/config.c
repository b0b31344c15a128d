/* router/config.c: engine options by name (cr_config_*), each read and checked here once,
 * for the C API, calc-route's flags and the Python binding alike. The table is
 * CR_CONFIG_OPTIONS in router.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "router/router.h"

typedef struct {
    const char *key;
    router_config_kind kind;
    const char *def;
    uint64_t min, max;
    const char *want;       /* a CFG_CHOICE's words, '|' between */
} option;

#define CR_CONFIG_ROW(id, key, kind, def, min, max, want) { key, kind, def, min, max, want },
static const option options[CFG_COUNT] = { CR_CONFIG_OPTIONS(CR_CONFIG_ROW) };
#undef CR_CONFIG_ROW

static int find(const char *key)
{
    for (int i = 0; key && i < CFG_COUNT; i++)
        if (strcmp(options[i].key, key) == 0) return i;
    return -1;
}

cr_code router_parse_uint(const char *key, const char *value, uint64_t min, uint64_t max,
                          const char *want, uint64_t *out, cr_error *err)
{
    char *end;
    errno = 0;
    unsigned long long v = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
    if (!(value[0] < '0' || value[0] > '9' || *end || errno || v < min || v > max)) {
        *out = v;
        return CR_OK;
    }
    if (want)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "%s: want %s, got '%s'", key, want, value);
    return cr_error_set(err, CR_EUSAGE, 0, 0, "%s: want a whole number from %llu to %llu, "
                        "got '%s'", key, (unsigned long long)min, (unsigned long long)max, value);
}

/* A choice's words as a refusal lists them: "a, b or c". */
static void choice_words(const char *choices, char *out, size_t cap)
{
    size_t n = 0, words = 1, w = 0;
    for (const char *p = choices; *p; p++) words += *p == '|';
    for (const char *p = choices; *p && n + 6 < cap; p++) {
        if (*p != '|') {
            out[n++] = *p;
            continue;
        }
        const char *sep = ++w == words - 1 ? " or " : ", ";
        n += (size_t)snprintf(out + n, cap - n, "%s", sep);
    }
    out[n < cap ? n : cap - 1] = '\0';
}

cr_code router_config_parse(router_config_id i, const char *value, router_config_value *v,
                            cr_error *err)
{
    const option *o = &options[i];
    switch (o->kind) {
    case CFG_STR:
        return CR_OK;
    case CFG_DIR: {
        struct stat st;
        if (stat(value, &st) != 0 || !S_ISDIR(st.st_mode))
            return cr_error_set(err, CR_EUSAGE, 0, 0, "%s: want %s, got '%s'", o->key, o->want,
                                value);
        return CR_OK;
    }
    case CFG_CHOICE: {
        size_t len = strlen(value), n = 0;
        for (const char *w = o->want; *w; n++) {
            size_t wl = strcspn(w, "|");
            if (wl == len && memcmp(w, value, len) == 0) {
                v->u = n;
                return CR_OK;
            }
            w += wl + (w[wl] == '|');
        }
        char words[128];
        choice_words(o->want, words, sizeof words);
        return cr_error_set(err, CR_EUSAGE, 0, 0, "%s: want %s, got '%s'", o->key, words, value);
    }
    case CFG_AUTO_UINT:
        if (strcmp(value, "auto") == 0) {
            v->u = CFG_AUTO;
            return CR_OK;
        }
        /* fall through */
    case CFG_UINT:
        return router_parse_uint(o->key, value, o->min, o->max, o->want, &v->u, err);
    case CFG_SECONDS: {
        char *end;
        double d = strtod(value, &end);
        /* !(d > min) refuses NaN as well */
        if (*value == '\0' || *end || !(d > (double)o->min) || d > (double)o->max)
            return cr_error_set(err, CR_EUSAGE, 0, 0, "%s: want %s, got '%s'", o->key, o->want,
                                value);
        v->d = d;
        return CR_OK;
    }
    }
    return cr_error_set(err, CR_EINTERNAL, 0, 0, "%s: unknown kind", o->key);
}

static cr_code set(cr_config *cfg, int i, const char *value, cr_error *err)
{
    router_config_value v = {0};
    cr_code rc = value ? router_config_parse((router_config_id)i, value, &v, err) : CR_OK;
    if (rc != CR_OK) return rc;
    if (value && !(v.text = strdup(value))) return cr_error_set(err, CR_ENOMEM, 0, 0, "config");
    free(cfg->v[i].text);
    cfg->v[i] = v;
    return CR_OK;
}

cr_config *cr_config_new(void)
{
    cr_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) return NULL;
    for (int i = 0; i < CFG_COUNT; i++)
        if (cr_config_set(cfg, options[i].key, NULL, NULL) != CR_OK) {
            cr_config_free(cfg);
            return NULL;
        }
    return cfg;
}

void cr_config_free(cr_config *cfg)
{
    if (!cfg) return;
    for (int i = 0; i < CFG_COUNT; i++) free(cfg->v[i].text);
    free(cfg);
}

cr_config *router_config_dup(const cr_config *cfg)
{
    cr_config *c = cr_config_new();
    for (int i = 0; c && cfg && i < CFG_COUNT; i++)
        if (cr_config_set(c, options[i].key, cfg->v[i].text, NULL) != CR_OK) {
            cr_config_free(c);
            return NULL;
        }
    return c;
}

cr_code cr_config_set(cr_config *cfg, const char *key, const char *value, cr_error *err)
{
    int i = find(key);
    if (!cfg) return cr_error_set(err, CR_EUSAGE, 0, 0, "config: NULL");
    if (i < 0) return cr_error_set(err, CR_EUSAGE, 0, 0, "unknown option '%s'", key ? key : "");
    /* NULL is the default again; the defaults are valid, so this fails only on ENOMEM. */
    return set(cfg, i, value ? value : options[i].def, err);
}

const char *cr_config_get(const cr_config *cfg, const char *key)
{
    int i = find(key);
    return cfg && i >= 0 ? cfg->v[i].text : NULL;
}

const char *cr_config_option(size_t i)
{
    return i < CFG_COUNT ? options[i].key : NULL;
}

void router_config_policy(const cr_config *cfg, cr_policy *pol)
{
    cr_policy_default(pol);
    pol->precision = (int)cfg->v[CFG_PRECISION].u;
    pol->rounding = cfg->v[CFG_ROUNDING].u ? CR_ROUND_HALF_UP : CR_ROUND_HALF_EVEN;
    pol->limits.max_cpu_s = cfg->v[CFG_TIMEOUT].d;
    pol->limits.max_ops = cfg->v[CFG_MAX_STEPS].u;
    pol->limits.max_memory = (size_t)cfg->v[CFG_MAX_EVAL_MEMORY].u;
    pol->limits.max_depth = (uint32_t)cfg->v[CFG_MAX_DEPTH].u;
    pol->limits.max_call_depth = (uint32_t)cfg->v[CFG_MAX_RECURSION].u;
    pol->limits.max_int_bits = cfg->v[CFG_MAX_INT_BITS].u;
    pol->limits.max_str_len = cfg->v[CFG_MAX_STR_LEN].u;
    pol->limits.max_source = (size_t)cfg->v[CFG_MAX_SOURCE].u;
    pol->limits.max_stdout = (size_t)cfg->v[CFG_MAX_STDOUT].u;
}
