/* tests/test_mod_datetime.c: the datetime module in-process. Each program's expected text is
 * what CPython 3.11 prints for it, its exception (if any) as "Type: message" on the last
 * line: constructors, range checks, arithmetic, comparisons, hashing, formatting, strptime
 * and fromisoformat, then a few finance programs; and what reads the clock or a time zone
 * stays outside the subset. */
#include <stdlib.h>

#include "evaluator/evaluator.h"
#include "parser/parser.h"
#include "tests/testlib.h"

typedef struct {
    const char *src, *want;
} dt_case;

/* The program's stdout and its exception, or NULL when it is not in-process. */
static char *run(const char *src, int *nreasons)
{
    cr_policy pol;
    cr_policy_default(&pol);
    ir_module *m = NULL;
    cr_error err = { 0 };
    *nreasons = -1;
    if (parser_parse_python(src, strlen(src), &pol.limits, &m, &err) != CR_OK) return NULL;
    *nreasons = (int)m->nreasons;
    if (m->nreasons) {
        ir_module_free(m);
        return NULL;
    }
    eval_result r;
    cr_code rc = eval_run(m, NULL, 0, &pol, &r, &err);
    ir_module_free(m);
    if (rc != CR_OK) return NULL;
    size_t n = strlen(r.stdout_text) + strlen(r.error.type) + strlen(r.error.message) + 16;
    char *got = malloc(n);
    if (got) {
        if (r.status == CR_OK) snprintf(got, n, "%s", r.stdout_text);
        else if (r.status == CR_EUNSUPPORTED) snprintf(got, n, "%srejected: %s\n", r.stdout_text, r.error.message);
        else snprintf(got, n, "%s%s: %s\n", r.stdout_text, r.error.type, r.error.message);
    }
    eval_result_free(&r);
    return got;
}

static void check_cases(const dt_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int nr;
        char *got = run(c[i].src, &nr);
        if (!got) fprintf(stderr, "not run in-process (%d reasons):\n%s", nr, c[i].src);
        else if (strcmp(got, c[i].want) != 0) fprintf(stderr, "in:\n%s", c[i].src);
        CHECK_STR(got, c[i].want);
        free(got);
    }
}

