/* tests/test_dsl.c: the FinQA DSL front end: parsing, errors with positions, table cells and
 * rows, lowering to IR (asserted through ir_dump), and the --lang auto rule. */
#include "dsl/dsl.h"
#include "evaluator/evaluator.h"
#include "tests/testlib.h"

static char got[4096];

/* The IR dump of a program, or "ERR <code> <line>:<col> <message>". */
static const char *lower(const char *src, const char *table_json)
{
    cr_error e = {0};
    dsl_table *t = NULL;
    ir_module *m = NULL;
    if (table_json && dsl_table_from_json(table_json, strlen(table_json), NULL, &t, &e) != CR_OK) {
        snprintf(got, sizeof got, "TABLE %s", e.message);
        return got;
    }
    cr_code rc = dsl_compile(src, strlen(src), t, NULL, &m, &e);
    if (rc != CR_OK) {
        snprintf(got, sizeof got, "ERR %d %d:%d %s", rc, e.line, e.col, e.message);
    } else {
        cr_buf b;
        cr_buf_init(&b, 0);
        ir_dump(m->root, &b);
        snprintf(got, sizeof got, "%s", b.p);
        cr_buf_free(&b);
    }
    ir_module_free(m);
    dsl_table_free(t);
    return got;
}

/* "line:col message" of a parse error, or "ok". */
static const char *perr(const char *src)
{
    cr_error e = {0};
    dsl_program *p = NULL;
    cr_code rc = dsl_parse(src, strlen(src), NULL, &p, &e);
    if (rc == CR_OK) snprintf(got, sizeof got, "ok");
    else snprintf(got, sizeof got, "%d:%d %s", e.line, e.col, e.message);
    CHECK(rc == CR_OK ? p != NULL : (p == NULL && rc == CR_ESYNTAX));
    dsl_program_free(p);
    return got;
}

/* A cell's value, or "ERR <message>". */
static const char *cell(const char *s)
{
    cr_buf b;
    cr_error e = {0};
    cr_buf_init(&b, 0);
    if (dsl_cell_parse(s, strlen(s), &b, &e) == CR_OK) snprintf(got, sizeof got, "%s", b.p);
    else snprintf(got, sizeof got, "ERR %s", e.message);
    cr_buf_free(&b);
    return got;
}

#define STEP0(expr) "(module (assign (name #0) " expr "))"
#define N(x) "(num " x " float)"
#define NEG(x) "(unary - (num " x " float))"

static void test_binary_ops(void)
{
    CHECK_STR(lower("add(18.9, 0.3)", NULL), STEP0("(binop + " N("18.9") " " N("0.3") ")"));
    CHECK_STR(lower("subtract(11503, 10815)", NULL),
              STEP0("(binop - " N("11503") " " N("10815") ")"));
    CHECK_STR(lower("multiply(2, 3)", NULL), STEP0("(binop * " N("2") " " N("3") ")"));
    CHECK_STR(lower("divide(637, const_5)", NULL), STEP0("(binop / " N("637") " " N("5") ")"));
    CHECK_STR(lower("exp(1.069, 10)", NULL), STEP0("(binop ** " N("1.069") " " N("10") ")"));
    CHECK_STR(lower("greater(284, 197)", NULL),
              STEP0("(ifexp (compare " N("284") " > " N("197") ") (str \"yes\") (str \"no\"))"));
}

static void test_steps_and_refs(void)
{
    CHECK_STR(lower("subtract(5829, 5735), divide(#0, 5735)", NULL),
              "(module (assign (name #0) (binop - " N("5829") " " N("5735") ")) "
              "(assign (name #1) (binop / (name #0) " N("5735") ")))");
    CHECK_STR(lower("subtract(17.84, 4.11), subtract(60.15, 41.30), greater(#0, #1)", NULL),
              "(module (assign (name #0) (binop - " N("17.84") " " N("4.11") ")) "
              "(assign (name #1) (binop - " N("60.15") " " N("41.30") ")) "
              "(assign (name #2) (ifexp (compare (name #0) > (name #1)) (str \"yes\") "
              "(str \"no\"))))");
    /* White space and newlines between steps and inside them are free. */
    CHECK_STR(lower("  add( 1 ,2 ) ,\n  divide(#0,2)\n", NULL),
              "(module (assign (name #0) (binop + " N("1") " " N("2") ")) "
              "(assign (name #1) (binop / (name #0) " N("2") ")))");
}

