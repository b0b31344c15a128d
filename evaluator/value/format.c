/* evaluator/value/format.c: string formatting: format() and a value's __format__ spec, str.format()
 * and printf-style `%`. */
#include "evaluator/value/value.h"

#include <stdio.h>
#include <string.h>
#include <unistr.h>

static int format_error(eval_cx *cx, cr_code rc, cr_error *e, const ir_node *at)
{
    if (rc == CR_ENOMEM) { eval_raise(cx, CR_ENOMEM, at, "out of memory"); return -1; }
    eval_raise(cx, rc, at, "%s", e->message[0] ? e->message : "Invalid format specifier");
    return -1;
}

/* format() of inf, -inf or nan: the spec is checked as a float's (num_format on 0 raises
 * what CPython does), then sign, fill, align and width apply to "inf" or "nan" (upper case
 * for E F G, a '%' after it for %); precision and grouping have nothing to act on. */
static cr_code format_nonfinite(eval_cx *cx, cr_buf *b, val *v, const char *spec, size_t len,
                                cr_error *e)
{
    cr_buf tmp;
    mpq_t z;
    cr_buf_init(&tmp, cx->lim->max_str_len);
    mpq_init(z);
    cr_code rc = num_format(&tmp, z, 1, spec, len, &cx->nc, e);
    mpq_clear(z);
    cr_buf_free(&tmp);
    if (rc != CR_OK) return rc;
    size_t i = 0, k = 1, fl = 1;
    const char *fill = " ";
    char align = 0, sign = 0, t = len ? spec[len - 1] : 0;
    while (k < len && ((unsigned char)spec[k] & 0xC0) == 0x80) k++;
    if (k < len && strchr("<>=^", spec[k])) {
        fill = spec;
        fl = k;
        align = spec[k];
        i = k + 1;
    } else if (len && strchr("<>=^", spec[0])) {
        align = spec[i++];
    }
    if (i < len && strchr("+- ", spec[i])) sign = spec[i++];
    while (i < len && (spec[i] == 'z' || spec[i] == '#')) i++;
    if (i < len && spec[i] == '0' && !align) {
        fill = "0";
        align = '=';
    }
    size_t width = 0;
    for (; i < len && spec[i] >= '0' && spec[i] <= '9'; i++) width = width * 10 + (size_t)(spec[i] - '0');
    char body[8];
    snprintf(body, sizeof body, "%s%s%s",
             v->sub == INF_NEG ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "",
             !strchr("EFG", t) ? (IS_NAN(v) ? "nan" : "inf") : IS_NAN(v) ? "NAN" : "INF",
             t == '%' ? "%" : "");
    size_t n = strlen(body), pad = width > n ? width - n : 0;
    size_t before = align == '<' ? 0 : align == '^' ? pad / 2 : pad;
    size_t sl = align == '=' && (body[0] < 'A') ? 1 : 0;   /* '=': the sign goes before the fill */
    rc = cr_buf_put(b, body, sl);
    for (size_t j = 0; j < before && rc == CR_OK; j++) rc = cr_buf_put(b, fill, fl);
    if (rc == CR_OK) rc = cr_buf_put(b, body + sl, n - sl);
    for (size_t j = before; j < pad && rc == CR_OK; j++) rc = cr_buf_put(b, fill, fl);
    return rc;
}

int eval_format(eval_cx *cx, cr_buf *b, val *v, const char *spec, size_t len, const ir_node *at)
{
    cr_error e;
    cr_code rc;
    memset(&e, 0, sizeof e);
    if (v->kind == V_OBJ && v->u.obj.cls->format) return v->u.obj.cls->format(cx, b, v, spec, len, at);
    if (len == 0) return eval_repr(cx, b, v, 1);
    if (IS_NUM(v)) {
        /* an inexact value rounds as it prints; the text it makes carries the flag, so the
         * run is not marked */
        rc = num_format(b, eval_shown(cx, v, 0),
                        v->kind == V_FLOAT ? 1 | (v->flags & VF_NEGZ ? NUM_NEG_ZERO : 0) : 0,
                        spec, len, &cx->nc, &e);
        return rc == CR_OK ? 0 : format_error(cx, rc, &e, at);
    }
    if (v->kind == V_STR) {
        rc = num_format_str(b, v->u.str.s, v->u.str.len, spec, len, &e);
        return rc == CR_OK ? 0 : format_error(cx, rc, &e, at);
    }
    if (v->kind == V_INF) {
        rc = format_nonfinite(cx, b, v, spec, len, &e);
        return rc == CR_OK ? 0 : format_error(cx, rc, &e, at);
    }
    eval_raise(cx, CR_EPY_TYPE, at, "unsupported format string passed to %s.__format__",
               eval_type_name(v));
    return -1;
}

