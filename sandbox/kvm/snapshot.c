/* sandbox/kvm/snapshot.c: a VM saved at a stop and restored into a fresh VM (the kvm tier's
 * snapshot; vmm.h has the file format and the order of the steps, docs/DESIGN.md why).
 *
 * Saving wants the vCPU outside KVM_RUN with its last exit completed: an `out` that exited
 * to us is finished only by the next KVM_RUN, so vmm_snapshot_save() first runs the vCPU once
 * with immediate_exit set, which completes it and returns EINTR before any guest instruction.
 * Restoring maps guest RAM MAP_PRIVATE from the file: nothing is read until the guest touches
 * it, and what it writes is this VM's own copy. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/kvm/vmm_int.h"

#define MSR_IA32_TSC 0x10u
#define MSR_IA32_TSC_DEADLINE 0x6e0u

/* Everything but the MSRs and CPUID, whose counts vary. Plain bytes for XSAVE: the header's
 * struct ends in a flexible array, which cannot sit inside another struct. */
struct snap_state {
    struct kvm_mp_state mp;
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    uint32_t xsave[1024];
    struct kvm_xcrs xcrs;
    struct kvm_debugregs debugregs;
    struct kvm_lapic_state lapic;
    struct kvm_vcpu_events events;
    struct kvm_pit_state2 pit;
    struct kvm_clock_data clock;
    struct kvm_irqchip chips[3];        /* PIC master, PIC slave, IOAPIC */
    struct uart uart;                   /* our device model */
    uint8_t cmos_index;
    uint8_t pad[7];
};

_Static_assert(sizeof(struct snap_state) % 8 == 0, "the MSRs that follow stay aligned");

static size_t state_len(uint32_t nmsrs, uint32_t ncpuid)
{
    return sizeof(struct snap_state) + nmsrs * sizeof(struct kvm_msr_entry) +
           ncpuid * sizeof(struct kvm_cpuid_entry2);
}

static uint64_t page_up(uint64_t v) { return (v + 4095) & ~4095ull; }

struct ws_range {
    uint32_t first, count;              /* guest pages */
};

/* ---- identity and header ----------------------------------------------------------------- */

static cr_code file_id(const char *path, uint64_t out[3], cr_error *err)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: stat %s: %s", path,
                            strerror(errno));
    out[0] = (uint64_t)st.st_size;
    out[1] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    out[2] = (uint64_t)st.st_ino;
    return CR_OK;
}

cr_code vmm_snap_identity(const char *kernel, const char *initrd, const char *pmem,
                          const char *cmdline, vmm_snap_id *id, cr_error *err)
{
    uint64_t h = 0xcbf29ce484222325ull;                 /* FNV-1a of the command line */
    for (const char *c = cmdline ? cmdline : ""; *c; c++) h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    cr_code rc;
    memset(id, 0, sizeof *id);
    if ((rc = file_id(kernel, id->kernel, err)) != CR_OK ||
        (rc = file_id(initrd, id->initrd, err)) != CR_OK ||
        (pmem && (rc = file_id(pmem, id->pmem, err)) != CR_OK))
        return rc;
    /* The VMM's side: the state layout, the region protocol the guest init speaks, and the
     * kernel command line the guest booted with. */
    snprintf(id->build, sizeof id->build, "crvm%u snap%u state%zu msr%zu cpuid%zu cmd%016llx",
             CRVM_VERSION, VMM_SNAP_VERSION, sizeof(struct snap_state),
             sizeof(struct kvm_msr_entry), sizeof(struct kvm_cpuid_entry2),
             (unsigned long long)h);
    return CR_OK;
}

static const char *id_mismatch(const vmm_snap_id *got, const vmm_snap_id *want)
{
    if (memcmp(got->kernel, want->kernel, sizeof got->kernel)) return "another kernel";
    if (memcmp(got->initrd, want->initrd, sizeof got->initrd)) return "another initramfs";
    if (memcmp(got->pmem, want->pmem, sizeof got->pmem)) return "another package image";
    if (memcmp(got->build, want->build, sizeof got->build)) return "another VMM build";
    return NULL;
}

