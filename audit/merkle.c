/* audit/merkle.c: the records as the leaves of an RFC 6962 Merkle tree, checkpoints of it as
 * C2SP signed notes (tlog-checkpoint), and inclusion and consistency proofs that a reader
 * checks offline, without the ledger.
 *
 * Leaf i (from 0) is record seq i + 1; its data is the record's canonical encoding
 * (audit_encode(), which starts with the seq, so a leaf names its own place). Hashes as
 * RFC 6962 section 2.1 defines them: SHA-256(0x00 || leaf) and SHA-256(0x01 || left ||
 * right), the empty tree SHA-256(""). Proofs are RFC 6962's PATH and PROOF, checked with
 * RFC 9162's algorithms (2.1.3.2, 2.1.4.2), which are independent of how they were made. */
#include "audit/audit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define H AUDIT_HASH_LEN
/* A proof of a tree below 2^64 leaves has at most 64 hashes (inclusion) or 65 (consistency,
 * with the old root prepended by the checker). */
#define MAX_PROOF 66
#define SIG_PREFIX "\xe2\x80\x94 "    /* em dash (U+2014) and a space */

typedef uint8_t hash_t[H];

void audit_leaf_hash(const void *data, size_t len, uint8_t out[H])
{
    static const unsigned char zero = 0x00;
    const audit_span parts[] = { { &zero, 1 }, { data, len } };
    audit_sha256(parts, 2, out);
}

void audit_node_hash(const uint8_t l[H], const uint8_t r[H], uint8_t out[H])
{
    unsigned char buf[1 + 2 * H];
    buf[0] = 0x01;
    memcpy(buf + 1, l, H);
    memcpy(buf + 1 + H, r, H);
    const audit_span part = { buf, sizeof buf };
    audit_sha256(&part, 1, out);
}

/* The largest power of two below n (n >= 2): where RFC 6962 splits a tree. */
static uint64_t split(uint64_t n)
{
    return (uint64_t)1 << (63 - __builtin_clzll(n - 1));
}

/* MTH(D[0:n]). Recursion depth is the tree's height, at most 64. */
static void mth(const hash_t *lv, uint64_t n, uint8_t out[H])
{
    if (n == 0) {
        audit_sha256(NULL, 0, out);
        return;
    }
    if (n == 1) {
        memcpy(out, lv[0], H);
        return;
    }
    uint64_t k = split(n);
    uint8_t l[H], r[H];
    mth(lv, k, l);
    mth(lv + k, n - k, r);
    audit_node_hash(l, r, out);
}

void audit_tree_root(const uint8_t (*leaves)[H], uint64_t n, uint8_t out[H])
{
    mth(leaves, n, out);
}

/* PATH(m, D[0:n]), leaf side first. */
static size_t path(const hash_t *lv, uint64_t n, uint64_t m, hash_t *out)
{
    if (n <= 1) return 0;
    uint64_t k = split(n);
    size_t len;
    if (m < k) {
        len = path(lv, k, m, out);
        mth(lv + k, n - k, out[len]);
    } else {
        len = path(lv + k, n - k, m - k, out);
        mth(lv, k, out[len]);
    }
    return len + 1;
}

/* SUBPROOF(m, D[0:n], b). */
static size_t subproof(const hash_t *lv, uint64_t n, uint64_t m, int b, hash_t *out)
{
    if (m == n) {
        if (b) return 0;
        mth(lv, n, out[0]);
        return 1;
    }
    uint64_t k = split(n);
    size_t len;
    if (m <= k) {
        len = subproof(lv, k, m, b, out);
        mth(lv + k, n - k, out[len]);
    } else {
        len = subproof(lv + k, n - k, m - k, 0, out);
        mth(lv, k, out[len]);
    }
    return len + 1;
}

size_t audit_inclusion_path(const uint8_t (*leaves)[H], uint64_t n, uint64_t index,
                            uint8_t (*out)[H])
{
    return index < n ? path(leaves, n, index, out) : 0;
}

size_t audit_consistency_path(const uint8_t (*leaves)[H], uint64_t n, uint64_t m,
                              uint8_t (*out)[H])
{
    return m > 0 && m < n ? subproof(leaves, n, m, 1, out) : 0;
}

