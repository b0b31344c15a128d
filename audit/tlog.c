/* audit/tlog.c: one record's proof to carry away, in the public formats: a C2SP tlog-proof
 * bundle (the index, the inclusion path and the checkpoint note verbatim, its witnesses'
 * cosignatures included), checked offline against a C2SP tlog-policy (which logs, which
 * witnesses, what quorum), with keys written as signed-note verifier keys (vkeys).
 *
 * The bundle does not carry the entry: like a detached signature it proves that an entry
 * whose RFC 6962 leaf hash the verifier already knows is in the signed tree. Ours name that
 * hash, with the record's seq (what `calc-audit replay --from/--to` and `show` take), in the
 * bundle's extra data; extra data is not authenticated, so the hash counts only because the
 * path leads from it to the signed root, and the seq only because it must equal index + 1. A
 * verifier holding the entry itself (another log's, or a record's canonical encoding) gives
 * it instead, and the hash is computed. */
#include "audit/audit_int.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

#define H AUDIT_HASH_LEN
#define MAX_PATH 64
#define BUNDLE_HEADER "c2sp.org/tlog-proof@v1"
#define EXTRA_HEADER "calcroute/audit/entry/v1"
#define COSIG_HEADER "cosignature/v1\n"
#define POLICY_MAX 32        /* logs, witnesses and groups each: what tlog-policy asks for */

/* ---- verifier keys: name+hex key ID+base64(type || key) ------------------------------ */

int audit_vkey_parse(const char *s, size_t len, audit_vkey *k)
{
    const char *p1 = memchr(s, '+', len);
    if (!p1 || !audit_name_ok(s, (size_t)(p1 - s))) return 0;
    const char *p2 = memchr(p1 + 1, '+', len - (size_t)(p1 + 1 - s));
    if (!p2 || p2 - p1 - 1 != 8) return 0;
    uint8_t id[4], blob[1 + 32];
    size_t got;
    const char *hex_end;
    if (sodium_hex2bin(id, 4, p1 + 1, 8, NULL, &got, &hex_end) != 0 || got != 4 ||
        hex_end != p2)
        return 0;
    if (!audit_b64_decode(p2 + 1, len - (size_t)(p2 + 1 - s), blob, sizeof blob, &got) ||
        got != sizeof blob)
        return 0;
    k->name_len = (size_t)(p1 - s);
    memcpy(k->name, s, k->name_len);
    k->name[k->name_len] = '\0';
    k->type = blob[0];
    memcpy(k->pk, blob + 1, 32);
    audit_key_id(k->name, k->name_len, k->type, k->pk, k->id);
    return memcmp(k->id, id, 4) == 0;
}

cr_code audit_vkey_format(const char *name, uint8_t type, const uint8_t pk[32], cr_buf *out,
                          cr_error *err)
{
    size_t len = strlen(name);
    if (!audit_name_ok(name, len))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: key name '%s': want 1-255 bytes "
                            "without spaces, '+' or control characters", name);
    uint8_t id[4], blob[1 + 32];
    audit_key_id(name, len, type, pk, id);
    blob[0] = type;
    memcpy(blob + 1, pk, 32);
    cr_code rc = cr_buf_printf(out, "%s+%02x%02x%02x%02x+", name, id[0], id[1], id[2], id[3]);
    if (rc == CR_OK) rc = audit_b64_put(out, blob, sizeof blob);
    if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    return rc == CR_OK ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "audit: vkey");
}

/* ---- policies ------------------------------------------------------------------------ */

/* A name of the policy: a witness (key set) or a group (k of its members). */
typedef struct {
    char name[256];
    int is_group;
    audit_vkey key;
    char url[256];                  /* a witness's submission prefix, or "" */
    int k, n, member[2 * POLICY_MAX];
} policy_name;

struct audit_policy {
    audit_vkey log[POLICY_MAX];
    int nlog, nname, nwitness, ngroup;
    policy_name name[2 * POLICY_MAX];
    int quorum;                       /* an index into name, or -1: `quorum none` */
    char quorum_name[256];
};

