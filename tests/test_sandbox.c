/* tests/test_sandbox.c: the sandbox interface and the ns tier doing its ordinary job: the
 * runner's final-value rule, exceptions, stdout/stderr, /data, artifacts, the report protocol. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "sandbox/ns/ns.h"
#include "tests/testlib.h"
#include "tests/test_sandbox_util.h"

/* ---- no sandbox needed ------------------------------------------------------------------ */

static void test_limit_names(void)
{
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_NONE), "none");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_WALL), "wall");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_CPU), "cpu");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_MEMORY), "memory");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_PROCS), "procs");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_OUTPUT), "output");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_DISK), "disk");
    CHECK_STR(sandbox_limit_name(SANDBOX_LIMIT_ARTIFACTS), "artifacts");
    CHECK_STR(sandbox_limit_name((sandbox_limit)99), "unknown");
}

static void test_defaults(void)
{
    sandbox_job job;
    sandbox_job_init(&job);
    CHECK_INT(job.tier, CR_TIER_AUTO);
    CHECK_STR(job.interpreter, "/usr/bin/python3");
    CHECK(job.limits.wall_s == 10.0 && job.limits.cpu_s == 10.0);
    CHECK_INT(job.limits.memory_bytes, 512u << 20);
    CHECK_INT(job.limits.max_procs, 64);
    CHECK_INT(job.limits.max_artifacts, 64);
}

static void test_job_encode(void)
{
    const char *vars[] = { "total", "x", NULL };
    sandbox_job job;
    cr_buf b;
    sandbox_job_init(&job);
    job.code = "print(1)\n";
    job.code_len = 9;
    job.answer_vars = vars;
    job.globals_json = "{\"a\": 1}";
    cr_buf_init(&b, 0);
    CHECK_INT(sandbox_job_encode(&job, &b, NULL), CR_OK);
    CHECK(strncmp(b.p, "code 9\nprint(1)\n\nvar 5\ntotal\nvar 1\nx\nglobals 8\n{\"a\": 1}\nseed ", 61) == 0);
    /* The derived seed follows the code and the globals; a given one is taken as it is. */
    uint32_t derived = sandbox_job_seed(&job);
    char want[32];
    snprintf(want, sizeof want, "seed %u\n%u\n", (unsigned)snprintf(NULL, 0, "%u", derived), derived);
    CHECK_STR(b.p + 56, want);
    job.globals_json = "{\"a\": 2}";
    CHECK(sandbox_job_seed(&job) != derived);
    job.globals_json = "{\"a\": 1}";
    CHECK_INT(sandbox_job_seed(&job), derived);
    job.seed = 7;
    CHECK_INT(sandbox_job_seed(&job), 7);
    cr_buf_free(&b);
}

#define PARSE(lit) sandbox_report_parse(lit, sizeof(lit) - 1, &oc, NULL)

static void test_report_parse(void)
{
    static const char good[] = "var0.type 5\nfloat\nvar0.repr 3\n0.5\nvar0.decimal 3\n0.5\n"
                               "var0.name 3\nans\n";
    static const char raised[] = "error.type 11\nSyntaxError\nerror.message 14\ninvalid syntax\n"
                                 "error.line 1\n3\nerror.col 1\n7\n";
    sandbox_outcome oc;

    memset(&oc, 0, sizeof oc);
    CHECK_INT(sandbox_report_parse(good, sizeof good - 1, &oc, NULL), CR_OK);
    CHECK_INT(oc.has_value, 1);
    CHECK_STR(oc.value_type, "float");
    CHECK_STR(oc.value_repr, "0.5");
    CHECK_STR(oc.value_decimal, "0.5");
    CHECK_STR(oc.value_from, "ans");
    CHECK_INT(oc.raised, 0);
    sandbox_outcome_free(&oc);

    CHECK_INT(sandbox_report_parse(raised, sizeof raised - 1, &oc, NULL), CR_OK);
    CHECK_INT(oc.raised, 1);
    CHECK_STR(oc.error_type, "SyntaxError");
    CHECK_STR(oc.error_message, "invalid syntax");
    CHECK_INT(oc.error_line, 3);
    CHECK_INT(oc.error_col, 7);
    CHECK_INT(oc.has_value, 0);
    sandbox_outcome_free(&oc);

    /* Files left outside /out: the count and the names as they came. */
    CHECK_INT(PARSE("dropped.count 2\n30\ndropped.names 11\n/tmp/a\0/tmp\n"), CR_OK);
    CHECK_INT(oc.dropped_count, 30);
    CHECK_INT(oc.dropped_names_len, 12);
    CHECK(oc.dropped_names && !memcmp(oc.dropped_names, "/tmp/a\0/tmp", 12));
    sandbox_outcome_free(&oc);
    CHECK_INT(PARSE("dropped.count 1\n1\ndropped.names 5\n/a\0/b\n"), CR_ESANDBOX);
    CHECK(oc.dropped_names == NULL);

    /* A record cut short, a length past the end: kept what was whole. */
    CHECK_INT(PARSE("var0.type 3\nint\nvar0.repr 10\n12"), CR_OK);
    CHECK(oc.value_type == NULL && oc.value_repr == NULL);
    CHECK_INT(oc.has_value, 0);
    sandbox_outcome_free(&oc);
    CHECK_INT(PARSE(""), CR_OK);
    CHECK_INT(oc.has_value + oc.raised, 0);
    sandbox_outcome_free(&oc);

    /* Limits read from the exception. */
    CHECK_INT(PARSE("error.type 11\nMemoryError\n"), CR_OK);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_MEMORY);
    sandbox_outcome_free(&oc);
    CHECK_INT(PARSE("error.type 7\nOSError\nerror.errno 2\n28\n"
                                   "error.filename 10\n/out/x.png\n"), CR_OK);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_ARTIFACTS);
    sandbox_outcome_free(&oc);
    CHECK_INT(PARSE("error.type 7\nOSError\nerror.errno 2\n28\n"),
              CR_OK);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_DISK);
    sandbox_outcome_free(&oc);
}

