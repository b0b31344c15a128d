/* router/request.c: a request and its inputs. Bindings are kept as constant IR expressions,
 * so a number given as "0.1" on the command line or in JSON is exactly 1/10, as a literal
 * in the code would be. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "router/router.h"
#include "sandbox/sandbox.h"

#define MAX_BINDINGS 10000
#define MAX_JSON_DEPTH 64

cr_request *cr_request_new(void)
{
    cr_request *req = calloc(1, sizeof *req);
    if (!req) return NULL;
    req->lang = CR_LANG_AUTO;
    req->rounding = -1;
    req->seed = -1;
    req->interrupt_fd = -1;
    return req;
}

void cr_request_free(cr_request *req)
{
    if (!req) return;
    free(req->code);
    ir_module_free(req->binds_mod);
    free(req->binds);
    json_decref(req->table);
    free(req->id);
    free(req);
}

const char *cr_request_id(const cr_request *req)
{
    return req ? req->id : NULL;
}

/* A fence line (CommonMark): up to 3 spaces, then 3 or more ` or ~; *n its length, *indent
 * the spaces, *info its info string's first word. 0 when the line is no fence. */
static int fence_at(const char *p, const char *end, int *ch, size_t *n, size_t *indent,
                    const char **info, size_t *info_len)
{
    const char *s = p;
    while (s < end && *s == ' ' && s - p < 3) s++;
    if (s == end || (*s != '`' && *s != '~')) return 0;
    const char *f = s;
    while (f < end && *f == *s) f++;
    if (f - s < 3) return 0;
    *ch = *s;
    *n = (size_t)(f - s);
    *indent = (size_t)(s - p);
    while (f < end && (*f == ' ' || *f == '\t')) f++;
    *info = f;
    while (f < end && *f != ' ' && *f != '\t' && *f != '\r' && *f != '\n') {
        if (*s == '`' && *f == '`') return 0;   /* a backtick fence's info has none */
        f++;
    }
    *info_len = (size_t)(f - *info);
    return 1;
}

/* Keeps the code of a model's reply: every fenced block tagged python, py, python3 or not at
 * all, in order, each line as it is (less the opening fence's indentation); the other blocks
 * and the prose around them go. A block left open runs to the end (a reply cut short). Text
 * without such a block is left as it is. In place: the code is never longer than the reply. */
static void strip_fences(char *code, size_t *len)
{
    char *end = code + *len, *out = code;
    int state = 0, fch = 0, found = 0;   /* state: 0 prose, 1 a code block, 2 another block */
    size_t flen = 0, findent = 0;
    for (char *line = code; line < end;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        char *next = nl ? nl + 1 : end;
        int ch;
        size_t n = 0, indent = 0, ilen = 0;
        const char *info = NULL;
        int fence = fence_at(line, next, &ch, &n, &indent, &info, &ilen);
        if (state == 0 && fence) {
            static const char *const tags[] = {"", "python", "py", "python3"};
            state = 2;
            for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
                if (ilen == strlen(tags[i]) && strncasecmp(info, tags[i], ilen) == 0) state = 1;
            found |= state == 1;
            fch = ch;
            flen = n;
            findent = indent;
        } else if (state && fence && ch == fch && n >= flen && ilen == 0) {
            state = 0;
        } else if (state == 1) {
            for (size_t k = 0; k < findent && line < next && *line == ' '; k++) line++;
            memmove(out, line, (size_t)(next - line));
            out += next - line;
        }
        line = next;
    }
    if (!found) return;
    *out = '\0';
    *len = (size_t)(out - code);
}

cr_code cr_request_set_code(cr_request *req, const char *code, size_t len)
{
    if (!req || (!code && len)) return CR_EUSAGE;
    char *copy = malloc(len + 1);
    if (!copy) return CR_ENOMEM;
    if (len) memcpy(copy, code, len);
    copy[len] = '\0';
    free(req->code);
    req->code = copy;
    req->code_len = len;
    if (req->strip_fences) strip_fences(req->code, &req->code_len);
    return CR_OK;
}

cr_code cr_request_set_lang(cr_request *req, cr_lang lang)
{
    if (!req || lang < CR_LANG_AUTO || lang > CR_LANG_DSL) return CR_EUSAGE;
    req->lang = lang;
    return CR_OK;
}