static const dt_case cases[] = {
    { "from datetime import date\n"
      "print(date(2024,2,29), f\"{date(1,1,1)!r}\")\n"
      "x = date(2024, 2, 30)\n",
      "2024-02-29 datetime.date(1, 1, 1)\n"
      "ValueError: day is out of range for month\n" },
    { "from datetime import date\n"
      "date(2024,13,1)\n",
      "ValueError: month must be in 1..12\n" },
    { "from datetime import date\n"
      "date(0,1,1)\n",
      "ValueError: year 0 is out of range\n" },
    { "from datetime import date\n"
      "date(10000,1,1)\n",
      "ValueError: year 10000 is out of range\n" },
    { "from datetime import date\n"
      "date(2024,1)\n",
      "TypeError: function missing required argument 'day' (pos 3)\n" },
    { "from datetime import date\n"
      "date(2024,1,1,1)\n",
      "TypeError: function takes at most 3 arguments (4 given)\n" },
    { "from datetime import date\n"
      "date(2024.0,1,1)\n",
      "TypeError: 'float' object cannot be interpreted as an integer\n" },
    { "from datetime import date\n"
      "date(\"2024\",1,1)\n",
      "TypeError: 'str' object cannot be interpreted as an integer\n" },
    { "from datetime import date\n"
      "print(date(year=2024,month=1,day=5))\n"
      "date(2024,1,day=5,foo=1)\n",
      "2024-01-05\n"
      "TypeError: function takes at most 3 arguments (4 given)\n" },
    { "from datetime import date\n"
      "date(2024,1,1,day=3)\n",
      "TypeError: function takes at most 3 arguments (4 given)\n" },
    { "from datetime import date\n"
      "date(2024,1,foo=5)\n",
      "TypeError: function missing required argument 'day' (pos 3)\n" },
    { "from datetime import date\n"
      "date(2024,foo=1, month=2, day=3)\n",
      "TypeError: function takes at most 3 arguments (4 given)\n" },
    { "from datetime import date\n"
      "date(2**40,1,1)\n",
      "OverflowError: signed integer is greater than maximum\n" },
    { "from datetime import date\n"
      "date(-2**40,1,1)\n",
      "OverflowError: signed integer is less than minimum\n" },
    { "from datetime import date\n"
      "date(2**70,1,1)\n",
      "OverflowError: Python int too large to convert to C long\n" },
    { "from datetime import date\n"
      "date(year=1,month=1,day=1,foo=2)\n",
      "TypeError: function takes at most 3 keyword arguments (4 given)\n" },
    { "from datetime import datetime\n"
      "print(datetime(2024,1,1,0,0,0,0,None), datetime(2024,1,1,tzinfo=None))\n"
      "print(f\"{datetime(2024,1,1,fold=1)!r}\")\n"
      "datetime(2024,1,1,24)\n",
      "2024-01-01 00:00:00 2024-01-01 00:00:00\n"
      "datetime.datetime(2024, 1, 1, 0, 0, fold=1)\n"
      "ValueError: hour must be in 0..23\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,0,60)\n",
      "ValueError: minute must be in 0..59\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,0,0,60)\n",
      "ValueError: second must be in 0..59\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,0,0,0,1000000)\n",
      "ValueError: microsecond must be in 0..999999\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,0,0,0,0,1)\n",
      "TypeError: tzinfo argument must be None or of a tzinfo subclass, not type 'int'\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,fold=2)\n",
      "ValueError: fold must be either 0 or 1\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,0,0,0,0,None,0)\n",
      "TypeError: function takes at most 8 positional arguments (9 given)\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1,0,0,0,0,None,fold=0,x=1)\n",
      "TypeError: function takes at most 9 arguments (10 given)\n" },
    { "from datetime import timedelta\n"
      "for t in [timedelta(days=-1), timedelta(seconds=-1), timedelta(1,2,3,4,5,6,7), timedelta(days=1.5), timedelta(hours=-0.5), timedelta(), timedelta(microseconds=1), timedelta(days=3, hours=5, minutes=2, seconds=1.5), timedelta(days=-1, seconds=86399), timedelta(days=2,microseconds=5), timedelta(days=-2,microseconds=5), timedelta(hours=50), timedelta(seconds=1e-7), timedelta(seconds=5e-7), timedelta(seconds=1.5e-6), timedelta(seconds=2.5e-6), timedelta(milliseconds=1.5), timedelta(weeks=1), timedelta(days=True), timedelta(days=-3,seconds=5), timedelta(seconds=5, microseconds=1)]:\n"
      "    print(f\"{t!r}\", t, t.days, t.seconds, t.microseconds, t.total_seconds())\n",
      "datetime.timedelta(days=-1) -1 day, 0:00:00 -1 0 0 -86400.0\n"
      "datetime.timedelta(days=-1, seconds=86399) -1 day, 23:59:59 -1 86399 0 -1.0\n"
      "datetime.timedelta(days=50, seconds=21902, microseconds=4003) 50 days, 6:05:02.004003 50 21902 4003 4341902.004003\n"
      "datetime.timedelta(days=1, seconds=43200) 1 day, 12:00:00 1 43200 0 129600.0\n"
      "datetime.timedelta(days=-1, seconds=84600) -1 day, 23:30:00 -1 84600 0 -1800.0\n"
      "datetime.timedelta(0) 0:00:00 0 0 0 0.0\n"
      "datetime.timedelta(microseconds=1) 0:00:00.000001 0 0 1 1e-06\n"
      "datetime.timedelta(days=3, seconds=18121, microseconds=500000) 3 days, 5:02:01.500000 3 18121 500000 277321.5\n"
      "datetime.timedelta(days=-1, seconds=86399) -1 day, 23:59:59 -1 86399 0 -1.0\n"
      "datetime.timedelta(days=2, microseconds=5) 2 days, 0:00:00.000005 2 0 5 172800.000005\n"
      "datetime.timedelta(days=-2, microseconds=5) -2 days, 0:00:00.000005 -2 0 5 -172799.999995\n"
      "datetime.timedelta(days=2, seconds=7200) 2 days, 2:00:00 2 7200 0 180000.0\n"
      "datetime.timedelta(0) 0:00:00 0 0 0 0.0\n"
      "datetime.timedelta(0) 0:00:00 0 0 0 0.0\n"
      "datetime.timedelta(microseconds=2) 0:00:00.000002 0 0 2 2e-06\n"
      "datetime.timedelta(microseconds=2) 0:00:00.000002 0 0 2 2e-06\n"
      "datetime.timedelta(microseconds=1500) 0:00:00.001500 0 0 1500 0.0015\n"
      "datetime.timedelta(days=7) 7 days, 0:00:00 7 0 0 604800.0\n"
      "datetime.timedelta(days=1) 1 day, 0:00:00 1 0 0 86400.0\n"
      "datetime.timedelta(days=-3, seconds=5) -3 days, 0:00:05 -3 5 0 -259195.0\n"
      "datetime.timedelta(seconds=5, microseconds=1) 0:00:05.000001 0 5 1 5.000001\n" },
    { "from datetime import timedelta\n"
      "timedelta(1,2,3,4,5,6,7,8)\n",
      "TypeError: __new__() takes at most 7 arguments (8 given)\n" },
    { "from datetime import timedelta\n"
      "timedelta(foo=1)\n",
      "TypeError: 'foo' is an invalid keyword argument for __new__()\n" },
    { "from datetime import datetime\n"
      "datetime(2020, 1, 1, foo=1)\n",
      "TypeError: 'foo' is an invalid keyword argument for this function\n" },
    { "from datetime import timedelta\n"
      "timedelta(days=1000000000)\n",
      "OverflowError: days=1000000000; must have magnitude <= 999999999\n" },
    { "from datetime import timedelta\n"
      "timedelta(days=999999999,hours=24)\n",
      "OverflowError: days=1000000000; must have magnitude <= 999999999\n" },
    { "from datetime import timedelta\n"
      "timedelta(days=\"1\")\n",
      "TypeError: unsupported type for timedelta days component: str\n" },
    { "from datetime import timedelta\n"
      "timedelta(days=2**40)\n",
      "OverflowError: Python int too large to convert to C int\n" },
    { "from datetime import timedelta\n"
      "timedelta(days=float(\"inf\"))\n",
      "OverflowError: cannot convert float infinity to integer\n" },
    { "from datetime import timedelta\n"
      "timedelta(days=float(\"nan\"))\n",
      "ValueError: cannot convert float NaN to integer\n" },
    { "from datetime import timedelta\n"
      "timedelta(1,days=1)\n",
      "TypeError: argument for __new__() given by name ('days') and position (1)\n" },
    { "from datetime import date, datetime, timedelta\n"
      "print(date(2024,1,1)+timedelta(days=1, hours=25), date(2024,1,1)-timedelta(hours=1), date(2024,3,1)-date(2024,1,1))\n"
      "print(datetime(2024,1,1,5)+timedelta(hours=20), datetime(2024,1,1)-timedelta(microseconds=1), datetime(2024,1,1)-datetime(2023,6,1,12,30))\n"
      "print(timedelta(1)+date(2024,1,1), date(2024,1,5) - timedelta(days=1.5), date(2024,1,1) + timedelta(days=-1, seconds=1))\n"
      "print(timedelta(1)*2, 2*timedelta(1), timedelta(1)*0.1, timedelta(1)/3, timedelta(1)/timedelta(hours=5), timedelta(1)//timedelta(hours=5), timedelta(1)%timedelta(hours=5))\n"
      "print(timedelta(1)//7, divmod(timedelta(1),timedelta(hours=7)), -timedelta(1), +timedelta(1), abs(timedelta(-1)), timedelta(1)*1.5, timedelta(1)/2.5)\n"
      "print(timedelta(1)*True, timedelta(1)/True, timedelta(1)*-1, timedelta(microseconds=-1)//2, timedelta(microseconds=-3)/2, timedelta(microseconds=3)/2, timedelta(microseconds=5)/2, timedelta(microseconds=5)*0.5, timedelta(microseconds=7)*0.5, timedelta(1)-timedelta(3))\n"
      "print(f\"{timedelta(days=1)/timedelta(days=3):.12f} {timedelta(days=1, microseconds=1)/timedelta(days=7):.12f}\", timedelta(days=1)*(1/3), timedelta(seconds=10)*0.15, 1.5*timedelta(1))\n"
      "print(sum([timedelta(1),timedelta(2)], timedelta()), bool(timedelta(0)), bool(timedelta(1)), bool(date(1,1,1)))\n",
      "2024-01-03 2024-01-01 60 days, 0:00:00\n"
      "2024-01-02 01:00:00 2023-12-31 23:59:59.999999 213 days, 11:30:00\n"
      "2024-01-02 2024-01-04 2023-12-31\n"
      "2 days, 0:00:00 2 days, 0:00:00 2:24:00 8:00:00 4.8 4 4:00:00\n"
      "3:25:42.857142 (3, datetime.timedelta(seconds=10800)) -1 day, 0:00:00 1 day, 0:00:00 1 day, 0:00:00 1 day, 12:00:00 9:36:00\n"
      "1 day, 0:00:00 1 day, 0:00:00 -1 day, 0:00:00 -1 day, 23:59:59.999999 -1 day, 23:59:59.999998 0:00:00.000002 0:00:00.000002 0:00:00.000002 0:00:00.000004 -2 days, 0:00:00\n"
      "0.333333333333 0.142857142859 8:00:00 0:00:01.500000 1 day, 12:00:00\n"
      "3 days, 0:00:00 False True True\n" },
    { "from datetime import date\n"
      "date(2024,1,1)+1\n",
      "TypeError: unsupported operand type(s) for +: 'datetime.date' and 'int'\n" },
    { "from datetime import date, datetime\n"
      "datetime(2024,1,1)-date(2024,1,1)\n",
      "TypeError: unsupported operand type(s) for -: 'datetime.datetime' and 'datetime.date'\n" },
    { "from datetime import date, datetime\n"
      "date(2024,1,1)<datetime(2024,1,1)\n",
      "TypeError: can't compare datetime.datetime to datetime.date\n" },
    { "from datetime import date, datetime\n"
      "datetime(2024,1,1)>=date(2024,1,1)\n",
      "TypeError: can't compare datetime.datetime to datetime.date\n" },
    { "from datetime import date, datetime, timedelta\n"
      "print(date(2024,1,1)==datetime(2024,1,1), timedelta(0)==0, timedelta(1)==1, timedelta(1)!=date(1,1,1), date(1,1,1)!=date(1,1,1), timedelta(hours=24)==timedelta(days=1))\n"
      "print(date(2024,1,1) < date(2024,1,2), datetime(2024,1,1) <= datetime(2024,1,1), timedelta(1) > timedelta(0), timedelta(-1) < timedelta(0))\n"
      "date(2024,1,1)<1\n",
      "False False False True False True\n"
      "True True True True\n"
      "TypeError: '<' not supported between instances of 'datetime.date' and 'int'\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)<1\n",
      "TypeError: '<' not supported between instances of 'datetime.timedelta' and 'int'\n" },
    { "from datetime import timedelta, date\n"
      "timedelta(1)<date(2024,1,1)\n",
      "TypeError: '<' not supported between instances of 'datetime.timedelta' and 'datetime.date'\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)/0\n",
      "ZeroDivisionError: integer division or modulo by zero\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)//0\n",
      "ZeroDivisionError: integer division or modulo by zero\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)/timedelta(0)\n",
      "ZeroDivisionError: division by zero\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)//timedelta(0)\n",
      "ZeroDivisionError: integer division or modulo by zero\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)%timedelta(0)\n",
      "ZeroDivisionError: integer modulo by zero\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)+1\n",
      "TypeError: unsupported operand type(s) for +: 'datetime.timedelta' and 'int'\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)//2.0\n",
      "TypeError: unsupported operand type(s) for //: 'datetime.timedelta' and 'float'\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)/0.0\n",
      "ZeroDivisionError: integer division or modulo by zero\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)*float(\"inf\")\n",
      "OverflowError: cannot convert Infinity to integer ratio\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)*float(\"nan\")\n",
      "ValueError: cannot convert NaN to integer ratio\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)**2\n",
      "TypeError: unsupported operand type(s) for ** or pow(): 'datetime.timedelta' and 'int'\n" },
    { "from datetime import date\n"
      "-date(2024,1,1)\n",
      "TypeError: bad operand type for unary -: 'datetime.date'\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)*timedelta(1)\n",
      "TypeError: unsupported operand type(s) for *: 'datetime.timedelta' and 'datetime.timedelta'\n" },
    { "from datetime import timedelta\n"
      "1/timedelta(1)\n",
      "TypeError: unsupported operand type(s) for /: 'int' and 'datetime.timedelta'\n" },
    { "from datetime import timedelta\n"
      "timedelta(1)%2\n",
      "TypeError: unsupported operand type(s) for %: 'datetime.timedelta' and 'int'\n" },
    { "from datetime import timedelta\n"
      "divmod(timedelta(1), 2)\n",
      "TypeError: unsupported operand type(s) for divmod(): 'datetime.timedelta' and 'int'\n" },
    { "from datetime import date, timedelta\n"
      "date.max+timedelta(1)\n",
      "OverflowError: date value out of range\n" },
    { "from datetime import date, timedelta\n"
      "date.min-timedelta(1)\n",
      "OverflowError: date value out of range\n" },
    { "from datetime import datetime, timedelta\n"
      "datetime(9999,12,31,23)+timedelta(hours=1)\n",
      "OverflowError: date value out of range\n" },
    { "from datetime import timedelta\n"
      "timedelta.max + timedelta(microseconds=1)\n",
      "OverflowError: days=1000000000; must have magnitude <= 999999999\n" },
    { "from datetime import date, datetime, timedelta\n"
      "print(date.min, date.max, datetime.min, datetime.max, timedelta.min, timedelta.max, timedelta.resolution, date.resolution, datetime.resolution)\n"
      "print(f\"{date.min!r} {datetime.max!r} {timedelta.min!r} {date(2024,1,1).max!r} {timedelta(1).max!r}\", date.max.year)\n"
      "print(date, datetime, timedelta)\n",
      "0001-01-01 9999-12-31 0001-01-01 00:00:00 9999-12-31 23:59:59.999999 -999999999 days, 0:00:00 999999999 days, 23:59:59.999999 0:00:00.000001 1 day, 0:00:00 0:00:00.000001\n"
      "datetime.date(1, 1, 1) datetime.datetime(9999, 12, 31, 23, 59, 59, 999999) datetime.timedelta(days=-999999999) datetime.date(9999, 12, 31) datetime.timedelta(days=999999999, seconds=86399, microseconds=999999) 9999\n"
      "<class 'datetime.date'> <class 'datetime.datetime'> <class 'datetime.timedelta'>\n" },
    { "from datetime import date, datetime\n"
      "print(date(2024,1,31).replace(2023), datetime(2024,1,31,5).replace(hour=7,microsecond=5), date(2024,1,1).replace(), datetime(2024,1,1).replace(tzinfo=None), f\"{datetime(2024,1,1).replace(fold=1)!r}\")\n"
      "print(datetime(2024,1,1).replace(year=2024, month=2, day=29, hour=23, minute=59, second=59, microsecond=999999))\n"
      "date(2024,1,31).replace(month=2)\n",
      "2023-01-31 2024-01-31 07:00:00.000005 2024-01-01 2024-01-01 00:00:00 datetime.datetime(2024, 1, 1, 0, 0, fold=1)\n"
      "2024-02-29 23:59:59.999999\n"
      "ValueError: day is out of range for month\n" },
    { "from datetime import date\n"
      "date(2024,1,31).replace(day=0)\n",
      "ValueError: day is out of range for month\n" },
    { "from datetime import date\n"
      "date(2024,1,1).replace(hour=3)\n",
      "TypeError: 'hour' is an invalid keyword argument for replace()\n" },
    { "from datetime import date\n"
      "date(2024,1,1).replace(1,2,3,4)\n",
      "TypeError: replace() takes at most 3 arguments (4 given)\n" },
    { "from datetime import date\n"
      "date(2024,1,1).replace(year=2023.0)\n",
      "TypeError: 'float' object cannot be interpreted as an integer\n" },
    { "from datetime import date\n"
      "date(2024,1,1).replace(2024,year=1)\n",
      "TypeError: argument for replace() given by name ('year') and position (1)\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1).replace(tzinfo=1)\n",
      "TypeError: tzinfo argument must be None or of a tzinfo subclass, not type 'int'\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1).replace(fold=3)\n",
      "ValueError: fold must be either 0 or 1\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1).replace(minute=60)\n",
      "ValueError: minute must be in 0..59\n" },
    { "from datetime import date, datetime\n"
      "print(date.fromordinal(738000), datetime.fromordinal(738000), date(2024,1,1).toordinal(), date.fromordinal(3652059), date.fromordinal(True), date(2024,2,29).weekday(), date(2024,2,29).isoweekday(), datetime(2024,1,5,13).weekday(), datetime(2024,1,5,13).toordinal())\n"
      "print(date(2024,2,29).isoformat(), datetime(2024,2,29,1,2,3).isoformat(), datetime(2024,2,29,1,2,3,40).isoformat(), datetime(2024,2,29,1,2,3,40).isoformat(\" \"), datetime(2024,2,29,1,2,3,40).isoformat(sep=\"T\",timespec=\"minutes\"), datetime(2024,2,29,1,2,3,40).date())\n"
      "d = datetime(2024,1,5,13,7,9,1234)\n"
      "print(d.isoformat(timespec=\"hours\"), d.isoformat(timespec=\"seconds\"), d.isoformat(timespec=\"milliseconds\"), d.isoformat(timespec=\"microseconds\"), datetime(2024,1,5,13,7,9).isoformat(timespec=\"auto\"), d.isoformat(\"é\"))\n"
      "print(str(d), f\"{datetime(2024,1,5,13,7,0)!r}\", f\"{datetime(2024,1,5,13,0,9)!r}\", f\"{datetime(2024,1,5,0,0,0,5)!r}\", date(2024,1,5).ctime(), d.ctime())\n"
      "date.fromordinal(0)\n",
      "2021-07-29 2021-07-29 00:00:00 738886 9999-12-31 0001-01-01 3 4 4 738890\n"
      "2024-02-29 2024-02-29T01:02:03 2024-02-29T01:02:03.000040 2024-02-29 01:02:03.000040 2024-02-29T01:02 2024-02-29\n"
      "2024-01-05T13 2024-01-05T13:07:09 2024-01-05T13:07:09.001 2024-01-05T13:07:09.001234 2024-01-05T13:07:09 2024-01-05é13:07:09.001234\n"
      "2024-01-05 13:07:09.001234 datetime.datetime(2024, 1, 5, 13, 7) datetime.datetime(2024, 1, 5, 13, 0, 9) datetime.datetime(2024, 1, 5, 0, 0, 0, 5) Fri Jan  5 00:00:00 2024 Fri Jan  5 13:07:09 2024\n"
      "ValueError: ordinal must be >= 1\n" },
    { "from datetime import date\n"
      "date.fromordinal(3652060)\n",
      "ValueError: year 10000 is out of range\n" },
    { "from datetime import date\n"
      "date.fromordinal(1.0)\n",
      "TypeError: 'float' object cannot be interpreted as an integer\n" },
    { "from datetime import date\n"
      "date.fromordinal()\n",
      "TypeError: fromordinal() takes exactly 1 argument (0 given)\n" },
    { "from datetime import date\n"
      "date.fromordinal(x=1)\n",
      "TypeError: fromordinal() takes no keyword arguments\n" },
    { "from datetime import date\n"
      "date.fromordinal(2**70)\n",
      "OverflowError: Python int too large to convert to C long\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,5,13,7,9).isoformat(timespec=\"x\")\n",
      "ValueError: Unknown timespec value\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,5,13,7,9).isoformat(\"ab\")\n",
      "TypeError: isoformat() argument 1 must be a unicode character, not str\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,5,13,7,9).isoformat(1)\n",
      "TypeError: isoformat() argument 1 must be a unicode character, not int\n" },
    { "from datetime import date\n"
      "date(2024,1,5).isoformat(1)\n",
      "TypeError: date.isoformat() takes no arguments (1 given)\n" },
    { "from datetime import date\n"
      "date(2024,1,1).weekday(1)\n",
      "TypeError: date.weekday() takes no arguments (1 given)\n" },
    { "from datetime import date\n"
      "date(2024,1,1).weekday(x=1)\n",
      "TypeError: date.weekday() takes no keyword arguments\n" },
    { "from datetime import timedelta\n"
      "timedelta(1).total_seconds(1)\n",
      "TypeError: timedelta.total_seconds() takes no arguments (1 given)\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1).date(1)\n",
      "TypeError: datetime.date() takes no arguments (1 given)\n" },
    { "from datetime import date\n"
      "date(2024,1,1).strftime(\"%Y\",1)\n",
      "TypeError: strftime() takes at most 1 argument (2 given)\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1).isoformat(1,2,3)\n",
      "TypeError: isoformat() takes at most 2 arguments (3 given)\n" },
    { "from datetime import datetime\n"
      "datetime(2024,1,1).isoformat(foo=1)\n",
      "TypeError: 'foo' is an invalid keyword argument for isoformat()\n" },
    { "from datetime import date\n"
      "date(2024,1,1).isoformat(foo=1)\n",
      "TypeError: date.isoformat() takes no keyword arguments\n" },
    { "from datetime import date\n"
      "date(2024,1,1).strftime(format=5)\n",
      "TypeError: strftime() argument 1 must be str, not int\n" },
    { "from datetime import date\n"
      "date(2024,1,1).hour\n",
      "AttributeError: 'datetime.date' object has no attribute 'hour'\n" },
    { "from datetime import date\n"
      "len(date(2024,1,1))\n",
      "TypeError: object of type 'datetime.date' has no len()\n" },
    { "from datetime import date\n"
      "date(2024,1,1)[0]\n",
      "TypeError: 'datetime.date' object is not subscriptable\n" },
    { "from datetime import date\n"
      "abs(date(2024,1,1))\n",
      "TypeError: bad operand type for abs(): 'datetime.date'\n" },
    { "from datetime import timedelta\n"
      "int(timedelta(1))\n",
      "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'datetime.timedelta'\n" },
    { "from datetime import timedelta\n"
      "float(timedelta(1))\n",
      "TypeError: float() argument must be a string or a real number, not 'datetime.timedelta'\n" },
    { "from datetime import date, datetime\n"
      "print(date(2024,1,5).strftime(\"%Y-%m-%d %H:%M:%S %f %y %b %B %a %A %j %p %I %%\"))\n"
      "print(datetime(2024,1,5,13,7,9,1234).strftime(\"%Y-%m-%d %H:%M:%S %f %y %b %B %a %A %j %p %I %%\"))\n"
      "print(datetime(2024,1,5,0,7).strftime(\"%I %p\"), date(5,1,5).strftime(\"%Y %y\"), date(2024,1,5).strftime(\"%Q\"), date(2024,1,5).strftime(\"%\"), date(2024,1,5).strftime(\"abc%\"))\n"
      "print(date(2024,1,5).strftime(\"%U %W %w %c %x %X %e %G %V %u %Z %z %C %D %F %T %R %h %n %t|\"))\n"
      "print(date(2024,1,5).strftime(\"%-d/%-m %e %k %l %P %r %G %g %V %u %C %h %5d %_d %0e %^a %#b %Ey %Od\"))\n"
      "print(datetime(2024,1,5,13,7,9,1234).strftime(\"%c|%x|%X|%D|%T|%R|%U|%W|%w|%j\"), datetime(2024,12,30).strftime(\"%G-%V-%u %g %U %W\"), datetime(2021,1,3).strftime(\"%G-%V-%u %U %W %j\"))\n"
      "print(datetime(2024,1,5).strftime(\"%f %z %Z|\"), date(2024,1,5).strftime(\"%H%M%S\"), date(2024,1,5).strftime(\"\") == \"\", date(1999,1,5).strftime(\"%y %C\"))\n"
      "print(f\"{date(2024,1,5):%A %d %B %Y}\", format(date(2024,1,1),\"%d/%m\"), format(date(2024,1,1),\"\"), f\"{date(2024,1,5):>20}\", f\"{date(2024,1,5)}\", format(datetime(2024,1,5),\"\"))\n"
      "f\"{timedelta(1):>20}\"\n",
      "2024-01-05 00:00:00 000000 24 Jan January Fri Friday 005 AM 12 %\n"
      "2024-01-05 13:07:09 001234 24 Jan January Fri Friday 005 PM 01 %\n"
      "12 AM 5 05 %Q % abc%\n"
      "00 01 5 Fri Jan  5 00:00:00 2024 01/05/24 00:00:00  5 2024 01 5   20 01/05/24 2024-01-05 00:00:00 00:00 Jan \n"
      " \t|\n"
      "5/1  5  0 12 am 12:00:00 AM 2024 24 01 5 20 Jan 00005  5 05 FRI JAN 24 05\n"
      "Fri Jan  5 13:07:09 2024|01/05/24|13:07:09|01/05/24|13:07:09|13:07|00|01|5|005 2025-01-1 25 52 53 2020-53-7 01 00 003\n"
      "000000  | 000000 True 99 19\n"
      "Friday 05 January 2024 01/01 2024-01-01 >20 2024-01-05 2024-01-05 00:00:00\n"
      "NameError: name 'timedelta' is not defined\n" },
    { "from datetime import timedelta\n"
      "format(timedelta(1),\"%d\")\n",
      "TypeError: unsupported format string passed to datetime.timedelta.__format__\n" },
    { "from datetime import date\n"
      "date(2024,1,5).strftime()\n",
      "TypeError: strftime() missing required argument 'format' (pos 1)\n" },
    { "from datetime import date\n"
      "date(2024,1,5).strftime(5)\n",
      "TypeError: strftime() argument 1 must be str, not int\n" },
    { "from datetime import datetime\n"
      "for a, f in [(\"2024-01-31\",\"%Y-%m-%d\"), (\"2024-1-3\",\"%Y-%m-%d\"), (\"31/01/24\",\"%d/%m/%y\"), (\"69\",\"%y\"), (\"68\",\"%y\"), (\"Jan 5 2024\",\"%b %d %Y\"), (\"january 5 2024\",\"%B %d %Y\"), (\"Mon 2024\",\"%a %Y\"), (\"5:03 PM\",\"%I:%M %p\"), (\"12:03 am\",\"%I:%M %p\"), (\"12:03\",\"%I:%M\"), (\"2024 060\",\"%Y %j\"), (\"1.5\",\"%S.%f\"), (\"2024%\",\"%Y%%\"), (\"2024 1\",\"%Y  %m\"), (\"2024\\t1\",\"%Y %m\"), (\"1\",\"%H\"), (\"\",\"\"), (\"2024-01-31 10:20:30\",\"%Y-%m-%d %H:%M:%S\"), (\"20240131\",\"%Y%m%d\"), (\"2024131\",\"%Y%m%d\"), (\"Monday, 2024\",\"%A, %Y\"), (\"5\",\"%d\"), (\"29\",\"%d\"), (\"2023 366\",\"%Y %j\"), (\"2024 24\",\"%Y %y\"), (\"5 PM\",\"%H %p\"), (\"2024-01-05T10:00:00\", \"%Y-%m-%dT%H:%M:%S\"), (\"2024-01-05t10\", \"%Y-%m-%dT%H\"), (\" 5\",\"%d\"), (\"x 5\",\"x%d\"), (\"2024 PM 5\",\"%Y %p %I\"), (\"AM\",\"%p\"), (\"12\",\"%I\"), (\"12 PM\",\"%I %p\"), (\"0\",\"%S\"), (\"a.b\",\"a.b\"), (\"a+b\",\"a+b\"), (\"16 June 2014\", \"%d %B %Y\"), (\"10 October 2016\", \"%d %B %Y\"), (\"September 3, 2023\", \"%B %d, %Y\"), (\"may 3, 2023\", \"%B %d, %Y\"), (\"SEP 3, 2023\", \"%b %d, %Y\")]:\n"
      "    print(datetime.strptime(a, f))\n"
      "print(datetime.strptime(\"2024-02-29\",\"%Y-%m-%d\").date())\n",
      "2024-01-31 00:00:00\n"
      "2024-01-03 00:00:00\n"
      "2024-01-31 00:00:00\n"
      "1969-01-01 00:00:00\n"
      "2068-01-01 00:00:00\n"
      "2024-01-05 00:00:00\n"
      "2024-01-05 00:00:00\n"
      "2024-01-01 00:00:00\n"
      "1900-01-01 17:03:00\n"
      "1900-01-01 00:03:00\n"
      "1900-01-01 00:03:00\n"
      "2024-02-29 00:00:00\n"
      "1900-01-01 00:00:01.500000\n"
      "2024-01-01 00:00:00\n"
      "2024-01-01 00:00:00\n"
      "2024-01-01 00:00:00\n"
      "1900-01-01 01:00:00\n"
      "1900-01-01 00:00:00\n"
      "2024-01-31 10:20:30\n"
      "2024-01-31 00:00:00\n"
      "2024-01-31 00:00:00\n"
      "2024-01-01 00:00:00\n"
      "1900-01-05 00:00:00\n"
      "1900-01-29 00:00:00\n"
      "2024-01-01 00:00:00\n"
      "2024-01-01 00:00:00\n"
      "1900-01-01 05:00:00\n"
      "2024-01-05 10:00:00\n"
      "2024-01-05 10:00:00\n"
      "1900-01-05 00:00:00\n"
      "1900-01-05 00:00:00\n"
      "2024-01-01 17:00:00\n"
      "1900-01-01 00:00:00\n"
      "1900-01-01 00:00:00\n"
      "1900-01-01 12:00:00\n"
      "1900-01-01 00:00:00\n"
      "1900-01-01 00:00:00\n"
      "1900-01-01 00:00:00\n"
      "2014-06-16 00:00:00\n"
      "2016-10-10 00:00:00\n"
      "2023-09-03 00:00:00\n"
      "2023-05-03 00:00:00\n"
      "2023-09-03 00:00:00\n"
      "2024-02-29\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024-01-31x\",\"%Y-%m-%d\")\n",
      "ValueError: unconverted data remains: x\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"1.1234567\",\"%S.%f\")\n",
      "ValueError: unconverted data remains: 7\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024-02-30\",\"%Y-%m-%d\")\n",
      "ValueError: day is out of range for month\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024\",\"%Y%\")\n",
      "ValueError: stray % in format '%Y%'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024\",\"%Q\")\n",
      "ValueError: 'Q' is a bad directive in format '%Q'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"  2024\",\"%Y\")\n",
      "ValueError: time data '  2024' does not match format '%Y'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024\",\"%Y \")\n",
      "ValueError: time data '2024' does not match format '%Y '\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(2024,\"%Y\")\n",
      "TypeError: strptime() argument 1 must be str, not int\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024\")\n",
      "TypeError: strptime() takes exactly 2 arguments (1 given)\n" },
    { "from datetime import date\n"
      "date.strptime(\"2024\",\"%Y\")\n",
      "AttributeError: type object 'datetime.date' has no attribute 'strptime'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"13\",\"%m\")\n",
      "ValueError: unconverted data remains: 3\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"24\",\"%H\")\n",
      "ValueError: unconverted data remains: 4\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"Sept 2024\",\"%b %Y\")\n",
      "ValueError: time data 'Sept 2024' does not match format '%b %Y'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(date_string=\"2024\",format=\"%Y\")\n",
      "TypeError: strptime() takes no keyword arguments\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024\", 5)\n",
      "TypeError: strptime() argument 2 must be str, not int\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"x\",\"% Y\")\n",
      "ValueError: '%' is a bad directive in format '% Y'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"x\",\"%.\")\n",
      "ValueError: '%' is a bad directive in format '%.'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"17 PM\",\"%I %p\")\n",
      "ValueError: time data '17 PM' does not match format '%I %p'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"  5\",\"%d\")\n",
      "ValueError: time data '  5' does not match format '%d'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024-13-01\",\"%Y-%m-%d\")\n",
      "ValueError: time data '2024-13-01' does not match format '%Y-%m-%d'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"60\",\"%S\")\n",
      "ValueError: second must be in 0..59\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"axb\",\"a.b\")\n",
      "ValueError: time data 'axb' does not match format 'a.b'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"2024-01-05\", \"%Y-%m-%d %H\")\n",
      "ValueError: time data '2024-01-05' does not match format '%Y-%m-%d %H'\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"0000-01-05\", \"%Y-%m-%d\")\n",
      "ValueError: year 0 is out of range\n" },
    { "from datetime import datetime\n"
      "datetime.strptime(\"29 02\", \"%d %m\")\n",
      "ValueError: day is out of range for month\n" },
    { "from datetime import date, datetime\n"
      "for s in [\"2024-01-31\", \"20240131\", \"2024-W05-3\", \"2024013100\", \"2024W053\", \"2024-W05\", \"2020-W53-1\"]:\n"
      "    print(date.fromisoformat(s))\n"
      "for s in [\"2024-01-31\", \"2024-01-31T10\", \"2024-01-31T10:20\", \"2024-01-31 10:20:30.5\", \"2024-01-31T10:20:30.123456789\", \"20240131T102030\", \"2024-01-31X10:20\", \"2024-01-31T10:20:30,5\", \"2024-01-31T1020\", \"2024-01-31T10:20:30.1234\", \"2024-01-31T102030.5\", \"2024-01-31é10:20\", \"2024-W05-3T10\", \"2024-01-31T10203012\", \"2024-01-31T10.5\", \"2024-01-31T10:20.25\"]:\n"
      "    print(datetime.fromisoformat(s))\n",
      "2024-01-31\n"
      "2024-01-31\n"
      "2024-01-31\n"
      "2024-01-31\n"
      "2024-01-31\n"
      "2024-01-29\n"
      "2020-12-28\n"
      "2024-01-31 00:00:00\n"
      "2024-01-31 10:00:00\n"
      "2024-01-31 10:20:00\n"
      "2024-01-31 10:20:30.500000\n"
      "2024-01-31 10:20:30.123456\n"
      "2024-01-31 10:20:30\n"
      "2024-01-31 10:20:00\n"
      "2024-01-31 10:20:30.500000\n"
      "2024-01-31 10:20:00\n"
      "2024-01-31 10:20:30.123400\n"
      "2024-01-31 10:20:30.500000\n"
      "2024-01-31 10:20:00\n"
      "2024-01-31 10:00:00\n"
      "2024-01-31 10:20:30.120000\n"
      "2024-01-31 10:00:00.500000\n"
      "2024-01-31 10:20:00.250000\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"2024-1-31\")\n",
      "ValueError: Invalid isoformat string: '2024-1-31'\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"2024-01-31T00:00\")\n",
      "ValueError: Invalid isoformat string: '2024-01-31T00:00'\n" },
    { "from datetime import date\n"
      "date.fromisoformat(20240131)\n",
      "TypeError: fromisoformat: argument must be str\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"2024-02-30\")\n",
      "ValueError: day is out of range for month\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"2024-0131\")\n",
      "ValueError: Invalid isoformat string: '2024-0131'\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"2024-W53-1\")\n",
      "ValueError: Invalid isoformat string: '2024-W53-1'\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"2024-W05-8\")\n",
      "ValueError: Invalid isoformat string: '2024-W05-8'\n" },
    { "from datetime import date\n"
      "date.fromisoformat(\"0000-01-01\")\n",
      "ValueError: year 0 is out of range\n" },
    { "from datetime import date\n"
      "date.fromisoformat()\n",
      "TypeError: date.fromisoformat() takes exactly one argument (0 given)\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-31T25:00\")\n",
      "ValueError: hour must be in 0..23\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"\")\n",
      "ValueError: Invalid isoformat string: ''\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-31T10:2\")\n",
      "ValueError: Invalid isoformat string: '2024-01-31T10:2'\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-31T10:20:\")\n",
      "ValueError: Invalid isoformat string: '2024-01-31T10:20:'\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-31T\")\n",
      "ValueError: Invalid isoformat string: '2024-01-31T'\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-31T10:20:30.\")\n",
      "ValueError: Invalid isoformat string: '2024-01-31T10:20:30.'\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-31 10:20:30 \")\n",
      "ValueError: Invalid isoformat string: '2024-01-31 10:20:30 '\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01\")\n",
      "ValueError: Invalid isoformat string: '2024-01'\n" },
    { "from datetime import datetime\n"
      "datetime.fromisoformat(\"2024-01-3\")\n",
      "ValueError: Invalid isoformat string: '2024-01-3'\n" },
    { "from datetime import datetime\n"
      "s = \"2024-01-31T10:20:30+0x:00\"\n"
      "datetime.fromisoformat(s)\n",
      "ValueError: Invalid isoformat string: '2024-01-31T10:20:30+0x:00'\n" },
    { "from datetime import date, datetime, timedelta\n"
      "d = {date(2024,1,1): 1, timedelta(1): 2, datetime(2024,1,1): 3}\n"
      "print(d[date(2024,1,1)], d[timedelta(hours=24)], d[datetime(2024,1,1,0)], len({date(2024,1,1), date(2024,1,1), date(2024,1,2)}))\n"
      "print(sorted([date(2024,3,1),date(2023,1,1), date(2023,6,30)]), max(date(2024,3,1),date(2023,1,1)), min([timedelta(3), timedelta(-1)]))\n"
      "print(isinstance(datetime(2024,1,1),date), isinstance(date(2024,1,1),datetime), isinstance(timedelta(1), timedelta), isinstance(1, date), isinstance(date(2024,1,1), (int, date)))\n"
      "print(date.weekday(date(2024,1,1)), datetime(2024,1,1).tzinfo, datetime(2024,1,1).fold)\n",
      "1 2 3 2\n"
      "[datetime.date(2023, 1, 1), datetime.date(2023, 6, 30), datetime.date(2024, 3, 1)] 2024-03-01 -1 day, 0:00:00\n"
      "True False True False True\n"
      "0 None 0\n" },
    { "import datetime\n"
      "print(datetime.date(2024, 1, 31), datetime.datetime(2024, 1, 31, 9, 30), datetime.timedelta(days=30), datetime.MINYEAR, datetime.MAXYEAR)\n"
      "print(f\"{datetime.date(2024, 1, 31)!r} {datetime.timedelta(days=30)!r}\")\n",
      "2024-01-31 2024-01-31 09:30:00 30 days, 0:00:00 1 9999\n"
      "datetime.date(2024, 1, 31) datetime.timedelta(days=30)\n" },
    { "import datetime as dt\n"
      "start = dt.date(2024, 1, 15)\n"
      "end = dt.date(2024, 7, 15)\n"
      "print((end - start).days, f\"{(end - start).days / 365:.8f} {(end - start).days / 360:.8f}\")\n"
      "print(dt.datetime.strptime(\"2024-03-15\", \"%Y-%m-%d\").date() - start)\n",
      "182 0.49863014 0.50555556\n"
      "60 days, 0:00:00\n" },
    { "from datetime import date, datetime, timedelta\n"
      "print(timedelta(days=-1, microseconds=5), timedelta(microseconds=-5), timedelta(days=-10, hours=-3), [timedelta(hours=-1)], timedelta(days=365.25*5))\n"
      "print(timedelta(1)//-7, timedelta(hours=5) % timedelta(hours=-2), timedelta(1)*-0.3, timedelta(microseconds=-5)/2, timedelta(microseconds=-7)*0.5, timedelta(microseconds=-15)/10)\n"
      "print(datetime(2024,1,1)-datetime(2024,3,1,12), date(2024,1,1)-date(2025,1,1), (date(2024,1,1)-date(2025,1,1)).days)\n"
      "print(\"{}\".format(date(2024,1,5)), \"{:%Y/%m}\".format(date(2024,1,5)), \"%s and %r\" % (date(2024,1,5), timedelta(2)), str(datetime(2024,1,5,1)))\n"
      "ds = [date(2024,5,1), date(2023,1,1), date(2024,1,1)]\n"
      "print(sorted(ds, reverse=True), min(ds, key=lambda d: d.month), date(2024,1,1) in ds, ds.index(date(2024,1,1)), len(set(ds + ds)))\n"
      "d = date(2024, 1, 30)\n"
      "print(d.replace(day=d.day + 1), (date(2024,12,31) - d).days // 30, d.year - 1, d.month / 12 * 12)\n"
      "tds = [timedelta(hours=h) for h in (1, 2, 3.5)]\n"
      "print(sum(tds, timedelta(0)), sum(tds, timedelta(0)).total_seconds() / 3600, tds)\n"
      "print(timedelta(days=10) / 4, timedelta(days=10) // 4, timedelta(days=1, seconds=1) / 2**0.5 > timedelta(0))\n"
      "x = timedelta(days=3)\n"
      "x += timedelta(hours=1)\n"
      "x *= 2\n"
      "x -= timedelta(minutes=30)\n"
      "y = date(2024, 2, 28)\n"
      "y += timedelta(days=2)\n"
      "print(x, y, x / timedelta(minutes=1))\n"
      "print(datetime(2024,1,1,12) == datetime(2024,1,1,12,0,0,0), datetime(2024,1,1) != date(2024,1,1), date(2024,1,1) == \"2024-01-01\")\n"
      "print(f\"{datetime(2024,3,5,14,5):%Y-%m-%d %H:%M} {date(2024,3,5):%d.%m.%Y} {date(2024,3,5):%B %-d, %Y}\")\n"
      "print(datetime(2024,3,5,14,5,7).strftime(\"%I:%M:%S %p on %A, %B %d\"), date(2024,12,31).strftime(\"%j\"))\n",
      "-1 day, 0:00:00.000005 -1 day, 23:59:59.999995 -11 days, 21:00:00 [datetime.timedelta(days=-1, seconds=82800)] 1826 days, 6:00:00\n"
      "-1 day, 20:34:17.142857 -1 day, 23:00:00 -1 day, 16:48:00 -1 day, 23:59:59.999998 -1 day, 23:59:59.999996 -1 day, 23:59:59.999998\n"
      "-61 days, 12:00:00 -366 days, 0:00:00 -366\n"
      "2024-01-05 2024/01 2024-01-05 and datetime.timedelta(days=2) 2024-01-05 01:00:00\n"
      "[datetime.date(2024, 5, 1), datetime.date(2024, 1, 1), datetime.date(2023, 1, 1)] 2023-01-01 True 2 3\n"
      "2024-01-31 11 2023 1.0\n"
      "6:30:00 6.5 [datetime.timedelta(seconds=3600), datetime.timedelta(seconds=7200), datetime.timedelta(seconds=12600)]\n"
      "2 days, 12:00:00 2 days, 12:00:00 True\n"
      "6 days, 1:30:00 2024-03-01 8730.0\n"
      "True True False\n"
      "2024-03-05 14:05 05.03.2024 March 5, 2024\n"
      "02:05:07 PM on Tuesday, March 05 366\n" },
    { "from datetime import date, timedelta\n"
      "start = date(2024, 1, 31)\n"
      "payments = [start + timedelta(days=30 * k) for k in range(4)]\n"
      "for p in payments:\n"
      "    print(p, p.strftime(\"%a %d %b\"), p.isoweekday(), p.isoformat())\n"
      "print({p.month: p.day for p in payments})\n",
      "2024-01-31 Wed 31 Jan 3 2024-01-31\n"
      "2024-03-01 Fri 01 Mar 5 2024-03-01\n"
      "2024-03-31 Sun 31 Mar 7 2024-03-31\n"
      "2024-04-30 Tue 30 Apr 2 2024-04-30\n"
      "{1: 31, 3: 31, 4: 30}\n" },
    { "from datetime import datetime\n"
      "s = \"2024-02-29 23:59:59.999999\"\n"
      "d = datetime.strptime(s, \"%Y-%m-%d %H:%M:%S.%f\")\n"
      "print(d, f\"{d!r}\", d.isoformat(), d.microsecond, d.date(), d.toordinal())\n",
      "2024-02-29 23:59:59.999999 datetime.datetime(2024, 2, 29, 23, 59, 59, 999999) 2024-02-29T23:59:59.999999 999999 2024-02-29 738945\n" },
    { "from datetime import date\n"
      "print(date(2024,1,1) + 1.5)\n",
      "TypeError: unsupported operand type(s) for +: 'datetime.date' and 'float'\n" },
    { "from datetime import date\n"
      "print(date(2024,1,1) < \"x\")\n",
      "TypeError: '<' not supported between instances of 'datetime.date' and 'str'\n" },
    { "from datetime import timedelta\n"
      "print(timedelta(1) == None, timedelta(1) != None)\n"
      "print(None < timedelta(1))\n",
      "False True\n"
      "TypeError: '<' not supported between instances of 'NoneType' and 'datetime.timedelta'\n" },
    { "from datetime import date\n"
      "print(date(2024, 1, 1).replace(year=2024, month=2, day=29), date(2024,2,29).replace(year=2023))\n",
      "ValueError: day is out of range for month\n" },
    { "from datetime import date\n"
      "print(date(2024, 1, day=1.0))\n",
      "TypeError: 'float' object cannot be interpreted as an integer\n" },
    { "from datetime import timedelta\n"
      "print(timedelta(0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5))\n"
      "print(timedelta(microseconds=0.5), timedelta(microseconds=1.5), timedelta(microseconds=-0.5), timedelta(microseconds=-1.5), timedelta(seconds=0.1234565), timedelta(minutes=1/3))\n",
      "4 days, 0:30:30.500500\n"
      "0:00:00 0:00:00.000002 0:00:00 -1 day, 23:59:59.999998 0:00:00.123456 0:00:20\n" },
    { "import datetime\n"
      "d = datetime.date(2024, 6, 15)\n"
      "print(isinstance(d, datetime.date), datetime.date.fromisoformat(\"2024-06-15\") == d, datetime.datetime.min < datetime.datetime(2000,1,1))\n"
      "print(datetime.timedelta.max.days, datetime.date.min.toordinal(), datetime.date.max.toordinal())\n",
      "True True True\n"
      "999999999 1 3652059\n" },
    { "from datetime import datetime as dt, timedelta as td\n"
      "a = dt(2024, 1, 1, 9, 30)\n"
      "b = a + td(hours=7, minutes=45)\n"
      "print(b, b - a, (b - a).seconds // 3600, (b - a).seconds % 3600 // 60, b.hour, b.minute)\n",
      "2024-01-01 17:15:00 7:45:00 7 45 17 15\n" },
    { "from datetime import timedelta\n"
      "print(timedelta(weeks=52) == timedelta(days=364), timedelta(days=1) > timedelta(hours=23, minutes=59), abs(timedelta(hours=-5)), abs(timedelta(hours=5)))\n"
      "print(divmod(timedelta(days=-1), timedelta(hours=5)))\n"
      "divmod(timedelta(days=1), timedelta(0))\n",
      "True True 5:00:00 5:00:00\n"
      "(-5, datetime.timedelta(seconds=3600))\n"
      "ZeroDivisionError: integer division or modulo by zero\n" },
    { "from datetime import date\n"
      "date(2024, 1, 1).year = 2025\n",
      "AttributeError: attribute 'year' of 'datetime.date' objects is not writable\n" },
    { "from datetime import datetime\n"
      "d = datetime(2024, 1, 1)\n"
      "d.hour = 5\n",
      "AttributeError: attribute 'hour' of 'datetime.datetime' objects is not writable\n" },
    { "from datetime import datetime\n"
      "d = datetime(2024, 1, 1)\n"
      "d.month = 5\n",
      "AttributeError: attribute 'month' of 'datetime.date' objects is not writable\n" },
    { "from datetime import datetime\n"
      "d = datetime(2024, 1, 1)\n"
      "d.max = 5\n",
      "AttributeError: 'datetime.datetime' object attribute 'max' is read-only\n" },
    { "from datetime import timedelta\n"
      "d = timedelta(1)\n"
      "d.days = 5\n",
      "AttributeError: readonly attribute\n" },
    { "from datetime import date\n"
      "d = date(2024, 1, 1)\n"
      "d.hour = 5\n",
      "AttributeError: 'datetime.date' object has no attribute 'hour'\n" },
};