/* A report the runner could not have written: refused whole, the reason named. */
static void check_refused(const char *report, const char *why)
{
    sandbox_outcome oc;
    cr_error err = { 0 };
    char want[160];
    memset(&oc, 0, sizeof oc);
    snprintf(want, sizeof want, "sandbox: the runner's report was refused: %s at byte ", why);
    CHECK_INT(sandbox_report_parse(report, strlen(report), &oc, &err), CR_ESANDBOX);
    if (strncmp(err.message, want, strlen(want))) fprintf(stderr, "  [%s]\n", err.message);
    CHECK(!strncmp(err.message, want, strlen(want)));
    CHECK(oc.value_repr == NULL && oc.value_decimal == NULL && oc.error_type == NULL);
    sandbox_outcome_free(&oc);
}

/* A value the runner would write, as "type repr decimal" ("-" for none): accepted as is. */
static void check_accepted(const char *type, const char *repr, const char *dec)
{
    char report[512];
    sandbox_outcome oc;
    int n = snprintf(report, sizeof report, "var0.type %zu\n%s\nvar0.repr %zu\n%s\n"
                     "var0.name 3\nans\n", strlen(type), type, strlen(repr), repr);
    if (strcmp(dec, "-"))
        snprintf(report + n, sizeof report - (size_t)n, "var0.decimal %zu\n%s\n", strlen(dec), dec);
    memset(&oc, 0, sizeof oc);
    CHECK_INT(sandbox_report_parse(report, strlen(report), &oc, NULL), CR_OK);
    CHECK_STR(oc.value_repr, repr);
    if (strcmp(dec, "-")) CHECK_STR(oc.value_decimal, dec);
    else CHECK(oc.value_decimal == NULL);
    sandbox_outcome_free(&oc);
}

/* The runner reports every candidate; the host picks one with cr_final_choose(), as the
 * evaluator does. `want` is "source repr", or "none". */
static void check_chosen(const char *report, const char *want)
{
    sandbox_outcome oc;
    char got[256] = "none";
    memset(&oc, 0, sizeof oc);
    CHECK_INT(sandbox_report_parse(report, strlen(report), &oc, NULL), CR_OK);
    if (oc.has_value) snprintf(got, sizeof got, "%s %s", oc.value_from, oc.value_repr);
    CHECK_STR(got, want);
    sandbox_outcome_free(&oc);
}

#define SOL_BY(by) "solution.type 3\nint\nsolution.repr 1\n7\nsolution.decimal 1\n7\n" \
                   "solution.by " by "\n"
#define VAR(i, name, len) "var" #i ".type 3\nstr\nvar" #i ".repr 3\n'" name "'\nvar" #i \
                          ".name " #len "\n" name "\n"
#define EXPR "expr.type 3\nstr\nexpr.repr 3\n'e'\n"
#define ASSIGNED "assigned.type 3\nstr\nassigned.repr 3\n'a'\nassigned.name 1\na\n"

static void test_report_choice(void)
{
    /* solution() nobody called, then called at the end: before everything */
    check_chosen(ASSIGNED EXPR VAR(1, "r", 1) SOL_BY("3\nend"), "solution() 7");
    /* answer variables in the policy's order, then the program's own call of solution() */
    check_chosen(ASSIGNED EXPR VAR(2, "x", 1) VAR(1, "r", 1) SOL_BY("7\nprogram"), "r 'r'");
    check_chosen(ASSIGNED EXPR SOL_BY("7\nprogram"), "solution() 7");
    check_chosen(VAR(2, "x", 1) EXPR, "x 'x'");
    check_chosen(ASSIGNED EXPR, "last expression 'e'");
    check_chosen(ASSIGNED, "a 'a'");
    check_chosen("", "none");
}

