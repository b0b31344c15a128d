/* parser/parser.h: Python source → IR through tree-sitter, with the whitelist check. */
#ifndef CR_PARSER_H
#define CR_PARSER_H

#include "common/common.h"
#include "ir/ir.h"

/* Parses and lowers Python source.
 * - CR_OK: *out is the caller's (ir_module_free()). (*out)->nreasons == 0 means every node is
 *   inside the in-process subset; otherwise each reason names a construct that is not, with
 *   its position, and all of them are collected, not only the first.
 * - CR_ESYNTAX: err holds the position of the first syntax error tree-sitter found (an ERROR
 *   or MISSING node) and what was expected or found there; *out is NULL.
 * - CR_ELIMIT: source larger than lim->max_source, or nested deeper than lim->max_depth.
 * `src` is only borrowed. It need not be NUL-terminated; invalid UTF-8 is a syntax error. */
cr_code parser_parse_python(const char *src, size_t len, const cr_limits *lim,
                            ir_module **out, cr_error *err);

/* The grammar's identity for audit records: "tree-sitter-python 0.23.6 (ABI 14)". */
const char *parser_grammar_version(void);

/* What the whitelist lets in is ir/subset.def's rows: the evaluator implements
 * exactly those, from the same rows. */

/* Every name in CPython 3.11's builtins module (dir(builtins)), sorted, NULL-terminated. A call
 * of a name that is none of these and that the program never binds is left to the evaluator
 * (NameError); a call of one of these outside the registry's builtins is a `call:` reason. */
extern const char *const parser_python_builtins[];

#endif
