/* fuzz/fuzz_tlog.c: what `calc-audit verify-proof` reads, a checkpoint note and a proof that
 * an examiner received from anybody, without the ledger.
 *
 * Once per process a key, six records and their tree are made; the templates are genuine:
 * notes of the trees of 3 and 6 records, an inclusion proof of record 4 and a consistency
 * proof from 3 to 6. The input's first byte picks the proof and which text the rest is XORed
 * onto (bytes past a template's end are appended), so the empty input verifies and every
 * mutation is a forger's edit.
 *
 * Invariants beyond no crash, leak, hang or UB: a note accepted under the key says what the
 * key signed (its origin, size and root are a genuine note's), and an accepted proof proves
 * only the truth (the leaf of an inclusion proof is the genuine leaf of its seq; a consistency
 * proof links two genuine sizes). */
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "fuzz/fuzz_text.h"

#define FT_RECORDS 6
#define FT_ORIGIN "example.com/fuzz"

static uint8_t ft_sk[64], ft_pk[32], ft_rec[FT_RECORDS][24];
static uint8_t ft_leaf[FT_RECORDS][AUDIT_HASH_LEN], ft_root[FT_RECORDS + 1][AUDIT_HASH_LEN];
static cr_buf ft_note[2], ft_proof[2];   /* [0]: size 3 / consistency 3->6; [1]: 6 / seq 4 */

static void ft_fail(const char *what)
{
    fprintf(stderr, "fuzz_tlog: %s\n", what);
    abort();
}

static void ft_b64(cr_buf *b, const void *p, size_t n)
{
    char s[128];
    sodium_bin2base64(s, sizeof s, p, n, sodium_base64_VARIANT_ORIGINAL);
    cr_buf_puts(b, s);
    cr_buf_putc(b, '\n');
}

static void ft_init(void)
{
    uint8_t seed[32] = { 1 }, path[64][AUDIT_HASH_LEN];
    cr_error err = { 0 };
    if (sodium_init() < 0) ft_fail("sodium_init");
    crypto_sign_seed_keypair(ft_pk, ft_sk, seed);
    for (int i = 0; i < FT_RECORDS; i++) {
        memset(ft_rec[i], 'a' + i, sizeof ft_rec[i]);
        memset(ft_rec[i], 0, 12);
        ft_rec[i][3] = 1;                    /* format 1 */
        ft_rec[i][11] = (uint8_t)(i + 1);    /* seq */
        audit_leaf_hash(ft_rec[i], sizeof ft_rec[i], ft_leaf[i]);
    }
    for (int n = 0; n <= FT_RECORDS; n++)
        audit_tree_root((const uint8_t(*)[AUDIT_HASH_LEN])ft_leaf, (uint64_t)n, ft_root[n]);
    for (int i = 0; i < 2; i++) {
        cr_buf_init(&ft_note[i], 0);
        cr_buf_init(&ft_proof[i], 0);
        if (audit_note_sign(FT_ORIGIN, i ? 6 : 3, ft_root[i ? 6 : 3], ft_sk, &ft_note[i], &err))
            ft_fail(err.message);
    }
    size_t n = audit_consistency_path((const uint8_t(*)[AUDIT_HASH_LEN])ft_leaf, 6, 3, path);
    cr_buf_puts(&ft_proof[0], "calcroute/audit/consistency-proof/v1\n3\n6\n");
    for (size_t i = 0; i < n; i++) ft_b64(&ft_proof[0], path[i], AUDIT_HASH_LEN);
    n = audit_inclusion_path((const uint8_t(*)[AUDIT_HASH_LEN])ft_leaf, 6, 3, path);
    cr_buf_puts(&ft_proof[1], "calcroute/audit/inclusion-proof/v1\n6\n3\n");
    ft_b64(&ft_proof[1], ft_rec[3], sizeof ft_rec[3]);
    for (size_t i = 0; i < n; i++) ft_b64(&ft_proof[1], path[i], AUDIT_HASH_LEN);
}

static void ft_check_tree(const audit_tree *t)
{
    if (strcmp(t->origin, FT_ORIGIN) != 0 || (t->size != 3 && t->size != 6) ||
        memcmp(t->root, ft_root[t->size], AUDIT_HASH_LEN) != 0)
        ft_fail("a note not signed by the key was accepted");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        ft_init();
        ready = 1;
    }
    int sel = size ? data[0] : 0;
    int kind = sel & 1;               /* 0: consistency 3->6; 1: inclusion of seq 4 in 6 */
    int target = (sel >> 1) % 3;      /* the text mutated: 0 proof, 1 new note, 2 old note */
    const uint8_t *rest = size ? data + 1 : data;
    size_t rlen = size ? size - 1 : 0;
    size_t len[3];
    char *text[3];
    const cr_buf *tpl[3] = { &ft_proof[kind], &ft_note[1], &ft_note[0] };
    for (int i = 0; i < 3; i++)
        text[i] = fuzz_xor(tpl[i], rest, i == target ? rlen : 0, &len[i]);
    audit_tree t, old;
    audit_proof_result res;
    cr_error err = { 0 };
    if (audit_note_open(text[1], len[1], ft_pk, &t, &err) == CR_OK) {
        ft_check_tree(&t);
        int have_old = audit_note_open(text[2], len[2], ft_pk, &old, &err) == CR_OK;
        if (have_old) ft_check_tree(&old);
        if (audit_proof_check(text[0], len[0], &t, have_old ? &old : NULL, &res, &err) == CR_OK) {
            if (res.kind == AUDIT_PROOF_INCLUSION &&
                (res.seq < 1 || res.seq > t.size ||
                 memcmp(res.leaf, ft_leaf[res.seq - 1], AUDIT_HASH_LEN) != 0))
                ft_fail("an inclusion proof of a record not in the tree was accepted");
            if (res.kind == AUDIT_PROOF_CONSISTENCY &&
                (!have_old || res.old_size != old.size || res.size != t.size))
                ft_fail("a consistency proof between other trees was accepted");
        }
    } else if (!size) {
        ft_fail(err.message);
    }
    if (!size && audit_proof_check(text[0], len[0], &t, &old, &res, &err) != CR_OK)
        ft_fail("the genuine proof is refused");
    for (int i = 0; i < 3; i++) free(text[i]);
    return 0;
}