int audit_inclusion_check(uint64_t index, uint64_t size, const uint8_t leaf[H],
                          const uint8_t (*p)[H], size_t np, const uint8_t root[H])
{
    if (index >= size) return 0;
    uint64_t fn = index, sn = size - 1;
    uint8_t r[H];
    memcpy(r, leaf, H);
    for (size_t i = 0; i < np; i++) {
        if (sn == 0) return 0;
        if ((fn & 1) || fn == sn) {
            audit_node_hash(p[i], r, r);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            audit_node_hash(r, p[i], r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    return sn == 0 && sodium_memcmp(r, root, H) == 0;
}

int audit_consistency_check(uint64_t first, uint64_t second, const uint8_t first_root[H],
                            const uint8_t second_root[H], const uint8_t (*p)[H], size_t np)
{
    if (first > second) return 0;
    if (first == second) return np == 0 && sodium_memcmp(first_root, second_root, H) == 0;
    if (first == 0) return np == 0;   /* every tree extends the empty one */
    hash_t path[MAX_PROOF];
    size_t n = 0;
    if (np + 1 > MAX_PROOF) return 0;
    if ((first & (first - 1)) == 0) memcpy(path[n++], first_root, H);
    memcpy(path + n, p, np * H);
    n += np;
    if (n == 0) return 0;
    uint64_t fn = first - 1, sn = second - 1;
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    uint8_t fr[H], sr[H];
    memcpy(fr, path[0], H);
    memcpy(sr, path[0], H);
    for (size_t i = 1; i < n; i++) {
        if (sn == 0) return 0;
        if ((fn & 1) || fn == sn) {
            audit_node_hash(path[i], fr, fr);
            audit_node_hash(path[i], sr, sr);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            audit_node_hash(sr, path[i], sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
    return sn == 0 && sodium_memcmp(fr, first_root, H) == 0 &&
           sodium_memcmp(sr, second_root, H) == 0;
}

/* ---- the ledger's leaves ------------------------------------------------------------- */

cr_code audit_tree_leaves(audit_db *db, uint64_t *size, uint8_t (**out)[H], cr_error *err)
{
    uint64_t head;
    uint8_t hh[H];
    cr_code rc = audit_head(db, &head, hh, err);
    if (rc != CR_OK) return rc;
    uint64_t n = *size ? *size : head;
    if (n > head)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: tree size %" PRIu64 " is past the "
                            "ledger's last record (seq %" PRIu64 ")", n, head);
    *out = NULL;
    if (n > SIZE_MAX / H - 1) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: tree leaves");
    hash_t *lv = malloc((size_t)(n ? n : 1) * H);
    if (!lv) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: tree leaves");
    audit_iter *it = NULL;
    audit_entry e;
    cr_buf enc;
    cr_buf_init(&enc, 0);
    uint64_t got = 0;
    if (n && (rc = audit_iter_open(db, 1, n, &it, err)) == CR_OK) {
        int s;
        while ((s = audit_iter_next(it, &e, err)) == 1) {
            if (e.seq != got + 1) {
                rc = cr_error_set(err, CR_ELEDGER, 0, 0, "audit: seq %" PRIu64 " follows seq %"
                                  PRIu64 " (run calc-audit verify)", e.seq, got);
                break;
            }
            cr_buf_reset(&enc);
            if (audit_encode(&e.rec, e.seq, &enc) != CR_OK) {
                rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record encoding");
                break;
            }
            audit_leaf_hash(enc.p, enc.len, lv[got++]);
        }
        if (s < 0) rc = err ? err->code : CR_EAUDIT;
        if (rc == CR_OK && got != n)
            rc = cr_error_set(err, CR_ELEDGER, 0, 0, "audit: %" PRIu64 " records read where "
                              "seq 1..%" PRIu64 " should be (run calc-audit verify)", got, n);
    }
    audit_iter_close(it);
    cr_buf_free(&enc);
    if (rc != CR_OK) {
        free(lv);
        return rc;
    }
    *size = n;
    *out = lv;
    return CR_OK;
}

cr_code audit_tree_head(audit_db *db, uint64_t *size, uint8_t root[H], cr_error *err)
{
    hash_t *lv;
    cr_code rc = audit_tree_leaves(db, size, &lv, err);
    if (rc != CR_OK) return rc;
    mth(lv, *size, root);
    free(lv);
    return CR_OK;
}

/* ---- text: base64, lines ------------------------------------------------------------- */

cr_code audit_b64_put(cr_buf *b, const void *p, size_t n)
{
    size_t len = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
    char *s = malloc(len);
    if (!s) return CR_ENOMEM;
    sodium_bin2base64(s, len, p, n, sodium_base64_VARIANT_ORIGINAL);
    cr_code rc = cr_buf_put(b, s, len - 1);
    free(s);
    return rc;
}

int audit_b64_decode(const char *s, size_t len, uint8_t *out, size_t cap, size_t *got)
{
    const char *end = NULL;
    return sodium_base642bin(out, cap, s, len, NULL, got, &end,
                             sodium_base64_VARIANT_ORIGINAL) == 0 && end == s + len;
}

int audit_b64_hash(const char *s, size_t len, uint8_t out[H])
{
    size_t got;
    return len == 44 && audit_b64_decode(s, len, out, H, &got) && got == H;
}

int audit_next_line(const char **p, const char *end, const char **line, size_t *len)
{
    const char *nl = *p < end ? memchr(*p, '\n', (size_t)(end - *p)) : NULL;
    if (!nl) return 0;
    *line = *p;
    *len = (size_t)(nl - *p);
    *p = nl + 1;
    return 1;
}

int audit_get_u64(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > 19 || (s[0] == '0' && len > 1)) return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > INT64_MAX) return 0;
    *v = x;
    return 1;
}

static int line_is(const char *line, size_t len, const char *want)
{
    return len == strlen(want) && memcmp(line, want, len) == 0;
}

/* ---- signed notes -------------------------------------------------------------------- */

int audit_name_ok(const char *s, size_t len)
{
    if (len == 0 || len > 255) return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == '+' || s[i] == 0x7f) return 0;
    return 1;
}

void audit_key_id(const char *name, size_t len, uint8_t type, const uint8_t pk[32], uint8_t id[4])
{
    const unsigned char sep[2] = { '\n', type };
    uint8_t h[H];
    const audit_span parts[] = { { name, len }, { sep, sizeof sep }, { pk, 32 } };
    audit_sha256(parts, 3, h);
    memcpy(id, h, 4);
}

void audit_default_origin(const uint8_t pk[32], char *out, size_t n)
{
    uint8_t h[H];
    char hex[17];
    const audit_span part = { pk, 32 };
    audit_sha256(&part, 1, h);
    sodium_bin2hex(hex, sizeof hex, h, 8);
    snprintf(out, n, "calcroute.audit/%s", hex);
}

cr_code audit_note_sign(const char *origin, uint64_t size, const uint8_t root[H],
                        const uint8_t sk[64], cr_buf *out, cr_error *err)
{
    size_t olen = strlen(origin);
    if (!audit_name_ok(origin, olen))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: origin '%s': want 1-255 bytes without "
                            "spaces, '+' or control characters", origin);
    uint8_t pk[32], id[4], sig[4 + crypto_sign_BYTES];
    crypto_sign_ed25519_sk_to_pk(pk, sk);
    audit_key_id(origin, olen, AUDIT_SIG_ED25519, pk, id);
    size_t start = out->len;
    cr_code rc = cr_buf_printf(out, "%s\n%" PRIu64 "\n", origin, size);
    if (rc == CR_OK) rc = audit_b64_put(out, root, H);
    if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    if (rc == CR_OK) {
        memcpy(sig, id, 4);
        crypto_sign_detached(sig + 4, NULL, (const unsigned char *)out->p + start,
                             out->len - start, sk);
        rc = cr_buf_printf(out, "\n" SIG_PREFIX "%s ", origin);
    }
    if (rc == CR_OK) rc = audit_b64_put(out, sig, sizeof sig);
    if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    if (rc != CR_OK) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: checkpoint note");
    return CR_OK;
}

static cr_code bad_note(cr_error *err, const char *what)
{
    return cr_error_set(err, CR_ELEDGER, 0, 0, "checkpoint: %s", what);
}

cr_code audit_note_split(const char *note, size_t len, const char **text_end, cr_error *err)
{
    if (len > AUDIT_NOTE_MAX) return bad_note(err, "longer than 64 KiB");
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)note[i] < 0x20 && note[i] != '\n')
            return bad_note(err, "a control character");
    /* the text ends at the last blank line; signatures follow it */
    const char *end = note + len, *blank = NULL;
    for (const char *q = note; q + 1 < end; q++)
        if (q[0] == '\n' && q[1] == '\n') blank = q;
    if (!blank) return bad_note(err, "no blank line before the signatures");
    *text_end = blank + 1;
    return CR_OK;
}

