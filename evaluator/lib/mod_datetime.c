/* evaluator/lib/mod_datetime.c: CPython 3.11's datetime module, naive: date, datetime and
 * timedelta with their constructors, arithmetic, comparisons, formatting and parsing, and
 * CPython's exact messages. Time zones stay outside: the registry has no timezone, tzinfo
 * arguments must be None. What depends on the clock or the local zone (today, now,
 * timestamp) has no row, so a program that uses it goes to the sandbox; what only a value
 * shows (an ISO string with a UTC offset, a %z or %s in a format held in a variable) ends
 * the run as outside the subset (CR_EUNSUPPORTED), which no `except` catches, rather than
 * as an exception CPython would not raise.
 *
 * A timedelta is kept normalised as CPython keeps it (days, 0 <= seconds < 86400,
 * 0 <= microseconds < 10^6); its arithmetic goes through the exact count of microseconds
 * (an mpz, as that passes 64 bits near timedelta.max), rounded half-even where CPython
 * rounds. Dates are proleptic Gregorian ordinals, day 1 = 0001-01-01. */
#include "evaluator/lib/lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { DT_DATE, DT_DATETIME, DT_DELTA };

#define MAX_ORD 3652059        /* 9999-12-31 */
#define MAX_DAYS 999999999
#define US_PER_DAY 86400000000LL

typedef struct { int y, mo, d, h, mi, s, us, fold; } dtm;   /* date, datetime */
typedef struct { int32_t days, sec, us; } tdl;              /* timedelta */
typedef struct { int kind; } dtype;                         /* a class object */

static const eval_class date_cls, datetime_cls, delta_cls, type_cls;
static const char *const kind_name[] = { "datetime.date", "datetime.datetime",
                                         "datetime.timedelta" };

static int kind_of(const val *v)
{
    if (v->kind != V_OBJ) return -1;
    const eval_class *c = v->u.obj.cls;
    return c == &date_cls ? DT_DATE
         : c == &datetime_cls ? DT_DATETIME
         : c == &delta_cls ? DT_DELTA : -1;
}
#define DT(v) ((dtm *)(v)->u.obj.data)
#define TD(v) ((tdl *)(v)->u.obj.data)

/* ---- the calendar ------------------------------------------------------------------------- */

static int is_leap(int y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

static int month_days(int y, int m)
{
    static const int n[13] = { 0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && is_leap(y) ? 29 : n[m];
}

static int days_before_month(int y, int m)
{
    static const int n[13] = { 0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
    return n[m] + (m > 2 && is_leap(y));
}

static long ymd_to_ord(int y, int m, int d)
{
    long p = y - 1;
    return p * 365 + p / 4 - p / 100 + p / 400 + days_before_month(y, m) + d;
}

/* ord (1..MAX_ORD) to year, month, day: 400-year cycles of 146097 days, then centuries,
 * 4-year cycles and years, each of which may end one day long (its leap day). */
static void ord_to_ymd(long ord, int *y, int *m, int *d)
{
    long n = ord - 1, n400 = n / 146097;
    n %= 146097;
    long n100 = n / 36524;
    n %= 36524;
    long n4 = n / 1461;
    n %= 1461;
    long n1 = n / 365;
    n %= 365;
    *y = (int)(n400 * 400 + n100 * 100 + n4 * 4 + n1 + 1);
    if (n1 == 4 || n100 == 4) {   /* the last day of a leap cycle */
        --*y;
        *m = 12;
        *d = 31;
        return;
    }
    int mo = 1;
    while (mo < 12 && days_before_month(*y, mo + 1) <= n) mo++;
    *m = mo;
    *d = (int)(n - days_before_month(*y, mo)) + 1;
}

static int weekday(const dtm *t) { return (int)((ymd_to_ord(t->y, t->mo, t->d) + 6) % 7); }

/* The ordinal of the Monday of ISO week 1 (the week holding the year's first Thursday). */
static long iso_week1(int y)
{
    long first = ymd_to_ord(y, 1, 1), wd = (first + 6) % 7, mon = first - wd;
    return wd > 3 ? mon + 7 : mon;
}

static void iso_calendar(const dtm *t, int *iy, int *iw, int *id)
{
    long ord = ymd_to_ord(t->y, t->mo, t->d);
    int y = t->y;
    long w1 = iso_week1(y);
    if (ord < w1) w1 = iso_week1(--y);
    else if (y < 9999 && ord >= iso_week1(y + 1)) w1 = iso_week1(++y);
    *iy = y;
    *iw = (int)((ord - w1) / 7) + 1;
    *id = (int)((ord - w1) % 7) + 1;
}

/* ---- values ----------------------------------------------------------------------------- */

static val *raise_range(eval_cx *cx, const ir_node *at)
{
    return eval_raise(cx, CR_EPY_OVERFLOW, at, "date value out of range");
}

static int check_date(eval_cx *cx, long y, long m, long d, const ir_node *at)
{
    if (y < 1 || y > 9999)
        return eval_raise(cx, CR_EPY_VALUE, at, "year %ld is out of range", y), -1;
    if (m < 1 || m > 12) return eval_raise(cx, CR_EPY_VALUE, at, "month must be in 1..12"), -1;
    if (d < 1 || d > month_days((int)y, (int)m))
        return eval_raise(cx, CR_EPY_VALUE, at, "day is out of range for month"), -1;
    return 0;
}

static int check_time(eval_cx *cx, long h, long mi, long s, long us, long fold, const ir_node *at)
{
    const char *bad = h < 0 || h > 23 ? "hour must be in 0..23"
                    : mi < 0 || mi > 59 ? "minute must be in 0..59"
                    : s < 0 || s > 59 ? "second must be in 0..59"
                    : us < 0 || us > 999999 ? "microsecond must be in 0..999999"
                    : fold != 0 && fold != 1 ? "fold must be either 0 or 1" : NULL;
    return bad ? (eval_raise(cx, CR_EPY_VALUE, at, "%s", bad), -1) : 0;
}

static val *new_dt(eval_cx *cx, int kind, const dtm *t)
{
    val *v = eval_obj_new(cx, kind == DT_DATE ? &date_cls : &datetime_cls, sizeof(dtm));
    if (v) {
        *DT(v) = *t;
        if (kind == DT_DATE) DT(v)->h = DT(v)->mi = DT(v)->s = DT(v)->us = DT(v)->fold = 0;
    }
    return v;
}

static val *new_date_ord(eval_cx *cx, int kind, long ord, const ir_node *at)
{
    if (ord < 1 || ord > MAX_ORD) return raise_range(cx, at);
    dtm t = { 0 };
    ord_to_ymd(ord, &t.y, &t.mo, &t.d);
    return new_dt(cx, kind, &t);
}

/* The microseconds of a datetime since 0001-01-01 00:00 (or of a date's midnight): below
 * 2^59, so int64 holds them. */
static int64_t dt_us(const dtm *t)
{
    return (int64_t)(ymd_to_ord(t->y, t->mo, t->d) - 1) * US_PER_DAY +
           ((int64_t)t->h * 3600 + t->mi * 60 + t->s) * 1000000 + t->us;
}

static val *new_dt_us(eval_cx *cx, mpz_srcptr us, const ir_node *at)
{
    if (mpz_sgn(us) < 0 || !mpz_fits_slong_p(us) || mpz_get_si(us) / US_PER_DAY >= MAX_ORD)
        return raise_range(cx, at);
    int64_t u = mpz_get_si(us), day = u % US_PER_DAY;
    dtm t = { 0 };
    ord_to_ymd(u / US_PER_DAY + 1, &t.y, &t.mo, &t.d);
    t.h = (int)(day / 3600000000LL);
    t.mi = (int)(day / 60000000 % 60);
    t.s = (int)(day / 1000000 % 60);
    t.us = (int)(day % 1000000);
    return new_dt(cx, DT_DATETIME, &t);
}

static void td_total(mpz_t out, const tdl *t)
{
    mpz_set_si(out, t->days);
    mpz_mul_ui(out, out, 86400);
    mpz_add_ui(out, out, (unsigned long)t->sec);
    mpz_mul_ui(out, out, 1000000);
    mpz_add_ui(out, out, (unsigned long)t->us);
}

/* A timedelta of `us` microseconds, normalised, with CPython's range errors. */
static val *new_td(eval_cx *cx, mpz_srcptr us, const ir_node *at)
{
    mpz_t d, r;
    mpz_inits(d, r, NULL);
    mpz_fdiv_qr_ui(d, r, us, (unsigned long)US_PER_DAY);
    val *v = NULL;
    if (!mpz_fits_sint_p(d)) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "Python int too large to convert to C int");
    } else if (labs(mpz_get_si(d)) > MAX_DAYS) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "days=%ld; must have magnitude <= %d", mpz_get_si(d),
                   MAX_DAYS);
    } else if ((v = eval_obj_new(cx, &delta_cls, sizeof(tdl)))) {
        unsigned long rem = mpz_get_ui(r);
        TD(v)->days = (int32_t)mpz_get_si(d);
        TD(v)->sec = (int32_t)(rem / 1000000);
        TD(v)->us = (int32_t)(rem % 1000000);
    }
    mpz_clears(d, r, NULL);
    return v;
}