/* KeyError(name) for a replacement field naming no argument. */
static void field_key_error(eval_cx *cx, const char *f, size_t nl, const ir_node *at)
{
    val *k = eval_str(cx, f, nl);
    if (k) eval_key_error(cx, k, at);
    eval_decref(cx, k);
}

/* One replacement field of str.format: "name!conv:spec" between the braces. */
static int format_one(eval_cx *cx, cr_buf *b, const char *f, size_t n, eval_args *a,
                      size_t *autoi, int *mode, const ir_node *at, int depth)
{
    size_t i = 0;
    while (i < n && f[i] != '!' && f[i] != ':' && f[i] != '[' && f[i] != '.') i++;
    size_t nl = i;
    val *v = NULL;
    if (nl == 0) {
        if (*mode == 2) {
            eval_raise(cx, CR_EPY_VALUE, at,
                       "cannot switch from manual field specification to automatic field "
                       "numbering");
            return -1;
        }
        *mode = 1;
        if (*autoi >= a->npos) {
            eval_raise(cx, CR_EPY_INDEX, at,
                       "Replacement index %zu out of range for positional args tuple", *autoi);
            return -1;
        }
        v = a->pos[(*autoi)++];
    } else if (f[0] >= '0' && f[0] <= '9') {
        if (*mode == 1) {
            eval_raise(cx, CR_EPY_VALUE, at,
                       "cannot switch from automatic field numbering to manual field "
                       "specification");
            return -1;
        }
        *mode = 2;
        size_t k = 0;
        for (size_t j = 0; j < nl; j++) {
            if (f[j] < '0' || f[j] > '9' || k > 100000000) {
                field_key_error(cx, f, nl, at);
                return -1;
            }
            k = k * 10 + (size_t)(f[j] - '0');
        }
        if (k >= a->npos) {
            eval_raise(cx, CR_EPY_INDEX, at,
                       "Replacement index %zu out of range for positional args tuple", k);
            return -1;
        }
        v = a->pos[k];
    } else {
        for (size_t j = 0; j < a->nkw && !v; j++)
            if (strlen(a->kwname[j]) == nl && memcmp(a->kwname[j], f, nl) == 0) v = a->kw[j];
        if (!v) {
            field_key_error(cx, f, nl, at);
            return -1;
        }
    }
    EV_INCREF(v);
    /* v[key] and v[index] lookups, as "{0[1]}" and "{d[name]}" */
    while (i < n && f[i] == '[') {
        size_t j = i + 1;
        while (j < n && f[j] != ']') j++;
        if (j >= n) {
            eval_decref(cx, v);
            eval_raise(cx, CR_EPY_VALUE, at, "expected '}' before end of string");
            return -1;
        }
        val *k;
        int digits = j > i + 1;
        for (size_t q = i + 1; q < j; q++) digits &= f[q] >= '0' && f[q] <= '9';
        if (digits && j - i - 1 < 15) {
            char tmp[16];
            memcpy(tmp, f + i + 1, j - i - 1);
            tmp[j - i - 1] = '\0';
            k = eval_int_si(cx, atol(tmp));
        } else {
            k = eval_str(cx, f + i + 1, j - i - 1);
        }
        val *nv = NULL;
        if (k) {
            if (v->kind == V_DICT) {
                int err;
                nv = eval_dict_get(cx, v, k, &err);
                if (nv) EV_INCREF(nv);
                else if (!err) eval_key_error(cx, k, at);
            } else if ((v->kind == V_LIST || v->kind == V_TUPLE) && k->kind == V_INT &&
                       mpz_fits_ulong_p(mpq_numref(k->u.q)) &&
                       mpz_get_ui(mpq_numref(k->u.q)) < v->u.seq.len) {
                nv = v->u.seq.it[mpz_get_ui(mpq_numref(k->u.q))];
                EV_INCREF(nv);
            } else {
                eval_raise(cx, CR_EPY_INDEX, at, "%s index out of range", eval_type_name(v));
            }
        }
        eval_decref(cx, k);
        eval_decref(cx, v);
        if (!(v = nv)) return -1;
        i = j + 1;
    }
    if (i < n && f[i] == '.') {
        eval_decref(cx, v);
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "attribute lookup in format fields is not supported");
        return -1;
    }
    if (i < n && f[i] == '!') {
        if (i + 1 >= n || (f[i + 1] != 'r' && f[i + 1] != 's' && f[i + 1] != 'a')) {
            eval_decref(cx, v);
            eval_raise(cx, CR_EPY_VALUE, at, "Unknown conversion specifier %c",
                       i + 1 < n ? f[i + 1] : '?');
            return -1;
        }
        val *s = eval_to_str(cx, v, f[i + 1] == 'a' ? EVAL_ASCII : f[i + 1] == 'r');
        eval_decref(cx, v);
        if (!(v = s)) return -1;
        i += 2;
    }
    const char *spec = "";
    size_t sl = 0;
    cr_buf sb;
    cr_buf_init(&sb, 4096);
    if (i < n && f[i] == ':') {
        spec = f + i + 1;
        sl = n - i - 1;
        if (memchr(spec, '{', sl)) {
            /* nested fields in the spec: "{:{w}.{p}f}" */
            if (depth > 1) {
                eval_decref(cx, v);
                eval_raise(cx, CR_EPY_VALUE, at, "Max string recursion exceeded");
                return -1;
            }
            for (size_t j = 0; j < sl;) {
                if (spec[j] == '{') {
                    size_t q = j + 1;
                    while (q < sl && spec[q] != '}') q++;
                    if (format_one(cx, &sb, spec + j + 1, q - j - 1, a, autoi, mode, at,
                                   depth + 1) < 0) {
                        cr_buf_free(&sb);
                        eval_decref(cx, v);
                        return -1;
                    }
                    j = q + 1;
                } else {
                    cr_buf_putc(&sb, spec[j++]);
                }
            }
            spec = sb.p ? sb.p : "";
            sl = sb.len;
        }
    } else if (i < n) {
        eval_decref(cx, v);
        eval_raise(cx, CR_EPY_VALUE, at, "expected ':' after conversion specifier");
        return -1;
    }
    int rc = eval_format(cx, b, v, spec, sl, at);
    cr_buf_free(&sb);
    eval_decref(cx, v);
    return rc;
}

