/* ir/ir.h: the IR both front ends (Python via tree-sitter, the FinQA DSL) lower to and
 * the evaluator consumes. It is a plain abstract syntax tree, allocated in the module's arena:
 * nodes are never freed one by one.
 *
 * Every node has a 1-based line and col (col counts bytes of the line, as tree-sitter does,
 * plus one). Children live in kid[0..n-1]; a child that Python makes optional (an `else`, a
 * default value, a slice bound) is present as NULL. The layout of each kind is given below. */
#ifndef CR_IR_H
#define CR_IR_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef enum {
    /* ---- statements ---- */
    IR_MODULE,     /* kid[]: statements */
    IR_BLOCK,      /* kid[]: statements (a suite: a body of if/for/while/def) */
    IR_EXPR,       /* kid[0]: expression evaluated for effect (its value is the
                    * "last expression statement" of the final-value rule) */
    IR_ASSIGN,     /* kid[0..n-2]: targets (a = b = v has two), kid[n-1]: value.
                    * A target is NAME, TUPLE/LIST of targets, SUBSCRIPT, STARRED (in a
                    * tuple target) or ATTR */
    IR_AUGASSIGN,  /* op: ir_binop; kid[0]: target (NAME or SUBSCRIPT), kid[1]: value */
    IR_IF,         /* kid[0]: test, kid[1]: BLOCK, kid[2]: else: BLOCK, IF (for elif) or NULL */
    IR_FOR,        /* kid[0]: target, kid[1]: iterable, kid[2]: BLOCK, kid[3]: else BLOCK or NULL */
    IR_WHILE,      /* kid[0]: test, kid[1]: BLOCK, kid[2]: else BLOCK or NULL */
    IR_BREAK,
    IR_CONTINUE,
    IR_PASS,
    IR_RETURN,     /* kid[0]: value or NULL */
    IR_FUNCDEF,    /* text: name; kid[0]: PARAMS; kid[1]: BLOCK */
    IR_IMPORT,     /* `import a.b as c`: text: module ("math"), aux: bound name ("math" or the
                    * alias). One IR_IMPORT per imported module. */
    IR_IMPORT_FROM,/* `from m import x as y`: text: module, aux: bound name (y), kid[0]: NAME
                    * of the imported name (x). One node per imported name. */
    IR_RAISE,      /* kid[0]: exception expression (a CALL of a class, or a NAME) or NULL;
                    * kid[1]: the `from` cause or NULL */
    IR_ASSERT,     /* kid[0]: test, kid[1]: message or NULL */
    IR_DEL,        /* kid[]: targets */
    IR_GLOBAL,     /* text of each name in kid[] (NAME nodes) */
    IR_TRY,        /* kid[0]: body BLOCK; kid[1..n-3]: EXCEPT handlers in order; kid[n-2]: else
                    * BLOCK or NULL; kid[n-1]: finally BLOCK or NULL */
    IR_EXCEPT,     /* kid[0]: class expression or NULL (bare `except:`); kid[1]: NAME bound by
                    * `as` or NULL; kid[2]: BLOCK */
    IR_WITH,       /* kid[0..n-2]: WITHITEM in order (`with a, b:` nests b in a); kid[n-1]:
                    * BLOCK */
    IR_WITHITEM,   /* kid[0]: context manager expression; kid[1]: `as` target or NULL */
    IR_UNSUPPORTED,/* a construct outside the subset; its reason is in the module's list.
                    * The evaluator never sees a module that contains one. text: what it
                    * is ("class_definition", "bytes", "async"); kid[]: the statements and
                    * expressions lowered from inside it, so the whitelist sees them too */

    /* ---- expressions ---- */
    IR_NUM,        /* text: the literal as written ("1_000", "0.1", "1e-3", "0x1F");
                    * flags: IRF_FLOAT when Python would make it a float */
    IR_STR,        /* text/len: the decoded value (UTF-8; adjacent literals concatenated) */
    IR_FSTRING,    /* kid[]: parts, each STR or FORMAT */
    IR_FORMAT,     /* a replacement field: kid[0]: expression, kid[1]: spec (FSTRING, so
                    * nested fields work) or NULL; op: conversion 'r', 's', 'a' or 0; any
                    * other letter as written, '}' when something but `:` or `}` follows it
                    * (both CPython's SyntaxErrors, parser_validate()'s to report) */
    IR_NAME,       /* text: identifier */
    IR_BOOL,       /* op: 0 False, 1 True */
    IR_NONE,
    IR_BINOP,      /* op: ir_binop; kid[0], kid[1] */
    IR_UNARY,      /* op: ir_unop; kid[0] */
    IR_BOOLOP,     /* op: IR_AND or IR_OR; kid[0], kid[1] */
    IR_COMPARE,    /* kid[0..n-1]: operands; cmp[0..n-2]: ir_cmpop between them */
    IR_IFEXP,      /* `body if test else orelse`: kid[0]: test, kid[1]: body, kid[2]: orelse */
    IR_CALL,       /* kid[0]: callee; kid[1..]: arguments in order: positional expressions,
                    * KEYWORD, STARRED (*xs) or DSTARRED (**kw) */
    IR_KEYWORD,    /* text: name; kid[0]: value */
    IR_STARRED,    /* kid[0] */
    IR_DSTARRED,   /* kid[0] */
    IR_ATTR,       /* kid[0]: object; text: attribute name */
    IR_SUBSCRIPT,  /* kid[0]: object; kid[1]: index (expression, SLICE, or TUPLE) */
    IR_SLICE,      /* kid[0]: lower, kid[1]: upper, kid[2]: step; each may be NULL */
    IR_LIST,       /* kid[]: elements */
    IR_TUPLE,      /* kid[]: elements */
    IR_SET,        /* kid[]: elements */
    IR_DICT,       /* kid[]: key, value, key, value, ... (n even) */
    IR_LISTCOMP,   /* kid[0]: element; kid[1..]: COMPFOR */
    IR_SETCOMP,    /* kid[0]: element; kid[1..]: COMPFOR */
    IR_GENEXP,     /* kid[0]: element; kid[1..]: COMPFOR */
    IR_DICTCOMP,   /* kid[0]: key; kid[1]: value; kid[2..]: COMPFOR */
    IR_COMPFOR,    /* kid[0]: target; kid[1]: iterable; kid[2..]: `if` conditions */
    IR_LAMBDA,     /* kid[0]: PARAMS; kid[1]: body expression */
    IR_PARAMS,     /* kid[]: PARAM */
    IR_PARAM,      /* text: name; kid[0]: default or NULL; flags: IRF_VARARGS (*args),
                    * IRF_KWARGS (**kw) */
    IR_ELLIPSIS,   /* `...`: the Ellipsis constant (a placeholder body or value) */
    IR_KIND_END
} ir_kind;