static cr_code bad_policy(cr_error *err, int line, const char *what, const char *word,
                          size_t wlen)
{
    return cr_error_set(err, CR_EUSAGE, 0, 0, "policy line %d: %s%s%.*s%s", line, what,
                        word ? " '" : "", (int)(word ? wlen : 0), word ? word : "",
                        word ? "'" : "");
}

static int find_name(const audit_policy *p, const char *s, size_t len)
{
    for (int i = 0; i < p->nname; i++)
        if (strlen(p->name[i].name) == len && memcmp(p->name[i].name, s, len) == 0) return i;
    return -1;
}

static int same_key(const audit_policy *p, const audit_vkey *k)
{
    for (int i = 0; i < p->nlog; i++)
        if (memcmp(p->log[i].pk, k->pk, 32) == 0) return 1;
    for (int i = 0; i < p->nname; i++)
        if (!p->name[i].is_group && memcmp(p->name[i].key.pk, k->pk, 32) == 0) return 1;
    return 0;
}

/* Splits a line into words at spaces and tabs: the count, at most max (max + 1: more). */
static int words(const char *s, size_t len, const char **w, size_t *wl, int max)
{
    int n = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i == len) break;
        if (n == max) return max + 1;
        w[n] = s + i;
        while (i < len && s[i] != ' ' && s[i] != '\t') i++;
        wl[n] = (size_t)(s + i - w[n]);
        n++;
    }
    return n;
}

static int word_is(const char *w, size_t len, const char *want)
{
    return len == strlen(want) && memcmp(w, want, len) == 0;
}

static cr_code policy_line(audit_policy *p, int ln, const char **w, size_t *wl, int n,
                           int *quorums, cr_error *err)
{
    audit_vkey k;
    if (word_is(w[0], wl[0], "log")) {
        if (n < 2 || n > 3) return bad_policy(err, ln, "want 'log VKEY [URL]'", NULL, 0);
        if (!audit_vkey_parse(w[1], wl[1], &k))
            return bad_policy(err, ln, "not a verifier key:", w[1], wl[1]);
        if (k.type != AUDIT_SIG_ED25519)
            return bad_policy(err, ln, "a log's key is an Ed25519 signed-note key (type 1):",
                              w[1], wl[1]);
        if (same_key(p, &k)) return bad_policy(err, ln, "a key listed twice:", w[1], wl[1]);
        if (p->nlog == POLICY_MAX) return bad_policy(err, ln, "more than 32 logs", NULL, 0);
        p->log[p->nlog++] = k;
        return CR_OK;
    }
    if (word_is(w[0], wl[0], "witness")) {
        if (n < 3 || n > 4) return bad_policy(err, ln, "want 'witness NAME VKEY [URL]'", NULL, 0);
        if (!audit_vkey_parse(w[2], wl[2], &k))
            return bad_policy(err, ln, "not a verifier key:", w[2], wl[2]);
        if (k.type != AUDIT_SIG_COSIGNATURE)
            return bad_policy(err, ln, "a witness's key is an Ed25519 cosignature key "
                              "(type 4):", w[2], wl[2]);
        if (same_key(p, &k)) return bad_policy(err, ln, "a key listed twice:", w[2], wl[2]);
        if (p->nwitness == POLICY_MAX)
            return bad_policy(err, ln, "more than 32 witnesses", NULL, 0);
    } else if (word_is(w[0], wl[0], "group")) {
        if (n < 4) return bad_policy(err, ln, "want 'group NAME all|any|K MEMBER...'", NULL, 0);
        if (p->ngroup == POLICY_MAX) return bad_policy(err, ln, "more than 32 groups", NULL, 0);
    } else if (word_is(w[0], wl[0], "quorum")) {
        if (n != 2) return bad_policy(err, ln, "want 'quorum NAME'", NULL, 0);
        if (++*quorums > 1) return bad_policy(err, ln, "a second quorum", NULL, 0);
        p->quorum = word_is(w[1], wl[1], "none") ? -1 : find_name(p, w[1], wl[1]);
        if (p->quorum == -1 && !word_is(w[1], wl[1], "none"))
            return bad_policy(err, ln, "a name not defined above:", w[1], wl[1]);
        snprintf(p->quorum_name, sizeof p->quorum_name, "%.*s", (int)wl[1], w[1]);
        return CR_OK;
    } else {
        return bad_policy(err, ln, "not log, witness, group or quorum:", w[0], wl[0]);
    }
    /* a witness or a group: a new name */
    if (wl[1] >= sizeof p->name[0].name || word_is(w[1], wl[1], "none") ||
        find_name(p, w[1], wl[1]) >= 0)
        return bad_policy(err, ln, "a name already taken:", w[1], wl[1]);
    policy_name *nm = &p->name[p->nname];
    memset(nm, 0, sizeof *nm);
    memcpy(nm->name, w[1], wl[1]);
    if (!word_is(w[0], wl[0], "group")) {
        if (n == 4 && wl[3] >= sizeof nm->url)
            return bad_policy(err, ln, "a URL longer than 255 bytes", NULL, 0);
        if (n == 4) memcpy(nm->url, w[3], wl[3]);
        nm->key = k;
        p->nwitness++;
        p->nname++;
        return CR_OK;
    }
    nm->is_group = 1;
    nm->n = n - 3;
    uint64_t kk = 0;
    if (word_is(w[2], wl[2], "all")) nm->k = nm->n;
    else if (word_is(w[2], wl[2], "any")) nm->k = 1;
    else if (audit_get_u64(w[2], wl[2], &kk) && kk >= 1 && kk <= (uint64_t)nm->n) nm->k = (int)kk;
    else return bad_policy(err, ln, "a threshold that is not all, any or 1..members:", w[2], wl[2]);
    for (int i = 0; i < nm->n; i++) {
        int m = find_name(p, w[3 + i], wl[3 + i]);
        if (m < 0) return bad_policy(err, ln, "a member not defined above:", w[3 + i], wl[3 + i]);
        for (int j = 0; j < i; j++)
            if (nm->member[j] == m)
                return bad_policy(err, ln, "a member listed twice:", w[3 + i], wl[3 + i]);
        nm->member[i] = m;
    }
    p->ngroup++;
    p->nname++;
    return CR_OK;
}