static const dt_case finance[] = {
    { "from datetime import date\n"
      "face = 1000000\n"
      "rate = 0.045\n"
      "last_coupon = date(2024, 1, 15)\n"
      "settle = date(2024, 4, 2)\n"
      "days = (settle - last_coupon).days\n"
      "accrued = face * rate * days / 365\n"
      "print(days, f\"{accrued:.2f}\")\n",
      "78 9616.44\n" },
    { "from datetime import date\n"
      "def days_30_360(d1, d2):\n"
      "    y1, m1, dd1 = d1.year, d1.month, d1.day\n"
      "    y2, m2, dd2 = d2.year, d2.month, d2.day\n"
      "    if dd1 == 31:\n"
      "        dd1 = 30\n"
      "    if dd2 == 31 and dd1 == 30:\n"
      "        dd2 = 30\n"
      "    return 360 * (y2 - y1) + 30 * (m2 - m1) + (dd2 - dd1)\n"
      "start, end = date(2023, 8, 31), date(2024, 2, 29)\n"
      "n = days_30_360(start, end)\n"
      "print(n, f\"{n / 360:.8f}\", f\"{5_000_000 * 0.06 * n / 360:,.2f}\", (end - start).days)\n",
      "179 0.49722222 149,166.67 182\n" },
    { "import datetime as dt\n"
      "def add_months(d, n):\n"
      "    m = d.month - 1 + n\n"
      "    y = d.year + m // 12\n"
      "    m = m % 12 + 1\n"
      "    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)\n"
      "    mdays = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]\n"
      "    return d.replace(year=y, month=m, day=min(d.day, mdays))\n"
      "schedule = [add_months(dt.date(2024, 1, 31), k) for k in range(1, 7)]\n"
      "print([d.isoformat() for d in schedule])\n"
      "print([f\"{d:%d %b %Y}\" for d in schedule])\n",
      "['2024-02-29', '2024-03-31', '2024-04-30', '2024-05-31', '2024-06-30', '2024-07-31']\n"
      "['29 Feb 2024', '31 Mar 2024', '30 Apr 2024', '31 May 2024', '30 Jun 2024', '31 Jul 2024']\n" },
    { "from datetime import datetime, timedelta\n"
      "issue = datetime.strptime(\"15/03/2021\", \"%d/%m/%Y\")\n"
      "maturity = issue.replace(year=issue.year + 5)\n"
      "settlement = datetime.strptime(\"2024-06-30\", \"%Y-%m-%d\")\n"
      "remaining = (maturity - settlement).days\n"
      "years = remaining / 365.25\n"
      "coupons = []\n"
      "d = maturity\n"
      "while d > settlement:\n"
      "    coupons.append(d)\n"
      "    d = d.replace(year=d.year - 1) if d.month == 3 else d\n"
      "    d = d.replace(month=9) if d.month == 3 and False else d\n"
      "coupons.sort()\n"
      "print(maturity.date(), remaining, f\"{years:.4f}\", [c.strftime(\"%Y-%m-%d\") for c in coupons])\n"
      "print(f\"next coupon in {(coupons[0] - settlement).days} days, on a {coupons[0]:%A}\")\n",
      "2026-03-15 623 1.7057 ['2025-03-15', '2026-03-15']\n"
      "next coupon in 258 days, on a Saturday\n" },
    { "from datetime import date, timedelta\n"
      "cashflows = {date(2024, 12, 31): 1200.0, date(2024, 6, 30): 1000.0, date(2025, 6, 30): 1500.0}\n"
      "valuation = date(2024, 1, 1)\n"
      "r = 0.05\n"
      "pv = 0\n"
      "for d in sorted(cashflows):\n"
      "    t = (d - valuation).days / 365\n"
      "    pv += cashflows[d] / (1 + r) ** t\n"
      "    print(d, (d - valuation).days, d.weekday(), d.strftime(\"%a\"))\n"
      "print(f\"{pv:.6f}\")\n"
      "print(valuation + timedelta(weeks=13), valuation - timedelta(days=1), max(cashflows) - min(cashflows))\n",
      "2024-06-30 181 6 Sun\n"
      "2024-12-31 365 1 Tue\n"
      "2025-06-30 546 0 Mon\n"
      "3513.375436\n"
      "2024-04-01 2023-12-31 365 days, 0:00:00\n" },
    { "from datetime import datetime\n"
      "grant = datetime.strptime(\"2020-07-01\", \"%Y-%m-%d\")\n"
      "vest = [grant.replace(year=grant.year + k) for k in range(1, 5)]\n"
      "as_of = datetime(2022, 12, 31)\n"
      "vested = sum(1 for v in vest if v <= as_of)\n"
      "print(vested, 10000 * vested // 4, [v.year for v in vest], (as_of - grant).total_seconds() / 86400)\n",
      "2 5000 [2021, 2022, 2023, 2024] 913.0\n" },
};