val *eval_str_format(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    const char *s = self->u.str.s;
    size_t n = self->u.str.len, i = 0, autoi = 0;
    int mode = 0, inexact = 0;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    for (size_t k = 0; k < a->npos + a->nkw; k++) {
        int r = eval_inexact(cx, k < a->npos ? a->pos[k] : a->kw[k - a->npos]);
        if (r < 0) goto fail;
        inexact |= r;
    }
    while (i < n) {
        char c = s[i];
        if (c == '{' && i + 1 < n && s[i + 1] == '{') { cr_buf_putc(&b, '{'); i += 2; continue; }
        if (c == '}' && i + 1 < n && s[i + 1] == '}') { cr_buf_putc(&b, '}'); i += 2; continue; }
        if (c == '}') {
            eval_raise(cx, CR_EPY_VALUE, at, "Single '}' encountered in format string");
            goto fail;
        }
        if (c != '{') {
            size_t j = i;
            while (j < n && s[j] != '{' && s[j] != '}') j++;
            if (eval_put(cx, &b, s + i, j - i) < 0) goto fail;
            i = j;
            continue;
        }
        size_t j = i + 1;
        int lvl = 1;
        while (j < n && lvl) {
            if (s[j] == '{') lvl++;
            else if (s[j] == '}') lvl--;
            if (lvl) j++;
        }
        if (j >= n) {
            eval_raise(cx, CR_EPY_VALUE, at, "%s",
                       i + 1 >= n ? "Single '{' encountered in format string"
                                  : "expected '}' before end of string");
            goto fail;
        }
        if (eval_count(cx, 1, at) < 0 ||
            format_one(cx, &b, s + i + 1, j - i - 1, a, &autoi, &mode, at, 0) < 0)
            goto fail;
        i = j + 1;
    }
    return eval_str_buf_from(cx, &b, inexact);
fail:
    cr_buf_free(&b);
    return NULL;
}

/* A `*` width or precision of "%*.*f" % (w, p, x): the next argument, an int. 0, or -1
 * raised. */