static void test_report_refused(void)
{
    sandbox_outcome oc;
    memset(&oc, 0, sizeof oc);   /* the parser fills what it reads; the buffers are the caller's */
    /* A second record of a kind is not the last one winning. */
    check_refused("var0.type 3\nint\nvar0.repr 1\n7\nvar0.decimal 1\n7\nvar0.name 3\nans\n"
                  "var0.repr 2\n42\n", "a repeated record");
    check_refused("error.type 9\nNameError\nerror.type 11\nMemoryError\n", "a repeated record");
    check_refused("var0.exact 1\n1\n", "an unknown record");
    check_refused("value.repr 1\n7\n", "an unknown record");
    check_refused("var0.repr 1\nxy", "a record longer than its length");
    check_refused("garbage\nvar0.repr 1\n7\n", "a malformed record");
    check_refused("var0.repr 99999999999999999999\nx\n", "a malformed record");
    check_refused("var0.type 3\nint\nvar0.repr 1\n7\nvar0.decimal 1\n7\nvar0.name 3\nans\n"
                  "error.type 11\nMemoryError\n", "both a value and an exception");
    check_refused("var0.type 3\nint\nvar0.repr 1\n7\n", "a value without its repr, type, name or caller");
    check_refused("solution.type 3\nint\nsolution.repr 1\n7\nsolution.decimal 1\n7\n",
                  "a value without its repr, type, name or caller");
    check_refused("solution.type 3\nint\nsolution.repr 1\n7\nsolution.decimal 1\n7\n"
                  "solution.by 4\nmain\n", "a solution() caller that is not program or end");
    check_refused("expr.type 3\nstr\nexpr.repr 3\n'x'\nexpr.name 1\nx\n",
                  "a record its value cannot have");
    check_refused("var0.type 3\nstr\nvar0.repr 3\n'x'\nvar0.name 3\nans\nvar0.by 3\nend\n",
                  "a record its value cannot have");
    check_refused("assigned.type 3\nstr\nassigned.repr 3\n'x'\nassigned.name 0\n\n",
                  "a value with an empty name");
    check_refused("var3.type 3\nstr\nvar3.repr 3\n'x'\nvar3.name 1\nx\n", "an unknown record");
    check_refused("expr.type 3\nstr\nexpr.repr 3\n'x'\nsolution.type 3\nint\n"
                  "solution.repr 1\n7\nsolution.decimal 1\n8\nsolution.by 3\nend\n",
                  "an int whose decimal is not its repr");
    check_refused("error.message 1\nx\n", "an exception without its type");
    check_refused("expr.type 3\nint\nexpr.repr 1\n7\nexpr.decimal 1\n7\nexpr.native 11\n{\"int\":\"7\"}\n",
                  "a native form on a value that is not a container");
    /* A container's native form comes as the runner wrote it; the router checks its shape. */
    CHECK_INT(PARSE("expr.type 4\nlist\nexpr.repr 3\n[7]\nexpr.native 22\n{\"list\":[{\"int\":\"7\"}]}\n"),
              CR_OK);
    CHECK_STR(oc.value_native, "{\"list\":[{\"int\":\"7\"}]}");
    sandbox_outcome_free(&oc);
    check_refused("dropped.count 1\n2\n", "dropped files without their count or names");
    check_refused("dropped.count 1\nx\ndropped.names 2\n/a\n", "a count that is not a number");
    check_refused("error.type 9\nNameError\nerror.line 2\n-1\n", "a count that is not a number");
    check_refused("exit.signal 2\n99\n", "a signal number out of range");
    check_refused("exit.status 3\n256\n", "an exit status out of range");
    check_refused("exit.status 1\n0\nexit.status 1\n0\n", "a repeated record");
    check_refused("exit.status 2\n-1\n", "a count that is not a number");
    /* Decimals that are not what the repr shows: the fraction and "exact" come from them. */
    check_refused("var0.type 3\nint\nvar0.repr 1\n7\nvar0.decimal 2\n42\nvar0.name 3\nans\n",
                  "an int whose decimal is not its repr");
    check_refused("var0.type 3\nint\nvar0.repr 1\n7\nvar0.name 3\nans\n",
                  "an int whose decimal is not its repr");
    check_refused("var0.type 4\nbool\nvar0.repr 4\nTrue\nvar0.decimal 1\n0\nvar0.name 3\nans\n",
                  "a bool whose decimal is not 1 or 0");
    check_refused("var0.type 5\nfloat\nvar0.repr 3\n0.5\nvar0.decimal 4\n0.25\nvar0.name 3\nans\n",
                  "a repr that disagrees with its decimal");
    check_refused("var0.type 5\nfloat\nvar0.repr 3\n0.5\nvar0.name 3\nans\n",
                  "a finite float without its decimal");
    check_refused("var0.type 3\nstr\nvar0.repr 7\n'seven'\nvar0.decimal 2\n42\nvar0.name 3\nans\n",
                  "a repr that disagrees with its decimal");
    check_refused("var0.type 7\nDecimal\nvar0.repr 3\n1.5\nvar0.decimal 3\n1.5\nvar0.name 3\nans\n",
                  "a Decimal whose repr is not Decimal('...')");
    check_refused("var0.type 7\nDecimal\nvar0.repr 14\nDecimal('1.5')\nvar0.decimal 3\n2.5\n"
                  "var0.name 3\nans\n", "a repr that disagrees with its decimal");
    check_refused("var0.type 8\nFraction\nvar0.repr 14\nFraction(1, 2)\nvar0.decimal 1\nx\n"
                  "var0.name 3\nans\n", "a Fraction whose decimal is not a number");
    /* What the runner does write: type, repr, decimal ("-" for none). */
    static const char *const accepted[][3] = {
        { "int", "-120", "-120" }, { "bool", "False", "0" }, { "float", "1e-05", "0.00001" },
        { "float", "1.5e+16", "15000000000000000.0" }, { "float", "-0.0", "-0.0" },
        { "float", "nan", "-" }, { "Decimal", "Decimal('3.00')", "3.00" },
        { "Decimal", "Decimal('1E+2')", "100" }, { "Decimal", "Decimal('NaN')", "-" },
        { "Fraction", "Fraction(-3, 8)", "-0.375" }, { "int64", "12", "12" }, { "str", "'x'", "-" },
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        check_accepted(accepted[i][0], accepted[i][1], accepted[i][2]);
    /* The code's process died by a signal: the run did. */
    memset(&oc, 0, sizeof oc);
    oc.exited = 1;
    CHECK_INT(PARSE("exit.signal 2\n24\n"), CR_OK);
    CHECK_INT(oc.exited, 0);
    CHECK_INT(oc.term_signal, 24);
    sandbox_outcome_free(&oc);
    /* The runner's exit status, its last record: the run's before pid 1 is reaped. */
    memset(&oc, 0, sizeof oc);
    CHECK_INT(PARSE("var0.type 3\nint\nvar0.repr 1\n7\nvar0.decimal 1\n7\nvar0.name 3\nans\n"
                    "exit.status 1\n3\n"), CR_OK);
    CHECK_INT(oc.exited, 1);
    CHECK_INT(oc.exit_code, 3);
    CHECK_STR(oc.value_repr, "7");
    sandbox_outcome_free(&oc);
    memset(&oc, 0, sizeof oc);
    /* What the run depended on is kept as the runner said it. */
    CHECK_INT(PARSE("imports 13\nnumpy 1.24.2\n\ninterpreter.path 16\n/usr/bin/python3\n"
                    "interpreter.version 6\n3.11.2\nexit.status 1\n0\n"), CR_OK);
    CHECK_STR(oc.imports, "numpy 1.24.2\n");
    CHECK_STR(oc.interpreter_path, "/usr/bin/python3");
    CHECK_STR(oc.interpreter_version, "3.11.2");
    sandbox_outcome_free(&oc);
    memset(&oc, 0, sizeof oc);
    CHECK_INT(PARSE("exit.signal 1\n9\nexit.status 1\n0\n"), CR_OK);
    CHECK_INT(oc.exited, 0);
    CHECK_INT(oc.term_signal, 9);
    sandbox_outcome_free(&oc);
    /* sandbox_report_status(): the status only from a whole report. */
    {
        static const struct { const char *report; int status; } st[] = {
            { "exit.status 1\n0\n", 0 }, { "var0.name 3\nans\nexit.status 3\n255\n", 255 },
            { "exit.status 3\n256\n", -1 }, { "exit.status 1\n7", -1 },
            { "error.message 12\nexit.status 1\n", -1 }, { "dropped.count 1\n2\n", -1 },
            { "", -1 }, { "exit.status x\n1\n", -1 },
        };
        for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
            CHECK_INT(sandbox_report_status(st[i].report, strlen(st[i].report)), st[i].status);
    }
}

/* The runner's own check of what the code's process describes (runner.py checked_result),
 * run on the host's python3 outside any sandbox: each description gives the report records
 * the runner would write, or the reason it is refused. */
static const char runner_harness[] =
    "import sys\n"
    "ns = {\"__name__\": \"runner\"}\n"
    "exec(open(sys.argv[1]).read(), ns)\n"
    "R = ns[\"record\"]\n"
    "def v(kind, text, group=\"var0\", name=\"ans\", by=None, tname=None):\n"
    "    return (R(group + \".kind\", kind) + R(group + \".text\", text)\n"
    "            + (R(group + \".name\", name) if name else b\"\")\n"
    "            + (R(group + \".by\", by) if by else b\"\")\n"
    "            + (R(group + \".type\", tname) if tname else b\"\"))\n"
    "cases = [v(\"int\", \"42\"), v(\"int\", \"042\"), v(\"float\", \"0.10\"), v(\"float\", \"1e-05\"),\n"
    "         v(\"bool\", \"True\"), v(\"int\", \"7\", tname=\"int64\"), v(\"Fraction\", \"-3/8\"),\n"
    "         v(\"Fraction\", \"2/4\"), v(\"Decimal\", \"1E+2\"), v(\"Decimal\", \"1.50E+1\"),\n"
    "         v(\"other\", \"'x'\", tname=\"str\"), v(\"other\", \"42\", tname=\"int\"),\n"
    "         v(\"int\", \"1\", group=\"solution\", name=None, by=\"end\"),\n"
    "         v(\"int\", \"1\", name=\"total\"), v(\"int\", \"1\", group=\"expr\"),\n"
    "         v(\"int\", \"1\", group=\"expr\", name=None, by=\"end\"),\n"
    "         v(\"int\", \"3\", group=\"expr\", name=None) + v(\"int\", \"4\"),\n"
    "         v(\"int\", \"1\") + R(\"var0.kind\", \"int\"),\n"
    "         v(\"int\", \"1\") + R(\"error.type\", \"MemoryError\"), R(\"error.type\", \"not a name\"),\n"
    "         R(\"error.type\", \"KeyError\") + R(\"error.line\", \"x\"), b\"xyz\", R(\"var0.exact\", \"1\"),\n"
    "         R(\"value.kind\", \"int\"), b\"\",\n"
    "         v(\"int\", \"42\") + R(\"imports\", \"numpy 1.24.2\\npandas \\n\"),\n"
    "         R(\"imports\", \"b 1\\na 2\\n\"), R(\"imports\", \"numpy\\n\"),\n"
    "         R(\"imports\", \"numpy 1.0\"), R(\"imports\", \"\") + R(\"imports\", \"\")]\n"
    "for data in cases:\n"
    "    try:\n"
    "        recs = ns[\"checked_result\"](data, {\"var0\": {\"ans\"}, \"expr\": None})\n"
    "        print(\"ok\", \" \".join(\"%s=%s\" % (k, x.decode())\n"
    "                             for k, x in ns[\"read_records\"](b\"\".join(recs))))\n"
    "    except Exception as e:\n"
    "        print(\"refused:\", e)\n";

static void test_runner_checks(void)
{
    static const char want[] =
        "ok var0.type=int var0.repr=42 var0.decimal=42 var0.name=ans\n"
        "refused: value kind 'int' with text '042'\n"
        "refused: value kind 'float' with text '0.10'\n"
        "ok var0.type=float var0.repr=1e-05 var0.decimal=0.00001 var0.name=ans\n"
        "ok var0.type=bool var0.repr=True var0.decimal=1 var0.name=ans\n"
        "ok var0.type=int64 var0.repr=7 var0.decimal=7 var0.name=ans\n"
        "ok var0.type=Fraction var0.repr=Fraction(-3, 8) var0.decimal=-0.375 var0.name=ans\n"
        "refused: Fraction '2/4' is not in lowest terms\n"
        "ok var0.type=Decimal var0.repr=Decimal('1E+2') var0.decimal=100 var0.name=ans\n"
        "refused: Decimal text '1.50E+1' is not canonical\n"
        "ok var0.type=str var0.repr='x' var0.name=ans\n"
        "refused: type 'int' for a value the runner did not check\n"
        "refused: a solution value this program cannot have\n"
        "refused: var0 name 'total' is not one this program can give\n"
        "refused: a name on the expr value\n"
        "refused: expr caller b'end'\n"
        "ok var0.type=int var0.repr=4 var0.decimal=4 var0.name=ans expr.type=int expr.repr=3 "
        "expr.decimal=3\n"
        "refused: a second var0.kind record\n"
        "refused: both a value and an exception\n"
        "refused: exception type 'not a name'\n"
        "refused: error.line 'x'\n"
        "refused: a malformed record at byte 0\n"
        "refused: unknown record 'var0.exact'\n"
        "refused: unknown record 'value.kind'\n"
        "ok \n"
        "ok var0.type=int var0.repr=42 var0.decimal=42 var0.name=ans imports=numpy 1.24.2\n"
        "pandas \n\n"
        "refused: imports line 'a 2'\n"
        "refused: imports line 'numpy'\n"
        "refused: an imports record whose last line is not whole\n"
        "refused: a second imports record\n";
    char src[] = "/tmp/cr-runner-XXXXXX", hn[] = "/tmp/cr-harness-XXXXXX", cmd[256], got[4096];
    int fs = mkstemp(src), fh = mkstemp(hn);
    size_t n = 0;
    FILE *p;
    if (fs < 0 || fh < 0 || write(fs, sandbox_runner_source, sandbox_runner_source_len) !=
        (ssize_t)sandbox_runner_source_len ||
        write(fh, runner_harness, sizeof runner_harness - 1) != (ssize_t)sizeof runner_harness - 1) {
        CHECK(!"temporary files");
    } else if (access(SANDBOX_DEFAULT_INTERPRETER, X_OK) < 0) {
        SKIP("no %s to run the runner's checks", SANDBOX_DEFAULT_INTERPRETER);
    } else {
        snprintf(cmd, sizeof cmd, SANDBOX_DEFAULT_INTERPRETER " -I -S %s %s", hn, src);
        if ((p = popen(cmd, "r"))) {
            n = fread(got, 1, sizeof got - 1, p);
            pclose(p);
        }
        got[n] = 0;
        CHECK_STR(got, want);
    }
    if (fs >= 0) { close(fs); unlink(src); }
    if (fh >= 0) { close(fh); unlink(hn); }
}

static void test_runner_embedded(void)
{
    CHECK(sandbox_runner_source_len > 1000);
    CHECK(strlen(sandbox_runner_source) == sandbox_runner_source_len);
    CHECK(strstr(sandbox_runner_source, "def main():") != NULL);
}

static void test_bad_jobs(void)
{
    sandbox_job job;
    sandbox_outcome oc;
    cr_error err = { 0 };
    sandbox_job_init(&job);
    job.tier = CR_TIER_NS;
    job.code = "1";
    job.code_len = 1;
    job.interpreter = "/opt/python/bin/python3";
    CHECK_INT(sandbox_run(&job, &oc, &err), CR_EUSAGE);
    CHECK(strstr(err.message, "not under /usr") != NULL);
    /* Another interpreter of the host's: the kvm guest refuses it, and auto means ns. */
    job.interpreter = "/usr/bin/python3.11";
    job.tier = CR_TIER_KVM;
    CHECK_INT(sandbox_run(&job, &oc, &err), CR_EUSAGE);
    CHECK_STR(err.message, "kvm: the guest has its own python; another interpreter or an "
                           "allowed directory needs the ns tier");
    if (access(job.interpreter, X_OK) == 0) {
        job.tier = CR_TIER_AUTO;
        CHECK_INT(sandbox_run(&job, &oc, &err), CR_OK);
        CHECK_INT(oc.tier, CR_TIER_NS);
        CHECK_STR(oc.tier_note, "ns: the configured interpreter runs in the ns tier only");
        sandbox_outcome_free(&oc);
    } else {
        SKIP("auto tier with another interpreter: no /usr/bin/python3.11");
    }
    job.tier = CR_TIER_NS;
    job.interpreter = NULL;
    job.out_dir = "/nonexistent-calcroute-dir";
    CHECK_INT(sandbox_run(&job, &oc, &err), CR_EUSAGE);
    job.out_dir = NULL;
    job.tier = CR_TIER_NONE;
    CHECK_INT(sandbox_run(&job, &oc, &err), CR_EUSAGE);
    sandbox_outcome_free(&oc);
}

/* ---- through the ns tier ----------------------------------------------------------------- */

/* The final value and how it was chosen, as "source type repr decimal". */
static void check_value(const char *code, const char *want)
{
    sandbox_outcome oc;
    char got[512];
    if (run_ns(code, NULL, NULL, NULL, NULL, &oc) != CR_OK) { CHECK(!"run"); return; }
    if (oc.has_value)
        snprintf(got, sizeof got, "%s %s %s %s", oc.value_from, oc.value_type, oc.value_repr,
                 oc.value_decimal ? oc.value_decimal : "-");
    else
        snprintf(got, sizeof got, "none");
    if (oc.raised) fprintf(stderr, "  raised %s: %s\n", oc.error_type, oc.error_message);
    CHECK_STR(got, want);
    sandbox_outcome_free(&oc);
}

static void test_final_value_rule(void)
{
    /* solution() defined and never called wins over everything. */
    check_value("ans = 1\ndef solution():\n    return 0.1 + 0.2\n",
                "solution() float 0.30000000000000004 0.30000000000000004");
    /* Called by the program: the value of its last call that returned, whoever made it;
     * ans and the other answer variables come first then. */
    check_value("def solution():\n    return 7\nx = solution()\n", "solution() int 7 7");
    check_value("def solution():\n    solution = 6 * 7\n    return solution\nprint(solution())\n",
                "solution() int 42 42");
    check_value("def solution():\n    solution = 6 * 7\n    return solution\n",
                "solution() int 42 42");
    check_value("def solution():\n    return 6 * 7\ndef main():\n    print(solution())\n"
                "if __name__ == \"__main__\":\n    main()\n", "solution() int 42 42");
    check_value("r = 1\ndef solution():\n    return r * 10\nprint(solution())\nr = 2\n"
                "print(solution())\nr = 3\n", "solution() int 20 20");
    check_value("def solution(k=2):\n    return k\ndef f():\n    return solution(4)\ny = f()\n"
                "z = 0\n", "solution() int 4 4");
    check_value("def solution():\n    'doc'\n    for i in range(3):\n        if i == 1:\n"
                "            return i\n", "solution() int 1 1");
    check_value("def solution():\n    print('x')\n", "solution() NoneType None -");
    /* solution() with a parameter is not the convention: not called, its calls not counted */
    check_value("def solution(r):\n    return 1 + r\nprint(solution(0.5))\nprint('done')\n", "none");
    check_value("def solution(r):\n    return r\nz = [solution(k) for k in (1, 2)]\n",
                "z list [1, 2] -");
    /* a generator returns no value of its own */
    check_value("def solution():\n    yield 1\ny = 2\n", "y int 2 2");
    /* nor does a solution() the code replaced */
    check_value("def solution():\n    return 1\nsolution = 5\n", "solution int 5 5");
    /* ans still comes first. */
    check_value("def solution():\n    return 7\nprint(solution())\nans = 2\n", "ans int 2 2");
    check_value("def solution(a):\n    return 7\ny = 2\n", "y int 2 2");
    /* ans, then result, then answer. */
    check_value("answer = 3\nresult = 2\n5\n", "result int 2 2");
    check_value("answer = 3\n5\nz = 9\n", "answer int 3 3");
    /* Last expression statement (None does not count), then last assignment. */
    check_value("a = 1\na + 1\nprint('x')\nb = 5\n", "last expression int 2 2");
    check_value("total = 0\nfor v in [1, 2]:\n    total += v\n", "total int 3 3");
    /* an expression statement in a module-level block is one; a variable holding code is not
     * an answer */
    check_value("for v in [1, 2]:\n    v * 3\n", "last expression int 6 6");
    check_value("def answer():\n    return 1\nx = 2\n", "x int 2 2");
    /* the module's docstring is not an expression's value; a string later is */
    check_value("'doc'\nprint(1)\n", "none");
    check_value("print(1)\n'doc'\n", "last expression str 'doc' -");
    check_value("import math\n", "none");
    check_value("print(1)\n", "none");
    /* Types and exact decimal text. */
    check_value("1e-05\n", "last expression float 1e-05 0.00001");
    check_value("1.5e16\n", "last expression float 1.5e+16 15000000000000000.0");
    check_value("2**70\n", "last expression int 1180591620717411303424 1180591620717411303424");
    check_value("3 > 2\n", "last expression bool True 1");
    check_value("from decimal import Decimal\nDecimal('1.50') * 2\n", "last expression Decimal Decimal('3.00') 3.00");
    check_value("from fractions import Fraction\nFraction(-3, 8)\n", "last expression Fraction Fraction(-3, 8) -0.375");
    check_value("from fractions import Fraction\nFraction(1, 3)\n", "last expression Fraction Fraction(1, 3) -");
    check_value("float('nan')\n", "last expression float nan -");
    check_value("'x' * 3\n", "last expression str 'xxx' -");
    check_value("10**5000 // 10**4999\n", "last expression int 10 10");
    check_value("(1, 2.5)\n", "last expression tuple (1, 2.5) -");
}

static void test_answer_vars_and_globals(void)
{
    const char *vars[] = { "final", NULL };
    sandbox_job job;
    sandbox_outcome oc;
    cr_error err = { 0 };
    sandbox_job_init(&job);
    job.tier = CR_TIER_NS;
    job.code = "ans = 1\nfinal = rate * base\n";
    job.code_len = strlen(job.code);
    job.answer_vars = vars;
    job.globals_json = "{\"rate\": 0.5, \"base\": 4}";
    if (sandbox_run(&job, &oc, &err) != CR_OK) { CHECK(!"run"); return; }
    CHECK_STR(oc.value_from, "final");
    CHECK_STR(oc.value_repr, "2.0");
    CHECK_STR(oc.value_decimal, "2.0");
    sandbox_outcome_free(&oc);
}

/* job.interrupt_fd: a byte written while the code sleeps (in a grandchild too) or spins ends
 * the run, not its clocks (no limit named), with what it printed kept; a descriptor already
 * readable ends it before it gets anywhere. */
#define STARTED_WAIT_S 60

/* 1 once the code has made /out/started, seen through the root of a child of ours (the run's
 * pid 1, which sandbox_run() forks): a cold start on a loaded machine takes its time, and an
 * interrupt before it would find nothing printed. 0 after STARTED_WAIT_S. */
static int await_started(void)
{
    for (int i = 0; i < STARTED_WAIT_S * 100; i++) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        int seen = 0;
        while (d && !seen && (de = readdir(d))) {
            char path[300], *st, *pp;
            if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
            snprintf(path, sizeof path, "/proc/%s/status", de->d_name);
            if (!(st = slurp(path))) continue;
            if ((pp = strstr(st, "\nPPid:\t")) && atol(pp + 7) == (long)getpid()) {
                snprintf(path, sizeof path, "/proc/%s/root/out/started", de->d_name);
                seen = access(path, F_OK) == 0;
            }
            free(st);
        }
        if (d) closedir(d);
        if (seen) return 1;
        usleep(10 * 1000);
    }
    return 0;
}

