/* audit/api.c: the public cr_audit_* functions of calcroute.h over the ledger. */
#include "audit/audit_int.h"

#include <sodium.h>
#include <stdlib.h>

struct cr_audit {
    audit_db *db;
};

cr_audit *cr_audit_open(const char *path, int writable, cr_error *err)
{
    cr_audit *a = calloc(1, sizeof *a);
    if (!a) {
        cr_error_set(err, CR_ENOMEM, 0, 0, "audit: handle");
        return NULL;
    }
    int flags = writable == CR_AUDIT_CREATE ? AUDIT_OPEN_CREATE
                : writable ? 0 : AUDIT_OPEN_READONLY;
    if (audit_open(path, flags, &a->db, err) != CR_OK) {
        free(a);
        return NULL;
    }
    return a;
}

void cr_audit_close(cr_audit *a)
{
    if (!a) return;
    audit_close(a->db);
    free(a);
}

cr_code cr_audit_head(cr_audit *a, uint64_t *seq, char hash_hex[65], cr_error *err)
{
    uint8_t h[AUDIT_HASH_LEN];
    cr_code rc = audit_head(a->db, seq, h, err);
    if (rc == CR_OK) audit_hex(h, hash_hex);
    return rc;
}

cr_code cr_audit_verify(cr_audit *a, const char *pubkey_path, cr_audit_report *rep,
                        cr_error *err)
{
    uint8_t pk[crypto_sign_PUBLICKEYBYTES];
    cr_code rc;
    if (pubkey_path && (rc = audit_key_read(pubkey_path, pk, sizeof pk, err)) != CR_OK)
        return rc;
    return audit_verify(a->db, pubkey_path ? pk : NULL, rep, err);
}

cr_code cr_audit_export(cr_audit *a, uint64_t from, uint64_t to,
                        int (*each)(const char *json, size_t len, void *arg), void *arg,
                        cr_error *err)
{
    audit_iter *it = NULL;
    audit_entry e;
    cr_buf b;
    cr_code rc = audit_iter_open(a->db, from, to, &it, err);
    if (rc != CR_OK) return rc;
    cr_buf_init(&b, 0);
    int s;
    while ((s = audit_iter_next(it, &e, err)) == 1) {
        cr_buf_reset(&b);
        if ((rc = audit_entry_json(&e, &b, err)) != CR_OK) break;
        if (each(b.p, b.len, arg) != 0) {
            rc = cr_error_set(err, CR_EIO, 0, 0, "audit: export stopped at seq %llu",
                              (unsigned long long)e.seq);
            break;
        }
    }
    if (s < 0) rc = err ? err->code : CR_EAUDIT;
    cr_buf_free(&b);
    audit_iter_close(it);
    return rc;
}

typedef struct {
    char *json;
    size_t len;
} show_ctx;

static int keep_one(const char *json, size_t len, void *arg)
{
    show_ctx *cx = arg;
    if (!(cx->json = malloc(len + 1))) return 1;
    memcpy(cx->json, json, len + 1);
    cx->len = len;
    return 0;
}

cr_code cr_audit_show(cr_audit *a, uint64_t seq, char **json, size_t *len, cr_error *err)
{
    show_ctx cx = { NULL, 0 };
    *json = NULL;
    if (seq == 0) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: records start at seq 1");
    cr_code rc = cr_audit_export(a, seq, seq, keep_one, &cx, err);
    if (rc == CR_EIO) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record %llu as JSON",
                                          (unsigned long long)seq);
    if (rc != CR_OK) return rc;
    if (!cx.json) return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: no record with seq %llu",
                                      (unsigned long long)seq);
    *json = cx.json;
    if (len) *len = cx.len;
    return CR_OK;
}

cr_code cr_audit_keygen(const char *key_path, cr_error *err)
{
    return audit_keygen(key_path, err);
}

cr_code cr_audit_checkpoint(cr_audit *a, const char *key_path, uint64_t *seq,
                            char hash_hex[65], cr_error *err)
{
    uint8_t sk[crypto_sign_SECRETKEYBYTES], head[AUDIT_HASH_LEN];
    cr_code rc = audit_key_read(key_path, sk, sizeof sk, err);
    if (rc == CR_OK) rc = audit_checkpoint(a->db, sk, seq, head, err);
    sodium_memzero(sk, sizeof sk);
    if (rc == CR_OK && hash_hex) audit_hex(head, hash_hex);
    return rc;
}

static cr_code text_out(cr_code rc, cr_buf *b, char **out)
{
    *out = rc == CR_OK ? cr_buf_take(b, NULL) : NULL;
    cr_buf_free(b);
    return rc;
}