static void test_number_forms(void)
{
    CHECK_STR(lower("add(6.9%, 14.5%)", NULL), STEP0("(binop + " N("0.069") " " N("0.145") ")"));
    CHECK_STR(lower("add(100%, 250%)", NULL), STEP0("(binop + " N("1") " " N("2.5") ")"));
    CHECK_STR(lower("add(5%, 0.5%)", NULL), STEP0("(binop + " N("0.05") " " N("0.005") ")"));
    CHECK_STR(lower("add(-12.5, +3)", NULL), STEP0("(binop + " NEG("12.5") " " N("3") ")"));
    CHECK_STR(lower("add(\xe2\x88\x92" "2, 1)", NULL), STEP0("(binop + " NEG("2") " " N("1") ")"));
    CHECK_STR(lower("add(-6.9%, .5)", NULL), STEP0("(binop + " NEG("0.069") " " N("0.5") ")"));
    CHECK_STR(lower("add(1,234,567.8, 007)", NULL),
              STEP0("(binop + " N("1234567.8") " " N("7") ")"));
    /* "-0" keeps no sign, so the evaluator never sees a negative zero. */
    CHECK_STR(lower("add(-0, -0.0)", NULL), STEP0("(binop + " N("0") " " N("0.0") ")"));
    CHECK_STR(lower("add(const_1000000, const_m1)", NULL),
              STEP0("(binop + " N("1000000") " " NEG("1") ")"));
    /* A comma not followed by exactly three digits separates arguments. */
    CHECK_STR(lower("add(1000,2000)", NULL), STEP0("(binop + " N("1000") " " N("2000") ")"));
    CHECK_STR(lower("add(1,2345)", NULL), STEP0("(binop + " N("1") " " N("2345") ")"));
    CHECK_STR(lower("add(0,500)", NULL), STEP0("(binop + " N("0") " " N("500") ")"));
}

static void test_decimal_helpers(void)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    CHECK_INT(dsl_scan_decimal("1,234,567.25x", 13, &b), 12);
    CHECK_STR(b.p, "1234567.25");
    cr_buf_reset(&b);
    CHECK_INT(dsl_scan_decimal("12345,678", 9, &b), 5);
    CHECK_INT(dsl_scan_decimal("abc", 3, &b), 0);
    cr_buf_reset(&b);
    CHECK_INT(dsl_scan_decimal("5.", 2, &b), 1);   /* the point needs a digit after it */
    cr_buf_reset(&b);
    cr_buf_puts(&b, "x12.50");
    CHECK_INT(dsl_decimal_percent(&b, 1), CR_OK);
    CHECK_STR(b.p, "x0.125");
    cr_buf_reset(&b);
    cr_buf_puts(&b, "0");
    dsl_decimal_percent(&b, 0);
    CHECK_STR(b.p, "0");
    cr_buf_reset(&b);
    cr_buf_puts(&b, "123456");
    dsl_decimal_percent(&b, 0);
    CHECK_STR(b.p, "1234.56");
    cr_buf_free(&b);
}

