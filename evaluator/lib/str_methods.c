/* evaluator/lib/str_methods.c: the methods of str (subset.def's METHOD rows on V_STR) but format
 * (format.c) and index/count (seq_methods.c, which tuple and list share). */
#include "evaluator/lib/lib.h"

#include <string.h>
#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

/* Bytes of the UTF-8 character starting at s (n > 0), and of the one ending at s + n. */
static size_t char_len(const char *s, size_t n)
{
    size_t k = 1;
    while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80) k++;
    return k;
}

static size_t char_len_back(const char *s, size_t n)
{
    size_t k = 1;
    while (k < n && ((unsigned char)s[n - k] & 0xC0) == 0x80) k++;
    return k;
}

/* Bytes of the whitespace character at s[0..n) by str.isspace()'s rule (Unicode White_Space
 * and the separators U+001C..U+001F), 0 for any other; back: the one ending at s + n. */
static size_t space_at(const char *s, size_t n, int back)
{
    if (!n) return 0;
    size_t k = back ? char_len_back(s, n) : char_len(s, n);
    const uint8_t *u = (const uint8_t *)s + (back ? n - k : 0);
    ucs4_t c = u[0];
    if (k > 1 && u8_mbtouc(&c, u, k) != (int)k) return 0;
    return uc_is_property_white_space(c) || (c >= 0x1C && c <= 0x1F) ? k : 0;
}

/* Whether the character c (k bytes) is one of the characters of cs. */
static int in_chars(const char *cs, size_t cn, const char *c, size_t k)
{
    for (size_t i = 0; i < cn; i += char_len(cs + i, cn - i))
        if (char_len(cs + i, cn - i) == k && memcmp(cs + i, c, k) == 0) return 1;
    return 0;
}

static val *str_strip(eval_cx *cx, val *self, eval_args *a, int which, const ir_node *at)
{
    if (eval_check_args(cx, a, 0, 1, NULL, eval_method_name(which), at) < 0) return NULL;
    val *chars = a->npos ? a->pos[0] : NULL;
    if (chars && chars->kind == V_NONE) chars = NULL;
    if (chars && chars->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "%s arg must be None or str", eval_method_name(which));
    const char *s = self->u.str.s;
    size_t lo = 0, hi = self->u.str.len;
    size_t k;
    if (!chars) {
        if (eval_walk(cx, 0, hi, at) < 0) return NULL;
        if (which != MT_RSTRIP)
            while ((k = space_at(s + lo, hi - lo, 0))) lo += k;
        if (which != MT_LSTRIP)
            while ((k = space_at(s + lo, hi - lo, 1))) hi -= k;
        return eval_str(cx, s + lo, hi - lo);
    }
    /* a character is stripped when it is one of chars' characters, whole. ASCII ones are
     * looked up in a table (a search of chars for each made a long chars quadratic); a
     * non-ASCII one searches chars, and is charged for it. */
    const char *cs = chars->u.str.s;
    size_t cn = chars->u.str.len;
    unsigned char ascii[128] = { 0 };
    int wide = 0, bad = 0;
    if (eval_walk(cx, 0, cn + hi, at) < 0) return NULL;
    for (size_t i = 0; i < cn; i++) {
        unsigned char c = (unsigned char)cs[i];
        if (c < 128) ascii[c] = 1; else wide = 1;
    }
#define STRIPPABLE(p, k) ((k) == 1 && (unsigned char)*(p) < 128 ? ascii[(unsigned char)*(p)] : \
    wide && !(bad = eval_walk(cx, 0, cn, at) < 0) && in_chars(cs, cn, p, k))
    if (which != MT_RSTRIP)
        while (lo < hi && (k = char_len(s + lo, hi - lo)) && STRIPPABLE(s + lo, k)) lo += k;
    if (which != MT_LSTRIP)
        while (hi > lo && (k = char_len_back(s + lo, hi - lo)) && STRIPPABLE(s + hi - k, k))
            hi -= k;
#undef STRIPPABLE
    if (bad) return NULL;
    return eval_str(cx, s + lo, hi - lo);
}

