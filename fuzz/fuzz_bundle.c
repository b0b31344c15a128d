/* fuzz/fuzz_bundle.c: what `calc-audit verify-proof --policy` reads, a C2SP tlog-proof bundle
 * and a tlog-policy, either of which an examiner may have received from anybody.
 *
 * Once per process a log key, a witness key, six entries and their tree are made; the
 * templates are genuine: the bundle of entry 4 (index 3) against the note of the tree of 6,
 * cosigned by the witness, and a policy naming both keys with quorum w1. The input's first
 * byte picks which text the rest is XORed onto (bytes past its end are appended), so the
 * empty input verifies and every mutation is a forger's edit.
 *
 * Invariants beyond no crash, leak, hang or UB: a bundle accepted proves only the truth (its
 * index is 3, its leaf entry 4's, its tree the signed one of 6), and the quorum holds only
 * with the witness's genuine cosignature in the note. */
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "fuzz/fuzz_text.h"

#define FB_ENTRIES 6
#define FB_ORIGIN "example.com/fuzz"
#define FB_WITNESS "witness.example/fuzz"

static uint8_t fb_leaf[FB_ENTRIES][AUDIT_HASH_LEN], fb_root[AUDIT_HASH_LEN];
static cr_buf fb_bundle, fb_policy;

static void fb_fail(const char *what)
{
    fprintf(stderr, "fuzz_bundle: %s\n", what);
    abort();
}

static void fb_init(void)
{
    uint8_t seed[32] = { 2 }, sk[64], pk[32], wsk[64], wpk[32], path[64][AUDIT_HASH_LEN];
    char hex[2 * AUDIT_HASH_LEN + 1], extra[128], b64[256];
    cr_buf note;
    cr_error err = { 0 };
    if (sodium_init() < 0) fb_fail("sodium_init");
    crypto_sign_seed_keypair(pk, sk, seed);
    seed[0] = 3;
    crypto_sign_seed_keypair(wpk, wsk, seed);
    for (int i = 0; i < FB_ENTRIES; i++) {
        char e[16];
        int n = snprintf(e, sizeof e, "entry %d\n", i + 1);
        audit_leaf_hash(e, (size_t)n, fb_leaf[i]);
    }
    audit_tree_root((const uint8_t(*)[AUDIT_HASH_LEN])fb_leaf, FB_ENTRIES, fb_root);
    cr_buf_init(&note, 0);
    cr_buf_init(&fb_bundle, 0);
    cr_buf_init(&fb_policy, 0);
    if (audit_note_sign(FB_ORIGIN, FB_ENTRIES, fb_root, sk, &note, &err)) fb_fail(err.message);
    /* the note's text: up to the blank line, its newline included */
    size_t tlen = (size_t)(strstr(note.p, "\n\n") - note.p) + 1;
    if (audit_cosign(FB_WITNESS, wsk, 1700000000, note.p, tlen, &note, &err))
        fb_fail(err.message);
    audit_hex(fb_leaf[3], hex);
    int xl = snprintf(extra, sizeof extra, "calcroute/audit/entry/v1\nseq 4\nleaf %s\n", hex);
    sodium_bin2base64(b64, sizeof b64, (const unsigned char *)extra, (size_t)xl,
                      sodium_base64_VARIANT_ORIGINAL);
    cr_buf_printf(&fb_bundle, "c2sp.org/tlog-proof@v1\nextra %s\nindex 3\n", b64);
    size_t n = audit_inclusion_path((const uint8_t(*)[AUDIT_HASH_LEN])fb_leaf, FB_ENTRIES, 3, path);
    for (size_t i = 0; i < n; i++) {
        sodium_bin2base64(b64, sizeof b64, path[i], AUDIT_HASH_LEN, sodium_base64_VARIANT_ORIGINAL);
        cr_buf_printf(&fb_bundle, "%s\n", b64);
    }
    cr_buf_putc(&fb_bundle, '\n');
    cr_buf_put(&fb_bundle, note.p, note.len);
    cr_buf_puts(&fb_policy, "log ");
    audit_vkey_format(FB_ORIGIN, AUDIT_SIG_ED25519, pk, &fb_policy, &err);
    cr_buf_puts(&fb_policy, "witness w1 ");
    audit_vkey_format(FB_WITNESS, AUDIT_SIG_COSIGNATURE, wpk, &fb_policy, &err);
    cr_buf_puts(&fb_policy, "quorum w1\n");
    cr_buf_free(&note);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        fb_init();
        ready = 1;
    }
    int target = size ? data[0] & 1 : 0;   /* 0: the bundle mutated; 1: the policy */
    const uint8_t *rest = size ? data + 1 : data;
    size_t rlen = size ? size - 1 : 0, blen, plen;
    char *bundle = fuzz_xor(&fb_bundle, rest, target == 0 ? rlen : 0, &blen);
    char *policy = fuzz_xor(&fb_policy, rest, target == 1 ? rlen : 0, &plen);
    audit_policy *pol = NULL;
    audit_bundle_result res;
    cr_error err = { 0 };
    if (audit_policy_parse(policy, plen, &pol, &err) == CR_OK) {
        if (audit_bundle_check(bundle, blen, pol, NULL, &res, &err) == CR_OK &&
            (res.index != 3 || res.size != FB_ENTRIES ||
             memcmp(res.leaf, fb_leaf[3], AUDIT_HASH_LEN) != 0))
            fb_fail("a bundle proving something untrue was accepted");
        audit_policy_free(pol);
    } else if (!size) {
        fb_fail(err.message);
    }
    if (!size) {
        if (audit_policy_parse(policy, plen, &pol, &err) != CR_OK ||
            audit_bundle_check(bundle, blen, pol, NULL, &res, &err) != CR_OK ||
            res.nwitnesses != 1)
            fb_fail(err.message[0] ? err.message : "the genuine bundle is refused");
        audit_policy_free(pol);
    }
    free(bundle);
    free(policy);
    return 0;
}