static val *new_td_si(eval_cx *cx, long days, long sec, long us)
{
    mpz_t t;
    mpz_init_set_si(t, days);
    mpz_mul_si(t, t, 86400);
    mpz_add_ui(t, t, (unsigned long)sec);
    mpz_mul_si(t, t, 1000000);
    mpz_add_ui(t, t, (unsigned long)us);
    val *v = new_td(cx, t, NULL);
    mpz_clear(t);
    return v;
}

/* q rounded to an integer, half to even, as CPython rounds microseconds. */
static void round_even(mpz_t out, mpq_srcptr q)
{
    mpz_t r;
    mpz_init(r);
    mpz_fdiv_qr(out, r, mpq_numref(q), mpq_denref(q));
    mpz_mul_2exp(r, r, 1);
    int c = mpz_cmp(r, mpq_denref(q));
    if (c > 0 || (c == 0 && mpz_odd_p(out))) mpz_add_ui(out, out, 1);
    mpz_clear(r);
}

/* ---- arguments -------------------------------------------------------------------------- */

/* An argument CPython converts to a C int ("i"). */
static int tzinfo_none(eval_cx *cx, val *tz, const ir_node *at)
{
    if (!tz || tz->kind == V_NONE) return 0;
    eval_raise(cx, CR_EPY_TYPE, at,
               "tzinfo argument must be None or of a tzinfo subclass, not type '%s'",
               eval_type_name(tz));
    return -1;
}

static const char *const dt_names[] = { "year", "month", "day", "hour", "minute", "second",
                                        "microsecond", "tzinfo", "fold" };

/* date(...), datetime(...) and their replace(...): `base` gives the defaults (NULL: the
 * constructor, whose first three arguments are required). */
static val *make_dt(eval_cx *cx, int kind, const dtm *base, eval_args *a, const ir_node *at)
{
    eval_argspec sp = { base ? "replace()" : NULL, kind == DT_DATE ? "iii" : "iiiiiiiOi",
                        dt_names, base ? 0 : 3, kind == DT_DATE ? 3 : 8 };
    val *ov[9];
    long iv[9];
    if (eval_parse_args(cx, a, &sp, ov, iv, at) < 0) return NULL;
    dtm t = base ? *base : (dtm){ 0 };
    int *field[9] = { &t.y, &t.mo, &t.d, &t.h, &t.mi, &t.s, &t.us, NULL, &t.fold };
    long f[9];
    for (int i = 0; i < 9; i++)
        if (field[i]) f[i] = i < (int)strlen(sp.types) && ov[i] ? iv[i] : *field[i];
    if (check_date(cx, f[0], f[1], f[2], at) < 0) return NULL;
    if (kind == DT_DATETIME && (check_time(cx, f[3], f[4], f[5], f[6], f[8], at) < 0 ||
                                tzinfo_none(cx, ov[7], at) < 0))
        return NULL;
    for (int i = 0; i < 9; i++)
        if (field[i]) *field[i] = (int)f[i];
    return new_dt(cx, kind, &t);
}

static const char *const td_names[] = { "days", "seconds", "microseconds", "milliseconds",
                                        "minutes", "hours", "weeks" };

static val *make_td(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const long us_of[] = { 86400000000L, 1000000, 1, 1000, 60000000, 3600000000L,
                                  604800000000L };
    eval_argspec sp = { "__new__()", "OOOOOOO", td_names, 0, 7 };
    val *ov[7];
    if (eval_parse_args(cx, a, &sp, ov, NULL, at) < 0) return NULL;
    mpq_t sum, x;
    mpz_t us;
    mpq_inits(sum, x, NULL);
    mpz_init(us);
    val *r = NULL;
    for (int i = 0; i < 7; i++) {
        val *v = ov[i];
        if (!v) continue;
        if (IS_NAN(v)) {
            eval_raise(cx, CR_EPY_VALUE, at, "cannot convert float NaN to integer");
            goto out;
        }
        if (v->kind == V_INF) {
            eval_raise(cx, CR_EPY_OVERFLOW, at, "cannot convert float infinity to integer");
            goto out;
        }
        if (!IS_NUM(v)) {
            eval_raise(cx, CR_EPY_TYPE, at, "unsupported type for timedelta %s component: %s",
                       td_names[i], eval_type_name(v));
            goto out;
        }
        if (mpz_sizeinbase(mpq_numref(v->u.q), 2) > cx->nc.max_bits) {
            eval_raise(cx, CR_EPY_OVERFLOW, at, "Python int too large to convert to C int");
            goto out;
        }
        mpq_set_si(x, us_of[i], 1);
        mpq_mul(x, x, eval_decided(cx, v, 0));
        mpq_add(sum, sum, x);
    }
    round_even(us, sum);
    r = new_td(cx, us, at);
out:
    mpq_clears(sum, x, NULL);
    mpz_clear(us);
    return r;
}

/* ---- text -------------------------------------------------------------------------------- */