cr_code vmm_snap_header_parse(const void *buf, size_t len, uint64_t file_size,
                              const vmm_snap_id *want, vmm_snap_header *h, cr_error *err)
{
    const char *why;
    if (len < sizeof *h)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: %zu bytes, shorter than "
                            "its header", len);
    memcpy(h, buf, sizeof *h);
    if (h->magic != VMM_SNAP_MAGIC)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: not a snapshot (magic)");
    if (h->version != VMM_SNAP_VERSION || h->header_size != sizeof *h)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: format %u (header %u), "
                            "want %u (%zu)", h->version, h->header_size, VMM_SNAP_VERSION,
                            sizeof *h);
    if (!memchr(h->id.build, '\0', sizeof h->id.build))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: build not NUL-ended");
    if ((why = id_mismatch(&h->id, want)))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot made from %s: refused",
                            why);
    if (h->mem_bytes < VMM_MIN_MEM || h->mem_bytes > VMM_MAX_MEM || h->mem_bytes % 4096 ||
        h->shared_bytes < 4096 || h->shared_bytes > VMM_MAX_SHARED || h->shared_bytes % 4096 ||
        h->irqchip > 1)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: memory %llu, region %u, "
                            "irqchip %u out of range", (unsigned long long)h->mem_bytes,
                            h->shared_bytes, h->irqchip);
    if (h->nmsrs > VMM_SNAP_MAX_MSRS || h->ncpuid == 0 || h->ncpuid > VMM_SNAP_MAX_CPUID)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: %u MSRs, %u CPUID entries",
                            h->nmsrs, h->ncpuid);
    uint64_t slen = state_len(h->nmsrs, h->ncpuid);
    uint64_t ranges = (uint64_t)h->ws_write + h->ws_read;
    if (ranges > VMM_SNAP_MAX_RANGES)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: %llu working-set ranges",
                            (unsigned long long)ranges);
    uint64_t ws_off = ranges ? h->mem_off + h->mem_bytes : 0;
    if (h->state_off != VMM_SNAP_HEADER || h->state_len != slen ||
        h->mem_off != page_up(VMM_SNAP_HEADER + slen) || file_size < h->mem_off ||
        file_size - h->mem_off != h->mem_bytes + ranges * sizeof(struct ws_range) ||
        h->ws_off != ws_off)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: layout (state %llu+%llu, "
                            "memory at %llu, file %llu bytes) does not add up",
                            (unsigned long long)h->state_off, (unsigned long long)h->state_len,
                            (unsigned long long)h->mem_off, (unsigned long long)file_size);
    return CR_OK;
}

/* ---- save ------------------------------------------------------------------------------- */

/* The MSRs KVM lists, each read once to keep only those this vCPU has; TSC_DEADLINE goes
 * last, since its value is taken relative to the TSC restored before it. */
static cr_code get_msrs(vmm *vm, struct kvm_msr_entry **out, uint32_t *count, cr_error *err)
{
    struct kvm_msr_list *list = NULL;
    struct kvm_msr_entry *m = NULL;
    cr_code rc = CR_OK;
    uint32_t n = 0, keep = 0;

    *out = NULL;
    *count = 0;
    struct kvm_msr_list probe = { .nmsrs = 0 };
    if (ioctl(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
        return vmm_fail(err, "KVM_GET_MSR_INDEX_LIST", errno);
    if (probe.nmsrs > VMM_SNAP_MAX_MSRS)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: %u MSRs to save",
                            probe.nmsrs);
    if (!(list = calloc(1, sizeof *list + probe.nmsrs * sizeof list->indices[0])) ||
        !(m = calloc(probe.nmsrs + 1, sizeof *m))) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: snapshot: MSR list");
        goto out;
    }
    list->nmsrs = probe.nmsrs;
    if (kio(vm->kvm_fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
        rc = vmm_fail(err, "KVM_GET_MSR_INDEX_LIST", errno);
        goto out;
    }
    uint32_t total = list->nmsrs < probe.nmsrs ? list->nmsrs : probe.nmsrs;
    for (uint32_t i = 0; i < total; i++) {
        struct { struct kvm_msrs h; struct kvm_msr_entry e; } one = {
            .h.nmsrs = 1, .e.index = list->indices[i] };
        if (kio(vm->vcpu_fd, KVM_GET_MSRS, &one) != 1) continue;   /* not this vCPU's */
        m[n++] = one.e;
    }
    /* In place: every entry but the deadline keeps its order, the deadline goes last. */
    struct kvm_msr_entry deadline = { .index = 0 };
    int has_deadline = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m[i].index == MSR_IA32_TSC_DEADLINE) {
            deadline = m[i];
            has_deadline = 1;
        } else {
            m[keep++] = m[i];
        }
    }
    if (has_deadline) m[keep++] = deadline;
    *count = keep;
    *out = m;
    m = NULL;
