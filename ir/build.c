/* ir/build.c: the node builders the front ends share (see build.h). */
#include "ir/build.h"

#include <string.h>

ir_node *ir_node_span(ir_module *m, ir_kind kind, ir_span at, uint32_t n)
{
    ir_node *node = ir_node_new(m, kind, at.line, at.col, n);
    if (node) {
        node->end_line = at.end_line;
        node->end_col = at.end_col;
    }
    return node;
}

ir_node *ir_node_text(ir_module *m, ir_kind kind, ir_span at, uint32_t n, const char *s,
                      size_t len)
{
    ir_node *node = ir_node_span(m, kind, at, n);
    if (!node || !(node->text = cr_arena_strndup(&m->arena, s, len))) return NULL;
    node->len = (uint32_t)len;
    return node;
}

ir_node *ir_str_take(ir_module *m, ir_span at, cr_buf *b)
{
    ir_node *n = ir_node_text(m, IR_STR, at, 0, b->p ? b->p : "", b->len);
    cr_buf_reset(b);
    return n;
}

ir_node *ir_binary(ir_module *m, ir_kind kind, int op, ir_node *l, ir_span xl, ir_node *r,
                   ir_span xr)
{
    ir_span at = { xl.line, xl.col, xr.end_line, xr.end_col };
    ir_node *n = ir_node_span(m, kind, at, 2);
    if (!n) return NULL;
    n->op = (uint16_t)op;
    n->kid[0] = l;
    n->kid[1] = r;
    return n;
}

ir_node *ir_prefix(ir_module *m, ir_kind kind, int op, int line, int col, ir_node *kid,
                   ir_span xk)
{
    ir_node *n = ir_node_span(m, kind, (ir_span){ line, col, xk.end_line, xk.end_col }, 1);
    if (!n) return NULL;
    n->op = (uint16_t)op;
    n->kid[0] = kid;
    return n;
}

/* ---- literals --------------------------------------------------------------------------- */

int ir_int_leading_zeros(const char *s, size_t n)
{
    if (n < 2 || s[0] != '0' || ((s[1] < '0' || s[1] > '9') && s[1] != '_')) return 0;
    for (size_t i = 1; i < n; i++)
        if (s[i] != '0' && s[i] != '_') return 1;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static cr_code put_utf8(cr_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) { u[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { u[0] = (char)(0xC0 | cp >> 6); u[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    return cr_buf_put(b, u, n);
}

cr_code ir_decode_string(cr_buf *b, const char *s, size_t n, int raw, int fmt, int *bad)
{
    cr_code rc = CR_OK;
    size_t i = 0;
    while (i < n && rc == CR_OK) {
        char c = s[i];
        if (c == '\r') {
            rc = cr_buf_putc(b, '\n');
            i += (i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
            continue;
        }
        if (fmt && (c == '{' || c == '}') && i + 1 < n && s[i + 1] == c) {
            rc = cr_buf_putc(b, c);
            i += 2;
            continue;
        }
        if (c != '\\' || raw || i + 1 >= n) {
            rc = cr_buf_putc(b, c);
            i++;
            continue;
        }
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case '\n': break;
        case '\r': if (i < n && s[i] == '\n') i++; break;
        case '\\': rc = cr_buf_putc(b, '\\'); break;
        case '\'': rc = cr_buf_putc(b, '\''); break;
        case '"': rc = cr_buf_putc(b, '"'); break;
        case 'a': rc = cr_buf_putc(b, '\a'); break;
        case 'b': rc = cr_buf_putc(b, '\b'); break;
        case 'f': rc = cr_buf_putc(b, '\f'); break;
        case 'n': rc = cr_buf_putc(b, '\n'); break;
        case 'r': rc = cr_buf_putc(b, '\r'); break;
        case 't': rc = cr_buf_putc(b, '\t'); break;
        case 'v': rc = cr_buf_putc(b, '\v'); break;
        case 'x': case 'u': case 'U': {
            int want = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t cp = 0;
            int k = 0;
            for (; k < want && i < n && hexval(s[i]) >= 0; k++, i++) cp = cp * 16 + (uint32_t)hexval(s[i]);
            if (k < want || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) *bad = 1;
            else rc = put_utf8(b, cp);
            break;
        }
        case 'N':
            *bad = 1;
            break;
        default:
            if (e >= '0' && e <= '7') {
                uint32_t cp = (uint32_t)(e - '0');
                for (int k = 1; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++, i++)
                    cp = cp * 8 + (uint32_t)(s[i] - '0');
                rc = put_utf8(b, cp);
            } else {
                /* CPython keeps unknown escapes as written (with a warning). */
                if ((rc = cr_buf_putc(b, '\\')) == CR_OK) rc = cr_buf_putc(b, e);
            }
        }
    }
    return rc;
}

/* ---- the starred rebuild ---------------------------------------------------------------- */

/* The kid of n that starts where n does (its leftmost operand), or NULL. */
static ir_node *leftmost_kid(const ir_node *n, int line, int col, uint32_t *at)
{
    for (uint32_t i = 0; i < n->n; i++)
        if (n->kid[i] && n->kid[i]->line == line && n->kid[i]->col == col) {
            *at = i;
            return n->kid[i];
        }
    return NULL;
}

ir_node *ir_starred_whole(ir_node *n)
{
    int line = n->line, col = n->col;
    ir_node *parent = NULL, *c = n, *next;
    uint32_t at = 0, pat = 0;
    while (c->kind != IR_STARRED && (next = leftmost_kid(c, line, col, &at))) {
        parent = c;
        pat = at;
        c = next;
    }
    if (c->kind != IR_STARRED || !parent || c->n != 1 || !c->kid[0]) return n;
    ir_node *g = c->kid[0];
    parent->kid[pat] = g;
    /* Every node on the way down now starts where g does. */
    for (ir_node *k = n; k && k != g; k = next) {
        next = leftmost_kid(k, line, col, &at);
        k->line = g->line;
        k->col = g->col;
    }
    c->kid[0] = n;
    c->line = line;
    c->col = col;
    c->end_line = n->end_line;
    c->end_col = n->end_col;
    return c;
}