static int is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

cr_code cr_request_set_option(cr_request *req, const char *key, const char *value,
                              cr_error *err)
{
    if (!req || !key || !value) return cr_error_set(err, CR_EUSAGE, 0, 0, "option: NULL");
    /* The engine's options of the same names, read the same way: a request overrides
     * them. */
    if (strcmp(key, "precision") == 0 || strcmp(key, "rounding") == 0) {
        router_config_value v;
        int prec = key[0] == 'p';
        cr_code rc = router_config_parse(prec ? CFG_PRECISION : CFG_ROUNDING, value, &v, err);
        if (rc == CR_OK && prec) req->precision = (int)v.u;
        else if (rc == CR_OK) req->rounding = (int)v.u;
        return rc;
    }
    if (strcmp(key, "answer_vars") == 0) {
        /* Up to three comma-separated names, tried in order for the final value. */
        size_t len = strlen(value);
        int names = 1;
        if (len + 2 > sizeof req->answer_names)
            return cr_error_set(err, CR_EUSAGE, 0, 0, "answer_vars: too long");
        memcpy(req->answer_names, value, len + 1);
        for (char *p = req->answer_names; *p; p++)
            if (*p == ',') {
                *p = '\0';
                names++;
            }
        const char *p = req->answer_names;
        for (int i = 0; i < names; i++, p += strlen(p) + 1)
            if (!is_identifier(p) || i >= 3) {
                req->answer_names[0] = '\0';
                return cr_error_set(err, CR_EUSAGE, 0, 0,
                                    "answer_vars: want up to 3 comma-separated names, got '%s'",
                                    value);
            }
        req->answer_names[len + 1] = '\0';
        return CR_OK;
    }
    if (strcmp(key, "seed") == 0) {
        uint64_t v;
        char want[48];
        snprintf(want, sizeof want, "a whole number from 0 to %u", SANDBOX_SEED_MAX);
        cr_code rc = router_parse_uint(key, value, 0, SANDBOX_SEED_MAX, want, &v, err);
        if (rc == CR_OK) req->seed = (int64_t)v;
        return rc;
    }
    if (strcmp(key, "strip_fences") == 0) {
        if (strcmp(value, "1") != 0 && strcmp(value, "0") != 0)
            return cr_error_set(err, CR_EUSAGE, 0, 0, "strip_fences: want 1 or 0, got '%s'",
                                value);
        req->strip_fences = value[0] == '1';
        if (req->strip_fences && req->code) strip_fences(req->code, &req->code_len);
        return CR_OK;
    }
    return cr_error_set(err, CR_EUSAGE, 0, 0, "unknown option '%s'", key);
}

cr_code cr_request_set_explain(cr_request *req, int on)
{
    if (!req) return CR_EUSAGE;
    req->explain = on != 0;
    return CR_OK;
}

cr_code cr_request_set_interrupt_fd(cr_request *req, int fd)
{
    if (!req || fd < -1) return CR_EUSAGE;
    req->interrupt_fd = fd;
    return CR_OK;
}

/* ---- bindings ---------------------------------------------------------------------------- */

/* Length of a JSON number token at s (RFC 8259 grammar), 0 when there is none. */
static size_t json_number_len(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9') while (i < n && isdigit((unsigned char)s[i])) i++;
    else return 0;
    if (i < n && s[i] == '.') {
        size_t j = ++i;
        while (i < n && isdigit((unsigned char)s[i])) i++;
        if (i == j) return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t j = i;
        while (i < n && isdigit((unsigned char)s[i])) i++;
        if (i == j) return 0;
    }
    return i;
}

static cr_code ensure_binds(cr_request *req)
{
    if (!req->binds_mod && !(req->binds_mod = ir_module_new(64u << 20))) return CR_ENOMEM;
    return CR_OK;
}

