/* sandbox/kvm/proto.h: the job/result page shared by the VMM and the guest init.
 *
 * One region of guest-physical memory at CRVM_SHARED_GPA, outside guest RAM (the e820 map
 * marks it reserved, so the guest kernel leaves it alone and its init maps it through
 * /dev/mem). It starts with struct crvm_page; every variable-length field is a span
 * {off, len} of bytes inside the region, counted from its start.
 *
 * The host writes the header and the job, then runs the vCPU. The guest fills the result
 * spans and fields, then writes CRVM_RING_RESULT to CRVM_DOORBELL_PORT (a 4-byte `out`); the
 * VMM stops the VM at that exit. The guest owns the region from boot to the ring, so the host
 * trusts nothing in it: it copies the header once and checks every span against the region
 * and against the limits it set itself (vmm_page_read() in vmm.c).
 *
 * Plain C with <stdint.h> only: the static guest init includes it too. Little-endian, as the
 * only architecture we run is x86-64.
 */
#ifndef CR_KVM_PROTO_H
#define CR_KVM_PROTO_H

#include <stdint.h>

#define CRVM_MAGIC 0x4d565243u          /* "CRVM" read as a little-endian u32 */
#define CRVM_VERSION 4u
/* In the 32-bit PCI hole: above any RAM we give a guest (VMM_MAX_MEM), below the TSS and
 * identity-map pages KVM needs near 4 GiB. */
#define CRVM_SHARED_GPA 0xd0000000ull
#define CRVM_DOORBELL_PORT 0x0f00u      /* unassigned on PCs; nothing in Linux probes it */
/* The same doorbell as a 4-byte write to this guest-physical address (no memory there: the
 * write exits to the VMM). A restored guest rings here: measured in the nested test host, its
 * init's `out` to the port faulted (#GP) after a restore even with its I/O permission asked
 * for again, while a write to memory needs no permission of the TSS. */
#define CRVM_DOORBELL_GPA (CRVM_SHARED_GPA - 0x1000ull)

/* Values the guest writes to the doorbell. */
#define CRVM_RING_RESULT 1u             /* the result fields and spans are final: stop */
#define CRVM_RING_BOOTED 2u             /* init started (a timestamp for the boot figures) */
/* With CRVM_JOB_SNAPSHOT: init stopped at its ready point, where the host saves the VM
 * (snapshot.c). A VM restored from that snapshot resumes right after this `out`, reads the
 * header and job the host has written since, and runs it. */
#define CRVM_RING_READY 3u

/* job_flags */
#define CRVM_JOB_SNAPSHOT 1u            /* stop at the ready point (ring READY) before the job */

/* result_flags */
#define CRVM_OUT_TRUNCATED 1u           /* stdout passed job max_stdout: cut there */
#define CRVM_ERR_TRUNCATED 2u           /* stderr passed job max_stderr: cut there */
#define CRVM_SETUP_FAILED 4u            /* the guest could not set the run up: err says why */

/* The artifacts span: what the code left under /out, as back-to-back records of a
 * struct crvm_entry (unaligned: read it with memcpy), then path_len bytes of its path relative
 * to /out ('/'-separated, no NUL), then `size` bytes of content for CRVM_ENT_FILE. The guest
 * walks /out as the host's sandbox_artifacts_collect() does (no symlink followed, names
 * sorted, SANDBOX_ARTIFACT_MAX_DEPTH, SANDBOX_ARTIFACT_MAX_ENTRIES) and sends every entry, so
 * that the host rebuilds the same tree and collects it with the ns tier's own code: the same
 * names, hashes, notes and limits on both tiers. A file past max_artifacts or artifact_bytes
 * goes as CRVM_ENT_DROPPED, without its content. */
#define CRVM_ENT_FILE 1u
#define CRVM_ENT_DIR 2u
#define CRVM_ENT_SYMLINK 3u
#define CRVM_ENT_OTHER 4u                /* a fifo, socket or device node */
#define CRVM_ENT_DROPPED 5u              /* a regular file over the artifact limits */

struct crvm_entry {
    uint8_t type;                       /* CRVM_ENT_* */
    uint8_t reserved[3];                /* 0 */
    uint32_t path_len;
    uint32_t size;                      /* bytes of content that follow the path (FILE only) */
};

struct crvm_span {
    uint32_t off, len;
};

struct crvm_page {
    uint32_t magic;                     /* CRVM_MAGIC */
    uint32_t version;                   /* CRVM_VERSION */
    uint32_t size;                      /* bytes of the whole region */
    uint32_t header_size;               /* sizeof(struct crvm_page): spans start at or after */

    /* host -> guest: the job and its sandbox_limits, which the guest's ns tier enforces */
    struct crvm_span job;               /* the runner's job records (sandbox_job_encode()) */
    uint32_t wall_ms;
    uint32_t cpu_ms;
    uint64_t memory_bytes;
    uint32_t max_procs;
    uint32_t max_stdout;                /* stdout is cut here (and the flag set) */
    uint32_t max_stderr;
    uint32_t max_report;
    uint64_t tmp_bytes;                 /* size of the guest's /tmp */
    uint64_t artifact_bytes;            /* size of the guest's /out; artifacts in all */
    uint32_t max_artifacts;             /* files sent in full; the rest go as DROPPED */
    uint32_t max_artifact_span;         /* bytes of the artifacts span at most */
    uint32_t job_flags;                 /* CRVM_JOB_* */
    uint32_t entropy_len;               /* bytes of entropy[] to feed the kernel's pool */
    /* For a restored VM, which wakes with the clock and random state of its snapshot: the
     * host's CLOCK_REALTIME and fresh random bytes, set and fed before the job runs. */
    uint64_t host_realtime_ns;
    uint8_t entropy[64];
    struct crvm_span data;              /* a restored VM's /data: cpio "newc" (data.c); the
                                           cold boot appends it to the initramfs instead */

    /* guest -> host */
    uint32_t exited;                    /* 1: exit_code is valid; 0: term_signal ended it */
    int32_t exit_code;
    uint32_t term_signal;
    uint32_t limit;                     /* a sandbox_limit the guest saw hit, or 0 */
    uint32_t result_flags;              /* CRVM_* flags above */
    uint32_t reserved;
    uint64_t run_ns;                    /* the outcome's wall_s, cpu_s, peak_memory_bytes */
    uint64_t cpu_ns;
    uint64_t peak_bytes;
    char limit_detail[128];             /* the outcome's strings, NUL-ended within */
    char tier_note[256];
    struct crvm_span out;               /* the code's stdout */
    struct crvm_span err;               /* the code's stderr */
    struct crvm_span report;            /* the runner's report (sandbox_report_parse()) */
    struct crvm_span artifacts;         /* records of struct crvm_entry (above) */
    uint64_t guest_ns[4];               /* guest CLOCK_MONOTONIC: init start, run start,
                                           run end, ring (for the boot figures) */
};

#endif
