/* common/common.c: errors, bounded buffers, the arena and the default policy. */
#include "common/common.h"
#include "common/defaults.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_names[] = {
    [CR_OK] = "ok",
    [CR_ENOMEM] = "out of memory",
    [CR_EUSAGE] = "bad usage",
    [CR_EIO] = "input/output error",
    [CR_ESYNTAX] = "syntax error",
    [CR_EUNSUPPORTED] = "outside the in-process subset",
    [CR_ELIMIT] = "LimitError",
    [CR_EREJECTED] = "rejected by policy",
    [CR_ESANDBOX] = "sandbox failure",
    [CR_EAUDIT] = "audit ledger failure",
    [CR_EINTERNAL] = "internal error",
    [CR_ELEDGER] = "not an audit ledger",
    [CR_EINTERRUPTED] = "interrupted",
    [CR_EBUSY] = "overloaded",
    [CR_EPY_ZERODIV] = "ZeroDivisionError",
    [CR_EPY_NAME] = "NameError",
    [CR_EPY_UNBOUND] = "UnboundLocalError",
    [CR_EPY_TYPE] = "TypeError",
    [CR_EPY_VALUE] = "ValueError",
    [CR_EPY_OVERFLOW] = "OverflowError",
    [CR_EPY_INDEX] = "IndexError",
    [CR_EPY_KEY] = "KeyError",
    [CR_EPY_ATTRIBUTE] = "AttributeError",
    [CR_EPY_ASSERTION] = "AssertionError",
    [CR_EPY_RECURSION] = "RecursionError",
    [CR_EPY_EXCEPTION] = "Exception",
};

const char *cr_version(void) { return CR_VERSION_STRING; }

const char *cr_strerror(cr_code code)
{
    if ((unsigned)code < sizeof code_names / sizeof code_names[0] && code_names[code])
        return code_names[code];
    return "unknown error";
}

const char *cr_code_pytype(cr_code code)
{
    if (code == CR_ELIMIT) return "LimitError";
    if (code >= CR_EPY_BASE && code < CR_EPY_END) return code_names[code];
    return "";
}

cr_code cr_code_from_pytype(const char *name, size_t len)
{
    for (int c = CR_EPY_BASE; c < CR_EPY_END; c++)
        if (strlen(code_names[c]) == len && memcmp(code_names[c], name, len) == 0)
            return (cr_code)c;
    return CR_OK;
}

cr_code cr_error_vset(cr_error *err, cr_code code, int line, int col, const char *fmt,
                      va_list ap)
{
    if (!err) return code;
    err->code = code;
    err->line = line;
    err->col = col;
    snprintf(err->type, sizeof err->type, "%s", cr_code_pytype(code));
    /* A message cut to the field keeps whole characters: it is shown and put in JSON. */
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    if (n >= (int)sizeof err->message)
        err->message[cr_utf8_cut(err->message, sizeof err->message - 1)] = '\0';
    return code;
}

cr_code cr_error_set(cr_error *err, cr_code code, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cr_error_vset(err, code, line, col, fmt, ap);
    va_end(ap);
    return code;
}

cr_code cr_error_sys(cr_error *err, cr_code code, const char *what, int errnum)
{
    return cr_error_set(err, code, 0, 0, "%s: %s", what, strerror(errnum));
}

/* ---- UTF-8 ----------------------------------------------------------------------------- */

/* The well-formed character at p[0..len) (len > 0): its length; else 0 with *bad the length
 * of its maximal ill-formed subpart (Unicode's "best practice", which Python's decoder
 * follows: each such subpart is one replacement character) and *short_ set when the input
 * ended inside a sequence that was well-formed so far. */