/* A NUM node for a JSON number token; a leading '-' becomes a unary minus, as in code. */
static ir_node *num_node(ir_module *m, const char *tok, size_t len)
{
    int neg = len && tok[0] == '-';
    ir_node *num = ir_node_new(m, IR_NUM, 0, 0, 0);
    if (!num) return NULL;
    num->text = cr_arena_strndup(&m->arena, tok + neg, len - (size_t)neg);
    if (!num->text) return NULL;
    num->len = (uint32_t)(len - (size_t)neg);
    if (memchr(num->text, '.', num->len) || memchr(num->text, 'e', num->len) ||
        memchr(num->text, 'E', num->len))
        num->flags |= IRF_FLOAT;
    if (!neg) return num;
    ir_node *u = ir_node_new(m, IR_UNARY, 0, 0, 1);
    if (!u) return NULL;
    u->op = IR_NEG;
    u->kid[0] = num;
    return u;
}

/* The spellings of a number that is not finite: JSON's extension (Python's json module
 * writes NaN, Infinity, -Infinity) and what Python's float() reads ("nan", "-inf", ...,
 * any case). 0 when `tok` is none of them. */
static int non_finite(const char *tok, size_t len)
{
    if (len && (tok[0] == '-' || tok[0] == '+')) tok++, len--;
    return (len == 3 && (strncasecmp(tok, "nan", 3) == 0 || strncasecmp(tok, "inf", 3) == 0)) ||
           (len == 8 && strncasecmp(tok, "infinity", 8) == 0);
}

/* The one check of a number bound as a variable, whichever way it came (--var's text, a
 * JSON object of --vars, a --batch line's "vars", the Python binding): exact decimal text
 * becomes a number of any size; NaN and the infinities are refused, with one message. */
static ir_node *number_node(ir_module *m, const char *name, const char *tok, size_t len,
                            cr_error *err)
{
    if (non_finite(tok, len)) {
        cr_error_set(err, CR_EUSAGE, 0, 0, "variables: '%s': want finite numbers, got %.*s",
                     name, (int)len, tok);
        return NULL;
    }
    return num_node(m, tok, len);
}

static ir_node *str_node(ir_module *m, const char *s, size_t len)
{
    ir_node *n = ir_node_new(m, IR_STR, 0, 0, 0);
    if (!n || !(n->text = cr_arena_strndup(&m->arena, s, len))) return NULL;
    n->len = (uint32_t)len;
    return n;
}

static cr_code add_binding(cr_request *req, const char *name, ir_node *value, cr_error *err)
{
    for (size_t i = 0; i < req->nbinds; i++)
        if (strcmp(req->binds[i].name, name) == 0) {
            req->binds[i].value = value;        /* a later --var wins, as in a shell */
            return CR_OK;
        }
    if (req->nbinds >= MAX_BINDINGS)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "more than %d variables", MAX_BINDINGS);
    if (req->nbinds == req->binds_cap) {
        size_t cap = req->binds_cap ? req->binds_cap * 2 : 8;
        eval_binding *b = realloc(req->binds, cap * sizeof *b);
        if (!b) return cr_error_set(err, CR_ENOMEM, 0, 0, "variables");
        req->binds = b;
        req->binds_cap = cap;
    }
    char *copy = cr_arena_strndup(&req->binds_mod->arena, name, strlen(name));
    if (!copy) return cr_error_set(err, CR_ENOMEM, 0, 0, "variables");
    req->binds[req->nbinds].name = copy;
    req->binds[req->nbinds].value = value;
    req->nbinds++;
    return CR_OK;
}

cr_code cr_request_set_var(cr_request *req, const char *name, const char *value, cr_error *err)
{
    if (!req || !name || !value) return cr_error_set(err, CR_EUSAGE, 0, 0, "variables: NULL");
    if (!is_identifier(name))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "variables: '%s' is not a Python name", name);
    /* A Python str holds text: bytes that are not UTF-8 have no value to bind (and no JSON
     * for the audit record). */
    if (!cr_utf8_valid(value, strlen(value)))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "variables: the value of '%s' is not UTF-8",
                            name);
    if (ensure_binds(req) != CR_OK) return cr_error_set(err, CR_ENOMEM, 0, 0, "variables");
    const char *v = value;
    if (*v == '+' && v[1] != '-') v++;
    size_t len = strlen(v), nlen = json_number_len(v, len);
    cr_error e = {0};
    ir_node *node = (nlen && nlen == len) || non_finite(value, strlen(value))
                    ? number_node(req->binds_mod, name, v, len, &e)
                    : str_node(req->binds_mod, value, strlen(value));
    if (!node && e.code) return err ? (*err = e).code : e.code;
    if (!node) return cr_error_set(err, CR_ENOMEM, 0, 0, "variables");
    return add_binding(req, name, node, err);
}