out:
    free(list);
    free(m);
    return rc;
}

/* The vCPU's CPUID table, of the size set_cpuid() gave it: some kernels (6.1) leave nent as
 * the caller's on success, and answer nothing useful to a probe of 0 (PVM). */
static cr_code get_cpuid(vmm *vm, struct kvm_cpuid2 **out, cr_error *err)
{
    uint32_t n = vm->cpuid_nent;
    if (n == 0 || n > VMM_SNAP_MAX_CPUID)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: %u CPUID entries", n);
    struct kvm_cpuid2 *c = calloc(1, sizeof *c + n * sizeof c->entries[0]);
    if (!c) return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: snapshot: CPUID");
    c->nent = n;
    if (kio(vm->vcpu_fd, KVM_GET_CPUID2, c) < 0) {
        free(c);
        return vmm_fail(err, "KVM_GET_CPUID2", errno);
    }
    c->nent = n;
    *out = c;
    return CR_OK;
}

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(fd, (const char *)p + done, n - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

static int page_is_zero(const uint8_t *p)
{
    static const uint8_t zero[4096];
    return !memcmp(p, zero, sizeof zero);
}

/* Guest RAM into the file at off, sparse: pages never touched (mincore says they are not
 * resident) or all zeros stay holes. */
static cr_code save_memory(vmm *vm, int fd, uint64_t off, cr_error *err)
{
    uint64_t mem = vm->cfg.mem_bytes, chunk = 64ull << 20;
    unsigned char *vec = malloc(chunk / 4096);
    if (!vec) return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: snapshot: mincore vector");
    for (uint64_t base = 0; base < mem; base += chunk) {
        uint64_t len = mem - base < chunk ? mem - base : chunk;
        int resident_known = mincore(vm->ram + base, len, vec) == 0;
        for (uint64_t p = 0; p < len; p += 4096) {
            if (resident_known && !(vec[p / 4096] & 1)) continue;
            const uint8_t *pg = vm->ram + base + p;
            if (page_is_zero(pg)) continue;
            if (pwrite_all(fd, pg, 4096, off + base + p) < 0) {
                free(vec);
                return vmm_fail(err, "snapshot: write guest memory", errno);
            }
        }
    }
    free(vec);
    if (ftruncate(fd, (off_t)(off + mem)) < 0) return vmm_fail(err, "snapshot: ftruncate", errno);
    return CR_OK;
}

/* The vCPU's state that reads and writes as one ioctl a part, both ways in one order
 * (Firecracker's): MP state first (reading it may change the LAPIC), the LAPIC after sregs
 * (which carry the APIC base). The LAPIC exists only with the in-kernel irqchip. */
static cr_code vcpu_parts(vmm *vm, struct snap_state *s, int set, cr_error *err)
{
#define PART(what, p) { KVM_GET_##what, KVM_SET_##what, p, #what }
    const struct { unsigned long get, set; void *p; const char *name; } parts[] = {
        PART(MP_STATE, &s->mp),       PART(REGS, &s->regs),   PART(SREGS, &s->sregs),
        PART(XSAVE, s->xsave),        PART(XCRS, &s->xcrs),   PART(DEBUGREGS, &s->debugregs),
        PART(LAPIC, &s->lapic),
    };
#undef PART
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (parts[i].get == KVM_GET_LAPIC && !vm->cfg.irqchip) continue;
        if (kio(vm->vcpu_fd, set ? parts[i].set : parts[i].get, parts[i].p) < 0) {
            char what[40];
            snprintf(what, sizeof what, "KVM_%s_%s", set ? "SET" : "GET", parts[i].name);
            return vmm_fail(err, what, errno);
        }
    }
    return CR_OK;
}

