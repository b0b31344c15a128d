/* tests/test_format_cpython.c: format(value, spec) against CPython itself. The host's
 * /usr/bin/python3 draws 20 000 random specs (fixed seed) over ints, exactly representable
 * floats and strings, and prints what format() gives or the error it raises; num_format and
 * num_format_str must give the same text or the same error and message.
 *
 * Left out, where the design differs on purpose: ints under float presentation types beyond
 * 2**53 (CPython converts to a binary double first; we format the exact value), and the 'c'
 * type (a code point, not a number). Floats are all dyadic with short decimal expansions, so
 * that CPython's correctly rounded binary formatting and our exact one must agree. */
#include <stdint.h>
#include <unistd.h>

#include "evaluator/num/num.h"
#include "tests/testlib.h"

static const char ORACLE[] =
    "import random\n"
    "from fractions import Fraction\n"
    "random.seed(20261202)\n"
    "ints = [0, 7, -7, 1234567, -1234567, 10**20, -(10**25), 255, 1, -1]\n"
    "floats = [0.5, -0.5, 2.75, 1e20, 1.5e16, -0.125, 3.0, 0.0, 2.5, 1.0, 1024.0, 9.5,\n"
    "          99.5, 1e16, 123.0, 0.375, -1234.5625]\n"
    "strs = ['abc', 'na\\u00efve', '', 'x', 'hello world', '\\u20acuro', '12345']\n"
    "def spec():\n"
    "    r = random.random\n"
    "    s = ''\n"
    "    if r() < .4:\n"
    "        if r() < .5: s += random.choice('*x0 _,\\u00e9')\n"
    "        s += random.choice('<>=^')\n"
    "    if r() < .3: s += random.choice('+- ')\n"
    "    if r() < .1: s += 'z'\n"
    "    if r() < .2: s += '#'\n"
    "    if r() < .2: s += '0'\n"
    "    if r() < .5: s += str(random.randint(0, 25))\n"
    "    if r() < .3: s += random.choice(',_')\n"
    "    if r() < .5: s += '.' + str(random.randint(0, 20))\n"
    "    if r() < .8: s += random.choice('bdeEfFgGnoxX%s')\n"
    "    return s\n"
    "for _ in range(20000):\n"
    "    k, s = random.random(), spec()\n"
    "    if k < .4: v, tag = random.choice(ints), 'i'\n"
    "    elif k < .8: v, tag = random.choice(floats), 'f'\n"
    "    else: v, tag = random.choice(strs), 's'\n"
    "    t = s[-1:] if s[-1:] and s[-1:] in 'bdeEfFgGnoxX%s' else ''\n"
    "    if tag == 'i' and t and t in 'eEfFgG%' and abs(v) > 2**53: continue\n"
    "    try: want = 'OK ' + format(v, s)\n"
    "    except Exception as e: want = 'ERR ' + type(e).__name__ + ': ' + str(e)\n"
    "    q = v if tag == 's' else str(Fraction(v))\n"
    "    print(tag, q, s, want, sep='\\t')\n";

static num_ctx ctx;

/* One oracle line: tag \t value \t spec \t expected. Returns 1 when ours agrees. */
static int check_line(char *line)
{
    char *f[4];
    for (int i = 0; i < 3; i++) {
        f[i] = line;
        char *tab = strchr(line, '\t');
        if (!tab) return 0;
        *tab = '\0';
        line = tab + 1;
    }
    f[3] = line;
    cr_buf b;
    cr_error err = { 0 };
    cr_buf_init(&b, 1u << 20);
    cr_code rc;
    if (f[0][0] == 's') {
        rc = num_format_str(&b, f[1], strlen(f[1]), f[2], strlen(f[2]), &err);
    } else {
        mpq_t v;
        mpq_init(v);
        mpq_set_str(v, f[1], 10);
        mpq_canonicalize(v);
        rc = num_format(&b, v, f[0][0] == 'f', f[2], strlen(f[2]), &ctx, &err);
        mpq_clear(v);
    }
    char got[2048];
    if (rc == CR_OK) snprintf(got, sizeof got, "OK %s", b.p ? b.p : "");
    else snprintf(got, sizeof got, "ERR %s: %s", err.type, err.message);
    cr_buf_free(&b);
    if (strcmp(got, f[3]) == 0) return 1;
    fprintf(stderr, "format(%s %s, '%s')\n  got  [%s]\n  want [%s]\n", f[0], f[1], f[2], got,
            f[3]);
    return 0;
}

int main(void)
{
    cr_policy pol;
    cr_policy_default(&pol);
    num_ctx_from_policy(&ctx, &pol);
    if (access("/usr/bin/python3", X_OK) != 0) {
        SKIP("no /usr/bin/python3 to compare with");
        return TEST_SUMMARY();
    }
    char script[] = "/tmp/cr_format_oracle_XXXXXX";
    int fd = mkstemp(script);
    if (fd < 0 || write(fd, ORACLE, sizeof ORACLE - 1) != (ssize_t)(sizeof ORACLE - 1)) {
        CHECK(!"write the oracle script");
        return TEST_SUMMARY();
    }
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", script);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    int lines = 0, bad = 0;
    char line[4096];
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        lines++;
        if (!check_line(line) && ++bad > 20) break;
    }
    CHECK(p && pclose(p) == 0);
    unlink(script);
    CHECK_INT(bad, 0);
    CHECK(lines > 15000);     /* the oracle ran: not a test that passes on no input */
    printf("%d specs compared with CPython\n", lines);
    return TEST_SUMMARY();
}
