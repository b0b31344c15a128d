/* audit/hash.c: SHA-256 for the ledger, through OpenSSL's libcrypto, which uses the CPU's
 * SHA extensions where it has them: hashing is most of verify's work, and libsodium's
 * portable SHA-256 ran at a quarter of libcrypto's speed on 650-byte records here. */
#include "audit/audit_int.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <sodium.h>

/* One digest context per thread, made on first use and freed when the thread ends. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t ctx_key;
static EVP_MD *sha256;

static void ctx_free(void *c) { EVP_MD_CTX_free(c); }

static void init(void)
{
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (pthread_key_create(&ctx_key, ctx_free) != 0) sha256 = NULL;
}

static EVP_MD_CTX *thread_ctx(void)
{
    pthread_once(&once, init);
    if (!sha256) return NULL;
    EVP_MD_CTX *c = pthread_getspecific(ctx_key);
    if (!c && (c = EVP_MD_CTX_new()) && pthread_setspecific(ctx_key, c) != 0) {
        EVP_MD_CTX_free(c);
        c = NULL;
    }
    return c;
}

void audit_sha256(const audit_span *parts, size_t n, uint8_t out[AUDIT_HASH_LEN])
{
    EVP_MD_CTX *c = thread_ctx();
    int ok = c && EVP_DigestInit_ex(c, sha256, NULL) == 1;
    for (size_t i = 0; ok && i < n; i++) ok = EVP_DigestUpdate(c, parts[i].p, parts[i].len) == 1;
    unsigned int len = 0;
    if (ok && EVP_DigestFinal_ex(c, out, &len) == 1 && len == AUDIT_HASH_LEN) return;
    /* libcrypto without memory or without SHA-256: libsodium's digest is the same one */
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    for (size_t i = 0; i < n; i++) crypto_hash_sha256_update(&st, parts[i].p, parts[i].len);
    crypto_hash_sha256_final(&st, out);
}