static int put(eval_cx *cx, cr_buf *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int put(eval_cx *cx, cr_buf *b, const char *fmt, ...)
{
    char s[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    return eval_put(cx, b, s, (size_t)n < sizeof s ? (size_t)n : sizeof s - 1);
}

static const char *const day_names[] = { "Monday", "Tuesday", "Wednesday", "Thursday",
                                         "Friday", "Saturday", "Sunday" };
static const char *const month_names[] = { "", "January", "February", "March", "April", "May",
                                           "June", "July", "August", "September", "October",
                                           "November", "December" };

/* isoformat()'s time part: timespec 0 auto, 1 hours, 2 minutes, 3 seconds, 4 milliseconds,
 * 5 microseconds. */
static int put_time(eval_cx *cx, cr_buf *b, const dtm *t, int spec)
{
    if (spec == 0) spec = t->us ? 5 : 3;
    if (put(cx, b, "%02d", t->h) < 0) return -1;
    if (spec >= 2 && put(cx, b, ":%02d", t->mi) < 0) return -1;
    if (spec >= 3 && put(cx, b, ":%02d", t->s) < 0) return -1;
    if (spec == 4) return put(cx, b, ".%03d", t->us / 1000);
    return spec == 5 ? put(cx, b, ".%06d", t->us) : 0;
}

static int delta_str(eval_cx *cx, cr_buf *b, const tdl *t)
{
    const char *plural = t->days == 1 || t->days == -1 ? "" : "s";
    if (t->days && put(cx, b, "%d day%s, ", (int)t->days, plural) < 0) return -1;
    if (put(cx, b, "%d:%02d:%02d", t->sec / 3600, t->sec / 60 % 60, t->sec % 60) < 0) return -1;
    return t->us ? put(cx, b, ".%06d", (int)t->us) : 0;
}

static int dt_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    int k = kind_of(self);
    if (k == DT_DELTA) {
        const tdl *t = TD(self);
        if (as_str) return delta_str(cx, b, t);
        if (eval_put(cx, b, "datetime.timedelta(", 19) < 0) return -1;
        const char *sep = "";
        if (t->days && put(cx, b, "days=%d", (int)t->days) < 0) return -1;
        if (t->days) sep = ", ";
        if (t->sec && put(cx, b, "%sseconds=%d", sep, (int)t->sec) < 0) return -1;
        if (t->sec) sep = ", ";
        if (t->us && put(cx, b, "%smicroseconds=%d", sep, (int)t->us) < 0) return -1;
        return t->days || t->sec || t->us ? eval_put(cx, b, ")", 1) : eval_put(cx, b, "0)", 2);
    }
    const dtm *t = DT(self);
    if (as_str) {
        if (put(cx, b, "%04d-%02d-%02d", t->y, t->mo, t->d) < 0) return -1;
        if (k == DT_DATE) return 0;
        return eval_put(cx, b, " ", 1) == 0 && put_time(cx, b, t, 0) == 0 ? 0 : -1;
    }
    if (put(cx, b, "%s(%d, %d, %d", kind_name[k], t->y, t->mo, t->d) < 0) return -1;
    if (k == DT_DATETIME) {
        if (put(cx, b, ", %d, %d", t->h, t->mi) < 0) return -1;
        if ((t->s || t->us) && put(cx, b, ", %d", t->s) < 0) return -1;
        if (t->us && put(cx, b, ", %d", t->us) < 0) return -1;
        if (t->fold && eval_put(cx, b, ", fold=1", 8) < 0) return -1;
    }
    return eval_put(cx, b, ")", 1);
}

/* strftime: the C library's conversions in the C locale, as CPython's time.strftime makes
 * them on glibc (with its flags - _ 0 ^ #, a width, and the E and O modifiers), and %f, %z,
 * %Z as datetime's own wrapper does (a naive value has an empty %z and %Z). A conversion
 * glibc does not know is copied as it stands. %s reads the local time zone: refused. */
static int put_num(eval_cx *cx, cr_buf *b, long n, int width, char pad, char flag, int fw)
{
    /* glibc: '-' drops the padding unless a width is given, which '-' and '_' fill with
     * spaces and '0' with zeros */
    if (flag == '-' && fw <= 0) width = 0;
    if (flag == '-' || flag == '_') pad = ' ';
    else if (flag == '0') pad = '0';
    if (fw > 0) width = fw;
    char s[48];
    int len = snprintf(s, sizeof s, "%ld", n < 0 ? -n : n), sign = n < 0;
    for (int i = len + sign; i < width; i++)
        if (pad == ' ' && eval_put(cx, b, " ", 1) < 0) return -1;
    if (sign && eval_put(cx, b, "-", 1) < 0) return -1;
    for (int i = len + sign; i < width; i++)
        if (pad == '0' && eval_put(cx, b, "0", 1) < 0) return -1;
    return eval_put(cx, b, s, (size_t)len);
}

static int put_word(eval_cx *cx, cr_buf *b, const char *w, size_t n, char flag, int fw, int upper)
{
    char s[16];
    if (n > sizeof s) n = sizeof s;
    for (size_t i = 0; i < n; i++)
        s[i] = upper && w[i] >= 'a' && w[i] <= 'z' ? (char)(w[i] - 32) : w[i];
    for (int i = (int)n; i < fw; i++)
        if (eval_put(cx, b, flag == '0' ? "0" : " ", 1) < 0) return -1;
    return eval_put(cx, b, s, n);
}

static int strftime_into(eval_cx *cx, cr_buf *b, const dtm *t, const char *f, size_t n,
                         const ir_node *at);

static int conv(eval_cx *cx, cr_buf *b, const dtm *t, char c, char flag, int fw, const ir_node *at)
{
    int wd = weekday(t), yday = days_before_month(t->y, t->mo) + t->d;
    int h12 = t->h % 12 ? t->h % 12 : 12;
    int up = flag == '^' || (flag == '#' && c != 'p'), iy, iw, id;
    const char *sub = NULL;
    switch (c) {
    case 'a': return put_word(cx, b, day_names[wd], 3, flag, fw, up);
    case 'A': return put_word(cx, b, day_names[wd], strlen(day_names[wd]), flag, fw, up);
    case 'b': case 'h': return put_word(cx, b, month_names[t->mo], 3, flag, fw, up);
    case 'B': return put_word(cx, b, month_names[t->mo], strlen(month_names[t->mo]), flag, fw, up);
    case 'p': case 'P': {
        const char *s = c == 'P' || flag == '#' ? (t->h < 12 ? "am" : "pm")
                                                : (t->h < 12 ? "AM" : "PM");
        return put_word(cx, b, s, 2, flag, fw, flag == '^');
    }
    case 'C': return put_num(cx, b, t->y / 100, 1, '0', flag, fw);   /* glibc: unpadded, as %Y */
    case 'd': return put_num(cx, b, t->d, 2, '0', flag, fw);
    case 'e': return put_num(cx, b, t->d, 2, ' ', flag, fw);
    case 'H': return put_num(cx, b, t->h, 2, '0', flag, fw);
    case 'k': return put_num(cx, b, t->h, 2, ' ', flag, fw);
    case 'I': return put_num(cx, b, h12, 2, '0', flag, fw);
    case 'l': return put_num(cx, b, h12, 2, ' ', flag, fw);
    case 'j': return put_num(cx, b, yday, 3, '0', flag, fw);
    case 'm': return put_num(cx, b, t->mo, 2, '0', flag, fw);
    case 'M': return put_num(cx, b, t->mi, 2, '0', flag, fw);
    case 'S': return put_num(cx, b, t->s, 2, '0', flag, fw);
    case 'u': return put_num(cx, b, wd + 1, 1, '0', flag, fw);
    case 'w': return put_num(cx, b, (wd + 1) % 7, 1, '0', flag, fw);
    case 'y': return put_num(cx, b, t->y % 100, 2, '0', flag, fw);
    case 'Y': return put_num(cx, b, t->y, 1, '0', flag, fw);
    case 'U': return put_num(cx, b, (yday - 1 + 7 - (wd + 1) % 7) / 7, 2, '0', flag, fw);
    case 'W': return put_num(cx, b, (yday - 1 + 7 - wd) / 7, 2, '0', flag, fw);
    case 'G': case 'g': case 'V':
        iso_calendar(t, &iy, &iw, &id);
        if (c == 'V') return put_num(cx, b, iw, 2, '0', flag, fw);
        return c == 'G' ? put_num(cx, b, iy, 1, '0', flag, fw)
                        : put_num(cx, b, iy % 100, 2, '0', flag, fw);
    case 'n': return eval_put(cx, b, "\n", 1);
    case 't': return eval_put(cx, b, "\t", 1);
    case 'c': sub = "%a %b %e %H:%M:%S %Y"; break;
    case 'D': case 'x': sub = "%m/%d/%y"; break;
    case 'F': sub = "%Y-%m-%d"; break;
    case 'r': sub = "%I:%M:%S %p"; break;
    case 'R': sub = "%H:%M"; break;
    case 'T': case 'X': sub = "%H:%M:%S"; break;
    case 's':
        eval_raise(cx, CR_EUNSUPPORTED, at,
                   "strftime: %%s (the local time zone) is outside the in-process subset");
        return -1;
    default: return 1;   /* not a conversion */
    }
    return strftime_into(cx, b, t, sub, strlen(sub), at);
}

static int strftime_into(eval_cx *cx, cr_buf *b, const dtm *t, const char *f, size_t n,
                         const ir_node *at)
{
    if (eval_walk(cx, 1, n, at) < 0) return -1;
    for (size_t i = 0; i < n;) {
        if (f[i] != '%' || i + 1 == n) {
            size_t j = i + 1;
            while (j < n && f[j] != '%') j++;
            if (eval_put(cx, b, f + i, j - i) < 0) return -1;
            i = j;
            continue;
        }
        size_t s = i++;
        char c = f[i];
        if (c == 'f' || c == 'z' || c == 'Z' || c == '%') {   /* datetime's own, and %% */
            if (c == 'f' && put(cx, b, "%06d", t->us) < 0) return -1;
            if (c == '%' && eval_put(cx, b, "%", 1) < 0) return -1;
            i++;
            continue;
        }
        char flag = 0;
        int fw = 0;
        if (strchr("-_0^#", c)) flag = f[i++];
        while (i < n && f[i] >= '0' && f[i] <= '9' && fw < 1000) fw = fw * 10 + (f[i++] - '0');
        if (i < n && (f[i] == 'E' || f[i] == 'O')) i++;
        int r = i < n ? conv(cx, b, t, f[i], flag, fw, at) : 1;
        if (r < 0) return -1;
        if (r == 1) {   /* glibc copies what it does not know */
            size_t e = i < n ? i + 1 : n;
            if (eval_put(cx, b, f + s, e - s) < 0) return -1;
            i = e;
            continue;
        }
        i++;
    }
    return 0;
}

static val *dt_strftime(eval_cx *cx, const dtm *t, val *fmt, const ir_node *at)
{
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (strftime_into(cx, &b, t, fmt->u.str.s, fmt->u.str.len, at) < 0) {
        cr_buf_free(&b);
        return NULL;
    }
    return eval_str_buf(cx, &b);
}

static int dt_format(eval_cx *cx, cr_buf *b, val *self, const char *spec, size_t len,
                     const ir_node *at)
{
    if (len == 0) return dt_repr(cx, b, self, 1);
    if (kind_of(self) == DT_DELTA)
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "unsupported format string passed to datetime.timedelta.__format__"), -1;
    return strftime_into(cx, b, DT(self), spec, len, at);
}