int audit_note_sig_next(const char **p, const char *end, audit_note_sig *s, const char **why)
{
    const char *line;
    size_t ll, pre = sizeof SIG_PREFIX - 1;
    if (*p >= end) return 0;
    if (!audit_next_line(p, end, &line, &ll)) {
        *why = "a signature line without newline";
        return -1;
    }
    const char *sp = ll > pre ? memchr(line + pre, ' ', ll - pre) : NULL;
    *why = "a malformed signature line";
    if (ll <= pre || memcmp(line, SIG_PREFIX, pre) != 0 || !sp) return -1;
    s->name = line + pre;
    s->name_len = (size_t)(sp - s->name);
    size_t got, blen = (size_t)(line + ll - sp - 1);
    /* another key's signature may be of another type and length: only its form counts */
    uint8_t *any = malloc(blen / 4 * 3 + 3);
    int ok = any && audit_name_ok(s->name, s->name_len) &&
             audit_b64_decode(sp + 1, blen, any, blen / 4 * 3 + 3, &got) && got >= 5;
    if (ok) {
        memcpy(s->id, any, 4);
        s->len = got - 4;
        memcpy(s->sig, any + 4, s->len < sizeof s->sig ? s->len : sizeof s->sig);
    }
    free(any);
    return ok ? 1 : -1;
}