static void test_parse_errors(void)
{
    CHECK_STR(perr(""), "1:1 empty program: expected an operation such as subtract(5829, 5735)");
    CHECK_STR(perr("   \n "), "1:1 empty program: expected an operation such as subtract(5829, 5735)");
    CHECK_STR(perr("foo(1, 2)"), "1:1 unknown operation 'foo': expected one of add, subtract, "
              "multiply, divide, exp, greater, table_max, table_min, table_sum, table_average");
    CHECK_STR(perr("12"), "1:1 expected an operation (add, subtract, multiply, divide, exp, "
              "greater, table_max, table_min, table_sum, table_average), found '12'");
    CHECK_STR(perr("add 1, 2)"), "1:5 expected '(' after add, found '1'");
    CHECK_STR(perr("add(1)"), "1:6 expected ',' and a second argument: add takes two");
    CHECK_STR(perr("add(1,234)"), "1:10 expected ',' and a second argument: add takes two (a ',' "
              "followed by three digits groups thousands; to separate arguments write ', ')");
    CHECK_STR(perr("add(1, 2, 3)"), "1:9 expected ')': add takes two arguments");
    CHECK_STR(perr("add(1 2)"), "1:7 expected ',' after the first argument of add, found '2'");
    CHECK_STR(perr("add(1, 2"), "1:9 expected ')' after the second argument of add, found the "
              "end of the program");
    CHECK_STR(perr("add(, 2)"), "1:5 expected an argument (a number, #N, const_N or const_m1)");
    CHECK_STR(perr("add(1, 2) divide(#0, 2)"),
              "1:11 expected ',' between steps or the end of the program, found 'divide'");
    CHECK_STR(perr("add(1, 2),"), "1:11 expected an operation after ','");
    CHECK_STR(perr("add(1, 2\n\n"), "1:9 expected ')' after the second argument of add, found "
              "the end of the program");
    CHECK_STR(perr("add(1, 2),\n  "), "1:11 expected an operation after ','");
    CHECK_STR(perr("add(1.2.3, 4)"), "1:8 unexpected '.3' after the number: expected ',' or ')'");
    CHECK_STR(perr("add(12abc, 4)"), "1:7 unexpected 'abc' after the number: expected ',' or ')'");
    CHECK_STR(perr("add(-, 4)"), "1:6 expected a number after '-', found ','");
    CHECK_STR(perr("add(+x, 4)"), "1:6 expected a number after '+', found 'x'");
    CHECK_STR(perr("add(1, x)"), "1:8 expected a number, #N, const_N or const_m1, found 'x' (row "
              "names go only in table_* operations)");
    CHECK_STR(perr("add(1, none)"), "1:8 none may only be the second argument of a table_* "
              "operation: expected a number, #N, const_N or const_m1");
    CHECK_STR(perr("add(1, const_10"), "1:16 expected ')' after the second argument of add, found "
              "the end of the program");
    CHECK_STR(perr("add(const_x, 1)"), "1:5 unknown constant 'const_x': expected const_ followed "
              "by digits (const_100) or const_m1");
    CHECK_STR(perr("add(1, $5)"), "1:8 expected a number, #N, const_N or const_m1, found '$5'");
}

static void test_ref_errors(void)
{
    CHECK_STR(perr("add(#0, 1)"), "1:5 #0 refers to no step: the first step has no earlier result");
    CHECK_STR(perr("add(1, 2), add(#1, 1)"), "1:16 #1 refers to a step that is not earlier: this "
              "is step #1, so expected #0 to #0");
    CHECK_STR(perr("add(1, 2),\nadd(#0, 1),\nadd(#0, #5)"), "3:9 #5 refers to a step that is not "
              "earlier: this is step #2, so expected #0 to #1");
    CHECK_STR(perr("greater(1, 2), add(#0, 1)"), "1:20 #0 is the yes/no result of greater: "
              "expected a number here");
    CHECK_STR(perr("add(#, 1)"), "1:6 expected a step number after '#', found ','");
    CHECK_STR(perr("add(1, 2), add(#0x, 1)"),
              "1:18 unexpected 'x' after the step reference: expected ',' or ')'");
}