/* strftime with every conversion and glibc flag over ten millennia, and ISO weeks at year ends */
static const dt_case sweep[] = {
    { "from datetime import date, datetime, timedelta\n"
      "d = datetime(1, 1, 1, 0, 0, 0)\n"
      "step = timedelta(days=91321, hours=7, minutes=13, seconds=17, microseconds=123457)\n"
      "fmt = \"%a %A %b %B %c %C %d %D %e %F %g %G %h %H %I %j %k %l %m %M %p %P %r %R %S %T %u %U %V %w %W %x %X %y %Y %% %-d %-m %-H %-I %-j %_d %05Y %^B %#p %Ey %Od %f %3C %-5Y %_3d %010A\"\n"
      "while d < datetime(9990, 1, 1):\n"
      "    print(d.strftime(fmt), d.isoformat(), d.weekday(), d.toordinal())\n"
      "    d = d + step\n"
      "for y in range(2019, 2029):\n"
      "    for m, dd in ((1, 1), (1, 4), (12, 28), (12, 31)):\n"
      "        x = date(y, m, dd)\n"
      "        print(x.strftime(\"%G-%V-%u %U %W %j %a\"), x.isoweekday(), end=\"; \")\n",
      "Mon Monday Jan January Mon Jan  1 00:00:00 1 0 01 01/01/01  1 1-01-01 01 1 Jan 00 12 001  0 12 01 00 AM am 12:00:00 AM 00:00 00 00:00:00 1 00 01 1 01 01/01/01 00:00:00 01 1 % 1 1 0 12 1  1 00001 JANUARY am 01 01 000000 000     1   1 0000Monday 0001-01-01T00:00:00 0 1\n"
      "Sun Sunday Jan January Sun Jan 12 07:13:17 251 2 12 01/12/51 12 251-01-12 51 251 Jan 07 07 012  7  7 01 13 AM am 07:13:17 AM 07:13 17 07:13:17 7 02 02 0 01 01/12/51 07:13:17 51 251 % 12 1 7 7 12 12 00251 JANUARY am 51 12 123457 002   251  12 0000Sunday 0251-01-12T07:13:17.123457 6 91322\n"
      "Sat Saturday Jan January Sat Jan 22 14:26:34 501 5 22 01/22/01 22 501-01-22 01 501 Jan 14 02 022 14  2 01 26 PM pm 02:26:34 PM 14:26 34 14:26:34 6 03 03 6 03 01/22/01 14:26:34 01 501 % 22 1 14 2 22 22 00501 JANUARY pm 01 22 246914 005   501  22 00Saturday 0501-01-22T14:26:34.246914 5 182643\n"
      "Fri Friday Feb February Fri Feb  2 21:39:51 751 7 02 02/02/51  2 751-02-02 51 751 Feb 21 09 033 21  9 02 39 PM pm 09:39:51 PM 21:39 51 21:39:51 5 04 05 5 05 02/02/51 21:39:51 51 751 % 2 2 21 9 33  2 00751 FEBRUARY pm 51 02 370371 007   751   2 0000Friday 0751-02-02T21:39:51.370371 4 273964\n"
      "Fri Friday Feb February Fri Feb 13 04:53:08 1001 10 13 02/13/01 13 1001-02-13 01 1001 Feb 04 04 044  4  4 02 53 AM am 04:53:08 AM 04:53 08 04:53:08 5 06 07 5 06 02/13/01 04:53:08 01 1001 % 13 2 4 4 44 13 01001 FEBRUARY am 01 13 493828 010  1001  13 0000Friday 1001-02-13T04:53:08.493828 4 365286\n"
      "Thu Thursday Feb February Thu Feb 23 12:06:25 1251 12 23 02/23/51 23 1251-02-23 51 1251 Feb 12 12 054 12 12 02 06 PM pm 12:06:25 PM 12:06 25 12:06:25 4 08 08 4 08 02/23/51 12:06:25 51 1251 % 23 2 12 12 54 23 01251 FEBRUARY pm 51 23 617285 012  1251  23 00Thursday 1251-02-23T12:06:25.617285 3 456607\n"
      "Wed Wednesday Mar March Wed Mar  6 19:19:42 1501 15 06 03/06/01  6 1501-03-06 01 1501 Mar 19 07 065 19  7 03 19 PM pm 07:19:42 PM 19:19 42 19:19:42 3 09 10 3 09 03/06/01 19:19:42 01 1501 % 6 3 19 7 65  6 01501 MARCH pm 01 06 740742 015  1501   6 0Wednesday 1501-03-06T19:19:42.740742 2 547928\n"
      "Wed Wednesday Mar March Wed Mar 17 02:32:59 1751 17 17 03/17/51 17 1751-03-17 51 1751 Mar 02 02 076  2  2 03 32 AM am 02:32:59 AM 02:32 59 02:32:59 3 11 11 3 11 03/17/51 02:32:59 51 1751 % 17 3 2 2 76 17 01751 MARCH am 51 17 864199 017  1751  17 0Wednesday 1751-03-17T02:32:59.864199 2 639250\n"
      "Tue Tuesday Mar March Tue Mar 27 09:46:16 2001 20 27 03/27/01 27 2001-03-27 01 2001 Mar 09 09 086  9  9 03 46 AM am 09:46:16 AM 09:46 16 09:46:16 2 12 13 2 13 03/27/01 09:46:16 01 2001 % 27 3 9 9 86 27 02001 MARCH am 01 27 987656 020  2001  27 000Tuesday 2001-03-27T09:46:16.987656 1 730571\n"
      "Mon Monday Apr April Mon Apr  7 16:59:34 2251 22 07 04/07/51  7 2251-04-07 51 2251 Apr 16 04 097 16  4 04 59 PM pm 04:59:34 PM 16:59 34 16:59:34 1 14 15 1 14 04/07/51 16:59:34 51 2251 % 7 4 16 4 97  7 02251 APRIL pm 51 07 111113 022  2251   7 0000Monday 2251-04-07T16:59:34.111113 0 821892\n"
      "Mon Monday Apr April Mon Apr 18 00:12:51 2501 25 18 04/18/01 18 2501-04-18 01 2501 Apr 00 12 108  0 12 04 12 AM am 12:12:51 AM 00:12 51 00:12:51 1 16 16 1 16 04/18/01 00:12:51 01 2501 % 18 4 0 12 108 18 02501 APRIL am 01 18 234570 025  2501  18 0000Monday 2501-04-18T00:12:51.234570 0 913214\n"
      "Sun Sunday Apr April Sun Apr 29 07:26:08 2751 27 29 04/29/51 29 2751-04-29 51 2751 Apr 07 07 119  7  7 04 26 AM am 07:26:08 AM 07:26 08 07:26:08 7 17 17 0 17 04/29/51 07:26:08 51 2751 % 29 4 7 7 119 29 02751 APRIL am 51 29 358027 027  2751  29 0000Sunday 2751-04-29T07:26:08.358027 6 1004535\n"
      "Sat Saturday May May Sat May  9 14:39:25 3001 30 09 05/09/01  9 3001-05-09 01 3001 May 14 02 129 14  2 05 39 PM pm 02:39:25 PM 14:39 25 14:39:25 6 18 19 6 18 05/09/01 14:39:25 01 3001 % 9 5 14 2 129  9 03001 MAY pm 01 09 481484 030  3001   9 00Saturday 3001-05-09T14:39:25.481484 5 1095856\n"
      "Fri Friday May May Fri May 19 21:52:42 3251 32 19 05/19/51 19 3251-05-19 51 3251 May 21 09 139 21  9 05 52 PM pm 09:52:42 PM 21:52 42 21:52:42 5 20 20 5 20 05/19/51 21:52:42 51 3251 % 19 5 21 9 139 19 03251 MAY pm 51 19 604941 032  3251  19 0000Friday 3251-05-19T21:52:42.604941 4 1187177\n"
      "Fri Friday May May Fri May 31 05:05:59 3501 35 31 05/31/01 31 3501-05-31 01 3501 May 05 05 151  5  5 05 05 AM am 05:05:59 AM 05:05 59 05:05:59 5 21 22 5 21 05/31/01 05:05:59 01 3501 % 31 5 5 5 151 31 03501 MAY am 01 31 728398 035  3501  31 0000Friday 3501-05-31T05:05:59.728398 4 1278499\n"
      "Thu Thursday Jun June Thu Jun 10 12:19:16 3751 37 10 06/10/51 10 3751-06-10 51 3751 Jun 12 12 161 12 12 06 19 PM pm 12:19:16 PM 12:19 16 12:19:16 4 23 23 4 23 06/10/51 12:19:16 51 3751 % 10 6 12 12 161 10 03751 JUNE pm 51 10 851855 037  3751  10 00Thursday 3751-06-10T12:19:16.851855 3 1369820\n"
      "Wed Wednesday Jun June Wed Jun 20 19:32:33 4001 40 20 06/20/01 20 4001-06-20 01 4001 Jun 19 07 171 19  7 06 32 PM pm 07:32:33 PM 19:32 33 19:32:33 3 24 25 3 25 06/20/01 19:32:33 01 4001 % 20 6 19 7 171 20 04001 JUNE pm 01 20 975312 040  4001  20 0Wednesday 4001-06-20T19:32:33.975312 2 1461141\n"
      "Wed Wednesday Jul July Wed Jul  2 02:45:51 4251 42 02 07/02/51  2 4251-07-02 51 4251 Jul 02 02 183  2  2 07 45 AM am 02:45:51 AM 02:45 51 02:45:51 3 26 27 3 26 07/02/51 02:45:51 51 4251 % 2 7 2 2 183  2 04251 JULY am 51 02 098769 042  4251   2 0Wednesday 4251-07-02T02:45:51.098769 2 1552463\n"
      "Tue Tuesday Jul July Tue Jul 12 09:59:08 4501 45 12 07/12/01 12 4501-07-12 01 4501 Jul 09 09 193  9  9 07 59 AM am 09:59:08 AM 09:59 08 09:59:08 2 28 28 2 28 07/12/01 09:59:08 01 4501 % 12 7 9 9 193 12 04501 JULY am 01 12 222226 045  4501  12 000Tuesday 4501-07-12T09:59:08.222226 1 1643784\n"
      "Mon Monday Jul July Mon Jul 23 17:12:25 4751 47 23 07/23/51 23 4751-07-23 51 4751 Jul 17 05 204 17  5 07 12 PM pm 05:12:25 PM 17:12 25 17:12:25 1 29 30 1 30 07/23/51 17:12:25 51 4751 % 23 7 17 5 204 23 04751 JULY pm 51 23 345683 047  4751  23 0000Monday 4751-07-23T17:12:25.345683 0 1735105\n"
      "Mon Monday Aug August Mon Aug  3 00:25:42 5001 50 03 08/03/01  3 5001-08-03 01 5001 Aug 00 12 215  0 12 08 25 AM am 12:25:42 AM 00:25 42 00:25:42 1 31 32 1 31 08/03/01 00:25:42 01 5001 % 3 8 0 12 215  3 05001 AUGUST am 01 03 469140 050  5001   3 0000Monday 5001-08-03T00:25:42.469140 0 1826427\n"
      "Sun Sunday Aug August Sun Aug 13 07:38:59 5251 52 13 08/13/51 13 5251-08-13 51 5251 Aug 07 07 225  7  7 08 38 AM am 07:38:59 AM 07:38 59 07:38:59 7 33 32 0 32 08/13/51 07:38:59 51 5251 % 13 8 7 7 225 13 05251 AUGUST am 51 13 592597 052  5251  13 0000Sunday 5251-08-13T07:38:59.592597 6 1917748\n"
      "Sat Saturday Aug August Sat Aug 24 14:52:16 5501 55 24 08/24/01 24 5501-08-24 01 5501 Aug 14 02 236 14  2 08 52 PM pm 02:52:16 PM 14:52 16 14:52:16 6 33 34 6 33 08/24/01 14:52:16 01 5501 % 24 8 14 2 236 24 05501 AUGUST pm 01 24 716054 055  5501  24 00Saturday 5501-08-24T14:52:16.716054 5 2009069\n"
      "Fri Friday Sep September Fri Sep  3 22:05:33 5751 57 03 09/03/51  3 5751-09-03 51 5751 Sep 22 10 246 22 10 09 05 PM pm 10:05:33 PM 22:05 33 22:05:33 5 35 35 5 35 09/03/51 22:05:33 51 5751 % 3 9 22 10 246  3 05751 SEPTEMBER pm 51 03 839511 057  5751   3 0000Friday 5751-09-03T22:05:33.839511 4 2100390\n"
      "Fri Friday Sep September Fri Sep 14 05:18:50 6001 60 14 09/14/01 14 6001-09-14 01 6001 Sep 05 05 257  5  5 09 18 AM am 05:18:50 AM 05:18 50 05:18:50 5 36 37 5 37 09/14/01 05:18:50 01 6001 % 14 9 5 5 257 14 06001 SEPTEMBER am 01 14 962968 060  6001  14 0000Friday 6001-09-14T05:18:50.962968 4 2191712\n"
      "Thu Thursday Sep September Thu Sep 25 12:32:08 6251 62 25 09/25/51 25 6251-09-25 51 6251 Sep 12 12 268 12 12 09 32 PM pm 12:32:08 PM 12:32 08 12:32:08 4 38 39 4 38 09/25/51 12:32:08 51 6251 % 25 9 12 12 268 25 06251 SEPTEMBER pm 51 25 086425 062  6251  25 00Thursday 6251-09-25T12:32:08.086425 3 2283033\n"
      "Wed Wednesday Oct October Wed Oct  5 19:45:25 6501 65 05 10/05/01  5 6501-10-05 01 6501 Oct 19 07 278 19  7 10 45 PM pm 07:45:25 PM 19:45 25 19:45:25 3 40 40 3 40 10/05/01 19:45:25 01 6501 % 5 10 19 7 278  5 06501 OCTOBER pm 01 05 209882 065  6501   5 0Wednesday 6501-10-05T19:45:25.209882 2 2374354\n"
      "Wed Wednesday Oct October Wed Oct 17 02:58:42 6751 67 17 10/17/51 17 6751-10-17 51 6751 Oct 02 02 290  2  2 10 58 AM am 02:58:42 AM 02:58 42 02:58:42 3 41 42 3 42 10/17/51 02:58:42 51 6751 % 17 10 2 2 290 17 06751 OCTOBER am 51 17 333339 067  6751  17 0Wednesday 6751-10-17T02:58:42.333339 2 2465676\n"
      "Tue Tuesday Oct October Tue Oct 27 10:11:59 7001 70 27 10/27/01 27 7001-10-27 01 7001 Oct 10 10 300 10 10 10 11 AM am 10:11:59 AM 10:11 59 10:11:59 2 43 44 2 43 10/27/01 10:11:59 01 7001 % 27 10 10 10 300 27 07001 OCTOBER am 01 27 456796 070  7001  27 000Tuesday 7001-10-27T10:11:59.456796 1 2556997\n"
      "Mon Monday Nov November Mon Nov  6 17:25:16 7251 72 06 11/06/51  6 7251-11-06 51 7251 Nov 17 05 310 17  5 11 25 PM pm 05:25:16 PM 17:25 16 17:25:16 1 45 45 1 45 11/06/51 17:25:16 51 7251 % 6 11 17 5 310  6 07251 NOVEMBER pm 51 06 580253 072  7251   6 0000Monday 7251-11-06T17:25:16.580253 0 2648318\n"
      "Mon Monday Nov November Mon Nov 18 00:38:33 7501 75 18 11/18/01 18 7501-11-18 01 7501 Nov 00 12 322  0 12 11 38 AM am 12:38:33 AM 00:38 33 00:38:33 1 46 47 1 46 11/18/01 00:38:33 01 7501 % 18 11 0 12 322 18 07501 NOVEMBER am 01 18 703710 075  7501  18 0000Monday 7501-11-18T00:38:33.703710 0 2739640\n"
      "Sun Sunday Nov November Sun Nov 28 07:51:50 7751 77 28 11/28/51 28 7751-11-28 51 7751 Nov 07 07 332  7  7 11 51 AM am 07:51:50 AM 07:51 50 07:51:50 7 48 47 0 47 11/28/51 07:51:50 51 7751 % 28 11 7 7 332 28 07751 NOVEMBER am 51 28 827167 077  7751  28 0000Sunday 7751-11-28T07:51:50.827167 6 2830961\n"
      "Sat Saturday Dec December Sat Dec  8 15:05:07 8001 80 08 12/08/01  8 8001-12-08 01 8001 Dec 15 03 342 15  3 12 05 PM pm 03:05:07 PM 15:05 07 15:05:07 6 48 49 6 49 12/08/01 15:05:07 01 8001 % 8 12 15 3 342  8 08001 DECEMBER pm 01 08 950624 080  8001   8 00Saturday 8001-12-08T15:05:07.950624 5 2922282\n"
      "Fri Friday Dec December Fri Dec 19 22:18:25 8251 82 19 12/19/51 19 8251-12-19 51 8251 Dec 22 10 353 22 10 12 18 PM pm 10:18:25 PM 22:18 25 22:18:25 5 50 51 5 50 12/19/51 22:18:25 51 8251 % 19 12 22 10 353 19 08251 DECEMBER pm 51 19 074081 082  8251  19 0000Friday 8251-12-19T22:18:25.074081 4 3013603\n"
      "Fri Friday Dec December Fri Dec 30 05:31:42 8501 85 30 12/30/01 30 8501-12-30 01 8501 Dec 05 05 364  5  5 12 31 AM am 05:31:42 AM 05:31 42 05:31:42 5 52 52 5 52 12/30/01 05:31:42 01 8501 % 30 12 5 5 364 30 08501 DECEMBER am 01 30 197538 085  8501  30 0000Friday 8501-12-30T05:31:42.197538 4 3104925\n"
      "Thu Thursday Jan January Thu Jan 10 12:44:59 8752 87 10 01/10/52 10 8752-01-10 52 8752 Jan 12 12 010 12 12 01 44 PM pm 12:44:59 PM 12:44 59 12:44:59 4 01 02 4 01 01/10/52 12:44:59 52 8752 % 10 1 12 12 10 10 08752 JANUARY pm 52 10 320995 087  8752  10 00Thursday 8752-01-10T12:44:59.320995 3 3196246\n"
      "Wed Wednesday Jan January Wed Jan 20 19:58:16 9002 90 20 01/20/02 20 9002-01-20 02 9002 Jan 19 07 020 19  7 01 58 PM pm 07:58:16 PM 19:58 16 19:58:16 3 03 03 3 03 01/20/02 19:58:16 02 9002 % 20 1 19 7 20 20 09002 JANUARY pm 02 20 444452 090  9002  20 0Wednesday 9002-01-20T19:58:16.444452 2 3287567\n"
      "Wed Wednesday Jan January Wed Jan 31 03:11:33 9252 92 31 01/31/52 31 9252-01-31 52 9252 Jan 03 03 031  3  3 01 11 AM am 03:11:33 AM 03:11 33 03:11:33 3 04 05 3 05 01/31/52 03:11:33 52 9252 % 31 1 3 3 31 31 09252 JANUARY am 52 31 567909 092  9252  31 0Wednesday 9252-01-31T03:11:33.567909 2 3378889\n"
      "Tue Tuesday Feb February Tue Feb 11 10:24:50 9502 95 11 02/11/02 11 9502-02-11 02 9502 Feb 10 10 042 10 10 02 24 AM am 10:24:50 AM 10:24 50 10:24:50 2 06 07 2 06 02/11/02 10:24:50 02 9502 % 11 2 10 10 42 11 09502 FEBRUARY am 02 11 691366 095  9502  11 000Tuesday 9502-02-11T10:24:50.691366 1 3470210\n"
      "Mon Monday Feb February Mon Feb 21 17:38:07 9752 97 21 02/21/52 21 9752-02-21 52 9752 Feb 17 05 052 17  5 02 38 PM pm 05:38:07 PM 17:38 07 17:38:07 1 08 08 1 08 02/21/52 17:38:07 52 9752 % 21 2 17 5 52 21 09752 FEBRUARY pm 52 21 814823 097  9752  21 0000Monday 9752-02-21T17:38:07.814823 0 3561531\n"
      "OverflowError: date value out of range\n" },
};