/* ---- parsing ---------------------------------------------------------------------------- */

static int digits(const char *s, size_t len, size_t at, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (at + i >= len || s[at + i] < '0' || s[at + i] > '9') return -1;
        v = v * 10 + (s[at + i] - '0');
    }
    *out = v;
    return 0;
}

/* fromisoformat's date part, s[0..len): YYYY-MM-DD, YYYYMMDD, YYYY-Www[-D], YYYYWww[D].
 * 0, or -1 not a date. */
static int iso_date(const char *s, size_t len, dtm *t)
{
    size_t p = 4;
    if (digits(s, len, 0, 4, &t->y) < 0) return -1;
    int sep = p < len && s[p] == '-';
    p += (size_t)sep;
    if (p < len && s[p] == 'W') {
        int w, d = 1;
        if (digits(s, len, p + 1, 2, &w) < 0) return -1;
        p += 3;
        if (p < len) {
            if (sep && s[p++] != '-') return -1;
            if (digits(s, len, p, 1, &d) < 0) return -1;
        }
        if (w < 1 || w > 53 || d < 1 || d > 7) return -1;
        if (w == 53) {
            long wd = (ymd_to_ord(t->y, 1, 1) + 6) % 7;
            if (!(wd == 3 || (wd == 2 && is_leap(t->y)))) return -1;
        }
        long ord = iso_week1(t->y) + (w - 1) * 7 + d - 1;
        if (ord < 1 || ord > MAX_ORD) return -1;
        ord_to_ymd(ord, &t->y, &t->mo, &t->d);
        return 0;
    }
    if (digits(s, len, p, 2, &t->mo) < 0) return -1;
    p += 2;
    if (sep && (p >= len || s[p++] != '-')) return -1;
    return digits(s, len, p, 2, &t->d);
}

/* Where fromisoformat's time part starts: the date forms differ at characters 4 and 5. */
static size_t iso_sep(const char *s, size_t len)
{
    if (len == 7) return 7;
    if (s[4] == '-') {
        if (s[5] != 'W') return 10;
        if (len > 8 && s[8] == '-') return len > 10 && s[10] >= '0' && s[10] <= '9' ? 8 : 10;
        return 8;
    }
    if (s[4] != 'W') return 8;
    size_t i = 7;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++;
    return i < 9 ? i : i % 2 == 0 ? 7 : 8;
}

/* The time part's HH[:MM[:SS]] or HHMM[SS], then a fraction after '.' or ',' (or straight
 * after the seconds when no colons), s[p..end) with s[0..len): 0, 1 when something is left
 * over before `end`, -1 not a time. Characters past `end` read as CPython reads them (its
 * string goes on, NUL-terminated). */
static int iso_hms(const char *s, size_t len, size_t p, size_t end, dtm *t)
{
#define CH(i) ((i) < len ? s[i] : '\0')
    int *f[3] = { &t->h, &t->mi, &t->s }, colon = 0;
    t->h = t->mi = t->s = t->us = 0;
    for (int i = 0; i < 3; i++) {
        if (digits(s, len, p, 2, f[i]) < 0) return -1;
        p += 2;
        char c = CH(p);
        p++;
        if (i == 0) colon = c == ':';
        if (p >= end) return c != '\0';
        if (colon && c == ':') continue;
        if (c == '.' || c == ',') break;
        if (colon) return -1;
        p--;
    }
    size_t n = end - p < 6 ? end - p : 6;
    int us = 0;
    if (digits(s, len, p, (int)n, &us) < 0) return -1;
    for (size_t k = n; k < 6; k++) us *= 10;
    t->us = us;
    p += n;
    while (CH(p) >= '0' && CH(p) <= '9') p++;
    return CH(p) != '\0';
#undef CH
}

/* 0 a naive time, 1 one with a UTC offset (valid, but not supported), -1 not a time. */
static int iso_time(const char *s, size_t len, dtm *t)
{
    size_t tz = 0;
    while (tz < len && s[tz] != 'Z' && s[tz] != '+' && s[tz] != '-') tz++;
    int rc = iso_hms(s, len, 0, tz, t);
    if (rc < 0 || tz == len) return rc ? -1 : 0;
    if (s[tz] == 'Z') return tz + 1 == len ? 1 : -1;
    dtm off;
    return iso_hms(s, len, tz + 1, len, &off) ? -1 : 1;
}

static val *fromisoformat(eval_cx *cx, int kind, eval_args *a, const ir_node *at)
{
    const char *q = kind == DT_DATE ? "date.fromisoformat" : "datetime.fromisoformat";
    if (a->nkw) return eval_raise(cx, CR_EPY_TYPE, at, "%s() takes no keyword arguments", q);
    if (a->npos != 1)
        return eval_raise(cx, CR_EPY_TYPE, at, "%s() takes exactly one argument (%zu given)", q,
                          a->npos);
    val *v = a->pos[0];
    if (v->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "fromisoformat: argument must be str");
    const char *s = v->u.str.s;
    size_t len = v->u.str.len;
    dtm t = { 0 };
    int rc;
    if (kind == DT_DATE) {
        rc = len == 7 || len == 8 || len == 10 ? iso_date(s, len, &t) : -1;
    } else if (v->u.str.nch < 7) {
        rc = -1;
    } else {
        size_t sp = iso_sep(s, len);
        rc = iso_date(s, sp < len ? sp : len, &t);
        if (rc == 0 && len > sp) {
            size_t bad, step = cr_utf8_step(s + sp, len - sp, &bad);
            sp += step ? step : bad;
            rc = iso_time(s + sp, len - sp, &t);
        }
    }
    if (rc > 0)
        return eval_raise(cx, CR_EUNSUPPORTED, at,
                          "fromisoformat: a UTC offset (an aware datetime) is outside the "
                          "in-process subset");
    if (rc < 0) {
        cr_buf b;
        cr_buf_init(&b, cx->lim->max_str_len);
        if (eval_repr(cx, &b, v, 0) == 0)
            eval_raise(cx, CR_EPY_VALUE, at, "Invalid isoformat string: %s", b.p ? b.p : "''");
        cr_buf_free(&b);
        return NULL;
    }
    if (check_date(cx, t.y, t.mo, t.d, at) < 0 || check_time(cx, t.h, t.mi, t.s, t.us, 0, at) < 0)
        return NULL;
    return new_dt(cx, kind, &t);
}