static void *write_when_started(void *p)
{
    int started = await_started();
    if (!started)
        fprintf(stderr, "test_interrupt: no /out/started within %d s\n", STARTED_WAIT_S);
    (void)!write(*(int *)p, "x", 1);
    return started ? p : NULL;
}

static void test_interrupt(void)
{
    static const char *const codes[] = {
        "import time\nprint('started', flush=True)\nopen('/out/started', 'w').close()\n"
        "time.sleep(1000)\n",
        /* Popen returns once the grandchild has exec'd: the interrupt finds it sleeping. */
        "import subprocess\nprint('started', flush=True)\np = subprocess.Popen(['sleep', '1000'])\n"
        "open('/out/started', 'w').close()\np.wait()\n",
        "import os\nprint('started', flush=True)\nopen('/out/started', 'w').close()\n"
        "while True: pass\n",
    };
    for (int k = 0; k < 4; k++) {
        sandbox_job job;
        sandbox_outcome oc;
        cr_error err = { 0 };
        int p[2];
        pthread_t th;
        if (pipe(p) < 0) { CHECK(!"pipe"); return; }
        sandbox_job_init(&job);
        job.tier = CR_TIER_NS;
        job.code = codes[k % 3];
        job.code_len = strlen(job.code);
        job.limits.wall_s = job.limits.cpu_s = STARTED_WAIT_S + 60;
        job.interrupt_fd = p[0];
        if (k == 3) CHECK_INT(write(p[1], "x", 1), 1);
        else if (pthread_create(&th, NULL, write_when_started, &p[1]) != 0) { CHECK(!"thread"); return; }
        if (sandbox_run(&job, &oc, &err) == CR_OK) {
            CHECK_INT(oc.interrupted, 1);
            CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
            CHECK_INT(oc.exited, 0);
            CHECK_INT(oc.term_signal, SIGKILL);
            if (k < 3) CHECK_STR(out_text(&oc), "started\n");
        } else CHECK(!"run");
        sandbox_outcome_free(&oc);
        if (k < 3) {
            void *started = NULL;
            pthread_join(th, &started);
            CHECK(started != NULL);
        }
        close(p[0]);
        close(p[1]);
    }
}