static val *str_split(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "sep", "maxsplit", NULL };
    if (eval_check_args(cx, a, 0, 2, kws, "split", at) < 0) return NULL;
    val *sep = a->npos ? a->pos[0] : eval_kwarg(a, "sep");
    val *ms = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "maxsplit");
    int64_t max = -1;
    if (ms && eval_int_of(cx, ms, &max) < 0) return NULL;
    if (sep && sep->kind == V_NONE) sep = NULL;
    if (sep && sep->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "must be str or None, not %s", eval_type_name(sep));
    if (sep && sep->u.str.len == 0) return eval_raise(cx, CR_EPY_VALUE, at, "empty separator");
    if (eval_walk(cx, 0, self->u.str.len, at) < 0) return NULL;
    val *l = eval_seq_new(cx, V_LIST, 0);
    if (!l) return NULL;
    const char *s = self->u.str.s;
    size_t n = self->u.str.len, i = 0;
    int64_t done = 0;
    if (!sep) {
        size_t k;
        for (;;) {
            while ((k = space_at(s + i, n - i, 0))) i += k;
            if (i >= n) break;
            size_t j = i;
            if (max >= 0 && done >= max) {
                j = n;
                while ((k = space_at(s + i, j - i, 1))) j -= k;
            } else {
                while (j < n && !space_at(s + j, n - j, 0)) j += char_len(s + j, n - j);
            }
            val *p = eval_str(cx, s + i, j - i);
            if (!p || eval_seq_push(cx, l, p) < 0 || eval_count(cx, 1, at) < 0) goto fail;
            done++;
            i = j;
        }
        return l;
    }
    for (;;) {
        const char *hit = (max < 0 || done < max)
                              ? memmem(s + i, n - i, sep->u.str.s, sep->u.str.len) : NULL;
        size_t j = hit ? (size_t)(hit - s) : n;
        val *p = eval_str(cx, s + i, j - i);
        if (!p || eval_seq_push(cx, l, p) < 0 || eval_count(cx, 1, at) < 0) goto fail;
        if (!hit) break;
        done++;
        i = j + sep->u.str.len;
    }
    return l;
fail:
    eval_decref(cx, l);
    return NULL;
}

static val *str_join(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    if (eval_check_args(cx, a, 1, 1, NULL, "join", at) < 0) return NULL;
    val *l = eval_items_of(cx, a->pos[0], at);
    if (!l) return NULL;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    int inexact = 0;
    for (size_t i = 0; i < l->u.seq.len; i++) {
        val *x = l->u.seq.it[i];
        if (x->kind != V_STR) {
            eval_raise(cx, CR_EPY_TYPE, at, "sequence item %zu: expected str instance, %s found",
                       i, eval_type_name(x));
            goto fail;
        }
        inexact |= x->flags & VF_INEXACT;
        if (eval_walk(cx, 1, self->u.str.len + x->u.str.len, at) < 0) goto fail;
        if ((i && eval_put(cx, &b, self->u.str.s, self->u.str.len) < 0) ||
            eval_put(cx, &b, x->u.str.s, x->u.str.len) < 0)
            goto fail;
    }
    eval_decref(cx, l);
    return eval_str_buf_from(cx, &b, inexact);
fail:
    eval_decref(cx, l);
    cr_buf_free(&b);
    return NULL;
}