/* jansson reads numbers as doubles; to keep them exact we take each number's text from the
 * source. Object keys keep their order in jansson >= 2.13 and duplicates are rejected, so a
 * walk in document order meets the number tokens in the order they were written; the scan
 * steps over strings (keys included), so digits inside them are never taken. */
typedef struct {
    const char *src;
    size_t len, pos;
} num_scan;

static int next_number(num_scan *sc, const char **tok, size_t *toklen)
{
    while (sc->pos < sc->len) {
        char c = sc->src[sc->pos];
        if (c == '"') {
            for (sc->pos++; sc->pos < sc->len && sc->src[sc->pos] != '"'; sc->pos++)
                if (sc->src[sc->pos] == '\\') sc->pos++;
            sc->pos++;
        } else if (c == '-' || isdigit((unsigned char)c) || c == 'N' || c == 'I') {
            const char *p = sc->src + sc->pos;
            size_t left = sc->len - sc->pos, neg = c == '-';
            size_t n = json_number_len(p, left);
            /* NaN, Infinity, -Infinity: taken as numbers here, refused by number_node() */
            if (!n && left >= neg + 3 && strncmp(p + neg, "NaN", 3) == 0) n = neg + 3;
            if (!n && left >= neg + 8 && strncmp(p + neg, "Infinity", 8) == 0) n = neg + 8;
            if (!n && !neg) {
                sc->pos++;
                continue;
            }
            if (!n) return 0;
            *tok = sc->src + sc->pos;
            *toklen = n;
            sc->pos += n;
            return 1;
        } else {
            sc->pos++;
        }
    }
    return 0;
}

static ir_node *json_to_ir(ir_module *m, const char *name, json_t *v, num_scan *sc, int depth,
                           cr_error *err)
{
    if (depth > MAX_JSON_DEPTH) {
        cr_error_set(err, CR_ELIMIT, 0, 0, "variables nested deeper than %d", MAX_JSON_DEPTH);
        return NULL;
    }
    ir_node *n = NULL;
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL: {
        const char *tok;
        size_t toklen;
        if (!next_number(sc, &tok, &toklen)) {
            cr_error_set(err, CR_EINTERNAL, 0, 0, "variables: lost track of a number");
            return NULL;
        }
        n = number_node(m, name, tok, toklen, err);
        break;
    }
    case JSON_STRING: n = str_node(m, json_string_value(v), json_string_length(v)); break;
    case JSON_TRUE:
    case JSON_FALSE:
        if ((n = ir_node_new(m, IR_BOOL, 0, 0, 0))) n->op = json_is_true(v);
        break;
    case JSON_NULL: n = ir_node_new(m, IR_NONE, 0, 0, 0); break;
    case JSON_ARRAY: {
        size_t count = json_array_size(v), i;
        if (!(n = ir_node_new(m, IR_LIST, 0, 0, (uint32_t)count))) break;
        json_t *item;
        json_array_foreach(v, i, item) {
            if (!(n->kid[i] = json_to_ir(m, name, item, sc, depth + 1, err))) return NULL;
        }
        break;
    }
    case JSON_OBJECT: {
        size_t count = json_object_size(v), i = 0;
        if (!(n = ir_node_new(m, IR_DICT, 0, 0, (uint32_t)(2 * count)))) break;
        const char *key;
        json_t *item;
        json_object_foreach(v, key, item) {
            if (!(n->kid[i++] = str_node(m, key, strlen(key)))) return NULL;
            if (!(n->kid[i++] = json_to_ir(m, name, item, sc, depth + 1, err))) return NULL;
        }
        break;
    }
    }
    if (!n && err && err->code == CR_OK) cr_error_set(err, CR_ENOMEM, 0, 0, "variables");
    return n;
}

static json_t *load_json(const char *json, size_t len, const char *what, cr_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        cr_error_set(err, CR_EUSAGE, je.line, je.column, "%s: %s", what, je.text);
    return root;
}

static cr_code set_vars_object(cr_request *req, json_t *obj, num_scan *sc, cr_error *err);

