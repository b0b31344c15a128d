/* fuzz/fuzz_snapheader.c: the kvm snapshot's header check, vmm_snap_header_parse(), which a
 * restore runs on the file's first page before it maps anything. The input is the header
 * bytes, XORed onto a well-formed header of a fixed identity, and its first 8 bytes also
 * perturb the file size, so the empty input is a good snapshot and each mutation a file
 * changed or cut short. Invariant beyond no crash or UB: an accepted header's layout lies
 * inside the file and its counts within the bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/kvm/vmm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static vmm_snap_id id = { .kernel = { 1, 2, 3 }, .initrd = { 4, 5, 6 }, .build = "b" };
    vmm_snap_header h, got;
    uint8_t buf[VMM_SNAP_HEADER];
    cr_error e = {0};
    uint64_t file, delta = 0;

    memset(&h, 0, sizeof h);
    h.magic = VMM_SNAP_MAGIC;
    h.version = VMM_SNAP_VERSION;
    h.header_size = sizeof h;
    h.mem_bytes = 4u << 20;
    h.shared_bytes = 1u << 20;
    h.state_off = VMM_SNAP_HEADER;
    h.nmsrs = 1;
    h.ncpuid = 1;
    h.id = id;
    /* The state length as the parser wants it: found by asking, as the unit test does. */
    for (uint64_t len = 4096; len < 65536; len += 8) {
        h.state_len = len;
        h.mem_off = (VMM_SNAP_HEADER + len + 4095) & ~4095ull;
        if (vmm_snap_header_parse(&h, sizeof h, h.mem_off + h.mem_bytes, &id, &got, &e) == CR_OK)
            break;
    }
    file = h.mem_off + h.mem_bytes;
    memset(buf, 0, sizeof buf);
    memcpy(buf, &h, sizeof h);
    size_t n = size < sizeof buf ? size : sizeof buf;
    for (size_t i = 0; i < n; i++) buf[i] ^= data[i];
    memcpy(&delta, data, size < 8 ? size : 8);
    file ^= delta;
    size_t len = size > sizeof buf ? sizeof buf - (size % 64) : sizeof buf;
    if (vmm_snap_header_parse(buf, len, file, &id, &got, &e) == CR_OK) {
        if (got.mem_off > file || file - got.mem_off != got.mem_bytes ||
            got.nmsrs > VMM_SNAP_MAX_MSRS || got.ncpuid > VMM_SNAP_MAX_CPUID ||
            got.mem_bytes > VMM_MAX_MEM)
            abort();
    } else if (!e.message[0]) {
        abort();
    }
    return 0;
}