cr_code cr_audit_note(cr_audit *a, const char *key_path, const char *origin, uint64_t size,
                      char **note, cr_error *err)
{
    uint8_t sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES], root[AUDIT_HASH_LEN];
    char dflt[64];
    cr_buf b;
    cr_buf_init(&b, 0);
    *note = NULL;
    cr_code rc = audit_key_read(key_path, sk, sizeof sk, err);
    if (rc == CR_OK && !origin) {
        crypto_sign_ed25519_sk_to_pk(pk, sk);
        audit_default_origin(pk, dflt, sizeof dflt);
        origin = dflt;
    }
    if (rc == CR_OK) rc = audit_tree_head(a->db, &size, root, err);
    if (rc == CR_OK) rc = audit_note_sign(origin, size, root, sk, &b, err);
    sodium_memzero(sk, sizeof sk);
    return text_out(rc, &b, note);
}

cr_code cr_audit_prove(cr_audit *a, uint64_t seq, uint64_t size, char **proof, cr_error *err)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    return text_out(audit_prove_inclusion(a->db, seq, size, &b, err), &b, proof);
}

cr_code cr_audit_prove_consistency(cr_audit *a, uint64_t old_size, uint64_t new_size,
                                   char **proof, cr_error *err)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    return text_out(audit_prove_consistency(a->db, old_size, new_size, &b, err), &b, proof);
}

/* A checkpoint file, checked against pk. */
static cr_code note_file(const char *path, const uint8_t pk[32], audit_tree *t, cr_error *err)
{
    char *text;
    size_t len;
    cr_code rc = audit_file_read(path, AUDIT_NOTE_MAX, &text, &len, err);
    if (rc != CR_OK) return rc;
    rc = audit_note_open(text, len, pk, t, err);
    free(text);
    if (rc != CR_OK && err) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        cr_error_set(err, rc, 0, 0, "%s: %s", path, msg);
    }
    return rc;
}

cr_code cr_audit_verify_proof(const char *proof_path, const char *note_path,
                              const char *old_note_path, const char *pubkey_path,
                              cr_audit_proof_report *rep, cr_error *err)
{
    uint8_t pk[crypto_sign_PUBLICKEYBYTES];
    audit_tree t, old;
    audit_proof_result r;
    char *proof = NULL;
    size_t len;
    memset(rep, 0, sizeof *rep);
    if (sodium_init() < 0) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: libsodium init");
    cr_code rc = audit_key_read(pubkey_path, pk, sizeof pk, err);
    if (rc == CR_OK) rc = note_file(note_path, pk, &t, err);
    if (rc == CR_OK && old_note_path) rc = note_file(old_note_path, pk, &old, err);
    if (rc == CR_OK) rc = audit_file_read(proof_path, AUDIT_PROOF_MAX, &proof, &len, err);
    if (rc == CR_OK) {
        rc = audit_proof_check(proof, len, &t, old_note_path ? &old : NULL, &r, err);
        rep->consistency = r.kind == AUDIT_PROOF_CONSISTENCY;
        rep->seq = r.seq;
        rep->size = r.size;
        rep->old_size = r.old_size;
        snprintf(rep->origin, sizeof rep->origin, "%s", t.origin);
        if (r.kind == AUDIT_PROOF_INCLUSION) audit_hex(r.leaf, rep->leaf_hash);
    }
    free(proof);
    return rc;
}

cr_code audit_walk(cr_audit *a, const char *what, uint64_t from, uint64_t to,
                   cr_code (*each)(const audit_entry *e, void *arg), void *arg, cr_error *err)
{
    uint64_t head;
    uint8_t hh[AUDIT_HASH_LEN];
    cr_code rc = audit_head(a->db, &head, hh, err);
    if (rc != CR_OK) return rc;
    if (from > head || (to && to > head))
        return cr_error_set(err, CR_ELEDGER, 0, 0, "%s: no record with seq %llu (the ledger "
                            "ends at %llu)", what, (unsigned long long)(from > head ? from : to),
                            (unsigned long long)head);
    audit_iter *it = NULL;
    audit_entry e;
    int s = 0;
    rc = audit_iter_open(a->db, from, to, &it, err);
    while (rc == CR_OK && (s = audit_iter_next(it, &e, err)) == 1) rc = each(&e, arg);
    if (s < 0) rc = err ? err->code : CR_EAUDIT;
    audit_iter_close(it);
    return rc;
}

/* The checkpoint note a bundle or an export is made against: the file at note_path, or one
 * signed now with key_path for the tree of `size` records (0: all). */
static cr_code note_get(cr_audit *a, const char *note_path, const char *key_path,
                        const char *origin, uint64_t size, char **note, size_t *len,
                        cr_error *err)
{
    if (note_path) return audit_file_read(note_path, AUDIT_NOTE_MAX, note, len, err);
    cr_code rc = cr_audit_note(a, key_path, origin, size, note, err);
    if (rc == CR_OK) *len = strlen(*note);
    return rc;
}

