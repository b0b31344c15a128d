/* ir/subset.c: subset.def's names, as the whitelist and the evaluator look them up. Names
 * only: the implementations are the evaluator's (evaluator/lib/dispatch.c binds a row to them). */
#include "ir/subset.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common/common.h"

static const char *const mod_names[MOD_COUNT] = {
#define MODULE(id, name) [id] = name,
#include "ir/subset.def"
};

typedef struct {
    unsigned short mod, kind, id;
    unsigned char lo, hi, style;
    const char *name, *sig;
} row;

/* Functions first, in id order (rows[id] is function id's row), then the other values. */
static const row rows[] = {
#define FUNC(mod, name, id, impl, lo, hi, style, sig) \
    { mod, REG_FUNC, id, lo, hi, style, name, sig },
#include "ir/subset.def"
#define VALUE(mod, name, get) { mod, REG_VALUE, 0, 0, 0, 0, name, NULL },
#include "ir/subset.def"
};
#define NROWS (sizeof rows / sizeof rows[0])

static const char *const method_names[MT_COUNT_END] = {
#define METHOD(id, name, kinds) [id] = name,
#include "ir/subset.def"
};

static const char *const attr_names[] = {
#define ATTR(name) name,
#include "ir/subset.def"
    NULL
};

static int same(const char *a, const char *b)
{
    return a[0] == b[0] && strcmp(a, b) == 0;   /* first byte: cheap */
}

int registry_module(const char *name)
{
    for (int i = 1; i < MOD_COUNT; i++)    /* MOD_NONE, the builtins, is not importable */
        if (same(mod_names[i], name)) return i;
    return -1;
}

const char *registry_module_name(int mod)
{
    return mod >= 0 && mod < MOD_COUNT ? mod_names[mod] : "?";
}

const char *registry_func_name(int id)
{
    return id >= 0 && id < B_COUNT ? rows[id].name : "?";
}

void registry_func_arity(int id, int *lo, int *hi, int *style, const char **sig)
{
    const row *r = &rows[id >= 0 && id < B_COUNT ? id : 0];
    *lo = r->lo;
    *hi = r->hi;
    *style = r->style;
    *sig = r->sig;
}

void registry_func_sig(int id, reg_sig *s)
{
    const row *r = &rows[id >= 0 && id < B_COUNT ? id : 0];
    memset(s, 0, sizeof *s);
    const char *open = strchr(r->sig, '(');
    size_t len = open ? (size_t)(open - r->sig) : strlen(r->name);
    if (len >= sizeof s->buf) len = sizeof s->buf - 1;
    memcpy(s->buf, open ? r->sig : r->name, len);
    s->name = s->buf;
    int npos = -1;
    if (open) {
        char *q = s->buf + len + 1, *end = s->buf + sizeof s->buf;
        for (const char *t = open + 1; *t && *t != ')' && q < end - 1;) {
            while (*t == ' ' || *t == ',') t++;
            size_t n = strcspn(t, ",)");
            if (n == 0) break;
            if (n == 1 && *t == '/') {
                s->nposonly = s->np;
            } else if (t[0] == '*' && t[1] == '*') {
                s->varkw = 1;
            } else if (t[0] == '*') {
                s->varargs = n > 1;
                npos = s->np;
            } else if (s->np < REG_MAXP && (size_t)(end - q) > n) {
                size_t k = strcspn(t, ":,)");
                memcpy(q, t, k);
                q[k] = 0;
                s->shape[s->np] = k < n ? t[k + 1] : 0;
                s->p[s->np++] = q;
                q += k + 1;
            }
            t += n;
        }
    }
    s->npos = (unsigned char)(npos >= 0 ? npos : s->np);
}

/* Which modules' rows carry shape letters: read from the sigs once (the parser asks at
 * every call of a module's function). */
static unsigned char shaped[MOD_COUNT];
static pthread_once_t shaped_once = PTHREAD_ONCE_INIT;

static void shaped_init(void)
{
    for (int i = 0; i < B_COUNT; i++)
        if (strchr(rows[i].sig, ':')) shaped[rows[i].mod] = 1;
}

int registry_module_shaped(int mod)
{
    pthread_once(&shaped_once, shaped_init);
    return mod >= 0 && mod < MOD_COUNT && shaped[mod];
}

int registry_func_module(int id)
{
    return id >= 0 && id < B_COUNT ? rows[id].mod : -1;
}

/* registry_attr() and registry_method() answer at every name a program calls or reads (the
 * whitelist, the evaluator): one open-addressed index over rows[] and method_names[], made
 * once. A slot holds 1 + a row's index, or -(1 + a method's id) (key: module MOD_COUNT), 0
 * when empty; the first row of a name wins, as a scan in order would find. */
#define INDEX_CAP 2048
_Static_assert(2 * (NROWS + MT_COUNT_END) < INDEX_CAP, "the registry's index is at most half full");
static int16_t index_slot[INDEX_CAP];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static const char *slot_name(int16_t v) { return v > 0 ? rows[v - 1].name : method_names[-v - 1]; }
static int slot_mod(int16_t v) { return v > 0 ? rows[v - 1].mod : MOD_COUNT; }

/* The slot of (mod, name): where it is, or the empty one where it would go. */
static size_t index_find(int mod, const char *name)
{
    size_t i = (cr_hash_name(name, strlen(name)) ^ (uint32_t)mod * 0x9e3779b9u) & (INDEX_CAP - 1);
    for (; index_slot[i]; i = (i + 1) & (INDEX_CAP - 1))
        if (slot_mod(index_slot[i]) == mod && same(slot_name(index_slot[i]), name)) break;
    return i;
}

static void index_init(void)
{
    for (size_t r = 0; r < NROWS; r++) {
        size_t i = index_find(rows[r].mod, rows[r].name);
        if (!index_slot[i]) index_slot[i] = (int16_t)(r + 1);
    }
    for (int m = 0; m < MT_COUNT_END; m++) {
        size_t i = index_find(MOD_COUNT, method_names[m]);
        if (!index_slot[i]) index_slot[i] = (int16_t)-(m + 1);
    }
}

int registry_attr(int mod, const char *name, int *id)
{
    pthread_once(&index_once, index_init);
    int16_t v = index_slot[index_find(mod, name)];
    if (v) {
        size_t i = (size_t)v - 1;
        if (id) *id = rows[i].kind == REG_FUNC ? rows[i].id : (int)(i - B_COUNT);
        return rows[i].kind;
    }
    if (mod == MOD_NONE) return -1;
    /* "a.b" is module a's attribute b */
    size_t n = strlen(mod_names[mod]);
    for (int i = 1; i < MOD_COUNT; i++)
        if (strncmp(mod_names[i], mod_names[mod], n) == 0 &&
            mod_names[i][n] == '.' && strcmp(mod_names[i] + n + 1, name) == 0) {
            if (id) *id = i;
            return REG_MODULE;
        }
    return -1;
}

int registry_method(const char *name)
{
    pthread_once(&index_once, index_init);
    int16_t v = index_slot[index_find(MOD_COUNT, name)];
    return v ? -v - 1 : -1;
}

const char *registry_method_name(int id)
{
    return id >= 0 && id < MT_COUNT_END ? method_names[id] : "?";
}

int registry_is_attr(const char *name)
{
    for (const char *const *p = attr_names; *p; p++)
        if (same(*p, name)) return 1;
    return 0;
}

int registry_next(int mod, int i, const char **name)
{
    for (; i >= 0 && (size_t)i < NROWS; i++)
        if (rows[i].mod == mod) {
            *name = rows[i].name;
            return i;
        }
    return -1;
}