/* strptime: CPython's _strptime turns the format into a regular expression (case-blind,
 * a run of whitespace matching one or more, each directive an alternation tried in order)
 * and takes the first match from the start; this walks the same alternatives with the
 * same backtracking. Each numeric directive's alternatives are patterns over '0'..'9',
 * 'D' (any digit), "[ab]" (a range) and ' '. */
static const char *const num_alts[][11] = {
    ['d' - 'A'] = { "3[01]", "[12]D", "0[19]", "[19]", " [19]" },
    ['H' - 'A'] = { "2[03]", "[01]D", "D" },
    ['I' - 'A'] = { "1[02]", "0[19]", "[19]" },
    ['j' - 'A'] = { "36[06]", "3[05]D", "[12]DD", "0[19]D", "00[19]", "[19]D", "0[19]", "[19]" },
    ['m' - 'A'] = { "1[02]", "0[19]", "[19]" },
    ['M' - 'A'] = { "[05]D", "D" },
    ['S' - 'A'] = { "6[01]", "[05]D", "D" },
    ['y' - 'A'] = { "DD" },
    ['Y' - 'A'] = { "DDDD" },
    ['f' - 'A'] = { "DDDDDD", "DDDDD", "DDDD", "DDD", "DD", "D" },
};
/* the names, longest first as _strptime sorts them */
static const char *const mon_full[] = { "september", "february", "november", "december",
    "january", "october", "august", "march", "april", "june", "july", "may", NULL };
static const char *const mon_abbr[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                        "sep", "oct", "nov", "dec", NULL };
static const char *const day_full[] = { "wednesday", "thursday", "saturday", "tuesday", "monday",
                                        "friday", "sunday", NULL };
static const char *const day_abbr[] = { "mon", "tue", "wed", "thu", "fri", "sat", "sun", NULL };
static const char *const ampm[] = { "am", "pm", NULL };

static const char *const *name_alts(char c)
{
    switch (c) {
    case 'B': return mon_full;
    case 'b': return mon_abbr;
    case 'A': return day_full;
    case 'a': return day_abbr;
    case 'p': return ampm;
    default: return NULL;
    }
}

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

/* How many characters of s the numeric pattern matches, or -1. */
static int pat_match(const char *p, const char *s, size_t len)
{
    size_t i = 0;
    for (; *p; p++, i++) {
        if (i >= len) return -1;
        char c = s[i];
        if (*p == '[') {
            if (c < p[1] || c > p[2]) return -1;
            p += 3;
        } else if (*p == 'D') {
            if (c < '0' || c > '9') return -1;
        } else if (c != *p) {
            return -1;
        }
    }
    return (int)i;
}

typedef struct {
    eval_cx *cx;
    const ir_node *at;
    const char *f, *s;
    size_t flen, slen;
    size_t gpos[128], glen[128];   /* each directive's match, by its letter */
    int fail;                      /* -1: raised */
} sp_state;

/* 1 matched, 0 no match, -1 raised. */
static int sp_match(sp_state *st, size_t fi, size_t si, int depth)
{
    if (eval_count(st->cx, 1, st->at) < 0) return -1;
    if (depth > 1000) return eval_limit(st->cx, st->at, "strptime format too long"), -1;
    while (fi < st->flen) {
        char c = st->f[fi];
        if (is_space(c)) {
            while (fi < st->flen && is_space(st->f[fi])) fi++;
            size_t n = 0;
            while (si + n < st->slen && is_space(st->s[si + n])) n++;
            for (; n >= 1; n--) {   /* greedy, then shorter */
                int r = sp_match(st, fi, si + n, depth + 1);
                if (r) return r;
            }
            return 0;
        }
        if (c != '%') {
            if (si >= st->slen || lower(st->s[si]) != lower(c)) return 0;
            fi++, si++;
            continue;
        }
        char d = st->f[fi + 1];
        if (d == '%') {
            if (si >= st->slen || st->s[si] != '%') return 0;
            fi += 2, si++;
            continue;
        }
        const char *const *names = name_alts(d);
        for (int k = 0;; k++) {
            const char *alt = names ? names[k] : k < 11 ? num_alts[d - 'A'][k] : NULL;
            int n = -1;
            if (!alt) break;
            if (names) {
                size_t L = strlen(alt), j = 0;
                while (j < L && si + j < st->slen && lower(st->s[si + j]) == alt[j]) j++;
                if (j == L) n = (int)L;
            } else {
                n = pat_match(alt, st->s + si, st->slen - si);
            }
            if (n < 0) continue;
            st->gpos[(int)d] = si;
            st->glen[(int)d] = (size_t)n;
            int r = sp_match(st, fi + 2, si + (size_t)n, depth + 1);
            if (r) return r;
        }
        return 0;
    }
    st->gpos[0] = si;   /* where the match ended */
    return 1;
}

static int sp_num(const sp_state *st, char d)
{
    int v = 0;
    for (size_t i = 0; i < st->glen[(int)d]; i++) {
        char c = st->s[st->gpos[(int)d] + i];
        if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
    }
    return v;
}

static int sp_name(const sp_state *st, char d, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == st->glen[(int)d] &&
            strncasecmp(names[i], st->s + st->gpos[(int)d], st->glen[(int)d]) == 0)
            return i;
    return 0;
}

static val *raise_repr2(eval_cx *cx, const ir_node *at, const char *fmt, val *x, val *y)
{
    cr_buf b1, b2;
    cr_buf_init(&b1, cx->lim->max_str_len);
    cr_buf_init(&b2, cx->lim->max_str_len);
    if (eval_repr(cx, &b1, x, 0) == 0 && eval_repr(cx, &b2, y, 0) == 0)
        eval_raise(cx, CR_EPY_VALUE, at, fmt, b1.p ? b1.p : "", b2.p ? b2.p : "");
    cr_buf_free(&b1);
    cr_buf_free(&b2);
    return NULL;
}