/* `import datetime` and `from datetime import datetime` in one program: the name is
 * whichever the run bound last */
static const dt_case rebinding[] = {
    { "import datetime\n"
      "from datetime import datetime\n"
      "x = datetime.strptime(\"2024-01-02\", \"%Y-%m-%d\")\n"
      "print(x, datetime.max, x - datetime.min)\n",
      "2024-01-02 00:00:00 9999-12-31 23:59:59.999999 738886 days, 0:00:00\n" },
    { "import datetime\n"
      "y = datetime.strptime(\"2024\", \"%Y\")\n"
      "from datetime import datetime\n",
      "AttributeError: module 'datetime' has no attribute 'strptime'\n" },
    { "import datetime\n"
      "print(datetime.date(2024, 1, 1).max)\n"
      "print(datetime.max)\n"
      "from datetime import datetime\n",
      "9999-12-31\n"
      "AttributeError: module 'datetime' has no attribute 'max'\n" },
};

/* Reading the clock or a time zone has no registry row, and a literal format the evaluator
 * cannot follow is a reason: the program is routed out. */
static void test_outside(void)
{
    static const char *const srcs[] = {
        "from datetime import date\nprint(date.today())\n",
        "import datetime\nprint(datetime.datetime.now())\n",
        "from datetime import datetime\nx = datetime.utcnow()\n",
        "import datetime as dt\nx = dt.datetime.now().date()\n",
        "from datetime import datetime, timezone\nx = datetime(2024, 1, 1, tzinfo=timezone.utc)\n",
        "import datetime\nx = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)\n",
        "from datetime import datetime\nx = datetime(2024, 1, 1).timestamp()\n",
        "from datetime import datetime\nx = datetime.fromtimestamp(0)\n",
        "import datetime\nx = datetime.time(5)\n",
        "import datetime\nfrom datetime import datetime\nx = datetime.now()\n",
        /* a literal format the evaluator would refuse */
        "from datetime import datetime\nx = datetime.strptime('2024 +0100', '%Y %z')\n",
        "from datetime import datetime\nx = datetime.strptime('1 2024', '%w %Y')\n",
        "from datetime import datetime\nx = datetime.strptime('2024 24', '%Y %y %Y')\n",
        "from datetime import date\nx = date(2024, 1, 1).strftime('%s')\n",
        "from datetime import date\nx = date(2024, 1, 1).strftime(format='%Y%s')\n",
        "from datetime import datetime\nx = datetime.fromisoformat('2024-01-31T10:20:30Z')\n",
        "from datetime import datetime\nx = datetime.fromisoformat('2024-01-31 10:20-05:00')\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        int nr;
        char *got = run(srcs[i], &nr);
        if (nr <= 0) fprintf(stderr, "in-process, but should not be:\n%s", srcs[i]);
        CHECK(got == NULL && nr > 0);
        free(got);
    }
}