cr_code audit_note_text(const char *note, const char *text_end, audit_tree *t, cr_error *err)
{
    const char *p = note, *line;
    size_t ll;
    memset(t, 0, sizeof *t);
    if (!audit_next_line(&p, text_end, &line, &ll) || !audit_name_ok(line, ll))
        return bad_note(err, "line 1 is not an origin");
    snprintf(t->origin, sizeof t->origin, "%.*s", (int)ll, line);
    if (!audit_next_line(&p, text_end, &line, &ll) || !audit_get_u64(line, ll, &t->size))
        return bad_note(err, "line 2 is not a tree size");
    if (!audit_next_line(&p, text_end, &line, &ll) || !audit_b64_hash(line, ll, t->root))
        return bad_note(err, "line 3 is not a base64 SHA-256 root hash");
    return CR_OK;
}

cr_code audit_note_open(const char *note, size_t len, const uint8_t pk[32], audit_tree *t,
                        cr_error *err)
{
    const char *text_end, *why;
    memset(t, 0, sizeof *t);
    cr_code rc = audit_note_split(note, len, &text_end, err);
    if (rc != CR_OK) return rc;
    const char *p = text_end + 1, *end = note + len;
    audit_note_sig s;
    int nsig = 0, verified = 0, more;
    char name[sizeof t->key_name] = "";
    while ((more = audit_note_sig_next(&p, end, &s, &why)) == 1) {
        if (++nsig > 100) return bad_note(err, "more than 100 signatures");
        uint8_t id[4];
        audit_key_id(s.name, s.name_len, AUDIT_SIG_ED25519, pk, id);
        if (s.len != crypto_sign_BYTES || memcmp(id, s.id, 4) != 0 || verified) continue;
        if (crypto_sign_verify_detached(s.sig, (const unsigned char *)note,
                                        (size_t)(text_end - note), pk) != 0)
            return bad_note(err, "the signature by this key does not verify");
        verified = 1;
        snprintf(name, sizeof name, "%.*s", (int)s.name_len, s.name);
    }
    if (more < 0) return bad_note(err, why);
    if (!nsig) return bad_note(err, "no signature");
    if (!verified) return bad_note(err, "not signed by this key");
    rc = audit_note_text(note, text_end, t, err);
    snprintf(t->key_name, sizeof t->key_name, "%s", name);
    return rc;
}

/* ---- proofs as text ------------------------------------------------------------------ */

#define INCLUSION_HEADER "calcroute/audit/inclusion-proof/v1"
#define CONSISTENCY_HEADER "calcroute/audit/consistency-proof/v1"

static cr_code put_hashes(cr_buf *b, const hash_t *p, size_t n)
{
    cr_code rc = CR_OK;
    for (size_t i = 0; i < n && rc == CR_OK; i++) {
        rc = audit_b64_put(b, p[i], H);
        if (rc == CR_OK) rc = cr_buf_putc(b, '\n');
    }
    return rc;
}