static val *strptime_(eval_cx *cx, eval_args *a, const ir_node *at)
{
    if (a->nkw) return eval_raise(cx, CR_EPY_TYPE, at, "strptime() takes no keyword arguments");
    if (a->npos != 2)
        return eval_raise(cx, CR_EPY_TYPE, at, "strptime() takes exactly 2 arguments (%zu given)",
                          a->npos);
    for (int i = 0; i < 2; i++)
        if (a->pos[i]->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at, "strptime() argument %d must be str, not %s",
                              i + 1, eval_type_name(a->pos[i]));
    val *data = a->pos[0], *fmt = a->pos[1];
    const char *f = fmt->u.str.s;
    size_t flen = fmt->u.str.len;
    if (eval_walk(cx, 1, flen, at) < 0) return NULL;
    /* the directives, checked as _strptime builds its expression */
    unsigned seen[4] = { 0 };
    for (size_t i = 0; i < flen; i++) {
        if (f[i] != '%') continue;
        if (i + 1 == flen)
            return eval_raise(cx, CR_EPY_VALUE, at, "stray %% in format '%s'", f);
        char d = f[++i];
        if (d == '%') continue;
        if (is_space(d) || strchr("\\.^$*+?(){}[]|", d))
            return eval_raise(cx, CR_EPY_VALUE, at, "'%%' is a bad directive in format '%s'", f);
        if (!strchr("dfHIGjmMpSUwuVyYzAaBbcxXZW", d)) {
            char one[8];
            size_t bad, n = cr_utf8_step(f + i, flen - i, &bad);
            snprintf(one, sizeof one, "%.*s", (int)(n ? n : 1), f + i);
            return eval_raise(cx, CR_EPY_VALUE, at, "'%s' is a bad directive in format '%s'", one,
                              f);
        }
        if (!strchr("dfHIjmMpSyYAaBb", d))
            return eval_raise(cx, CR_EUNSUPPORTED, at,
                              "strptime: %%%c is outside the in-process subset", d);
        if (seen[(unsigned char)d / 32] & (1u << (d % 32)))
            return eval_raise(cx, CR_EUNSUPPORTED, at,
                              "strptime: a directive repeated in one format (%%%c) is outside the "
                              "in-process subset", d);
        seen[(unsigned char)d / 32] |= 1u << (d % 32);
    }
    sp_state st = { .cx = cx, .at = at, .f = f, .s = data->u.str.s, .flen = flen,
                    .slen = data->u.str.len };
    int r = sp_match(&st, 0, 0, 0);
    if (r < 0) return NULL;
    if (r == 0) return raise_repr2(cx, at, "time data %s does not match format %s", data, fmt);
    if (st.gpos[0] != st.slen)
        return eval_raise(cx, CR_EPY_VALUE, at, "unconverted data remains: %s", st.s + st.gpos[0]);
    dtm t = { .y = 1900, .mo = 1, .d = 1 };
    int julian = -1;
#define HAS(c) (seen[(unsigned char)(c) / 32] & (1u << ((c) % 32)))
    /* in the order of the format's directives, a later one overriding an earlier */
    for (size_t i = 0; i + 1 < flen; i++) {
        if (f[i] != '%') continue;
        char d = f[++i];
        switch (d) {
        case 'y': t.y = sp_num(&st, d); t.y += t.y <= 68 ? 2000 : 1900; break;
        case 'Y': t.y = sp_num(&st, d); break;
        case 'm': t.mo = sp_num(&st, d); break;
        case 'B': {
            static const int order[] = { 9, 2, 11, 12, 1, 10, 8, 3, 4, 6, 7, 5 };
            t.mo = order[sp_name(&st, d, mon_full)];
            break;
        }
        case 'b': t.mo = sp_name(&st, d, mon_abbr) + 1; break;
        case 'd': t.d = sp_num(&st, d); break;
        case 'H': t.h = sp_num(&st, d); break;
        case 'I': {
            int h = sp_num(&st, d), pm = HAS('p') && sp_name(&st, 'p', ampm) == 1;
            t.h = pm ? (h == 12 ? 12 : h + 12) : (h == 12 ? 0 : h);
            break;
        }
        case 'M': t.mi = sp_num(&st, d); break;
        case 'S': t.s = sp_num(&st, d); break;
        case 'f': {
            int us = sp_num(&st, d);
            for (size_t k = st.glen['f']; k < 6; k++) us *= 10;
            t.us = us;
            break;
        }
        case 'j': julian = sp_num(&st, d); break;
        default: break;
        }
    }
#undef HAS
    if (julian >= 0) {
        if (check_date(cx, t.y, 1, 1, at) < 0) return NULL;
        long ord = julian - 1 + ymd_to_ord(t.y, 1, 1);
        if (ord < 1) return eval_raise(cx, CR_EPY_VALUE, at, "ordinal must be >= 1");
        if (ord > MAX_ORD) return eval_raise(cx, CR_EPY_VALUE, at, "year 10000 is out of range");
        ord_to_ymd(ord, &t.y, &t.mo, &t.d);
    }
    if (check_date(cx, t.y, t.mo, t.d, at) < 0 || check_time(cx, t.h, t.mi, t.s, t.us, 0, at) < 0)
        return NULL;
    return new_dt(cx, DT_DATETIME, &t);
}

/* ---- the classes ------------------------------------------------------------------------ */

static int dt_cmp3(val *a, val *b)
{
    if (kind_of(a) == DT_DELTA) {
        const tdl *x = TD(a), *y = TD(b);
        if (x->days != y->days) return x->days < y->days ? -1 : 1;
        if (x->sec != y->sec) return x->sec < y->sec ? -1 : 1;
        return (x->us > y->us) - (x->us < y->us);
    }
    int64_t x = dt_us(DT(a)), y = dt_us(DT(b));
    return (x > y) - (x < y);
}

static int dt_eq(eval_cx *cx, val *a, val *b)
{
    (void)cx;
    return kind_of(a) == kind_of(b) && dt_cmp3(a, b) == 0;
}

static int dt_cmp(eval_cx *cx, int op, val *a, val *b)
{
    int ka = kind_of(a), kb = kind_of(b);
    if (ka < 0 || kb < 0 || (ka == DT_DELTA) != (kb == DT_DELTA)) return -2;
    if (ka != kb) {
        eval_raise(cx, CR_EPY_TYPE, NULL, "can't compare datetime.datetime to datetime.date");
        return -1;
    }
    int c = dt_cmp3(a, b);
    switch (op) {
    case IR_LT: return c < 0;
    case IR_LE: return c <= 0;
    case IR_GT: return c > 0;
    case IR_GE: return c >= 0;
    case IR_EQ: return c == 0;
    default: return c != 0;
    }
}

static int dt_hash(eval_cx *cx, val *self, uint64_t *h)
{
    (void)cx;
    uint64_t x;
    if (kind_of(self) == DT_DELTA)
        x = ((uint64_t)(uint32_t)TD(self)->days << 37) ^ ((uint64_t)TD(self)->sec << 20) ^
            (uint64_t)TD(self)->us;
    else
        x = (uint64_t)dt_us(DT(self)) * 2 + (kind_of(self) == DT_DATETIME);
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    *h = x ^ (x >> 29);
    return 0;
}

static int td_truth(eval_cx *cx, val *self)
{
    (void)cx;
    return TD(self)->days || TD(self)->sec || TD(self)->us;
}

/* A float operand of timedelta * / that has no ratio (inf, nan). */
static val *no_ratio(eval_cx *cx, val *x, const ir_node *at)
{
    if (IS_NAN(x)) return eval_raise(cx, CR_EPY_VALUE, at, "cannot convert NaN to integer ratio");
    return eval_raise(cx, CR_EPY_OVERFLOW, at, "cannot convert Infinity to integer ratio");
}

static val *td_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    int ka = kind_of(a), kb = kind_of(b);
    mpz_t x, y;
    mpq_t q;
    val *r = NULL;
    mpz_inits(x, y, NULL);
    mpq_init(q);
    if (ka == DT_DELTA) td_total(x, TD(a));
    if (kb == DT_DELTA) td_total(y, TD(b));
    if (ka == DT_DELTA && kb == DT_DELTA) {
        switch (op) {
        case IR_ADD: mpz_add(x, x, y); r = new_td(cx, x, at); break;
        case IR_SUB: mpz_sub(x, x, y); r = new_td(cx, x, at); break;
        case IR_DIV:
            if (!mpz_sgn(y)) { r = eval_raise(cx, CR_EPY_ZERODIV, at, "division by zero"); break; }
            if ((r = eval_num(cx, V_FLOAT))) {
                mpq_set_num(r->u.q, x);
                mpq_set_den(r->u.q, y);
                mpq_canonicalize(r->u.q);
                r = eval_num_finish(cx, r, 0);
            }
            break;
        case IR_FLOORDIV: case IR_MOD:
            if (!mpz_sgn(y)) {
                r = eval_raise(cx, CR_EPY_ZERODIV, at, "integer %s by zero",
                               op == IR_MOD ? "modulo" : "division or modulo");
                break;
            }
            if (op == IR_MOD) {
                mpz_fdiv_r(x, x, y);
                r = new_td(cx, x, at);
            } else if ((r = eval_num(cx, V_INT))) {
                mpz_fdiv_q(mpq_numref(r->u.q), x, y);
                r = eval_num_done(cx, r);
            }
            break;
        default: break;
        }
        goto out;
    }
    val *td = ka == DT_DELTA ? a : b, *n = ka == DT_DELTA ? b : a;
    if (op == IR_MUL && (IS_NUM(n) || n->kind == V_INF)) {
        if (n->kind == V_INF) { r = no_ratio(cx, n, at); goto out; }
        td_total(x, TD(td));
        mpq_set_z(q, x);
        mpq_mul(q, q, eval_decided(cx, n, 0));
        round_even(x, q);
        r = new_td(cx, x, at);
    } else if (td == a && (op == IR_DIV || op == IR_FLOORDIV) &&
               (n->kind == V_INT || n->kind == V_BOOL ||
                (op == IR_DIV && (n->kind == V_FLOAT || n->kind == V_INF)))) {
        if (n->kind == V_INF) { r = no_ratio(cx, n, at); goto out; }
        mpq_srcptr d = eval_decided(cx, n, 0);
        if (!mpq_sgn(d)) {
            r = eval_raise(cx, CR_EPY_ZERODIV, at, "integer division or modulo by zero");
            goto out;
        }
        mpq_set_z(q, x);
        mpq_div(q, q, d);
        if (op == IR_DIV) round_even(x, q);
        else mpz_fdiv_q(x, mpq_numref(q), mpq_denref(q));
        r = new_td(cx, x, at);
    }