/* json with each number written as 0 and spaces, the same length: jansson refuses an integer
 * past 64 bits and a real past a double's range, while the numbers' values are taken from the
 * text anyway (next_number()); only their place and kind matter to it. NULL on ENOMEM. */
static char *numbers_blanked(const char *json, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, json, len);
    copy[len] = '\0';
    num_scan sc = {json, len, 0};
    const char *tok;
    size_t toklen;
    while (next_number(&sc, &tok, &toklen)) {
        char *p = copy + (tok - json);
        p[0] = '0';
        memset(p + 1, ' ', toklen - 1);
    }
    return copy;
}

cr_code cr_request_set_vars_json(cr_request *req, const char *json, size_t len, cr_error *err)
{
    if (!req || !json) return cr_error_set(err, CR_EUSAGE, 0, 0, "variables: NULL");
    char *blanked = numbers_blanked(json, len);
    if (!blanked) return cr_error_set(err, CR_ENOMEM, 0, 0, "variables");
    json_t *root = load_json(blanked, len, "variables", err);
    free(blanked);
    if (!root) return CR_EUSAGE;
    cr_code rc = CR_OK;
    if (!json_is_object(root)) {
        rc = cr_error_set(err, CR_EUSAGE, 1, 1, "variables: want a JSON object {\"name\": value}");
        goto out;
    }
    num_scan sc = {json, len, 0};
    rc = set_vars_object(req, root, &sc, err);
out:
    json_decref(root);
    return rc;
}

/* Consumes the number tokens of a subtree we do not convert, so the scan stays in step. */
static void skip_numbers(json_t *v, num_scan *sc)
{
    const char *tok;
    size_t toklen;
    size_t i;
    const char *key;
    json_t *item;
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL: next_number(sc, &tok, &toklen); break;
    case JSON_ARRAY: json_array_foreach(v, i, item) skip_numbers(item, sc); break;
    case JSON_OBJECT: json_object_foreach(v, key, item) skip_numbers(item, sc); break;
    default: break;
    }
}

static cr_code set_vars_object(cr_request *req, json_t *obj, num_scan *sc, cr_error *err)
{
    cr_code rc = ensure_binds(req);
    if (rc != CR_OK) return cr_error_set(err, rc, 0, 0, "variables");
    const char *key;
    json_t *item;
    json_object_foreach(obj, key, item) {
        if (!is_identifier(key))
            return cr_error_set(err, CR_EUSAGE, 0, 0, "variables: '%s' is not a Python name", key);
        cr_error e = {0};
        ir_node *v = json_to_ir(req->binds_mod, key, item, sc, 0, &e);
        if (!v) {
            if (err) *err = e;
            return e.code ? e.code : CR_ENOMEM;
        }
        if ((rc = add_binding(req, key, v, err)) != CR_OK) return rc;
    }
    return CR_OK;
}

/* v (parsed from numbers_blanked() text) with its numbers read again from their tokens, for
 * the parts jansson's doubles and 64-bit integers do (a table's cells). A new reference, or
 * NULL with err set. */
static json_t *numbers_restored(json_t *v, num_scan *sc, cr_error *err)
{
    const char *tok;
    size_t toklen, i;
    json_t *item;
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL: {
        json_error_t je;
        if (!next_number(sc, &tok, &toklen)) break;
        json_t *n = json_loadb(tok, toklen, JSON_DECODE_ANY, &je);
        if (!n) cr_error_set(err, CR_EUSAGE, 0, 0, "request: number %.*s: %s", (int)toklen, tok,
                             je.text);
        return n;
    }
    case JSON_ARRAY:
        json_array_foreach(v, i, item) {
            json_t *r = numbers_restored(item, sc, err);
            if (!r || json_array_set_new(v, i, r)) return NULL;
        }
        return json_incref(v);
    case JSON_OBJECT: {
        const char *key;
        json_object_foreach(v, key, item) {
            json_t *r = numbers_restored(item, sc, err);
            if (!r || json_object_set_new(v, key, r)) return NULL;
        }
        return json_incref(v);
    }
    default:
        return json_incref(v);
    }
    cr_error_set(err, CR_EINTERNAL, 0, 0, "request: lost track of a number");
    return NULL;
}

/* The "id" of a request object (root, parsed from numbers_blanked() text of json) as compact
 * JSON with its numbers as written, or NULL (none, or ENOMEM: *nomem set). Taken before any
 * other key is read, so that a line refused for another key still has its id. */