cr_code audit_policy_parse(const char *text, size_t len, audit_policy **out, cr_error *err)
{
    audit_policy *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: policy");
    const char *q = text, *end = text + len, *line, *w[3 + 2 * POLICY_MAX];
    size_t ll, wl[3 + 2 * POLICY_MAX];
    int ln = 0, quorums = 0;
    cr_code rc = CR_OK;
    for (size_t i = 0; i < len && rc == CR_OK; i++)
        if ((unsigned char)text[i] < 0x20 ? text[i] != '\t' && text[i] != '\n'
                                          : text[i] == 0x7f)
            rc = cr_error_set(err, CR_EUSAGE, 0, 0, "policy: a control character");
    while (rc == CR_OK && q < end) {
        ln++;
        if (!audit_next_line(&q, end, &line, &ll)) {
            rc = bad_policy(err, ln, "no newline at its end", NULL, 0);
            break;
        }
        int n = words(line, ll, w, wl, 3 + 2 * POLICY_MAX);
        if (n == 0 || w[0][0] == '#') continue;
        if (n > 2 + 2 * POLICY_MAX) rc = bad_policy(err, ln, "too many words", NULL, 0);
        else rc = policy_line(p, ln, w, wl, n, &quorums, err);
    }
    if (rc == CR_OK && !quorums)
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "policy: no quorum line ('quorum none' "
                          "asks for no witness)");
    if (rc == CR_OK && !p->nlog)
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "policy: no log line (a bundle is checked "
                          "against the log's key)");
    if (rc != CR_OK) {
        free(p);
        return rc;
    }
    *out = p;
    return CR_OK;
}

void audit_policy_free(audit_policy *p)
{
    free(p);
}

const char *audit_policy_witness(const audit_policy *p, int i, const char **url)
{
    for (int j = 0; j < p->nname; j++) {
        if (p->name[j].is_group || i--) continue;
        *url = p->name[j].url;
        return p->name[j].name;
    }
    return NULL;
}