static val *str_replace(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    if (eval_check_args(cx, a, 2, 3, NULL, "replace", at) < 0) return NULL;
    for (int k = 0; k < 2; k++)
        if (a->pos[k]->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at, "replace() argument %d must be str, not %s",
                              k + 1, eval_type_name(a->pos[k]));
    int64_t count = -1;
    if (a->npos > 2 && eval_int_of(cx, a->pos[2], &count) < 0) return NULL;
    val *o = a->pos[0], *nw = a->pos[1];
    const char *s = self->u.str.s;
    size_t n = self->u.str.len, i = 0;
    if (eval_walk(cx, 0, n, at) < 0) return NULL;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    int64_t done = 0;
    if (o->u.str.len == 0) {
        /* an empty pattern matches between every two characters */
        while (i <= n) {
            if (count < 0 || done < count) {
                if (eval_put(cx, &b, nw->u.str.s, nw->u.str.len) < 0) goto fail;
                done++;
            }
            if (i == n) break;
            size_t j = i + 1;
            while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80) j++;
            if (eval_put(cx, &b, s + i, j - i) < 0 || eval_count(cx, 1, at) < 0) goto fail;
            i = j;
        }
        return eval_str_buf(cx, &b);
    }
    for (;;) {
        const char *hit = (count < 0 || done < count)
                              ? memmem(s + i, n - i, o->u.str.s, o->u.str.len) : NULL;
        size_t j = hit ? (size_t)(hit - s) : n;
        if (eval_put(cx, &b, s + i, j - i) < 0) goto fail;
        if (!hit) break;
        if (eval_put(cx, &b, nw->u.str.s, nw->u.str.len) < 0 || eval_count(cx, 1, at) < 0)
            goto fail;
        done++;
        i = j + o->u.str.len;
    }
    return eval_str_buf(cx, &b);
fail:
    cr_buf_free(&b);
    return NULL;
}

static val *str_affix(eval_cx *cx, val *self, eval_args *a, int ends, const ir_node *at)
{
    const char *name = ends ? "endswith" : "startswith";
    if (eval_check_args(cx, a, 1, 3, NULL, name, at) < 0) return NULL;
    val *p = a->pos[0];
    int64_t lo = 0, hi = (int64_t)self->u.str.nch;
    if (a->npos > 1 && a->pos[1]->kind != V_NONE && eval_int_of(cx, a->pos[1], &lo) < 0)
        return NULL;
    if (a->npos > 2 && a->pos[2]->kind != V_NONE && eval_int_of(cx, a->pos[2], &hi) < 0)
        return NULL;
    int64_t len = (int64_t)self->u.str.nch;
    if (self->u.str.nch != self->u.str.len && eval_walk(cx, 0, self->u.str.len, at) < 0)
        return NULL;
    if (lo < 0) lo = lo + len < 0 ? 0 : lo + len;
    if (hi < 0) hi = hi + len < 0 ? 0 : hi + len;
    if (hi > len) hi = len;
    if (lo > len) return eval_bool(cx, 0);
    size_t bl = eval_utf8_index(self, (size_t)lo), bh = hi < lo ? bl : eval_utf8_index(self, (size_t)hi);
    val **cand = &p;
    size_t nc = 1;
    if (p->kind == V_TUPLE) {
        cand = p->u.seq.it;
        nc = p->u.seq.len;
    }
    for (size_t k = 0; k < nc; k++) {
        val *c = cand[k];
        if (c->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "%s first arg must be str or a tuple of str, not %s", name,
                              eval_type_name(c));
        size_t cl = c->u.str.len;
        if (eval_walk(cx, 1, cl, at) < 0) return NULL;
        if (cl > bh - bl) continue;
        const char *at_ = ends ? self->u.str.s + bh - cl : self->u.str.s + bl;
        if (memcmp(at_, c->u.str.s, cl) == 0) return eval_bool(cx, 1);
    }
    return eval_bool(cx, 0);
}

/* Python's case mappings on UTF-8 through libunistring: full mappings ('straße'.upper() is
 * 'STRASSE', 'İ'.lower() is 'i̇') with Final_Sigma. title() and capitalize() title-case
 * the first character of each run of cased characters (Python's rule, not Unicode's word
 * breaks: "they're".title() is "They'Re"), one character at a time, and lower-case the
 * rest of the run with the text around it as context. */
static int case_piece(eval_cx *cx, cr_buf *b, const uint8_t *s, size_t n, size_t lo, size_t hi,
                      int id, const ir_node *at)
{
    size_t len = 0;
    uint8_t *m;
    casing_prefix_context_t pre = unicase_empty_prefix_context;
    casing_suffix_context_t suf = unicase_empty_suffix_context;
    if (id != MT_TITLE) {
        pre = u8_casing_prefix_context(s, lo);
        suf = u8_casing_suffix_context(s + hi, n - hi);
    }
    switch (id) {
    case MT_UPPER: m = u8_ct_toupper(s + lo, hi - lo, pre, suf, NULL, NULL, NULL, &len); break;
    case MT_TITLE: m = u8_ct_totitle(s + lo, hi - lo, pre, suf, NULL, NULL, NULL, &len); break;
    default: m = u8_ct_tolower(s + lo, hi - lo, pre, suf, NULL, NULL, NULL, &len); break;
    }
    if (!m) {
        eval_raise(cx, CR_ENOMEM, at, "out of memory");
        return -1;
    }
    int rc = eval_put(cx, b, (const char *)m, len);
    free(m);
    return rc;
}