static char *id_of(json_t *root, const char *json, size_t len, int *nomem)
{
    num_scan sc = {json, len, 0};
    const char *key, *tok;
    size_t toklen;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (strcmp(key, "id") != 0) {
            skip_numbers(v, &sc);
            continue;
        }
        cr_error e = {0};
        char *text = NULL;
        if (json_is_number(v)) {
            if (!next_number(&sc, &tok, &toklen)) return NULL;
            text = strndup(tok, toklen);
        } else {
            json_t *r = numbers_restored(v, &sc, &e);
            text = r ? json_dumps(r, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
            json_decref(r);
        }
        *nomem = !text && e.code == CR_OK;
        return text;
    }
    return NULL;
}

cr_code cr_request_set_json(cr_request *req, const char *json, size_t len, cr_error *err)
{
    if (!req || !json) return cr_error_set(err, CR_EUSAGE, 0, 0, "request: NULL");
    /* Numbers are read from their text, as --vars reads them: a variable past 64 bits is as
     * good here as there. */
    char *blanked = numbers_blanked(json, len);
    if (!blanked) return cr_error_set(err, CR_ENOMEM, 0, 0, "request");
    json_t *root = load_json(blanked, len, "request", err);
    free(blanked);
    if (!root) return CR_EUSAGE;
    cr_code rc = CR_OK;
    num_scan sc = {json, len, 0};
    if (!json_is_object(root)) {
        rc = cr_error_set(err, CR_EUSAGE, 1, 1, "request: want a JSON object with \"code\"");
        goto out;
    }
    free(req->id);
    int nomem = 0;
    if (!(req->id = id_of(root, json, len, &nomem)) && nomem) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "request: id");
        goto out;
    }
    if (!json_is_string(json_object_get(root, "code"))) {
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "request: \"code\" must be a string");
        goto out;
    }
    /* before "code", wherever it stands: it says how the code is read */
    json_t *fences = json_object_get(root, "strip_fences");
    if (fences && json_is_boolean(fences) &&
        (rc = cr_request_set_option(req, "strip_fences", json_is_true(fences) ? "1" : "0", err)))
        goto out;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (strcmp(key, "code") == 0) {
            rc = cr_request_set_code(req, json_string_value(v), json_string_length(v));
        } else if (strcmp(key, "lang") == 0) {
            const char *l = json_is_string(v) ? json_string_value(v) : "";
            if (strcmp(l, "auto") == 0) req->lang = CR_LANG_AUTO;
            else if (strcmp(l, "python") == 0) req->lang = CR_LANG_PYTHON;
            else if (strcmp(l, "dsl") == 0) req->lang = CR_LANG_DSL;
            else rc = cr_error_set(err, CR_EUSAGE, 0, 0,
                                   "request: \"lang\" must be auto, python or dsl");
        } else if (strcmp(key, "vars") == 0) {
            if (!json_is_object(v)) {
                rc = cr_error_set(err, CR_EUSAGE, 0, 0, "request: \"vars\" must be an object");
            } else {
                rc = set_vars_object(req, v, &sc, err);
                continue;                 /* its numbers were consumed */
            }
        } else if (strcmp(key, "table") == 0) {
            cr_error te = {0};
            json_t *t = numbers_restored(v, &sc, &te);
            char *text = t ? json_dumps(t, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
            if (!t && err) *err = te;
            rc = !t ? te.code : text ? cr_request_set_table_json(req, text, strlen(text), err)
                                     : cr_error_set(err, CR_ENOMEM, 0, 0, "table");
            free(text);
            json_decref(t);
            if (rc != CR_OK) goto out;
            continue;                     /* its numbers were consumed */
        } else if ((strcmp(key, "precision") == 0 || strcmp(key, "seed") == 0) &&
                   json_is_number(v)) {
            /* the number's own text, checked as the command line's is */
            const char *tok;
            size_t toklen;
            char num[64];
            if (!next_number(&sc, &tok, &toklen)) toklen = 0;
            snprintf(num, sizeof num, "%.*s", (int)(toklen < 63 ? toklen : 63), tok);
            rc = cr_request_set_option(req, key, num, err);
            if (rc != CR_OK) goto out;
            continue;
        } else if ((strcmp(key, "rounding") == 0 || strcmp(key, "answer_vars") == 0) &&
                   json_is_string(v)) {
            rc = cr_request_set_option(req, key, json_string_value(v), err);
        } else if (strcmp(key, "answer_vars") == 0 && json_is_array(v)) {
            /* a list of names: the option's comma-separated text (which checks the names) */
            char names[sizeof req->answer_names];
            size_t used = 0, i;
            json_t *name;
            names[0] = '\0';
            json_array_foreach(v, i, name) {
                const char *t = json_string_value(name);
                size_t len = t ? strlen(t) : 0;
                if (!t || strchr(t, ',') || used + len + 2 > sizeof names) {
                    rc = cr_error_set(err, CR_EUSAGE, 0, 0,
                                      "answer_vars: want up to 3 names, as a list of strings");
                    break;
                }
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         i ? "," : "", t);
            }
            if (rc == CR_OK) rc = cr_request_set_option(req, key, names, err);
        } else if (strcmp(key, "strip_fences") == 0 && json_is_boolean(v)) {
            /* set above */
        } else if (strcmp(key, "id") == 0) {
            /* The caller's id: echoed by the batch front end, not part of the request. */
        } else {
            rc = cr_error_set(err, CR_EUSAGE, 0, 0, "request: unknown or ill-typed key \"%s\"",
                              key);
        }
        if (rc != CR_OK) goto out;
        skip_numbers(v, &sc);
    }