static void test_table_syntax(void)
{
    CHECK_STR(perr("table_sum(a, 1)"), "1:14 expected none as the second argument of table_sum, "
              "found '1'");
    CHECK_STR(perr("table_max(, none)"), "1:11 expected a row name as the first argument of "
              "table_max");
    CHECK_STR(perr("table_max(net sales)"), "1:20 expected ',' and a second argument: table_max "
              "takes two");
    CHECK_STR(perr("table_max(net (sales, none)"), "1:28 expected ',' and none after the row name "
              "of table_max");
    CHECK_STR(perr("table_max(\"net sales, none)"), "1:11 unterminated row name: expected '\"' "
              "to close it");
    CHECK_STR(perr("table_min(\"a\"b, none)"), "1:14 unexpected 'b' after the row name: expected "
              "',' or ')'");

    cr_error e;
    dsl_program *p = NULL;
    const char *src = "table_average( minimum rental ( a ) , none), table_sum(\"a, \\\"b\\\" (\", none)";
    CHECK_INT(dsl_parse(src, strlen(src), NULL, &p, &e), CR_OK);
    if (p) {
        CHECK_INT(p->nsteps, 2);
        CHECK_STR(p->steps[0].arg[0].value, "minimum rental ( a )");
        CHECK_INT(p->steps[0].arg[0].col, 16);
        CHECK_INT(p->steps[0].arg[0].end_col, 36);
        CHECK_INT(p->steps[0].arg[1].kind, DSL_ARG_NONE);
        CHECK_STR(p->steps[1].arg[0].value, "a, \"b\" (");
        CHECK_INT(p->steps[1].op, DSL_TABLE_SUM);
    }
    dsl_program_free(p);
}

static void test_positions(void)
{
    cr_error e;
    dsl_program *p = NULL;
    const char *src = "add(1, 2),\n  divide(#0, -3%)";
    CHECK_INT(dsl_parse(src, strlen(src), NULL, &p, &e), CR_OK);
    if (p) {
        const dsl_step *s = &p->steps[1];
        CHECK_INT(s->line, 2);
        CHECK_INT(s->col, 3);
        CHECK_INT(s->end_col, 18);
        CHECK_INT(s->arg[1].col, 14);
        CHECK_INT(s->arg[1].end_col, 17);
        CHECK_STR(s->arg[1].value, "0.03");
        CHECK_INT(s->arg[1].neg, 1);
        CHECK_INT(s->arg[0].ref, 0);
    }
    dsl_program_free(p);
    cr_limits lim = { .max_source = 8 };
    CHECK_INT(dsl_parse("add(1, 2)", 9, &lim, &p, &e), CR_ELIMIT);
    CHECK_STR(e.message, "program of 9 bytes passes the limit of 8");
}

static void test_cells(void)
{
    CHECK_STR(cell("$ 1,234.5"), "1234.5");
    CHECK_STR(cell("1234"), "1234");
    CHECK_STR(cell("  -12 "), "-12");
    CHECK_STR(cell("+12"), "12");
    CHECK_STR(cell("\xe2\x88\x92" "12.5"), "-12.5");          /* U+2212 */
    CHECK_STR(cell("( 12.3 )"), "-12.3");
    CHECK_STR(cell("(12.3)"), "-12.3");
    CHECK_STR(cell("$ ( 1,200 )"), "-1200");
    CHECK_STR(cell("( $ 5 )"), "-5");
    CHECK_STR(cell("12.5%"), "0.125");
    CHECK_STR(cell("12.5 %"), "0.125");
    CHECK_STR(cell("( 1.5 )%"), "-0.015");
    CHECK_STR(cell("$ -6129 ( 6129 )"), "-6129");            /* FinQA's restatement */
    CHECK_STR(cell("11.4% ( 11.4 % )"), "0.114");
    CHECK_STR(cell("1,234 ( a )"), "1234");
    CHECK_STR(cell("12.3*"), "12.3");
    CHECK_STR(cell("12.3 \xe2\x80\xa0"), "12.3");             /* dagger */
    CHECK_STR(cell("\xc2\xa0" "42" "\xc2\xa0"), "42");         /* no-break spaces */
    CHECK_STR(cell("-"), "0");
    CHECK_STR(cell("\xe2\x80\x94"), "0");                      /* em dash */
    CHECK_STR(cell("\xe2\x80\x93"), "0");                      /* en dash */
    CHECK_STR(cell("( 0 )"), "0");
    CHECK_STR(cell("2014"), "2014");
    CHECK_STR(cell("n/a"), "ERR 'n/a' has no value");
    CHECK_STR(cell("NM"), "ERR 'NM' has no value");
    CHECK_STR(cell("  "), "ERR '  ' is an empty cell: no value");
    CHECK_STR(cell("abc"), "ERR 'abc' is not a number");
    CHECK_STR(cell("( 12.3"), "ERR '( 12.3' is not a number: '(' without ')'");
    CHECK_STR(cell("12 ( a"), "ERR '12 ( a' is not a number: '(' without ')'");
    CHECK_STR(cell("12 million"), "ERR '12 million' is not a number: unexpected 'million' after it");
    CHECK_STR(cell("1 2"), "ERR '1 2' is not a number: unexpected '2' after it");
}

