/* tests/test_common.c: errors, bounded buffers, the arena, and text as JSON. */
#include "common/common.h"
#include "common/json.h"
#include "router/router.h"
#include "tests/testlib.h"

static void test_error_types(void)
{
    cr_error e = {0};
    CHECK_INT(cr_error_set(&e, CR_EPY_ZERODIV, 3, 7, "division by %s", "zero"), CR_EPY_ZERODIV);
    CHECK_STR(e.type, "ZeroDivisionError");
    CHECK_STR(e.message, "division by zero");
    CHECK_INT(e.line, 3);
    CHECK_INT(e.col, 7);
    cr_error_set(&e, CR_ELIMIT, 0, 0, "x");
    CHECK_STR(e.type, "LimitError");
    CHECK_INT(cr_code_from_pytype("ValueError", 10), CR_EPY_VALUE);
    CHECK_INT(cr_code_from_pytype("Value", 5), CR_OK);
    CHECK_INT(cr_error_set(NULL, CR_EUSAGE, 0, 0, "no err"), CR_EUSAGE);
}

static void test_buf_bound(void)
{
    cr_buf b;
    cr_buf_init(&b, 5);
    CHECK_INT(cr_buf_puts(&b, "abc"), CR_OK);
    CHECK_INT(cr_buf_puts(&b, "def"), CR_ELIMIT);
    CHECK_STR(b.p, "abcde");
    CHECK_INT(b.truncated, 1);
    size_t n;
    char *p = cr_buf_take(&b, &n);
    CHECK_INT(n, 5);
    free(p);
    cr_buf_init(&b, 0);
    for (int i = 0; i < 1000; i++) cr_buf_printf(&b, "%d,", i);
    CHECK_INT(b.len, 3890);
    cr_buf_free(&b);
}

static void test_arena(void)
{
    cr_arena a;
    cr_arena_init(&a, 40000);
    char *s = cr_arena_strndup(&a, "hello world", 5);
    CHECK_STR(s, "hello");
    CHECK(cr_arena_alloc(&a, 20000) != NULL);
    CHECK(cr_arena_alloc(&a, 30000) == NULL); /* past the bound */
    cr_arena_free(&a);
}

