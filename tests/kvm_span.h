/* tests/kvm_span.h: one record of the kvm tier's artifacts span (sandbox/kvm/proto.h), laid
 * out as the guest init writes it; for the tests and the doorbell fuzz target. */
#ifndef CR_TESTS_KVM_SPAN_H
#define CR_TESTS_KVM_SPAN_H

#include <stdint.h>
#include <string.h>

#include "sandbox/kvm/proto.h"

/* Writes the record at p + at (data: content of a CRVM_ENT_FILE, or NULL); the end offset. */
static inline size_t kvm_span_put(uint8_t *p, size_t at, uint8_t type, const char *path,
                                  const char *data)
{
    struct crvm_entry e = { .type = type, .path_len = (uint32_t)strlen(path),
                            .size = data ? (uint32_t)strlen(data) : 0 };
    memcpy(p + at, &e, sizeof e);
    memcpy(p + at + sizeof e, path, e.path_len);
    if (data) memcpy(p + at + sizeof e + e.path_len, data, e.size);
    return at + sizeof e + e.path_len + e.size;
}

#endif