out:
    json_decref(root);
    return rc;
}

cr_code cr_request_set_table_json(cr_request *req, const char *json, size_t len, cr_error *err)
{
    if (!req || !json) return cr_error_set(err, CR_EUSAGE, 0, 0, "table: NULL");
    json_t *root = load_json(json, len, "table", err);
    if (!root) return CR_EUSAGE;
    if (!json_is_array(root)) {
        json_decref(root);
        return cr_error_set(err, CR_EUSAGE, 1, 1, "table: want a JSON list of rows");
    }
    size_t i;
    json_t *row;
    json_array_foreach(root, i, row) {
        if (!json_is_array(row) || json_array_size(row) == 0) {
            json_decref(root);
            return cr_error_set(err, CR_EUSAGE, 0, 0,
                                "table: row %zu is not a non-empty list of cells", i + 1);
        }
    }
    json_decref(req->table);
    req->table = root;
    return CR_OK;
}

/* ---- canonical text, for the audit record --------------------------------------------- */

static cr_code dump_ir_json(cr_buf *b, const ir_node *n)
{
    switch (n->kind) {
    case IR_NUM: return cr_buf_put(b, n->text, n->len);
    case IR_UNARY: cr_buf_putc(b, '-'); return dump_ir_json(b, n->kid[0]);
    case IR_BOOL: return cr_buf_puts(b, n->op ? "true" : "false");
    case IR_NONE: return cr_buf_puts(b, "null");
    case IR_STR: {
        json_t *s = cr_json_text(n->text, n->len, NULL);
        char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
        cr_code rc = t ? cr_buf_puts(b, t) : CR_ENOMEM;
        free(t);
        json_decref(s);
        return rc;
    }
    case IR_LIST:
    case IR_DICT: {
        int dict = n->kind == IR_DICT;
        cr_buf_putc(b, dict ? '{' : '[');
        for (uint32_t i = 0; i < n->n; i++) {
            if (i) cr_buf_putc(b, (dict && i % 2) ? ':' : ',');
            cr_code rc = dump_ir_json(b, n->kid[i]);
            if (rc != CR_OK) return rc;
        }
        return cr_buf_putc(b, dict ? '}' : ']');
    }
    default: return CR_EINTERNAL;
    }
}

char *router_bindings_json(const cr_request *req)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    cr_buf_putc(&b, '{');
    for (size_t i = 0; i < req->nbinds; i++) {
        cr_buf_printf(&b, "%s\"%s\":", i ? "," : "", req->binds[i].name);
        dump_ir_json(&b, req->binds[i].value);
    }
    cr_buf_putc(&b, '}');
    return cr_buf_take(&b, NULL);
}

char *router_table_json(const cr_request *req)
{
    return req->table ? json_dumps(req->table, JSON_COMPACT) : NULL;
}