/* The vCPU's parts first, its events last (the other reads may change them). */
static cr_code get_state(vmm *vm, struct snap_state *s, cr_error *err)
{
    memset(s, 0, sizeof *s);
    cr_code rc = vcpu_parts(vm, s, 0, err);
    if (rc != CR_OK) return rc;
    if (vm->cfg.irqchip) {
        if (kio(vm->vm_fd, KVM_GET_PIT2, &s->pit) < 0) return vmm_fail(err, "KVM_GET_PIT2", errno);
        for (uint32_t c = 0; c < 3; c++) {
            s->chips[c].chip_id = c;
            if (kio(vm->vm_fd, KVM_GET_IRQCHIP, &s->chips[c]) < 0)
                return vmm_fail(err, "KVM_GET_IRQCHIP", errno);
        }
    }
    if (kio(vm->vm_fd, KVM_GET_CLOCK, &s->clock) < 0) return vmm_fail(err, "KVM_GET_CLOCK", errno);
    s->clock.flags = 0;             /* KVM_SET_CLOCK takes none of what GET reports */
    s->uart = vm->uart;
    s->cmos_index = vm->cmos_index;
    return CR_OK;
}

cr_code vmm_snapshot_save(vmm *vm, const vmm_snap_id *id, const char *path, cr_error *err)
{
    struct snap_state *s = NULL;
    struct kvm_msr_entry *msrs = NULL;
    struct kvm_cpuid2 *cpuid = NULL;
    uint32_t nmsrs = 0;
    cr_code rc;
    char tmp[4096];
    int fd = -1;

    if (kio(vm->kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_XSAVE)) <= 0 ||
        kio(vm->kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_XCRS)) <= 0 ||
        kio(vm->kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_DEBUGREGS)) <= 0 ||
        kio(vm->kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_VCPU_EVENTS)) <= 0 ||
        kio(vm->kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_ADJUST_CLOCK)) <= 0)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: KVM lacks XSAVE, XCRS, "
                            "DEBUGREGS, VCPU_EVENTS or ADJUST_CLOCK");
    /* A state larger than the 4 KiB legacy area (AMX) would not fit KVM_GET_XSAVE. */
    int xsave2 = kio(vm->vm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_XSAVE2));
    if (xsave2 > 4096)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: XSAVE state of %d bytes "
                            "(at most 4096)", xsave2);
    /* Complete the exit the vCPU stopped at, without running a guest instruction. */
    vm->run->immediate_exit = 1;
    int r = ioctl(vm->vcpu_fd, KVM_RUN, 0);
    int e = errno;
    vm->run->immediate_exit = 0;
    if (r == 0 || e != EINTR)
        return r == 0 ? cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: the vCPU ran on")
                      : vmm_fail(err, "KVM_RUN (immediate exit)", e);

    if (!(s = malloc(sizeof *s))) return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: snapshot");
    if ((rc = get_state(vm, s, err)) != CR_OK || (rc = get_msrs(vm, &msrs, &nmsrs, err)) != CR_OK ||
        (rc = get_cpuid(vm, &cpuid, err)) != CR_OK)
        goto out;
    /* The events after everything else (Firecracker's order). */
    if (kio(vm->vcpu_fd, KVM_GET_VCPU_EVENTS, &s->events) < 0) {
        rc = vmm_fail(err, "KVM_GET_VCPU_EVENTS", errno);
        goto out;
    }
    vmm_snap_header h = {
        .magic = VMM_SNAP_MAGIC, .version = VMM_SNAP_VERSION, .header_size = sizeof h,
        .mem_bytes = vm->cfg.mem_bytes, .shared_bytes = vm->cfg.shared_bytes,
        .irqchip = (uint32_t)vm->cfg.irqchip, .state_off = VMM_SNAP_HEADER,
        .state_len = state_len(nmsrs, cpuid->nent), .nmsrs = nmsrs, .ncpuid = cpuid->nent,
        .id = *id,
    };
    h.mem_off = page_up(h.state_off + h.state_len);
    int t = kio(vm->vcpu_fd, KVM_GET_TSC_KHZ, NULL);
    h.tsc_khz = t > 0 ? (uint32_t)t : 0;

    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: snapshot path too long");
        goto out;
    }
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444)) < 0) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: create %s: %s", tmp,
                          strerror(errno));
        goto out;
    }
    uint8_t head[VMM_SNAP_HEADER];
    memset(head, 0, sizeof head);
    memcpy(head, &h, sizeof h);
    uint64_t off = h.state_off;
    if (pwrite_all(fd, head, sizeof head, 0) < 0 || pwrite_all(fd, s, sizeof *s, off) < 0 ||
        pwrite_all(fd, msrs, nmsrs * sizeof *msrs, off + sizeof *s) < 0 ||
        pwrite_all(fd, cpuid->entries, cpuid->nent * sizeof cpuid->entries[0],
                   off + sizeof *s + nmsrs * sizeof *msrs) < 0) {
        rc = vmm_fail(err, "snapshot: write the state", errno);
        goto out;
    }
    if ((rc = save_memory(vm, fd, h.mem_off, err)) != CR_OK) goto out;
    if (fsync(fd) < 0 || close(fd) < 0) {
        fd = -1;
        rc = vmm_fail(err, "snapshot: fsync", errno);
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) < 0) rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: rename "
                                                 "to %s: %s", path, strerror(errno));