/* What the subset leaves out, met at run time (a format in a variable), ends the run as
 * outside the subset, which no `except` could catch, instead of answering differently. */
static void test_refused(void)
{
    static const dt_case c[] = {
        { "from datetime import datetime\nf = '%Y %z'\nx = datetime.strptime('2024 +0100', f)\n",
          "rejected: strptime: %z is outside the in-process subset\n" },
        { "from datetime import datetime\nf = '%Y %Y'\nx = datetime.strptime('2024 2024', f)\n",
          "rejected: strptime: a directive repeated in one format (%Y) is outside the "
          "in-process subset\n" },
        { "from datetime import datetime\ns = '2024-01-31T10:20+01:00'\nx = datetime.fromisoformat(s)\n",
          "rejected: fromisoformat: a UTC offset (an aware datetime) is outside the "
          "in-process subset\n" },
        { "from datetime import date\nf = '%s'\nx = date(2024, 1, 1).strftime(f)\n",
          "rejected: strftime: %s (the local time zone) is outside the in-process subset\n" },
    };
    check_cases(c, sizeof c / sizeof c[0]);
}

int main(void)
{
    check_cases(cases, sizeof cases / sizeof cases[0]);
    check_cases(finance, sizeof finance / sizeof finance[0]);
    check_cases(sweep, sizeof sweep / sizeof sweep[0]);
    check_cases(rebinding, sizeof rebinding / sizeof rebinding[0]);
    test_outside();
    test_refused();
    return TEST_SUMMARY();
}