cr_code audit_prove_inclusion(audit_db *db, uint64_t seq, uint64_t size, cr_buf *out,
                              cr_error *err)
{
    if (seq == 0) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: records start at seq 1");
    if (size && seq > size)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: seq %" PRIu64 " is not in a tree of "
                            "%" PRIu64 " records", seq, size);
    hash_t *lv, p[MAX_PROOF];
    uint64_t n = size;
    cr_code rc = audit_tree_leaves(db, &n, &lv, err);
    if (rc != CR_OK) return rc;
    if (seq > n) {
        free(lv);
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: no record with seq %" PRIu64
                            " (the ledger ends at %" PRIu64 ")", seq, n);
    }
    size_t np = path(lv, n, seq - 1, p);
    free(lv);
    /* the record itself travels with its proof: the reader sees what is proven */
    audit_iter *it = NULL;
    audit_entry e;
    cr_buf enc;
    cr_buf_init(&enc, 0);
    int s = 0;
    if ((rc = audit_iter_open(db, seq, seq, &it, err)) == CR_OK &&
        (s = audit_iter_next(it, &e, err)) == 1) {
        if (audit_encode(&e.rec, e.seq, &enc) != CR_OK) rc = CR_ENOMEM;
    } else if (rc == CR_OK) {
        rc = s < 0 && err ? err->code : cr_error_set(err, CR_ELEDGER, 0, 0,
                                                     "audit: record %" PRIu64 " vanished", seq);
    }
    audit_iter_close(it);
    if (rc == CR_OK) rc = cr_buf_printf(out, INCLUSION_HEADER "\n%" PRIu64 "\n%" PRIu64 "\n",
                                        n, seq - 1);
    if (rc == CR_OK) rc = audit_b64_put(out, enc.p, enc.len);
    if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    if (rc == CR_OK) rc = put_hashes(out, p, np);
    cr_buf_free(&enc);
    if (rc == CR_ENOMEM) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: inclusion proof");
    return rc;
}

cr_code audit_prove_consistency(audit_db *db, uint64_t old_size, uint64_t new_size, cr_buf *out,
                                cr_error *err)
{
    if (old_size > new_size && new_size)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: the old tree size %" PRIu64 " is past "
                            "the new one %" PRIu64, old_size, new_size);
    hash_t *lv, p[MAX_PROOF];
    uint64_t n = new_size;
    cr_code rc = audit_tree_leaves(db, &n, &lv, err);
    if (rc != CR_OK) return rc;
    if (old_size > n) {
        free(lv);
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: the old tree size %" PRIu64 " is past "
                            "the ledger's %" PRIu64 " records", old_size, n);
    }
    size_t np = old_size > 0 && old_size < n ? subproof(lv, n, old_size, 1, p) : 0;
    free(lv);
    rc = cr_buf_printf(out, CONSISTENCY_HEADER "\n%" PRIu64 "\n%" PRIu64 "\n", old_size, n);
    if (rc == CR_OK) rc = put_hashes(out, p, np);
    if (rc != CR_OK) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: consistency proof");
    return CR_OK;
}

static cr_code bad_proof(cr_error *err, const char *what)
{
    return cr_error_set(err, CR_ELEDGER, 0, 0, "proof: %s", what);
}

/* The hash lines that end a proof. */
static cr_code read_hashes(const char **p, const char *end, hash_t *out, size_t *n,
                           cr_error *err)
{
    const char *line;
    size_t ll;
    *n = 0;
    while (*p < end) {
        if (!audit_next_line(p, end, &line, &ll)) return bad_proof(err, "the last line has no newline");
        if (*n == MAX_PROOF - 1) return bad_proof(err, "more hashes than any tree needs");
        if (!audit_b64_hash(line, ll, out[*n]))
            return bad_proof(err, "a line that is not a base64 SHA-256 hash");
        (*n)++;
    }
    return CR_OK;
}