static val *str_case(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    if (eval_check_args(cx, a, 0, 0, NULL, eval_method_name(id), at) < 0) return NULL;
    const uint8_t *s = (const uint8_t *)self->u.str.s;
    size_t n = self->u.str.len;
    if (eval_walk(cx, 0, n, at) < 0 || eval_mem_room(cx, n + 1) < 0) return NULL;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (id == MT_UPPER || id == MT_LOWER) {
        if (n && case_piece(cx, &b, s, n, 0, n, id, at) < 0) goto fail;
        return eval_str_buf(cx, &b);
    }
    /* title(): a character after a cased one is lowered, any other titled; capitalize():
     * the first character titled, the rest lowered. Runs of lowered characters go whole. */
    int prev_cased = 0;
    size_t run = 0, i = 0;
    while (i < n) {
        ucs4_t c;
        int k = u8_mbtouc(&c, s + i, n - i);
        int lower = id == MT_CAPITALIZE ? i > 0 : prev_cased;
        if (!lower) {
            if ((run < i && case_piece(cx, &b, s, n, run, i, MT_LOWER, at) < 0) ||
                case_piece(cx, &b, s, n, i, i + (size_t)k, MT_TITLE, at) < 0)
                goto fail;
            run = i + (size_t)k;
        }
        prev_cased = uc_is_property_cased(c);
        i += (size_t)k;
    }
    if (run < n && case_piece(cx, &b, s, n, run, n, MT_LOWER, at) < 0) goto fail;
    return eval_str_buf(cx, &b);
fail:
    cr_buf_free(&b);
    return NULL;
}

static val *str_zfill(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    int64_t w;
    if (eval_check_args(cx, a, 1, 1, NULL, "zfill", at) < 0 || eval_int_of(cx, a->pos[0], &w) < 0)
        return NULL;
    size_t n = self->u.str.nch;
    if (w <= (int64_t)n) { EV_INCREF(self); return self; }
    if ((uint64_t)w > cx->lim->max_str_len)
        return eval_raise(cx, CR_ELIMIT, at, "string length limit (%llu characters)",
                          (unsigned long long)cx->lim->max_str_len);
    size_t pad = (size_t)w - n, bl = self->u.str.len;
    if (eval_mem_room(cx, bl + pad + 1) < 0) return NULL;
    char *p = malloc(bl + pad + 1);
    if (!p) return eval_raise(cx, CR_ENOMEM, at, "out of memory");
    const char *s = self->u.str.s;
    size_t sign = bl && (s[0] == '+' || s[0] == '-');
    memcpy(p, s, sign);
    memset(p + sign, '0', pad);
    memcpy(p + sign + pad, s + sign, bl - sign);
    p[bl + pad] = '\0';
    return eval_str_take(cx, p, bl + pad);
}

val *eval_str_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    switch (id) {
    case MT_FORMAT: return eval_str_format(cx, self, a, at);
    case MT_STRIP: case MT_LSTRIP: case MT_RSTRIP: return str_strip(cx, self, a, id, at);
    case MT_SPLIT: return str_split(cx, self, a, at);
    case MT_JOIN: return str_join(cx, self, a, at);
    case MT_REPLACE: return str_replace(cx, self, a, at);
    case MT_STARTSWITH: case MT_ENDSWITH: return str_affix(cx, self, a, id == MT_ENDSWITH, at);
    case MT_ZFILL: return str_zfill(cx, self, a, at);
    case MT_INDEX: case MT_COUNT: return eval_seq_index_count(cx, self, id, a, at);
    default: return str_case(cx, self, id, a, at);
    }
}
