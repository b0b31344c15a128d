/* parser/internal.h: what the files of parser/ share with each other (not with other modules). */
#ifndef CR_PARSER_INTERNAL_H
#define CR_PARSER_INTERNAL_H

#include <tree_sitter/api.h>

#include "parser/parser.h"

const TSLanguage *tree_sitter_python(void);

/* Lowers a tree-sitter-python CST that has no ERROR or MISSING node into m (m->root and the
 * `node:` reasons). CR_ESYNTAX for what tree-sitter accepts but CPython does not (Python 2
 * print, `<>`, `0777`); CR_ELIMIT past lim->max_depth; CR_ENOMEM. `src` is borrowed. */
cr_code parser_lower(const char *src, size_t len, TSNode root, const cr_limits *lim,
                     ir_module *m, cr_error *err);

/* Adds the whitelist reasons (imports, calls, attributes, methods) of m->root to m.
 * `src` gives the snippets. */
cr_code parser_whitelist(ir_module *m, const char *src, size_t len, cr_error *err);

#endif