cr_code audit_proof_check(const char *proof, size_t len, const audit_tree *t,
                          const audit_tree *old, audit_proof_result *res, cr_error *err)
{
    const char *p = proof, *end = proof + len, *line;
    size_t ll, np;
    hash_t hashes[MAX_PROOF];
    cr_code rc;
    memset(res, 0, sizeof *res);
    if (!audit_next_line(&p, end, &line, &ll)) return bad_proof(err, "empty");
    if (line_is(line, ll, INCLUSION_HEADER)) {
        uint64_t size, index;
        if (!audit_next_line(&p, end, &line, &ll) || !audit_get_u64(line, ll, &size))
            return bad_proof(err, "line 2 is not a tree size");
        if (!audit_next_line(&p, end, &line, &ll) || !audit_get_u64(line, ll, &index) || index >= size)
            return bad_proof(err, "line 3 is not a leaf index inside the tree");
        if (!audit_next_line(&p, end, &line, &ll)) return bad_proof(err, "no record line");
        size_t cap = ll / 4 * 3 + 3, got;
        uint8_t *rec = malloc(cap ? cap : 1);
        if (!rec) return cr_error_set(err, CR_ENOMEM, 0, 0, "proof: record");
        if (!audit_b64_decode(line, ll, rec, cap, &got) || got < 16) {
            free(rec);
            return bad_proof(err, "line 4 is not a base64 record");
        }
        /* the encoding starts with its format and seq, big-endian (audit_encode()) */
        uint64_t seq = 0;
        for (int i = 4; i < 12; i++) seq = seq << 8 | rec[i];
        audit_leaf_hash(rec, got, res->leaf);
        free(rec);
        if (seq != index + 1) return bad_proof(err, "the record's seq is not its leaf's");
        if ((rc = read_hashes(&p, end, hashes, &np, err)) != CR_OK) return rc;
        res->kind = AUDIT_PROOF_INCLUSION;
        res->seq = seq;
        res->size = size;
        if (size != t->size)
            return cr_error_set(err, CR_ELEDGER, 0, 0, "proof: for a tree of %" PRIu64
                                " records, the checkpoint signs %" PRIu64, size, t->size);
        if (!audit_inclusion_check(index, size, res->leaf, (const hash_t *)hashes, np, t->root))
            return cr_error_set(err, CR_ELEDGER, 0, 0, "proof: record seq %" PRIu64 " is not in "
                                "the signed tree (the path does not lead to its root)", seq);
        return CR_OK;
    }
    if (line_is(line, ll, CONSISTENCY_HEADER)) {
        uint64_t first, second;
        if (!audit_next_line(&p, end, &line, &ll) || !audit_get_u64(line, ll, &first))
            return bad_proof(err, "line 2 is not the old tree size");
        if (!audit_next_line(&p, end, &line, &ll) || !audit_get_u64(line, ll, &second) || first > second)
            return bad_proof(err, "line 3 is not a tree size at least the old one");
        if ((rc = read_hashes(&p, end, hashes, &np, err)) != CR_OK) return rc;
        res->kind = AUDIT_PROOF_CONSISTENCY;
        res->old_size = first;
        res->size = second;
        if (!old) return cr_error_set(err, CR_EUSAGE, 0, 0, "proof: a consistency proof is "
                                      "checked against the old checkpoint too");
        if (second != t->size || first != old->size)
            return cr_error_set(err, CR_ELEDGER, 0, 0, "proof: it links trees of %" PRIu64
                                " and %" PRIu64 " records, the checkpoints sign %" PRIu64
                                " and %" PRIu64, first, second, old->size, t->size);
        if (!audit_consistency_check(first, second, old->root, t->root,
                                     (const hash_t *)hashes, np))
            return cr_error_set(err, CR_ELEDGER, 0, 0, "proof: the tree of %" PRIu64 " records "
                                "does not extend the one of %" PRIu64 " (rewritten or "
                                "truncated)", second, first);
        return CR_OK;
    }
    return bad_proof(err, "not a calcroute proof (line 1)");
}

/* ---- files --------------------------------------------------------------------------- */

cr_code audit_file_read(const char *path, size_t max, char **out, size_t *len, cr_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return cr_error_set(err, CR_EIO, 0, 0, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > max) {
        close(fd);
        return cr_error_set(err, CR_EUSAGE, 0, 0, "%s: %s", path, S_ISREG(sb.st_mode)
                            ? "too large" : "not a regular file");
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    size_t n = 0;
    while (buf && n < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)sb.st_size - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    int e = errno;
    close(fd);
    if (!buf) return cr_error_set(err, CR_ENOMEM, 0, 0, "%s: reading", path);
    if (n != (size_t)sb.st_size) {
        free(buf);
        return cr_error_set(err, CR_EIO, 0, 0, "%s: %s", path, strerror(e ? e : EIO));
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return CR_OK;
}