static void test_exceptions(void)
{
    sandbox_outcome oc;
    if (run_ns("x = 1\n\ny = x / 0\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.raised, 1);
        CHECK_STR(oc.error_type, "ZeroDivisionError");
        CHECK_STR(oc.error_message, "division by zero");
        CHECK_INT(oc.error_line, 3);
        CHECK_INT(oc.error_col, 5);     /* CPython's col_offset of `x / 0`, + 1 */
        CHECK_INT(oc.exited, 1);
        CHECK_INT(oc.exit_code, 1);
        CHECK_INT(oc.has_value, 0);
        CHECK(oc.stderr_buf.p && strstr(oc.stderr_buf.p, "File \"<code>\", line 3") &&
              strstr(oc.stderr_buf.p, "ZeroDivisionError: division by zero"));
        /* The runner's own frames stay out of the traceback. */
        CHECK(oc.stderr_buf.p && !strstr(oc.stderr_buf.p, "runner"));
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    if (run_ns("a = 1\nb = (2 +\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_STR(oc.error_type, "SyntaxError");
        CHECK_STR(oc.error_message, "'(' was never closed");
        CHECK_INT(oc.error_line, 2);
        CHECK_INT(oc.error_col, 5);
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    if (run_ns("def solution():\n    return [][1]\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_STR(oc.error_type, "IndexError");
        CHECK_INT(oc.error_line, 2);
        CHECK_INT(oc.error_col, 12);    /* the innermost frame of the code: solution()'s */
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    /* Columns count bytes, as CPython's col_offset and the evaluator do: "\xc3\xa9" is two. */
    if (run_ns("y = ('\xc3\xa9', 1 / 0)\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.error_line, 1);
        CHECK_INT(oc.error_col, 12);
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    if (run_ns("import sys\nprint('bye')\nsys.exit(4)\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.exited, 1);
        CHECK_INT(oc.exit_code, 4);
        CHECK_INT(oc.raised, 0);
        CHECK_STR(out_text(&oc), "bye\n");
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    /* The code's process killed by a signal, its own SIGXCPU among them: the run was, and
     * no CPU limit is claimed for a run that used next to no CPU. */
    if (run_ns("import os\nos.kill(os.getpid(), 11)\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.exited, 0);
        CHECK_INT(oc.term_signal, 11);
        CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    if (run_ns("import os\nos.kill(os.getpid(), 24)\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.term_signal, 24);
        CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    if (run_ns("x = input()\n", NULL, NULL, NULL, NULL, &oc) == CR_OK)
        CHECK_STR(oc.error_type, "EOFError");   /* stdin is /dev/null */
    else CHECK(!"run");
    sandbox_outcome_free(&oc);
}

static void test_multiprocessing(void)
{
    /* Semaphores need /dev/shm; a pool of two workers needs fork and pipes. */
    CHECK_PRINTS("import multiprocessing as mp\n"
                 "lock = mp.Lock()\n"
                 "with mp.Pool(2) as pool:\n"
                 "    print(sum(pool.map(abs, [-1, -2, 3])))\n", "6\n");
    /* A duplex Pipe is a socketpair, which the filter keeps for AF_UNIX streams. */
    CHECK_PRINTS("import multiprocessing as mp\n"
                 "a, b = mp.Pipe()\n"
                 "p = mp.Process(target=lambda: b.send(sum(range(10))))\n"
                 "p.start()\nprint(a.recv())\np.join()\n", "45\n");
}

static void test_streams_and_timings(void)
{
    sandbox_outcome oc;
    if (run_ns("import sys\nprint('out')\nprint('err', file=sys.stderr)\nx = 6 * 7\n", NULL, NULL,
               NULL, NULL, &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "out\n");
        CHECK_STR(oc.stderr_buf.p, "err\n");
        CHECK_INT(oc.stdout_buf.truncated, 0);
        CHECK_STR(oc.value_repr, "42");
        CHECK_INT(oc.exit_code, 0);
        CHECK_INT(oc.tier, CR_TIER_NS);
        CHECK(oc.wall_s > 0 && oc.wall_s < 5);
        CHECK(oc.cpu_s > 0 && oc.cpu_s < 5);
        CHECK(oc.peak_memory_bytes > (1u << 20));
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    /* The report channel is not stdout: printing what looks like a report changes nothing. */
    CHECK_PRINTS("print('value.repr 2\\n99')\nans = 1\n", "value.repr 2\n99\n");
}

static void test_data_and_artifacts(void)
{
    char *data = make_dir("data"), *out = make_dir("out"), path[512], *copy;
    sandbox_outcome oc;
    FILE *f;
    if (!data || !out) { CHECK(!"mkdtemp"); goto done; }
    snprintf(path, sizeof path, "%s/prices.csv", data);
    if (!(f = fopen(path, "w"))) { CHECK(!"fopen"); goto done; }
    fputs("a,1.5\nb,2.25\n", f);
    fclose(f);
    chmod(path, 0644);
    if (run_ns("import os\n"
               "rows = [l.split(',') for l in open('/data/prices.csv').read().split()]\n"
               "open('/out/sum.txt', 'w').write('abc')\n"
               "os.makedirs('/out/plots')\n"
               "open('/out/plots/empty.bin', 'wb').close()\n"
               "ans = sum(float(v) for _, v in rows)\n",
               NULL, data, out, NULL, &oc) == CR_OK) {
        CHECK_STR(oc.value_repr, "3.75");
        CHECK_INT(oc.artifact_count, 2);
        if (oc.artifact_count == 2) {
            CHECK_STR(oc.artifacts[0].name, "plots/empty.bin");
            CHECK_INT(oc.artifacts[0].size, 0);
            CHECK_STR(oc.artifacts[0].sha256,
                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
            CHECK_STR(oc.artifacts[1].name, "sum.txt");
            CHECK_INT(oc.artifacts[1].size, 3);
            CHECK_STR(oc.artifacts[1].sha256,
                      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
            snprintf(path, sizeof path, "%s/sum.txt", out);
            CHECK_STR(oc.artifacts[1].path, path);
            copy = slurp(path);
            CHECK_STR(copy, "abc");
            free(copy);
        }
        CHECK_STR(oc.artifact_note, "");
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    /* A file of two names in /out is handed over under neither (the kvm tier notes it as a
     * non-file); the mount of /data names no host path (an overlay, whose root is its own). */
    if (run_ns("import os\nopen('/out/a', 'w').write('x')\nos.link('/out/a', '/out/b')\n"
               "open('/out/c', 'w').write('y')\n"
               "print([(f[3], f[8]) for f in (l.split() for l in open('/proc/self/mountinfo'))"
               " if f[4] == '/data'])\n", NULL, data, out, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.artifact_count, 1);
        if (oc.artifact_count == 1) CHECK_STR(oc.artifacts[0].name, "c");
        CHECK_STR(oc.artifact_note, "skipped hard link: a; skipped hard link: b");
        CHECK_STR(out_text(&oc), "[('/', 'overlay')]\n");
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);

    /* Without an artifact directory: listed and hashed, not copied. */
    if (run_ns("open('/out/r.txt', 'w').write('abc')\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.artifact_count, 1);
        if (oc.artifact_count == 1) CHECK(oc.artifacts[0].path == NULL);
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
done:
    remove_tree(data);
    remove_tree(out);
    free(data);
    free(out);
}

static void test_matplotlib_png(void)
{
    char *out = make_dir("png");
    sandbox_outcome oc;
    sandbox_limits lim;
    small_limits(&lim);
    lim.wall_s = 30;
    if (!out) { CHECK(!"mkdtemp"); return; }
    if (run_ns("import matplotlib.pyplot as plt\nplt.plot([1, 2], [3, 1])\n"
               "plt.savefig('/out/plot.png')\n", &lim, NULL, out, NULL, &oc) == CR_OK) {
        if (oc.raised && !strcmp(oc.error_type, "ModuleNotFoundError")) {
            SKIP("python3-matplotlib is not installed");
        } else {
            CHECK_INT(oc.artifact_count, 1);
            if (oc.artifact_count == 1) {
                char *png = slurp(oc.artifacts[0].path);
                CHECK(png && !memcmp(png, "\x89PNG", 4));
                free(png);
            }
        }
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    remove_tree(out);
    free(out);
}

/* Several threads running sandboxes at once: each gets its own answer. */
static void *thread_run(void *arg)
{
    long n = (long)arg;
    char code[64];
    sandbox_outcome oc;
    long ok = 0;
    snprintf(code, sizeof code, "import os\nans = %ld * 1000 + os.getpid()\n", n);
    if (run_ns(code, NULL, NULL, NULL, NULL, &oc) == CR_OK && oc.value_repr) {
        char want[32];
        snprintf(want, sizeof want, "%ld", n * 1000 + 2);   /* the code is the runner's child */
        ok = strcmp(oc.value_repr, want) == 0;
    }
    sandbox_outcome_free(&oc);
    return (void *)ok;
}

static void test_concurrent_threads(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, thread_run, (void *)i) == 0);
    for (int i = 0; i < 4; i++) {
        void *ok = NULL;
        pthread_join(t[i], &ok);
        CHECK(ok == (void *)1);
    }
}

/* The kvm guest's way in: the job already encoded, /out and the report handed over as they
 * are (the host collects and parses them), everything else as sandbox_ns_run() gives it. */
static void test_handoff(void)
{
    static const char code[] = "import os\nos.symlink('x', '/out/s')\n"
                               "open('/out/a', 'w').write('1')\nans = 7\n";
    sandbox_job job;
    sandbox_outcome oc;
    cr_error err = { 0 };
    cr_buf enc;
    ns_handoff hand;
    struct stat sb;
    sandbox_job_init(&job);
    job.code = code;
    job.code_len = strlen(code);
    cr_buf_init(&enc, 0);
    CHECK_INT(sandbox_job_encode(&job, &enc, &err), CR_OK);
    hand = (ns_handoff){ .job = enc.p, .job_len = enc.len };
    job.code = "print(1)";   /* not used: the encoded job wins */
    job.code_len = 8;
    small_limits(&job.limits);
    if (ns_run(&job, &hand, &oc, &err) != CR_OK) {
        fprintf(stderr, "ns_run: %s\n", err.message);
        CHECK(!"ns_run");
        cr_buf_free(&enc);
        return;
    }
    CHECK_STR(out_text(&oc), "");
    CHECK_STR(oc.value_repr, "7");
    CHECK_INT(oc.artifact_count, 0);          /* not collected here */
    CHECK_STR(oc.artifact_note, "");
    CHECK(hand.report.len > 0 && strstr(hand.report.p, "var0.repr 1\n7\n") != NULL);
    CHECK(hand.out_fd >= 0);
    if (hand.out_fd >= 0) {
        CHECK_INT(fstatat(hand.out_fd, "a", &sb, AT_SYMLINK_NOFOLLOW), 0);
        CHECK_INT(sb.st_size, 1);
        CHECK_INT(fstatat(hand.out_fd, "s", &sb, AT_SYMLINK_NOFOLLOW), 0);
        CHECK(S_ISLNK(sb.st_mode));
        close(hand.out_fd);
    }
    cr_buf_free(&hand.report);
    sandbox_outcome_free(&oc);
    /* A failed run hands nothing over. */
    job.interpreter = "/opt/python3";
    CHECK_INT(ns_run(&job, &hand, &oc, &err), CR_EUSAGE);
    CHECK_INT(hand.out_fd, -1);
    CHECK_INT(hand.report.len, 0);
    cr_buf_free(&enc);
}

int main(void)
{
    int ns_ok;

    test_limit_names();
    test_defaults();
    test_job_encode();
    test_report_parse();
    test_report_refused();
    test_report_choice();
    test_runner_embedded();
    test_runner_checks();
    ns_ok = sandbox_tier_available(CR_TIER_NS, ns_why, sizeof ns_why);
    if (!ns_ok) {
        SKIP("ns tier unavailable on this host: %s", ns_why);
        return TEST_SUMMARY();
    }
    test_bad_jobs();
    test_final_value_rule();
    test_answer_vars_and_globals();
    test_exceptions();
    test_interrupt();
    test_streams_and_timings();
    test_multiprocessing();
    test_data_and_artifacts();
    test_matplotlib_png();
    test_concurrent_threads();
    test_handoff();
    return TEST_SUMMARY();
}