cr_code cr_audit_prove_bundle(cr_audit *a, uint64_t seq, const char *note_path,
                              const char *key_path, const char *origin, uint64_t size,
                              char **bundle, cr_error *err)
{
    char *note = NULL;
    size_t len = 0;
    cr_buf b;
    cr_buf_init(&b, 0);
    *bundle = NULL;
    cr_code rc = note_get(a, note_path, key_path, origin, size, &note, &len, err);
    if (rc == CR_OK) rc = audit_bundle_make(a->db, seq, note, len, &b, err);
    free(note);
    return text_out(rc, &b, bundle);
}

cr_code cr_cosigners_gather(cr_cosigners *c, cr_audit *a, const char *note, char **cosigned,
                            int *got, char *why, size_t why_len, cr_error *err)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    return text_out(audit_cosigners_gather(c, a->db, note, &b, got, why, why_len, err), &b,
                    cosigned);
}

cr_code cr_audit_tiles_note(cr_audit *a, const char *dir, const char *note,
                            cr_audit_tiles_report *rep, cr_error *err)
{
    audit_tiles_report r;
    memset(rep, 0, sizeof *rep);
    cr_code rc = audit_tiles_write(a->db, note, strlen(note), dir, &r, err);
    rep->size = r.size;
    rep->tiles = r.tiles;
    rep->bundles = r.bundles;
    rep->bundles_skipped = r.bundles_skipped;
    rep->files = r.files;
    snprintf(rep->skipped, sizeof rep->skipped, "%s", r.skipped);
    return rc;
}

cr_code cr_audit_tiles(cr_audit *a, const char *dir, const char *note_path,
                       const char *key_path, const char *origin, cr_audit_tiles_report *rep,
                       cr_error *err)
{
    char *note = NULL;
    size_t len = 0;
    memset(rep, 0, sizeof *rep);
    cr_code rc = note_get(a, note_path, key_path, origin, 0, &note, &len, err);
    if (rc == CR_OK) rc = cr_audit_tiles_note(a, dir, note, rep, err);
    free(note);
    return rc;
}

cr_code cr_audit_vkey(const char *pubkey_path, const char *name, int witness, char **vkey,
                      cr_error *err)
{
    uint8_t pk[crypto_sign_PUBLICKEYBYTES];
    char dflt[64];
    cr_buf b;
    cr_buf_init(&b, 0);
    *vkey = NULL;
    cr_code rc = audit_key_read(pubkey_path, pk, sizeof pk, err);
    if (rc == CR_OK && !name) {
        audit_default_origin(pk, dflt, sizeof dflt);
        name = dflt;
    }
    if (rc == CR_OK)
        rc = audit_vkey_format(name, witness ? AUDIT_SIG_COSIGNATURE : AUDIT_SIG_ED25519, pk,
                               &b, err);
    return text_out(rc, &b, vkey);
}

cr_code cr_audit_verify_bundle(const char *bundle_path, const char *policy_path,
                               const char *entry_path, cr_audit_bundle_report *rep,
                               cr_error *err)
{
    char *bundle = NULL, *policy = NULL, *entry = NULL;
    size_t blen, plen, elen;
    audit_policy *pol = NULL;
    audit_bundle_result r;
    uint8_t leaf[AUDIT_HASH_LEN];
    memset(rep, 0, sizeof *rep);
    if (sodium_init() < 0) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: libsodium init");
    cr_code rc = audit_file_read(policy_path, AUDIT_NOTE_MAX, &policy, &plen, err);
    if (rc == CR_OK) rc = audit_policy_parse(policy, plen, &pol, err);
    if (rc == CR_OK) rc = audit_file_read(bundle_path, AUDIT_NOTE_MAX * 2, &bundle, &blen, err);
    if (rc == CR_OK && entry_path &&
        (rc = audit_file_read(entry_path, AUDIT_PROOF_MAX, &entry, &elen, err)) == CR_OK)
        audit_leaf_hash(entry, elen, leaf);
    if (rc == CR_OK) {
        rc = audit_bundle_check(bundle, blen, pol, entry_path ? leaf : NULL, &r, err);
        rep->index = r.index;
        rep->size = r.size;
        rep->seq = r.seq;
        rep->nwitnesses = r.nwitnesses;
        audit_hex(r.leaf, rep->leaf_hash);
        snprintf(rep->origin, sizeof rep->origin, "%s", r.origin);
        snprintf(rep->quorum, sizeof rep->quorum, "%s", r.quorum);
        snprintf(rep->witnesses, sizeof rep->witnesses, "%s", r.witnesses);
    }
    audit_policy_free(pol);
    free(bundle);
    free(policy);
    free(entry);
    return rc;
}