static const char *const TABLE =
    "[[\"\", \"2016\", \"2015\", \"2014\"],"
    " [\"net sales\", \"$ 9105\", \"$ 9202\", \"$ 9288\"],"
    " [\"settlements\", \"-13 ( 13 )\", \"-19 ( 19 )\", \"-2 ( 2 )\"],"
    " [\"operating margin\", \"11.4% ( 11.4 % )\", \"7.8%\", \"7.4%\"],"
    " [\"Total\", \"1\", \"2\", \"3\"],"
    " [\"total\", \"10\", \"20\", \"30\"],"
    " [\"total\", \"100\", \"200\", \"300\"],"
    " [\"bad\", \"1\", \"n/a\", \"3\"],"
    " [\"lonely\"],"
    " [\"int cells\", 5, -7]]";

static void test_table_ops(void)
{
    CHECK_STR(lower("table_max(net sales, none)", TABLE),
              STEP0("(call (name max) (list " N("9105") " " N("9202") " " N("9288") "))"));
    CHECK_STR(lower("table_min(settlements, none)", TABLE),
              STEP0("(call (name min) (list " NEG("13") " " NEG("19") " " NEG("2") "))"));
    CHECK_STR(lower("table_sum(operating margin, none)", TABLE),
              STEP0("(call (name sum) (list " N("0.114") " " N("0.078") " " N("0.074") "))"));
    CHECK_STR(lower("table_average(net sales, none)", TABLE),
              STEP0("(binop / (call (name sum) (list " N("9105") " " N("9202") " " N("9288")
                    ")) (num 3))"));
    CHECK_STR(lower("table_sum(int cells, none)", TABLE),
              STEP0("(call (name sum) (list " N("5") " " NEG("7") "))"));
    /* Rows: exact name first, the last of equal names wins; then case and spaces ignored. */
    CHECK_STR(lower("table_sum(total, none)", TABLE),
              STEP0("(call (name sum) (list " N("100") " " N("200") " " N("300") "))"));
    CHECK_STR(lower("table_sum(Total, none)", TABLE),
              STEP0("(call (name sum) (list " N("1") " " N("2") " " N("3") "))"));
    CHECK_STR(lower("table_sum(TOTAL, none)", TABLE),
              STEP0("(call (name sum) (list " N("100") " " N("200") " " N("300") "))"));
    CHECK_STR(lower("table_max( Net   Sales , none)", TABLE),
              STEP0("(call (name max) (list " N("9105") " " N("9202") " " N("9288") "))"));
    CHECK_STR(lower("table_sum(\"\", none)", TABLE),
              STEP0("(call (name sum) (list " N("2016") " " N("2015") " " N("2014") "))"));
    /* A table op's result feeds later steps like any number. */
    CHECK_STR(lower("table_average(operating margin, none), table_max(operating margin, none), "
                    "subtract(#1, #0)", TABLE),
              "(module (assign (name #0) (binop / (call (name sum) (list " N("0.114") " "
              N("0.078") " " N("0.074") ")) (num 3))) (assign (name #1) (call (name max) (list "
              N("0.114") " " N("0.078") " " N("0.074") "))) (assign (name #2) (binop - "
              "(name #1) (name #0))))");
}

