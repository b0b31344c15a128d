/* tests/test_common.c: errors, bounded buffers and the arena. */
#include "common/common.h"
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

int main(void)
{
    test_error_types();
    test_buf_bound();
    test_arena();
    return TEST_SUMMARY();
}