out:
    mpz_clears(x, y, NULL);
    mpq_clear(q);
    return r;
}

static val *dt_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    int ka = kind_of(a), kb = kind_of(b);
    if (ka == DT_DELTA || (kb == DT_DELTA && ka < 0)) return td_binop(cx, op, a, b, at);
    if (ka < 0) {   /* something + a date: only a timedelta, done above */
        return NULL;
    }
    if (op == IR_SUB && ka == kb) {   /* date - date, datetime - datetime */
        if (ka == DT_DATE)
            return new_td_si(cx, ymd_to_ord(DT(a)->y, DT(a)->mo, DT(a)->d) -
                                     ymd_to_ord(DT(b)->y, DT(b)->mo, DT(b)->d), 0, 0);
        mpz_t d;
        mpz_init_set_si(d, (long)(dt_us(DT(a)) - dt_us(DT(b))));
        val *r = new_td(cx, d, at);
        mpz_clear(d);
        return r;
    }
    if ((op != IR_ADD && op != IR_SUB) || kb != DT_DELTA) return NULL;
    const tdl *t = TD(b);
    if (ka == DT_DATE) {
        long days = op == IR_ADD ? t->days : -(long)t->days;
        return new_date_ord(cx, DT_DATE, ymd_to_ord(DT(a)->y, DT(a)->mo, DT(a)->d) + days, at);
    }
    mpz_t us;
    mpz_init(us);
    td_total(us, t);
    if (op == IR_SUB) mpz_neg(us, us);
    mpz_add_ui(us, us, (unsigned long)dt_us(DT(a)));
    val *r = new_dt_us(cx, us, at);
    mpz_clear(us);
    return r;
}

/* timedelta + date: the date's class answers */
static val *delta_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    int kb = kind_of(b);
    if (op == IR_ADD && kind_of(a) == DT_DELTA && (kb == DT_DATE || kb == DT_DATETIME))
        return dt_binop(cx, op, b, a, at);
    return td_binop(cx, op, a, b, at);
}

static val *dt_unary(eval_cx *cx, int op, val *self, const ir_node *at)
{
    if (kind_of(self) != DT_DELTA || op == IR_INVERT) return NULL;
    if (op == IR_POS) {
        EV_INCREF(self);
        return self;
    }
    mpz_t x;
    mpz_init(x);
    td_total(x, TD(self));
    mpz_neg(x, x);
    val *r = new_td(cx, x, at);
    mpz_clear(x);
    return r;
}

static val *class_attr(eval_cx *cx, int k, const char *name);
static val *class_method(eval_cx *cx, int k, int id, eval_args *a, const ir_node *at);

static val *dt_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    int k = kind_of(self);
    (void)at;
    if (k == DT_DELTA) {
        const tdl *t = TD(self);
        if (!strcmp(name, "days")) return eval_int_si(cx, t->days);
        if (!strcmp(name, "seconds")) return eval_int_si(cx, t->sec);
        if (!strcmp(name, "microseconds")) return eval_int_si(cx, t->us);
    } else {
        const dtm *t = DT(self);
        static const char *const f[] = { "year", "month", "day", "hour", "minute", "second",
                                         "microsecond", "fold" };
        const int v[] = { t->y, t->mo, t->d, t->h, t->mi, t->s, t->us, t->fold };
        for (int i = 0; i < (k == DT_DATE ? 3 : 8); i++)
            if (!strcmp(name, f[i])) return eval_int_si(cx, v[i]);
        if (k == DT_DATETIME && !strcmp(name, "tzinfo")) return eval_none(cx);
    }
    return class_attr(cx, k, name);   /* min, max, resolution, read through an instance */
}

/* Every attribute is read-only, each kind saying so in its own words. */
static int dt_setattr(eval_cx *cx, val *self, const char *name, val *v, const ir_node *at)
{
    (void)v;
    int k = kind_of(self);
    val *cur = dt_attr(cx, self, name, at);
    if (!cur) return -2;
    eval_decref(cx, cur);
    if (!strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "resolution"))
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'%s' object attribute '%s' is read-only",
                   kind_name[k], name);
    else if (k == DT_DELTA)
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "readonly attribute");
    else
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "attribute '%s' of '%s' objects is not writable", name,
                   kind_name[!strcmp(name, "year") || !strcmp(name, "month") || !strcmp(name, "day")
                                 ? DT_DATE : DT_DATETIME]);   /* where CPython defines it */
    return -1;
}

static val *dt_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    int k = kind_of(self);
    if (k == DT_DELTA) {
        if (id == MT_TOTAL_SECONDS) {
            if (eval_no_args(cx, a, "timedelta.total_seconds", at) < 0) return NULL;
            mpz_t x;
            mpz_init(x);
            td_total(x, TD(self));
            val *r = eval_num(cx, V_FLOAT);
            if (r) {
                mpq_set_num(r->u.q, x);
                mpz_set_ui(mpq_denref(r->u.q), 1000000);
                mpq_canonicalize(r->u.q);
                r = eval_num_finish(cx, r, 0);
            }
            mpz_clear(x);
            return r;
        }
        goto none;
    }
    const dtm *t = DT(self);
    const char *qual = k == DT_DATE ? "date" : "datetime";
    char q[48];
    switch (id) {
    case MT_WEEKDAY: case MT_ISOWEEKDAY: case MT_TOORDINAL:
        snprintf(q, sizeof q, "date.%s", eval_method_name(id));
        if (eval_no_args(cx, a, q, at) < 0) return NULL;
        return eval_int_si(cx, id == MT_TOORDINAL ? ymd_to_ord(t->y, t->mo, t->d)
                                              : weekday(t) + (id == MT_ISOWEEKDAY));
    case MT_DATE:
        if (k != DT_DATETIME) goto none;
        if (eval_no_args(cx, a, "datetime.date", at) < 0) return NULL;
        return new_dt(cx, DT_DATE, t);
    case MT_CTIME:
        snprintf(q, sizeof q, "%s.ctime", qual);
        if (eval_no_args(cx, a, q, at) < 0) return NULL;
        {
            val *f = eval_str(cx, "%a %b %e %H:%M:%S %Y", 20);
            val *r = f ? dt_strftime(cx, t, f, at) : NULL;
            eval_decref(cx, f);
            return r;
        }
    case MT_ISOFORMAT: {
        if (k == DT_DATE) {
            if (eval_no_args(cx, a, "date.isoformat", at) < 0) return NULL;
            cr_buf b;
            cr_buf_init(&b, cx->lim->max_str_len);
            if (dt_repr(cx, &b, self, 1) < 0) { cr_buf_free(&b); return NULL; }
            return eval_str_buf(cx, &b);
        }
        static const char *const names[] = { "sep", "timespec" };
        static const char *const specs[] = { "auto", "hours", "minutes", "seconds",
                                             "milliseconds", "microseconds" };
        eval_argspec sp = { "isoformat()", "Cs", names, 0, 2 };
        val *ov[2];
        if (eval_parse_args(cx, a, &sp, ov, NULL, at) < 0) return NULL;
        int spec = 0;
        if (ov[1]) {
            while (spec < 6 && strcmp(specs[spec], ov[1]->u.str.s)) spec++;
            if (spec == 6) return eval_raise(cx, CR_EPY_VALUE, at, "Unknown timespec value");
        }
        cr_buf b;
        cr_buf_init(&b, cx->lim->max_str_len);
        int rc = put(cx, &b, "%04d-%02d-%02d", t->y, t->mo, t->d);
        if (rc == 0) rc = ov[0] ? eval_put(cx, &b, ov[0]->u.str.s, ov[0]->u.str.len)
                                : eval_put(cx, &b, "T", 1);
        if (rc == 0) rc = put_time(cx, &b, t, spec);
        if (rc < 0) { cr_buf_free(&b); return NULL; }
        return eval_str_buf(cx, &b);
    }
    case MT_STRFTIME: {
        static const char *const names[] = { "format" };
        eval_argspec sp = { "strftime()", "U", names, 1, 1 };
        val *ov[1];
        if (eval_parse_args(cx, a, &sp, ov, NULL, at) < 0) return NULL;
        return dt_strftime(cx, t, ov[0], at);
    }
    case MT_REPLACE: return make_dt(cx, k, t, a, at);
    case MT_FROMORDINAL: case MT_FROMISOFORMAT: case MT_STRPTIME:
        return class_method(cx, k, id, a, at);
    default: break;
    }