out:
    if (fd >= 0) close(fd);
    if (rc != CR_OK) unlink(tmp);
    free(s);
    free(msrs);
    free(cpuid);
    return rc;
}

/* ---- restore ---------------------------------------------------------------------------- */

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = pread(fd, (char *)p + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

/* The VM's devices, then the vCPU in Firecracker's order: CPUID, MP state, regs, sregs
 * (which carry the APIC base), XSAVE, XCRs, debug registers, LAPIC (after sregs; before the
 * MSRs, as the TSC deadline takes only with the LAPIC set), MSRs, and the events last (SET_REGS
 * clears a pending exception, which they bring back). */
static cr_code put_state(vmm *vm, struct snap_state *s, struct kvm_msr_entry *msrs,
                         uint32_t nmsrs, struct kvm_cpuid2 *cpuid, uint32_t tsc_khz,
                         cr_error *err)
{
    if (vm->cfg.irqchip) {
        if (kio(vm->vm_fd, KVM_SET_PIT2, &s->pit) < 0) return vmm_fail(err, "KVM_SET_PIT2", errno);
        if (kio(vm->vm_fd, KVM_SET_CLOCK, &s->clock) < 0)
            return vmm_fail(err, "KVM_SET_CLOCK", errno);
        for (int c = 0; c < 3; c++)
            if (kio(vm->vm_fd, KVM_SET_IRQCHIP, &s->chips[c]) < 0)
                return vmm_fail(err, "KVM_SET_IRQCHIP", errno);
    }
    if (kio(vm->vcpu_fd, KVM_SET_CPUID2, cpuid) < 0) return vmm_fail(err, "KVM_SET_CPUID2", errno);
    /* A different TSC rate would make the guest's clock run fast or slow. */
    int now_khz = kio(vm->vcpu_fd, KVM_GET_TSC_KHZ, NULL);
    if (tsc_khz && now_khz > 0 && (uint32_t)now_khz != tsc_khz &&
        kio(vm->vcpu_fd, KVM_SET_TSC_KHZ, KIO_VAL(tsc_khz)) < 0)
        return vmm_fail(err, "KVM_SET_TSC_KHZ", errno);
    cr_code rc = vcpu_parts(vm, s, 1, err);
    if (rc != CR_OK) return rc;
    if (nmsrs) {
        /* A disarmed deadline (0) would never fire once restored: fire it now instead, as
         * Firecracker does; Linux reprograms its timer from the interrupt. */
        uint64_t tsc = 0;
        for (uint32_t i = 0; i < nmsrs; i++)
            if (msrs[i].index == MSR_IA32_TSC) tsc = msrs[i].data;
        for (uint32_t i = 0; i < nmsrs; i++)
            if (msrs[i].index == MSR_IA32_TSC_DEADLINE && msrs[i].data == 0) msrs[i].data = tsc;
        struct kvm_msrs *m = malloc(sizeof *m + nmsrs * sizeof *msrs);
        if (!m) return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: restore: MSRs");
        /* KVM refuses some MSRs it lists when written from the host with their reset value
         * (MSR_KVM_ASYNC_PF_INT, say): one still 0 is what the fresh vCPU has, so it is
         * skipped; any other refusal fails the restore. */
        for (uint32_t done = 0; done < nmsrs;) {
            memset(m, 0, sizeof *m);
            m->nmsrs = nmsrs - done;
            memcpy(m->entries, msrs + done, m->nmsrs * sizeof *msrs);
            int n = kio(vm->vcpu_fd, KVM_SET_MSRS, m);
            if (n < 0) {
                free(m);
                return vmm_fail(err, "KVM_SET_MSRS", errno);
            }
            done += (uint32_t)n;
            if (done < nmsrs && msrs[done].data != 0) {
                uint32_t index = msrs[done].index;
                free(m);
                return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: restore: KVM_SET_MSRS "
                                    "refused MSR 0x%x (%u of %u set)", index, done, nmsrs);
            }
            if (done < nmsrs) done++;
        }
        free(m);
    }
    if (kio(vm->vcpu_fd, KVM_SET_VCPU_EVENTS, &s->events) < 0)
        return vmm_fail(err, "KVM_SET_VCPU_EVENTS", errno);
    vm->uart = s->uart;
    vm->cmos_index = s->cmos_index;
    return CR_OK;
}