/* The operators: ir/ops.def's rows, in order. */
typedef enum {
#define BINOP(id, src, prec, py) id,
#define BOOLOP(id, src) id,
#include "ir/ops.def"
} ir_binop;

typedef enum {
#define UNOP(id, src) id,
#include "ir/ops.def"
} ir_unop;

typedef enum {
#define CMPOP(id, src, dump) id,
#include "ir/ops.def"
} ir_cmpop;

/* ops.def's columns by operator; "?" (precedence 0) for a value outside the enum. */
const char *ir_binop_src(int op);      /* "+", "and" */
int ir_binop_prec(int op);             /* 1 (`|`) to 7 (`**`); 0 for `and`, `or` */
const char *ir_binop_py(int op);       /* "** or pow()" */
const char *ir_unop_src(int op);       /* "-", "not" */
const char *ir_cmpop_src(int op);      /* "not in" */

enum {
    IRF_FLOAT = 1u << 0,
    IRF_VARARGS = 1u << 1,
    IRF_KWARGS = 1u << 2,
};

typedef struct ir_node ir_node;
struct ir_node {
    uint16_t kind;          /* ir_kind */
    uint16_t op;            /* ir_binop / ir_unop / conversion / bool value, by kind */
    uint32_t flags;         /* IRF_* */
    int line, col;          /* 1-based start */
    int end_line, end_col;  /* 1-based, exclusive end */
    const char *text;       /* NUL-terminated; see the kind; NULL when unused */
    uint32_t len;           /* bytes of text (STR may hold NUL bytes) */
    const char *aux;        /* second name (IMPORT aliases); NULL when unused */
    uint32_t n;             /* number of children */
    ir_node **kid;
    uint8_t *cmp;           /* COMPARE: n-1 ir_cmpop */
};

/* Why a construct cannot run in-process: code such as "import:numpy", "call:open",
 * "node:while_statement", "syntax"; where it stands; and the source text there (cut short). */
typedef struct {
    char code[64];
    int line, col;
    char snippet[96];
} ir_reason;

/* A lowered program. Owns its arena (nodes and strings) and its reasons. */
typedef struct {
    ir_node *root;          /* IR_MODULE */
    ir_reason *reasons;     /* malloc'd array of nreasons */
    size_t nreasons, reasons_cap;
    cr_arena arena;
} ir_module;

/* An empty module with its arena bounded by `max_bytes` (0: unbounded). NULL on ENOMEM.
 * The caller owns it: free with ir_module_free(). */
ir_module *ir_module_new(size_t max_bytes);
void ir_module_free(ir_module *m);   /* NULL is a no-op */

/* A node in m's arena with room for n children (kid[] zeroed). NULL when the arena is full. */
ir_node *ir_node_new(ir_module *m, ir_kind kind, int line, int col, uint32_t n);
/* Adds a reason (the snippet is cut to fit, at a UTF-8 boundary). CR_ENOMEM on failure.
 * Reasons are capped at 1000 per module; past that they are dropped silently after a
 * final "reasons:truncated" entry. */
cr_code ir_add_reason(ir_module *m, const char *code, int line, int col,
                      const char *snippet, size_t snippet_len);

/* Debug rendering as an S-expression, e.g. (module (assign (name x) (num 1))). Used by
 * tests to assert lowering exactly. */
cr_code ir_dump(const ir_node *n, cr_buf *out);
const char *ir_kind_name(ir_kind k);

#endif