static int percent_star(eval_cx *cx, val **av, size_t na, size_t *ai, int64_t *out,
                        const ir_node *at)
{
    if (*ai >= na) {
        eval_raise(cx, CR_EPY_TYPE, at, "not enough arguments for format string");
        return -1;
    }
    return eval_ssize_of(cx, av[(*ai)++], "* wants int", out, at);
}

/* %c's argument as a one-character string (new reference), or NULL raised. */
static val *percent_char(eval_cx *cx, val *v, const ir_node *at)
{
    if (v->kind == V_STR && v->u.str.nch == 1) {
        EV_INCREF(v);
        return v;
    }
    if (v->kind != V_INT && v->kind != V_BOOL)
        return eval_raise(cx, CR_EPY_TYPE, at, "%%c requires int or char");
    mpz_srcptr z = mpq_numref(v->u.q);
    if (mpz_sgn(z) < 0 || mpz_cmp_ui(z, 0x10FFFF) > 0)
        return eval_raise(cx, CR_EPY_OVERFLOW, at, "%%c arg not in range(0x110000)");
    uint8_t u[6];
    int k = u8_uctomb(u, (ucs4_t)mpz_get_ui(z), sizeof u);
    return k > 0 ? eval_str(cx, (const char *)u, (size_t)k)
                 : eval_raise(cx, CR_EPY_VALUE, at, "%%c arg is a surrogate");
}

/* printf-style "%.2f" % x, translated to format specs. `args` that can be subscripted (a
 * dict, list or range, as CPython's mapping test) is one argument, and `%(key)s` takes
 * args[key]; after a key the one argument left is that value. */