/* ---- the working set -----------------------------------------------------------------------
 * A restored VM starts with no page of its RAM mapped, in KVM's nested page tables or in ours:
 * each page the guest touches exits to KVM, which maps it, and one it reads before it writes
 * exits three times (mapped read-only, copied on the write, mapped again). Measured in the
 * nested test host, a warm print(1) touched about 2 800 pages, 1 200 of them written, and
 * those exits were most of its time. The pages a first job touched are kept with the
 * snapshot: a restore copies the written ones and maps the read ones in our page tables
 * before the guest runs, so that each costs the guest one exit, of KVM's fast path. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static cr_code prefault(vmm *vm, int fd, const vmm_snap_header *h, cr_error *err)
{
    /* CR_KVM_PREFAULT=0 leaves the working set alone, =write copies the written pages only
     * (what bench/bench_kvm compares). */
    const char *how = getenv("CR_KVM_PREFAULT");
    uint32_t n = h->ws_write + h->ws_read;
    uint64_t pages = h->mem_bytes / 4096;
    if (how && !strcmp(how, "0")) return CR_OK;
    if (how && !strcmp(how, "write")) n = h->ws_write;
    if (!n) return CR_OK;
    struct ws_range *r = malloc((size_t)n * sizeof *r);
    if (!r) return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: restore: working set");
    if (pread_all(fd, r, (size_t)n * sizeof *r, h->ws_off) < 0) {
        free(r);
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: cannot read its working "
                            "set");
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!r[i].count || r[i].first >= pages || r[i].count > pages - r[i].first) {
            uint32_t first = r[i].first, count = r[i].count;
            free(r);
            return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: working-set range "
                                "%u+%u outside its memory", first, count);
        }
        uint8_t *p = vm->ram + (uint64_t)r[i].first * 4096;
        size_t len = (size_t)r[i].count * 4096;
        int write = i < h->ws_write;
        if (madvise(p, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0 || !write)
            continue;
        /* A kernel before 5.14: the same by hand. */
        for (size_t off = 0; off < len; off += 4096) {
            volatile uint8_t *q = p + off;
            *q = *q;
        }
    }
    free(r);
    return CR_OK;
}

/* Appends runs of one kind of page (1: read, from the file; 2: written, our own copy). */
static int scan_ranges(const uint64_t *pm, uint64_t pages, int want, struct ws_range *out,
                       uint32_t max)
{
    uint32_t n = 0;
    for (uint64_t i = 0; i < pages; i++) {
        int kind = !(pm[i] >> 63 & 1) ? 0 : (pm[i] >> 61 & 1) ? 1 : 2;
        if (kind != want) continue;
        if (n && out[n - 1].first + out[n - 1].count == i) {
            out[n - 1].count++;
        } else {
            if (n == max) return -1;
            out[n++] = (struct ws_range){ (uint32_t)i, 1 };
        }
    }
    return (int)n;
}

