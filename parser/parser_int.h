/* parser/parser_int.h: what the files of parser/ share with each other (not with other modules). */
#ifndef CR_PARSER_INTERNAL_H
#define CR_PARSER_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "parser/parser.h"

const TSLanguage *tree_sitter_python(void);

/* The source scans of parse.c and fast.c run over every byte of every program: these keep
 * the common case (ASCII names, comments) to a few instructions a byte. */

/* An ASCII letter, digit or '_'. */
static inline int parser_ascii_word(unsigned char c)
{
    static const unsigned char word[256] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
        0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1,
        0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
    };
    return word[c];
}

/* The length of the longest prefix of s[0..n) whose bytes are all in 1..0x7F, eight bytes at
 * a time: (x - 0x01..) | x has a byte's top bit set iff some byte is 0 or above 0x7F (a byte
 * in 1..0x7F borrows nothing), and the bytes of the word that hit are then found one by one. */
static inline size_t parser_ascii_span(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, tops = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {   /* a whole source: four words a test */
        uint64_t x[4];
        memcpy(x, s + i, 32);
        if ((((x[0] - ones) | x[0]) | ((x[1] - ones) | x[1]) | ((x[2] - ones) | x[2]) |
             ((x[3] - ones) | x[3])) & tops)
            break;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (((x - ones) | x) & tops) break;
    }
    while (i < n && s[i] - 1u < 0x7Fu) i++;
    return i;
}

/* CPython's tokenizer keeps at most this many open brackets (MAXLEVEL): one more is its
 * SyntaxError, whatever our own depth limit. */
#define PY_MAXLEVEL 200

/* Buffers lowering reuses from one parse to the next, one set per thread (parse.c keeps it
 * with the thread's TSParser). All malloc'd; zeroed means empty. */
typedef struct {
    void *cst;              /* lower.c's flat copy of the CST */
    size_t cst_cap;
    void *ks, *is;          /* lower.c's scratch stacks */
    size_t ks_cap, is_cap;
    void *fast_toks, *fast_stk;  /* fast.c's token array and node stack */
    size_t fast_toks_cap, fast_stk_cap;
} parser_scratch;

/* Frees what sc holds and zeroes it. */
void parser_scratch_free(parser_scratch *sc);

/* Lowers a tree-sitter-python CST that has no ERROR or MISSING node into m (m->root and the
 * `node:` reasons). CR_ESYNTAX for what tree-sitter accepts but CPython does not (Python 2
 * print, `<>`, `0777`); CR_ELIMIT past lim->max_depth; CR_ENOMEM. `src` is borrowed; `sc`
 * is used and may grow (its buffers stay sc's). *split is UINT32_MAX, or, when the error is
 * a simple statement tree-sitter read on across a line break outside brackets (where
 * CPython's tokenizer ends the statement), the offset of that line's last token's end: the
 * caller may parse again with a ';' there, as CPython reads it. */
cr_code parser_lower(const char *src, size_t len, TSNode root, const cr_limits *lim,
                     parser_scratch *sc, ir_module *m, cr_error *err, uint32_t *split);

/* The fast path: a hand-written tokenizer and parser for the common subset of Python that
 * builds exactly the IR parser_lower() builds from tree-sitter's CST for the same source
 * (same nodes, fields and positions), without the whitelist. It declines (PARSER_FAST_DECLINED,
 * nothing in err, *out NULL) on anything it does not handle completely: every syntax error of
 * the grammar, every construct lowered as unsupported, every doubt; the tree-sitter path then
 * runs. What CPython rejects after its grammar is parser_validate()'s, on either path's IR. On
 * CR_OK *out is the caller's (ir_module_free()). *why, when not NULL, names the first reason
 * it declined (a static string, for coverage reports). `sc` keeps its buffers between parses.
 * The source must be UTF-8 without NUL bytes and within cr_limits.max_source; brackets
 * nested deeper than the pre-scan allows (max_depth, PY_MAXLEVEL) are declined. */
#define PARSER_FAST_DECLINED ((cr_code)0x7fff)
cr_code parser_fast(const char *src, size_t len, const cr_limits *lim, parser_scratch *sc,
                    ir_module **out, const char **why);

/* parser_parse_python() without the fast path: always tree-sitter (tests and benches compare
 * the two). */
cr_code parser_parse_python_ts(const char *src, size_t len, const cr_limits *lim,
                               ir_module **out, cr_error *err);

/* Adds the whitelist reasons (imports, calls, attributes, methods) of m->root to m.
 * `src` gives the snippets. */
cr_code parser_whitelist(ir_module *m, const char *src, size_t len, cr_error *err);

/* A set of names (strings borrowed, e.g. from an IR arena). Zeroed means empty; or it may
 * start in the caller's zeroed array (slot, cap a power of two, `own` 0), left for a
 * malloc'd one when it fills: a short program's names then need no allocation. */
typedef struct {
    const char **slot;
    size_t cap, n;
    int own;               /* slot is malloc'd (freed by parser_nameset_free) */
} parser_nameset;

int parser_nameset_has(const parser_nameset *set, const char *name);
cr_code parser_nameset_add(parser_nameset *set, const char *name);   /* CR_ENOMEM */
void parser_nameset_free(parser_nameset *set);

/* 1-based line and byte column of src[off] (a scan from the start). */
void parser_position_of(const char *src, size_t off, int *line, int *col);

/* Offsets of a source's lines, to turn an IR node's line:col back into a byte offset. */
typedef struct {
    const char *src;
    size_t len;
    uint32_t *start;        /* malloc'd on the first parser_lines_offset(); NULL: not yet */
    size_t n;
} parser_lines;

/* The offset of line:col (1-based) in l->src, at most l->len; l->len when out of range or
 * when there is no memory for the table (*nomem set). */
size_t parser_lines_offset(parser_lines *l, int line, int col, int *nomem);

/* What CPython does after its grammar accepted the program, on the IR either path built:
 * identifiers to NFKC, and the SyntaxErrors its parser actions, symbol table and compiler
 * raise (misordered or repeated parameters and arguments, `global` after a use, ...).
 * CR_ESYNTAX with err at CPython's line:col and message; CR_ENOMEM; CR_ELIMIT. */
cr_code parser_validate(ir_module *m, const char *src, size_t len, cr_error *err);

/* A PEP 263 coding cookie on line 1 or 2 (`# -*- coding: latin-1 -*-`): CPython decodes the
 * source with it, so what it runs is not what we parsed. */
typedef struct {
    char name[32];          /* as CPython normalises it ("iso-8859-1" for latin-1) */
    int line, col;          /* of the comment */
    const char *text;       /* the comment, borrowed from the source */
    size_t text_len;
} parser_cookie;

/* 1 when src has a cookie naming anything but UTF-8 (*ck filled); 0 when none or UTF-8; -1
 * (err set, CR_ESYNTAX) for CPython's "encoding problem: X with BOM". */
int parser_coding(const char *src, size_t len, parser_cookie *ck, cr_error *err);

#endif