val *eval_str_percent(eval_cx *cx, val *fmt, val *args, const ir_node *at)
{
    const char *s = fmt->u.str.s;
    size_t n = fmt->u.str.len, i = 0, ai = 0;
    val **av = &args, *keyed = NULL, *conv = NULL;
    size_t na = 1;
    int mapping = args->kind == V_DICT || args->kind == V_LIST || args->kind == V_RANGE;
    int inexact = eval_inexact(cx, args);
    if (inexact < 0) return NULL;
    if (args->kind == V_TUPLE) {
        av = args->u.seq.it;
        na = args->u.seq.len;
    }
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    while (i < n) {
        if (s[i] != '%') {
            size_t j = i;
            while (j < n && s[j] != '%') j++;
            if (eval_put(cx, &b, s + i, j - i) < 0) goto fail;
            i = j;
            continue;
        }
        i++;
        if (i < n && s[i] == '%') { cr_buf_putc(&b, '%'); i++; continue; }
        char spec[64], flags[8];
        size_t nf = 0, sp = 0;
        int64_t width = -1, prec = -1;
        if (i < n && s[i] == '(') {
            size_t ks = ++i, depth = 1;
            if (!mapping) {
                eval_raise(cx, CR_EPY_TYPE, at, "format requires a mapping");
                goto fail;
            }
            for (; i < n && depth; i++) depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
            if (depth) {
                eval_raise(cx, CR_EPY_VALUE, at, "incomplete format key");
                goto fail;
            }
            val *key = eval_str(cx, s + ks, i - 1 - ks);
            if (!key) goto fail;
            eval_decref(cx, keyed);
            keyed = eval_get_item(cx, args, key, at);
            eval_decref(cx, key);
            if (!keyed) goto fail;
            av = &keyed;
            na = 1;
            ai = 0;
        }
        while (i < n && strchr("-+ 0#", s[i]) && nf < sizeof flags - 1) flags[nf++] = s[i++];
        flags[nf] = '\0';
        size_t ws = i;
        if (i < n && s[i] == '*') {
            if (percent_star(cx, av, na, &ai, &width, at) < 0) goto fail;
            i++;
        } else {
            while (i < n && s[i] >= '0' && s[i] <= '9') i++;
            if (i - ws > 6) width = 10000000;   /* past the format's limit, which raises */
            else if (i > ws) width = atol(s + ws);
        }
        if (i < n && s[i] == '.') {
            size_t ps = ++i;
            if (i < n && s[i] == '*') {
                if (percent_star(cx, av, na, &ai, &prec, at) < 0) goto fail;
                i++;
            } else {
                while (i < n && s[i] >= '0' && s[i] <= '9') i++;
                prec = i - ps > 6 ? 10000000 : atol(s + ps);
            }
            if (prec < 0) prec = 0;
        }
        while (i < n && strchr("hlL", s[i])) i++;   /* C's length modifiers: ignored */
        if (i >= n) {
            eval_raise(cx, CR_EPY_VALUE, at, "incomplete format");
            goto fail;
        }
        char t = s[i++];
        if (ai >= na) {
            eval_raise(cx, CR_EPY_TYPE, at, "not enough arguments for format string");
            goto fail;
        }
        val *v = av[ai++];
        int left = strchr(flags, '-') != NULL || width < -1;
        if (width < -1) width = width < -10000000 ? 10000000 : -width;   /* "%*d" % (-5, x) */
        if (left) spec[sp++] = '<';
        else if (t == 's' || t == 'r' || t == 'a' || t == 'c') spec[sp++] = '>';
        if (strchr(flags, '+')) spec[sp++] = '+';
        else if (strchr(flags, ' ')) spec[sp++] = ' ';
        if (strchr(flags, '#')) spec[sp++] = '#';
        if (strchr(flags, '0') && !left && !strchr("srac", t)) spec[sp++] = '0';
        /* a width or precision past 10^7 is cut there: the format's own limit raises */
        if (width > 10000000) width = 10000000;
        if (prec > 10000000) prec = 10000000;
        if (width >= 0) sp += (size_t)snprintf(spec + sp, 16, "%ld", (long)width);
        if (prec >= 0 && t != 'c') sp += (size_t)snprintf(spec + sp, 16, ".%ld", (long)prec);
        int rc;
        if (t == 's' || t == 'r' || t == 'a' || t == 'c') {
            val *str = t == 'c' ? percent_char(cx, v, at)
                                : eval_to_str(cx, v, t == 'a' ? EVAL_ASCII : t == 'r');
            if (!str) goto fail;
            rc = eval_format(cx, &b, str, spec, sp, at);
            eval_decref(cx, str);
        } else if (strchr("dieEfFgGxXo", t)) {
            int want_int = strchr("xXo", t) != NULL;
            if (v->kind == V_OBJ && v->u.obj.cls->builtin && !want_int) {
                /* a number-like object (a Decimal) formats as its float(), as in CPython */
                eval_args one = { .pos = &v, .npos = 1 };
                eval_decref(cx, conv);
                conv = v->u.obj.cls->builtin(cx, B_FLOAT, v, &one, at);
                if (cx->err.code != CR_OK) goto fail;
                if (conv) v = conv;
            }
            if (!IS_REAL(v) || (want_int && v->kind != V_INT && v->kind != V_BOOL)) {
                eval_raise(cx, CR_EPY_TYPE, at, "%%%c format: %s is required, not %s", t,
                           strchr("xXo", t) ? "an integer" : "a real number", eval_type_name(v));
                goto fail;
            }
            if ((t == 'd' || t == 'i') && v->kind == V_INF) {
                eval_inf_error(cx, v, at);
                goto fail;
            }
            if (strchr("dixXo", t)) {
                val *iv = eval_num(cx, V_INT);
                if (!iv) goto fail;
                num_trunc(mpq_numref(iv->u.q), eval_decided(cx, v, 0));
                mpz_set_ui(mpq_denref(iv->u.q), 1);
                spec[sp++] = t == 'i' ? 'd' : t;
                rc = eval_format(cx, &b, iv, spec, sp, at);
                eval_decref(cx, iv);
            } else {
                if (strchr("eEfFgG", t) && prec < 0) {
                    memcpy(spec + sp, ".6", 2);
                    sp += 2;
                }
                spec[sp++] = t;
                if (v->kind == V_INF) {
                    rc = eval_format(cx, &b, v, spec, sp, at);
                } else {
                    val *fv = eval_num(cx, V_FLOAT);
                    if (!fv) goto fail;
                    mpq_set(fv->u.q, v->u.q);
                    rc = eval_format(cx, &b, fv, spec, sp, at);
                    eval_decref(cx, fv);
                }
            }
        } else {
            eval_raise(cx, CR_EPY_VALUE, at, "unsupported format character '%c' (0x%x) at index %zu",
                       t, (unsigned char)t, i - 1);
            goto fail;
        }
        if (rc < 0) goto fail;
    }
    if (ai < na && !mapping) {
        eval_raise(cx, CR_EPY_TYPE, at, "not all arguments converted during string formatting");
        goto fail;
    }
    eval_decref(cx, keyed);
    eval_decref(cx, conv);
    return eval_str_buf_from(cx, &b, inexact);
fail:
    eval_decref(cx, keyed);
    eval_decref(cx, conv);
    cr_buf_free(&b);
    return NULL;
}
