/* parser/internal.h: what the files of parser/ share with each other (not with other modules). */
#ifndef CR_PARSER_INTERNAL_H
#define CR_PARSER_INTERNAL_H

#include <tree_sitter/api.h>

#include "parser/parser.h"

const TSLanguage *tree_sitter_python(void);

/* Buffers lowering reuses from one parse to the next, one set per thread (parse.c keeps it
 * with the thread's TSParser). All malloc'd; zeroed means empty. */
typedef struct {
    void *cst;              /* lower.c's flat copy of the CST */
    size_t cst_cap;
    void *ks, *is;          /* lower.c's scratch stacks */
    size_t ks_cap, is_cap;
} parser_scratch;

/* Frees what sc holds and zeroes it. */
void parser_scratch_free(parser_scratch *sc);

/* Lowers a tree-sitter-python CST that has no ERROR or MISSING node into m (m->root and the
 * `node:` reasons). CR_ESYNTAX for what tree-sitter accepts but CPython does not (Python 2
 * print, `<>`, `0777`); CR_ELIMIT past lim->max_depth; CR_ENOMEM. `src` is borrowed; `sc`
 * is used and may grow (its buffers stay sc's). */
cr_code parser_lower(const char *src, size_t len, TSNode root, const cr_limits *lim,
                     parser_scratch *sc, ir_module *m, cr_error *err);

/* Adds the whitelist reasons (imports, calls, attributes, methods) of m->root to m.
 * `src` gives the snippets. */
cr_code parser_whitelist(ir_module *m, const char *src, size_t len, cr_error *err);

#endif