cr_code vmm_snapshot_learn(vmm *vm, const char *path, cr_error *err)
{
    uint64_t pages = vm->cfg.mem_bytes / 4096;
    uint64_t *pm = malloc(pages * sizeof *pm);
    struct ws_range *r = malloc(VMM_SNAP_MAX_RANGES * sizeof *r);
    vmm_snap_header h;
    cr_code rc = CR_OK;
    int pfd = -1, fd = -1, nw, nr;
    if (!pm || !r) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: snapshot: working set");
        goto out;
    }
    /* Present, and bit 61: a page of the file (read); present without it: our copy. */
    if ((pfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0 ||
        pread_all(pfd, pm, pages * sizeof *pm, (uint64_t)(uintptr_t)vm->ram / 4096 * 8) < 0) {
        rc = vmm_fail(err, "snapshot: read /proc/self/pagemap", errno);
        goto out;
    }
    if ((nw = scan_ranges(pm, pages, 2, r, VMM_SNAP_MAX_RANGES)) < 0 ||
        (nr = scan_ranges(pm, pages, 1, r + nw, VMM_SNAP_MAX_RANGES - (uint32_t)nw)) < 0) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: working set of more than "
                          "%u ranges", VMM_SNAP_MAX_RANGES);
        goto out;
    }
    /* Our own file, 0444: writable for the moment. */
    if (chmod(path, 0600) < 0 || (fd = open(path, O_RDWR | O_CLOEXEC)) < 0 ||
        pread_all(fd, &h, sizeof h, 0) < 0) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: reopen %s: %s", path,
                          strerror(errno));
        goto out;
    }
    if (h.magic != VMM_SNAP_MAGIC || h.ws_write || h.ws_read ||
        h.mem_bytes != vm->cfg.mem_bytes) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: %s is not the one the VM "
                          "came from, or has a working set", path);
        goto out;
    }
    h.ws_off = h.mem_off + h.mem_bytes;
    h.ws_write = (uint32_t)nw;
    h.ws_read = (uint32_t)nr;
    if (pwrite_all(fd, r, (size_t)(nw + nr) * sizeof *r, h.ws_off) < 0 ||
        pwrite_all(fd, &h, sizeof h, 0) < 0 || fsync(fd) < 0) {
        rc = vmm_fail(err, "snapshot: write the working set", errno);
        /* As it was: a snapshot without one. */
        h.ws_off = 0;
        h.ws_write = h.ws_read = 0;
        if (pwrite_all(fd, &h, sizeof h, 0) < 0 ||
            ftruncate(fd, (off_t)(h.mem_off + h.mem_bytes)) < 0)
            unlink(path);
    }
out:
    if (fd >= 0) close(fd);
    if (pfd >= 0) close(pfd);
    chmod(path, 0444);
    free(pm);
    free(r);
    return rc;
}

cr_code vmm_snapshot_restore(const vmm_config *cfg, const char *path, const vmm_snap_id *id,
                             vmm **out, cr_error *err)
{
    vmm_snap_header h;
    uint8_t head[VMM_SNAP_HEADER];
    uint8_t *blob = NULL;
    struct kvm_cpuid2 *cpuid = NULL;
    struct stat st;
    vmm *vm = NULL;
    cr_code rc;

    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cr_error_set(err, CR_EIO, 0, 0, "kvm: snapshot %s: %s", path,
                            strerror(errno));
    if (fstat(fd, &st) < 0 || pread_all(fd, head, sizeof head, 0) < 0) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot %s: cannot read its header",
                          path);
        goto out;
    }
    if ((rc = vmm_snap_header_parse(head, sizeof head, (uint64_t)st.st_size, id, &h, err)) !=
        CR_OK)
        goto out;
    if (!(blob = malloc(h.state_len)) ||
        !(cpuid = calloc(1, sizeof *cpuid + h.ncpuid * sizeof cpuid->entries[0]))) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: restore: state");
        goto out;
    }
    if (pread_all(fd, blob, h.state_len, h.state_off) < 0) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot %s: cannot read its state",
                          path);
        goto out;
    }
    struct snap_state *s = (struct snap_state *)(void *)blob;
    struct kvm_msr_entry *msrs = (struct kvm_msr_entry *)(void *)(blob + sizeof *s);
    cpuid->nent = h.ncpuid;
    memcpy(cpuid->entries, blob + sizeof *s + h.nmsrs * sizeof *msrs,
           h.ncpuid * sizeof cpuid->entries[0]);
    vmm_config c = *cfg;
    c.mem_bytes = h.mem_bytes;
    c.shared_bytes = h.shared_bytes;
    c.irqchip = (int)h.irqchip;
    if ((rc = vmm_create(&c, fd, h.mem_off, &vm, err)) != CR_OK) goto out;
    if ((rc = prefault(vm, fd, &h, err)) != CR_OK) goto out;
    if ((rc = put_state(vm, s, msrs, h.nmsrs, cpuid, h.tsc_khz, err)) != CR_OK) goto out;
    vm->cpuid_nent = h.ncpuid;
    *out = vm;
    vm = NULL;
out:
    vmm_close(vm);
    close(fd);
    free(blob);
    free(cpuid);
    return rc;
}
