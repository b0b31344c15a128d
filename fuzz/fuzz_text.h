/* fuzz/fuzz_text.h: how the targets of texts an examiner receives (fuzz_tlog.c,
 * fuzz_bundle.c) make a forger's edit: a genuine template with the input XORed onto it. */
#ifndef CR_FUZZ_TEXT_H
#define CR_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/* The template t with data XORed onto it (and appended past its end), as a new NUL-ended
 * buffer of *len bytes. */
static char *fuzz_xor(const cr_buf *t, const uint8_t *data, size_t size, size_t *len)
{
    size_t n = size > t->len ? size : t->len;
    char *p = malloc(n + 1);
    if (!p) abort();
    memcpy(p, t->p, t->len);
    memset(p + t->len, 0, n - t->len);
    for (size_t i = 0; i < size; i++) p[i] ^= (char)data[i];
    p[n] = '\0';
    *len = n;
    return p;
}

#endif