/* Whether name i witnessed, given which witnesses cosigned. */
static int witnessed(const audit_policy *p, int i, const int *cosigned)
{
    const policy_name *nm = &p->name[i];
    if (!nm->is_group) return cosigned[i];
    int got = 0;
    for (int j = 0; j < nm->n; j++) got += witnessed(p, nm->member[j], cosigned);
    return got >= nm->k;
}

/* ---- bundles ------------------------------------------------------------------------- */

static cr_code bad_bundle(cr_error *err, const char *what)
{
    return cr_error_set(err, CR_ELEDGER, 0, 0, "bundle: %s", what);
}

cr_code audit_bundle_make(audit_db *db, uint64_t seq, const char *note, size_t note_len,
                          cr_buf *out, cr_error *err)
{
    const char *text_end;
    audit_tree t;
    cr_code rc = audit_note_split(note, note_len, &text_end, err);
    if (rc == CR_OK) rc = audit_note_text(note, text_end, &t, err);
    if (rc != CR_OK) return rc;
    if (seq == 0) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: records start at seq 1");
    if (seq > t.size)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: seq %" PRIu64 " is not in the "
                            "checkpoint's tree of %" PRIu64 " records", seq, t.size);
    uint8_t (*lv)[H], root[H], p[MAX_PATH][H];
    uint64_t n = t.size;
    if ((rc = audit_tree_leaves(db, &n, &lv, err)) != CR_OK) return rc;
    audit_tree_root((const uint8_t (*)[H])lv, n, root);
    size_t np = audit_inclusion_path((const uint8_t (*)[H])lv, n, seq - 1, p);
    char leaf[2 * H + 1];
    audit_hex(lv[seq - 1], leaf);
    free(lv);
    /* a note of another tree would make a bundle that can never verify: say so now */
    if (sodium_memcmp(root, t.root, H) != 0)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: the checkpoint's root is not this "
                            "ledger's tree of %" PRIu64 " records (another ledger's, or "
                            "this one was rewritten)", t.size);
    cr_buf extra;
    cr_buf_init(&extra, 0);
    rc = cr_buf_printf(&extra, EXTRA_HEADER "\nseq %" PRIu64 "\nleaf %s\n", seq, leaf);
    if (rc == CR_OK) rc = cr_buf_puts(out, BUNDLE_HEADER "\nextra ");
    if (rc == CR_OK) rc = audit_b64_put(out, extra.p, extra.len);
    if (rc == CR_OK) rc = cr_buf_printf(out, "\nindex %" PRIu64 "\n", seq - 1);
    for (size_t i = 0; i < np && rc == CR_OK; i++) {
        rc = audit_b64_put(out, p[i], H);
        if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    }
    if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    if (rc == CR_OK) rc = cr_buf_put(out, note, note_len);
    cr_buf_free(&extra);
    return rc == CR_OK ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "audit: bundle");
}

/* Our extra data: 1 with seq and leaf when it is ours and well formed. */
static int extra_parse(const uint8_t *x, size_t len, uint64_t *seq, uint8_t leaf[H])
{
    const char *p = (const char *)x, *end = p + len, *line;
    size_t ll, got;
    const char *hex_end;
    if (!audit_next_line(&p, end, &line, &ll) || !word_is(line, ll, EXTRA_HEADER)) return 0;
    if (!audit_next_line(&p, end, &line, &ll) || ll < 5 || memcmp(line, "seq ", 4) != 0 ||
        !audit_get_u64(line + 4, ll - 4, seq) || *seq == 0)
        return 0;
    if (!audit_next_line(&p, end, &line, &ll) || ll != 5 + 2 * H ||
        memcmp(line, "leaf ", 5) != 0 ||
        sodium_hex2bin(leaf, H, line + 5, 2 * H, NULL, &got, &hex_end) != 0 || got != H)
        return 0;
    return p == end;
}

/* What a tlog-cosignature signs: "cosignature/v1", "time T", then the note's text; into msg,
 * of COSIG_PREFIX_MAX + tlen bytes. Its length. */
#define COSIG_PREFIX_MAX (sizeof COSIG_HEADER + 32)
static size_t cosig_message(uint64_t when, const char *text, size_t tlen, unsigned char *msg)
{
    size_t ml = (size_t)snprintf((char *)msg, COSIG_PREFIX_MAX, COSIG_HEADER "time %" PRIu64
                                 "\n", when);
    memcpy(msg + ml, text, tlen);
    return ml + tlen;
}