static void test_utf8(void)
{
    CHECK(cr_utf8_valid("", 0));
    CHECK(cr_utf8_valid("a\0b", 3));                         /* NUL is a character */
    CHECK(cr_utf8_valid("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9));
    CHECK(!cr_utf8_valid("\xFF", 1));
    CHECK(!cr_utf8_valid("\xC0\xAF", 2));                    /* overlong '/' */
    CHECK(!cr_utf8_valid("\xED\xA0\x80", 3));                /* a surrogate */
    CHECK(!cr_utf8_valid("\xF4\x90\x80\x80", 4));            /* past U+10FFFF */
    CHECK(!cr_utf8_valid("\xE2\x82", 2));                    /* cut short */
    /* A cut never splits a character, and removes nothing but the split one. */
    CHECK_INT(cr_utf8_cut("ab\xE2\x82", 4), 2);
    CHECK_INT(cr_utf8_cut("ab\xE2", 3), 2);
    CHECK_INT(cr_utf8_cut("ab\xF0\x9F\x98", 5), 2);
    CHECK_INT(cr_utf8_cut("ab\xE2\x82\xAC", 5), 5);
    CHECK_INT(cr_utf8_cut("ab\xFF", 3), 3);                   /* ill-formed, not split */
    CHECK_INT(cr_utf8_cut("\x80\x80\x80\x80", 4), 4);
    CHECK_INT(cr_utf8_cut("", 0), 0);
    size_t bad;
    CHECK_INT(cr_utf8_step("\xE2\x82x", 3, &bad), 0);
    CHECK_INT(bad, 2);                                       /* one U+FFFD for both */
    CHECK_INT(cr_utf8_step("\xED\xA0\x80", 3, &bad), 0);
    CHECK_INT(bad, 1);                                       /* one for each byte */
}

/* A capped buffer keeps whole characters and takes nothing after its cut. */
static void test_buf_cut(void)
{
    cr_buf b;
    cr_buf_init(&b, 5);
    CHECK_INT(cr_buf_puts(&b, "abc"), CR_OK);
    CHECK_INT(cr_buf_puts(&b, "\xE2\x82\xAC"), CR_ELIMIT);
    CHECK_STR(b.p, "abc");
    CHECK_INT(b.len, 3);
    CHECK_INT(b.truncated, 1);
    CHECK_INT(cr_buf_puts(&b, "d"), CR_ELIMIT);
    CHECK_STR(b.p, "abc");
    cr_buf_free(&b);
    cr_buf_init(&b, 4);                              /* the split character began earlier */
    cr_buf_puts(&b, "ab\xC3");
    CHECK_INT(cr_buf_puts(&b, "\xA9\xC3\xA9"), CR_ELIMIT);
    CHECK_STR(b.p, "ab\xC3\xA9");
    cr_buf_free(&b);
}

static void test_error_cut(void)
{
    cr_error e = {0};
    char big[600];
    for (int i = 0; i < 299; i++) memcpy(big + 2 * i, "\xC3\xA9", 2);
    big[598] = 0;
    cr_error_set(&e, CR_EPY_VALUE, 0, 0, "%s", big);    /* 255 bytes fit: 127 and a half */
    CHECK_INT(strlen(e.message), 254);
    CHECK(cr_utf8_valid(e.message, strlen(e.message)));
}

static char *dump(json_t *j)
{
    char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    return s;
}

static void test_json_text(void)
{
    int rep = 0;
    char *s = dump(cr_json_text("ok \xC3\xA9", 5, &rep));
    CHECK_STR(s, "\"ok \\u00E9\"");
    CHECK_INT(rep, 0);
    free(s);
    /* Python: b"a\xff\xe2\x82b\xed\xa0\x80\0".decode(errors="replace") */
    s = dump(cr_json_text("a\xFF\xE2\x82" "b\xED\xA0\x80", 9, &rep));
    CHECK_STR(s, "\"a\\uFFFD\\uFFFDb\\uFFFD\\uFFFD\\uFFFD\\u0000\"");
    CHECK_INT(rep, 1);
    free(s);
    s = dump(cr_json_str(NULL));
    CHECK_STR(s, "null");
    free(s);
    s = dump(cr_json_bytes_if_not_utf8("a\xFF", 2));
    CHECK_STR(s, "\"Yf8=\"");
    free(s);
    s = dump(cr_json_bytes_if_not_utf8("plain", 5));
    CHECK_STR(s, "null");
    free(s);
    /* A member that cannot be made is counted, never silently missing. */
    json_t *o = json_object();
    int failed = 0;
    cr_json_set(o, "a", json_true(), &failed);
    CHECK_INT(failed, 0);
    cr_json_set(o, "b", json_string("\xFF"), &failed);     /* jansson refuses: NULL */
    CHECK_INT(failed, 1);
    json_decref(o);
}

/* The engine options' defaults (CR_CONFIG_OPTIONS) are the policy's (cr_policy_default()),
 * which the evaluator's own tests run with; and the option readers refuse what they must. */
static void test_config_defaults(void)
{
    cr_config *cfg = cr_config_new();
    cr_policy want, got;
    cr_error err = {0};
    CHECK(cfg != NULL);
    if (!cfg) return;
    cr_policy_default(&want);
    router_config_policy(cfg, &got);
    want.limits.interrupt_fd = got.limits.interrupt_fd = NULL;
    CHECK(memcmp(&want.limits, &got.limits, sizeof want.limits) == 0);
    CHECK_INT(got.precision, want.precision);
    CHECK_INT(got.rounding, want.rounding);
    CHECK_STR(cr_config_get(cfg, "timeout"), "10");
    CHECK(cr_config_get(cfg, "audit") == NULL);
    CHECK(cr_config_get(cfg, "nope") == NULL);
    /* a refusal keeps the value; NULL restores the default */
    CHECK_INT(cr_config_set(cfg, "max_steps", "1000", &err), CR_OK);
    CHECK_INT(cr_config_set(cfg, "max_steps", "-1", &err), CR_EUSAGE);
    CHECK_STR(err.message, "max_steps: want a whole number from 1 to 4611686018427387904, got '-1'");
    CHECK_STR(cr_config_get(cfg, "max_steps"), "1000");
    CHECK_INT(cr_config_set(cfg, "max_steps", NULL, &err), CR_OK);
    CHECK_STR(cr_config_get(cfg, "max_steps"), "100000000000");
    CHECK_INT(cr_config_set(cfg, "max_steps", "18446744073709551616", &err), CR_EUSAGE);
    CHECK_INT(cr_config_set(cfg, "max_steps", " 5", &err), CR_EUSAGE);
    CHECK_INT(cr_config_set(cfg, "timeout", "1e-3", &err), CR_OK);
    CHECK_INT(cr_config_set(cfg, "timeout", "0x10", &err), CR_OK);    /* strtod's hex: 16 s */
    CHECK_INT(cr_config_set(cfg, "timeout", "86400.5", &err), CR_EUSAGE);
    CHECK_INT(cr_config_set(cfg, "rounding", "half-", &err), CR_EUSAGE);
    CHECK_INT(cr_config_set(cfg, "rounding", "half-up", &err), CR_OK);
    CHECK_INT(cr_config_set(NULL, "tier", "ns", &err), CR_EUSAGE);
    CHECK_INT(cr_config_set(cfg, NULL, "ns", &err), CR_EUSAGE);
    size_t n = 0;
    while (cr_config_option(n)) n++;
    CHECK_INT((int)n, CFG_COUNT);
    cr_config_free(cfg);
}

int main(void)
{
    test_config_defaults();
    test_error_types();
    test_buf_bound();
    test_arena();
    test_utf8();
    test_buf_cut();
    test_error_cut();
    test_json_text();
    return TEST_SUMMARY();
}