static size_t utf8_char(const unsigned char *p, size_t len, size_t *bad, int *short_)
{
    unsigned c = p[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    *short_ = 0;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;            /* overlong */
        if (c == 0xED) hi = 0x9F;            /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;            /* overlong */
        if (c == 0xF4) hi = 0x8F;            /* past U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= len) {
            *bad = i;
            *short_ = 1;
            return 0;
        }
        if (p[i] < lo || p[i] > hi) {
            *bad = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

size_t cr_utf8_step(const char *p, size_t len, size_t *bad)
{
    int short_;
    return utf8_char((const unsigned char *)p, len, bad, &short_);
}

int cr_utf8_valid(const char *p, size_t len)
{
    size_t i = 0, n, bad;
    while (i < len && (n = cr_utf8_step(p + i, len - i, &bad)) > 0) i += n;
    return i == len;
}

size_t cr_utf8_cut(const char *p, size_t len)
{
    const unsigned char *u = (const unsigned char *)p;
    /* Only the last character can be split: look back over at most three continuation bytes
     * for the byte that starts it. */
    for (size_t k = len, back = 0; k > 0 && back < 4; back++) {
        k--;
        if ((u[k] & 0xC0) != 0x80) {
            size_t bad;
            int short_;
            if (!utf8_char(u + k, len - k, &bad, &short_) && short_) return k;
            break;
        }
    }
    return len;
}

/* ---- cr_buf ---------------------------------------------------------------------------- */

void cr_buf_init(cr_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

void cr_buf_free(cr_buf *b)
{
    if (!b) return;
    free(b->p);
    memset(b, 0, sizeof *b);
}

void cr_buf_reset(cr_buf *b)
{
    b->len = 0;
    b->truncated = 0;
    if (b->p) b->p[0] = '\0';
}

static cr_code buf_reserve(cr_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1) return CR_ENOMEM;
    if (b->len + extra + 1 <= b->cap) return CR_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) return CR_ENOMEM;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) return CR_ENOMEM;
    b->p = p;
    b->cap = cap;
    return CR_OK;
}

cr_code cr_buf_put(cr_buf *b, const void *data, size_t len)
{
    cr_code rc = CR_OK;
    if (b->truncated && b->max) return CR_ELIMIT;    /* after a cut, nothing may follow it */
    if (b->max && b->len + len > b->max) {
        len = b->max - b->len;
        b->truncated = 1;
        rc = CR_ELIMIT;
    }
    if (buf_reserve(b, len) != CR_OK) return CR_ENOMEM;
    if (len) memcpy(b->p + b->len, data, len);
    b->len += len;
    if (rc == CR_ELIMIT) b->len = cr_utf8_cut(b->p, b->len);
    b->p[b->len] = '\0';
    return rc;
}

char *cr_buf_extend(cr_buf *b, size_t n)
{
    if (b->max || buf_reserve(b, n) != CR_OK) return NULL;
    char *at = b->p + b->len;
    b->len += n;
    b->p[b->len] = '\0';
    return at;
}

cr_code cr_buf_putc(cr_buf *b, char c) { return cr_buf_put(b, &c, 1); }

cr_code cr_buf_puts(cr_buf *b, const char *s) { return cr_buf_put(b, s, strlen(s)); }

cr_code cr_buf_printf(cr_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return CR_EINTERNAL;
    if ((size_t)n < sizeof small) return cr_buf_put(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) return CR_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cr_code rc = cr_buf_put(b, big, (size_t)n);
    free(big);
    return rc;
}

char *cr_buf_take(cr_buf *b, size_t *len)
{
    char *p = b->p;
    if (!p) p = calloc(1, 1);
    if (len) *len = b->len;
    size_t max = b->max;
    memset(b, 0, sizeof *b);
    b->max = max;
    return p;
}

/* ---- arena ----------------------------------------------------------------------------- */