cr_code audit_cosign(const char *name, const uint8_t sk[64], uint64_t when, const char *text,
                     size_t tlen, cr_buf *out, cr_error *err)
{
    uint8_t pk[32], blob[4 + 8 + crypto_sign_BYTES];
    unsigned char *msg = malloc(COSIG_PREFIX_MAX + tlen);
    if (!msg) return cr_error_set(err, CR_ENOMEM, 0, 0, "cosignature");
    crypto_sign_ed25519_sk_to_pk(pk, sk);
    audit_key_id(name, strlen(name), AUDIT_SIG_COSIGNATURE, pk, blob);
    audit_put_be64(blob + 4, when);
    crypto_sign_detached(blob + 12, NULL, msg, cosig_message(when, text, tlen, msg), sk);
    free(msg);
    cr_code rc = cr_buf_printf(out, "\xe2\x80\x94 %s ", name);
    if (rc == CR_OK) rc = audit_b64_put(out, blob, sizeof blob);
    if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    return rc == CR_OK ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "cosignature");
}

cr_code audit_checkpoint_check(const char *note, size_t len, const audit_policy *pol,
                               audit_tree *t, audit_bundle_result *res, cr_error *err)
{
    const char *text_end, *why;
    cr_code rc = audit_note_split(note, len, &text_end, err);
    if (rc == CR_OK) rc = audit_note_text(note, text_end, t, err);
    if (rc != CR_OK) return rc;
    const audit_vkey *log = NULL;
    for (int i = 0; i < pol->nlog && !log; i++)
        if (!strcmp(pol->log[i].name, t->origin)) log = &pol->log[i];
    res->origin_unknown = !log;
    if (!log)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: origin %s is not a log the "
                            "policy names", t->origin);
    size_t tlen = (size_t)(text_end - note);
    unsigned char *msg = malloc(COSIG_PREFIX_MAX + tlen);
    if (!msg) return cr_error_set(err, CR_ENOMEM, 0, 0, "checkpoint: cosignature message");
    int cosigned[2 * POLICY_MAX] = {0}, logged = 0, nsig = 0, more = 0;
    const char *p = text_end + 1, *end = note + len;
    audit_note_sig s;
    while (rc == CR_OK && (more = audit_note_sig_next(&p, end, &s, &why)) == 1) {
        if (++nsig > 100) {
            rc = cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: more than 100 signatures");
            break;
        }
        if (s.name_len == log->name_len && !memcmp(s.name, log->name, s.name_len) &&
            !memcmp(s.id, log->id, 4)) {
            if (s.len != crypto_sign_BYTES ||
                crypto_sign_verify_detached(s.sig, (const unsigned char *)note, tlen,
                                            log->pk) != 0)
                rc = cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: the log's signature "
                                  "(%s) does not verify", log->name);
            logged = 1;
            continue;
        }
        for (int i = 0; i < pol->nname && rc == CR_OK; i++) {
            const audit_vkey *k = &pol->name[i].key;
            if (pol->name[i].is_group || s.name_len != k->name_len ||
                memcmp(s.name, k->name, s.name_len) || memcmp(s.id, k->id, 4))
                continue;
            /* timestamped_signature: u64 time, then Ed25519 over the cosigned message */
            uint64_t when = audit_get_be64(s.sig);
            size_t ml = cosig_message(when, note, tlen, msg);
            if (s.len != 8 + crypto_sign_BYTES || when > INT64_MAX ||
                crypto_sign_verify_detached(s.sig + 8, msg, ml, k->pk) != 0)
                rc = cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: the cosignature by "
                                  "witness %s (%s) does not verify", pol->name[i].name,
                                  k->name);
            cosigned[i] = 1;
        }
    }
    free(msg);
    if (rc != CR_OK) return rc;
    if (more < 0) return cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: %s", why);
    if (!logged)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: not signed by the log's key "
                            "(%s)", log->name);
    res->witnesses[0] = '\0';
    for (int i = 0; i < pol->nname; i++) {
        if (!cosigned[i]) continue;
        size_t at = strlen(res->witnesses);
        snprintf(res->witnesses + at, sizeof res->witnesses - at, "%s%s", at ? " " : "",
                 pol->name[i].name);
        res->nwitnesses++;
    }
    snprintf(res->quorum, sizeof res->quorum, "%s", pol->quorum_name);
    if (pol->quorum >= 0 && !witnessed(pol, pol->quorum, cosigned))
        return cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: the policy's quorum %s is "
                            "not met (cosigned by: %s)", pol->quorum_name,
                            res->nwitnesses ? res->witnesses : "none");
    return CR_OK;
}