static void test_table_errors(void)
{
    CHECK_STR(lower("add(1, 2), table_sum(nope, none)", TABLE),
              "ERR 2 1:22 table_sum: no table row named 'nope' (10 rows; names match exactly, "
              "else ignoring case and spaces)");
    CHECK_STR(lower("table_average(bad, none)", TABLE),
              "ERR 2 1:15 table_average: table row 'bad', column 2 of 3: 'n/a' has no value");
    CHECK_STR(lower("table_max(lonely, none)", TABLE),
              "ERR 2 1:11 table_max: table row 'lonely' has no cells after its name");
    CHECK_STR(lower("table_max(net sales, none)", NULL),
              "ERR 2 1:11 table_max needs a table, and none was given");
    CHECK_STR(lower("add(1, 2)", "{\"a\": 1}"), "TABLE table: expected a JSON list of rows");
    CHECK_STR(lower("add(1, 2)", "[[\"a\", 1.5]]"), "TABLE table: row 0, cell 1: write decimal "
              "numbers as strings (\"1.5\", not 1.5) so they stay exact");
    CHECK_STR(lower("add(1, 2)", "[[\"a\", null]]"), "TABLE table: row 0, cell 1: expected a string");
    CHECK_STR(lower("add(1, 2)", "[[\"a\"], []]"), "TABLE table: row 1: expected a non-empty list "
              "whose first cell is the row name");
    CHECK_STR(lower("add(1, 2)", "[[\"a\",\n 1,]]"), "TABLE table: bad JSON at line 2, column 4: "
              "unexpected token near ']'");
    cr_error e;
    dsl_table *t = NULL;
    cr_limits lim = { .max_str_len = 3 };
    CHECK_INT(dsl_table_from_json("[[\"a\", \"1\"], [\"b\", \"2\"]]", 24, &lim, &t, &e), CR_ELIMIT);
    CHECK_STR(e.message, "table: more than 3 cells");
    CHECK(t == NULL);
}

static void test_find_row(void)
{
    cr_error e;
    dsl_table *t = NULL;
    CHECK_INT(dsl_table_from_json(TABLE, strlen(TABLE), NULL, &t, &e), CR_OK);
    if (!t) return;
    CHECK_INT(t->nrows, 10);
    CHECK_INT(dsl_table_find_row(t, "total", 5), 6);
    CHECK_INT(dsl_table_find_row(t, "Total", 5), 4);
    CHECK_INT(dsl_table_find_row(t, "t o t a l", 9), 6);
    CHECK_INT(dsl_table_find_row(t, "net sale", 8), -1);
    CHECK_INT(dsl_table_find_row(NULL, "x", 1), -1);
    CHECK_STR(t->rows[9].cells[1], "-7");
    dsl_table_free(t);
}