none:
    return eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'%s' object has no attribute '%s'", kind_name[k],
                      eval_method_name(id));
}

static val *dt_builtin(eval_cx *cx, int bid, val *self, eval_args *a, const ir_node *at)
{
    if (kind_of(self) != DT_DELTA) return NULL;
    if (bid == B_ABS && a->npos == 1 && !a->nkw) {
        if (TD(self)->days >= 0) {
            EV_INCREF(self);
            return self;
        }
        return dt_unary(cx, IR_NEG, self, at);
    }
    if (bid == B_DIVMOD && a->npos == 2 && !a->nkw && kind_of(a->pos[1]) == DT_DELTA) {
        val *q = td_binop(cx, IR_FLOORDIV, self, a->pos[1], at);
        val *m = q ? td_binop(cx, IR_MOD, self, a->pos[1], at) : NULL;
        val *t = m ? eval_seq_new(cx, V_TUPLE, 2) : NULL;
        if (!t) {
            eval_decref(cx, q);
            eval_decref(cx, m);
            return NULL;
        }
        eval_seq_push(cx, t, q);
        eval_seq_push(cx, t, m);
        return t;
    }
    return NULL;
}

static const eval_class date_cls = {
    .name = "datetime.date", .repr = dt_repr, .eq = dt_eq, .cmp = dt_cmp,
    .hash = dt_hash, .binop = dt_binop, .attr = dt_attr, .setattr = dt_setattr,
    .method = dt_method, .format = dt_format,
};
static const eval_class datetime_cls = {
    .name = "datetime.datetime", .repr = dt_repr, .eq = dt_eq, .cmp = dt_cmp,
    .hash = dt_hash, .binop = dt_binop, .attr = dt_attr, .setattr = dt_setattr,
    .method = dt_method, .format = dt_format,
};
static const eval_class delta_cls = {
    .name = "datetime.timedelta", .repr = dt_repr, .eq = dt_eq, .cmp = dt_cmp,
    .hash = dt_hash, .truth = td_truth, .binop = delta_binop, .unary = dt_unary,
    .attr = dt_attr, .setattr = dt_setattr, .method = dt_method, .format = dt_format,
    .builtin = dt_builtin,
};

/* ---- the class objects ------------------------------------------------------------------ */

#define TK(v) (((dtype *)(v)->u.obj.data)->kind)

static int type_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    (void)as_str;
    return put(cx, b, "<class '%s'>", kind_name[TK(self)]);
}

static int type_eq(eval_cx *cx, val *a, val *b)
{
    (void)cx;
    return a->kind == V_OBJ && b->kind == V_OBJ && a->u.obj.cls == &type_cls &&
           b->u.obj.cls == &type_cls && TK(a) == TK(b);
}

static int type_hash(eval_cx *cx, val *self, uint64_t *h)
{
    (void)cx;
    *h = 0x5bd1e995u + (uint64_t)TK(self);
    return 0;
}

static val *type_call(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    int k = TK(self);
    return k == DT_DELTA ? make_td(cx, a, at) : make_dt(cx, k, NULL, a, at);
}

static val *class_attr(eval_cx *cx, int k, const char *name)
{
    int mx = !strcmp(name, "max");
    if (k == DT_DELTA) {
        if (!strcmp(name, "min")) return new_td_si(cx, -MAX_DAYS, 0, 0);
        if (mx) return new_td_si(cx, MAX_DAYS, 86399, 999999);
        if (!strcmp(name, "resolution")) return new_td_si(cx, 0, 0, 1);
        return NULL;
    }
    if (mx || !strcmp(name, "min")) {
        dtm t = mx ? (dtm){ 9999, 12, 31, 23, 59, 59, 999999, 0 } : (dtm){ 1, 1, 1, 0, 0, 0, 0, 0 };
        return new_dt(cx, k, &t);
    }
    if (!strcmp(name, "resolution")) return new_td_si(cx, k == DT_DATE, 0, k == DT_DATETIME);
    return NULL;
}

static val *type_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    (void)at;
    return class_attr(cx, TK(self), name);
}

static val *class_method(eval_cx *cx, int k, int id, eval_args *a, const ir_node *at)
{
    if (id == MT_FROMORDINAL && k != DT_DELTA) {
        long ord;
        if (a->nkw)
            return eval_raise(cx, CR_EPY_TYPE, at, "fromordinal() takes no keyword arguments");
        if (a->npos != 1)
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "fromordinal() takes exactly 1 argument (%zu given)", a->npos);
        if (eval_c_int(cx, a->pos[0], &ord, at) < 0) return NULL;
        if (ord < 1) return eval_raise(cx, CR_EPY_VALUE, at, "ordinal must be >= 1");
        if (ord > MAX_ORD) return eval_raise(cx, CR_EPY_VALUE, at, "year 10000 is out of range");
        return new_date_ord(cx, k, ord, at);
    }
    if (id == MT_FROMISOFORMAT && k != DT_DELTA) return fromisoformat(cx, k, a, at);
    if (id == MT_STRPTIME && k == DT_DATETIME) return strptime_(cx, a, at);
    /* an instance method through its class: date.weekday(d) */
    int k0 = a->npos ? kind_of(a->pos[0]) : -1;
    if ((k0 == k || (k == DT_DATE && k0 == DT_DATETIME)) && id != MT_FROMORDINAL &&
        id != MT_FROMISOFORMAT && id != MT_STRPTIME) {
        eval_args rest = *a;
        rest.pos++;
        rest.npos--;
        return dt_method(cx, a->pos[0], id, &rest, at);
    }
    return eval_raise(cx, CR_EPY_ATTRIBUTE, at, "type object '%s' has no attribute '%s'",
                      kind_name[k], eval_method_name(id));
}

static val *type_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    return class_method(cx, TK(self), id, a, at);
}

static val *type_builtin(eval_cx *cx, int bid, val *self, eval_args *a, const ir_node *at)
{
    (void)at;
    if (bid != B_ISINSTANCE) return NULL;
    int k = TK(self), xk = kind_of(a->pos[0]);
    return eval_bool(cx, xk == k || (k == DT_DATE && xk == DT_DATETIME));
}

static const eval_class type_cls = {
    .name = "type", .repr = type_repr, .eq = type_eq, .hash = type_hash,
    .attr = type_attr, .method = type_method, .call = type_call, .builtin = type_builtin,
};

static val *type_obj(eval_cx *cx, int kind)
{
    val *v = eval_obj_new(cx, &type_cls, sizeof(dtype));
    if (v) TK(v) = kind;
    return v;
}

val *eval_dt_date(eval_cx *cx, const ir_node *at) { (void)at; return type_obj(cx, DT_DATE); }
val *eval_dt_datetime(eval_cx *cx, const ir_node *at)
{
    (void)at;
    return type_obj(cx, DT_DATETIME);
}
val *eval_dt_timedelta(eval_cx *cx, const ir_node *at) { (void)at; return type_obj(cx, DT_DELTA); }
val *eval_dt_minyear(eval_cx *cx, const ir_node *at) { (void)at; return eval_int_si(cx, 1); }
val *eval_dt_maxyear(eval_cx *cx, const ir_node *at) { (void)at; return eval_int_si(cx, 9999); }