cr_code audit_bundle_check(const char *b, size_t len, const audit_policy *pol,
                           const uint8_t *entry_leaf, audit_bundle_result *res, cr_error *err)
{
    const char *p = b, *end = b + len, *line;
    size_t ll, np = 0;
    uint8_t path[MAX_PATH][H], xleaf[H];
    uint64_t xseq = 0;
    int have_extra = 0;
    memset(res, 0, sizeof *res);
    if (!audit_next_line(&p, end, &line, &ll) || !word_is(line, ll, BUNDLE_HEADER))
        return bad_bundle(err, "line 1 is not " BUNDLE_HEADER);
    if (!audit_next_line(&p, end, &line, &ll)) return bad_bundle(err, "no index line");
    if (ll >= 6 && memcmp(line, "extra ", 6) == 0) {
        size_t cap = (ll - 6) / 4 * 3 + 3, got;
        uint8_t *x = malloc(cap);
        if (!x) return cr_error_set(err, CR_ENOMEM, 0, 0, "bundle: extra data");
        int ok = audit_b64_decode(line + 6, ll - 6, x, cap, &got);
        have_extra = ok && extra_parse(x, got, &xseq, xleaf);
        free(x);
        if (!ok) return bad_bundle(err, "the extra line is not base64");
        if (!audit_next_line(&p, end, &line, &ll)) return bad_bundle(err, "no index line");
    }
    if (ll < 7 || memcmp(line, "index ", 6) != 0 ||
        !audit_get_u64(line + 6, ll - 6, &res->index))
        return bad_bundle(err, "the index line is not 'index N'");
    for (;;) {
        if (!audit_next_line(&p, end, &line, &ll))
            return bad_bundle(err, "no blank line before the checkpoint");
        if (ll == 0) break;
        if (np == MAX_PATH) return bad_bundle(err, "more hashes than any tree needs");
        if (!audit_b64_hash(line, ll, path[np++]))
            return bad_bundle(err, "a proof line that is not a base64 SHA-256 hash");
    }
    audit_tree t;
    cr_code rc = audit_checkpoint_check(p, (size_t)(end - p), pol, &t, res, err);
    if (rc != CR_OK) return rc;
    snprintf(res->origin, sizeof res->origin, "%s", t.origin);
    res->size = t.size;
    if (res->index >= t.size)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "bundle: index %" PRIu64 " is outside the "
                            "checkpoint's tree of %" PRIu64 " entries", res->index, t.size);
    if (have_extra) {
        if (xseq != res->index + 1)
            return cr_error_set(err, CR_ELEDGER, 0, 0, "bundle: the extra data's record seq "
                                "%" PRIu64 " is not entry %" PRIu64 "'s (seq %" PRIu64 ")",
                                xseq, res->index, res->index + 1);
        res->seq = xseq;
        if (entry_leaf && sodium_memcmp(entry_leaf, xleaf, H) != 0)
            return bad_bundle(err, "the entry given is not the one the extra data names");
    }
    if (!entry_leaf && !have_extra)
        return bad_bundle(err, "it names no entry (no calcroute extra data): give the entry");
    memcpy(res->leaf, entry_leaf ? entry_leaf : xleaf, H);
    if (!audit_inclusion_check(res->index, t.size, res->leaf, (const uint8_t (*)[H])path, np,
                               t.root))
        return cr_error_set(err, CR_ELEDGER, 0, 0, "bundle: entry %" PRIu64 " is not in the "
                            "signed tree (the path does not lead to its root)", res->index);
    return CR_OK;
}