struct cr_arena_block {
    cr_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void cr_arena_init(cr_arena *a, size_t max)
{
    a->head = NULL;
    a->used = 0;
    a->max = max;
    a->nomem = 0;
}

#define ARENA_BLOCK 16384

/* One block of the usual size kept per thread: a program's IR fits in one, and each run
 * made and freed it (a malloc and free of 16 KiB, and cold memory). Freed at thread exit.
 * Not under AddressSanitizer, whose report of a use after free of IR memory a reused block
 * would hide. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_KEEP_SPARE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_KEEP_SPARE 0
#endif
#endif
#ifndef ARENA_KEEP_SPARE
#define ARENA_KEEP_SPARE 1
#endif
static _Thread_local cr_arena_block *tl_spare;
static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static int spare_key_ok;

static void spare_destroy(void *p)
{
    free(p);
    tl_spare = NULL;
}

static void spare_key_init(void)
{
    spare_key_ok = pthread_key_create(&spare_key, spare_destroy) == 0;
}

void cr_arena_free(cr_arena *a)
{
    if (!a) return;
    cr_arena_block *b = a->head;
    while (b) {
        cr_arena_block *next = b->next;
        pthread_once(&spare_once, spare_key_init);
        if (ARENA_KEEP_SPARE && b->size == ARENA_BLOCK && !tl_spare && spare_key_ok &&
            pthread_setspecific(spare_key, b) == 0)
            tl_spare = b;
        else
            free(b);
        b = next;
    }
    a->head = NULL;
    a->used = 0;
}

static void *arena_bump(cr_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    cr_arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t bsize = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        if (a->max && a->used + bsize > a->max) return a->nomem = 0, NULL;
        if (bsize == ARENA_BLOCK && tl_spare) {
            b = tl_spare;
            tl_spare = NULL;
            pthread_setspecific(spare_key, NULL);
        } else if (!(b = malloc(sizeof *b + bsize))) {
            return a->nomem = 1, NULL;
        }
        b->next = a->head;
        b->size = bsize;
        b->used = 0;
        a->head = b;
        a->used += bsize;
    }
    void *p = b->data + b->used;
    b->used += size;
    return p;
}

void *cr_arena_alloc(cr_arena *a, size_t size)
{
    void *p = arena_bump(a, size);
    if (p) memset(p, 0, size);
    return p;
}

char *cr_arena_strndup(cr_arena *a, const char *s, size_t len)
{
    char *p = arena_bump(a, len + 1);   /* every byte written below */
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* The shifts bring high bytes down to the bits a table uses. */
uint32_t cr_hash_name(const char *s, size_t len)
{
    uint64_t x = 0xcbf29ce484222325ULL ^ len, w;
    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        x = (x ^ w) * 0x9e3779b97f4a7c15ULL;
        x ^= x >> 32;
    }
    w = 0;
    if (len & 4) { uint32_t t; memcpy(&t, s, 4); w = t; s += 4; }
    if (len & 2) { uint16_t t; memcpy(&t, s, 2); w = w << 16 | t; s += 2; }
    if (len & 1) w = w << 8 | (unsigned char)*s;
    x = (x ^ w) * 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebULL;
    return (uint32_t)(x ^ (x >> 32));
}

/* ---- policy ---------------------------------------------------------------------------- */

void cr_policy_default(cr_policy *p)
{
    memset(p, 0, sizeof *p);
    p->precision = CR_DEFAULT_PRECISION;
    p->rounding = CR_ROUND_HALF_EVEN;
    p->answer_vars[0] = "ans";
    p->answer_vars[1] = "result";
    p->answer_vars[2] = "answer";
    /* The figures and why they are what they are: common/defaults.h. The budget is
     * max_cpu_s; the step count is a backstop for when the clock cannot end a run
     * (max_cpu_s 0). */
    p->limits.max_source = CR_DEFAULT_MAX_SOURCE;
    p->limits.max_depth = CR_DEFAULT_MAX_DEPTH;
    p->limits.max_ops = CR_DEFAULT_MAX_STEPS;
    p->limits.max_int_bits = CR_DEFAULT_MAX_INT_BITS;
    p->limits.max_str_len = CR_DEFAULT_MAX_STR_LEN;
    p->limits.max_call_depth = CR_DEFAULT_MAX_RECURSION;
    p->limits.max_stdout = CR_DEFAULT_MAX_STDOUT;
    p->limits.max_memory = CR_DEFAULT_MAX_EVAL_MEMORY;
    p->limits.max_cpu_s = CR_DEFAULT_TIMEOUT_S;   /* cr_config's timeout_s sets it per engine */
}

/* solution() uncalled is the PAL/PoT convention: it is the answer. Called by the program,
 * an answer variable the program set from it (`answer = round(solution(), 2)`) says more. */
cr_final_kind cr_final_choose(const cr_final_facts *f, int *var_index)
{
    if (f->solution && f->solution_at_end) return CR_FINAL_SOLUTION;
    for (int i = 0; i < CR_ANSWER_VARS_MAX; i++)
        if (f->vars & 1u << i) {
            *var_index = i;
            return CR_FINAL_VAR;
        }
    if (f->solution) return CR_FINAL_SOLUTION;
    if (f->expr) return CR_FINAL_EXPR;
    if (f->assigned) return CR_FINAL_ASSIGNED;
    return CR_FINAL_NONE;
}