static void test_looks_like(void)
{
    static const struct { const char *src; int dsl; } cases[] = {
        { "divide(5, 2)", 1 },
        { "subtract(5829, 5735), divide(#0, 5735)", 1 },
        { "table_average(minimum rental ( a ), none)", 1 },
        { "table_sum(\"a ) b\", none)", 1 },
        { "add(1, 2),\n  divide(#0, 3)\n", 1 },
        { "add(1 2) divide(#0)", 0 },     /* two calls without ',': not the DSL's shape */
        { "add(1, 2", 0 },
        { "add(1, 2),", 1 },              /* the DSL's parser says what is missing */
        { "", 0 },
        { "  \n", 0 },
        { "print(divide(5, 2))", 0 },
        { "x = add(1, 2)", 0 },
        { "divide(5, 2)  # ratio", 0 },
        { "max(1, 2)", 0 },
        { "ans = 5829 - 5735", 0 },
        { "def solution():\n    return add(1, 2)\n", 0 },
        { "add", 0 },
        { "add(1, 2).real", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int r = dsl_looks_like(cases[i].src, strlen(cases[i].src));
        if (r != cases[i].dsl) fprintf(stderr, "looks_like(%s)\n", cases[i].src);
        CHECK_INT(r, cases[i].dsl);
    }
}

/* What the shared evaluator makes of a lowered program: "type repr fraction from", or the
 * error as "Type line:col message". */
static const char *run(const char *src, const char *table_json)
{
    cr_error e = {0};
    dsl_table *t = NULL;
    ir_module *m = NULL;
    cr_policy pol;
    cr_policy_default(&pol);
    if (table_json) dsl_table_from_json(table_json, strlen(table_json), NULL, &t, &e);
    if (dsl_compile(src, strlen(src), t, &pol.limits, &m, &e) != CR_OK) {
        snprintf(got, sizeof got, "compile: %s", e.message);
    } else {
        eval_result r;
        if (eval_run(m, NULL, 0, &pol, &r, &e) != CR_OK)
            snprintf(got, sizeof got, "engine: %s", e.message);
        else if (r.status != CR_OK)
            snprintf(got, sizeof got, "%s %d:%d %s", r.error.type, r.error.line, r.error.col,
                     r.error.message);
        else
            snprintf(got, sizeof got, "%s %s %s %s%s", r.value_type, r.value_repr,
                     r.value_fraction ? r.value_fraction : "-", r.value_from,
                     r.exact ? "" : " inexact");
        eval_result_free(&r);
    }
    ir_module_free(m);
    dsl_table_free(t);
    return got;
}

static void test_evaluated(void)
{
    CHECK_STR(run("divide(6, 2)", NULL), "float 3.0 3 #0");
    CHECK_STR(run("subtract(5829, 5735), divide(#0, 5735)", NULL),
              "float 0.01639058413251961639058413251961639 94/5735 #1");
    CHECK_STR(run("add(0.1, 0.2)", NULL), "float 0.3 3/10 #0");
    CHECK_STR(run("multiply(14.5%, const_m1)", NULL), "float -0.145 -29/200 #0");
    CHECK_STR(run("exp(1.05, 2)", NULL), "float 1.1025 441/400 #0");
    CHECK_STR(run("greater(284, 197)", NULL), "str 'yes' - #0");
    CHECK_STR(run("subtract(17.84, 4.11), subtract(60.15, 41.30), greater(#0, #1)", NULL),
              "str 'no' - #2");
    CHECK_STR(run("table_average(settlements, none)", TABLE),
              "float -11.33333333333333333333333333333333 -34/3 #0");
    CHECK_STR(run("table_max(operating margin, none), multiply(#0, const_100)", TABLE),
              "float 11.4 57/5 #1");
    CHECK_STR(run("add(1, 2), divide(#0, 0)", NULL),
              "ZeroDivisionError 1:12 float division by zero");
}

static void test_op_names(void)
{
    CHECK_STR(dsl_op_name(DSL_TABLE_AVERAGE), "table_average");
    CHECK_STR(dsl_op_name(DSL_OP_END), "?");
    CHECK(dsl_op_is_table(DSL_TABLE_MAX) && !dsl_op_is_table(DSL_GREATER));
}

int main(void)
{
    test_binary_ops();
    test_steps_and_refs();
    test_number_forms();
    test_decimal_helpers();
    test_parse_errors();
    test_ref_errors();
    test_table_syntax();
    test_positions();
    test_cells();
    test_table_ops();
    test_table_errors();
    test_find_row();
    test_looks_like();
    test_evaluated();
    test_op_names();
    return TEST_SUMMARY();
}
