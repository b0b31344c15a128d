/* sandbox/kvm/vmm.c: the VMM: VM and vCPU set-up, the run loop and its device model, the
 * job/result region. Every ioctl is named in its error, with advice for the usual errno. */
#include "sandbox/kvm/vmm_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define COM1 0x3f8u
#define CMOS_INDEX 0x70u
#define CMOS_DATA 0x71u
#define PCI_CONF_ADDR 0xcf8u
#define I8042_CMD 0x64u            /* written: a command; read: the controller's status */
#define I8042_RESET 0xfeu
/* The status a reset needs: the input buffer empty (bit 1 clear), everything else floating
 * high. The kernel's keyboard reset polls the status up to 65 536 times for that bit, an exit
 * each: with 0xff every panic and power-off ended in that storm (seconds under nested
 * emulation). The output buffer stays "full" (bit 0), so the i8042 driver's probe still
 * flushes its 16 bytes and finds no controller, as with 0xff. */
#define I8042_STATUS 0xfdu
/* Where KVM keeps the TSS Intel's real mode needs: three pages just below the BIOS, above
 * anything we map (the region ends below 0xd4000000). */
#define TSS_GPA 0xfffbd000ull
#define CPUID_MAX_ENTRIES 512u

/* ---- errors ------------------------------------------------------------------------------ */

static const char *advice(int e)
{
    switch (e) {
    case ENOENT: case ENODEV: case ENXIO: return " (no usable /dev/kvm: try --tier ns)";
    case EACCES: case EPERM: return " (no access to /dev/kvm: join group kvm, or try --tier ns)";
    case ENOMEM: return " (the host is short of memory: lower --memory)";
    case EBUSY: return " (another hypervisor holds the CPU's virtualization)";
    case EMFILE: case ENFILE: return " (out of file descriptors)";
    default: return "";
    }
}

cr_code vmm_fail(cr_error *err, const char *what, int e)
{
    return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s: %s%s", what, strerror(e), advice(e));
}


/* ---- capabilities (shared by vmm_open and the host check) ------------------------------ */

static const struct { int cap; const char *name; int irqchip_only; } required_caps[] = {
    { KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY", 0 },
    { KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR", 0 },
    { KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID", 0 },
    { KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT", 0 },
    { KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP", 1 },
    { KVM_CAP_PIT2, "KVM_CAP_PIT2", 1 },
};

/* The API version and every capability we use; NULL when all are there, else what lacks
 * (static, or written into buf). */
static const char *check_kvm(int kvm_fd, int irqchip, char *buf, size_t n)
{
    int v = kio(kvm_fd, KVM_GET_API_VERSION, NULL);
    if (v < 0) {
        snprintf(buf, n, "KVM_GET_API_VERSION: %s", strerror(errno));
        return buf;
    }
    if (v != KVM_API_VERSION) {
        snprintf(buf, n, "KVM API version %d, want %d", v, KVM_API_VERSION);
        return buf;
    }
    for (size_t i = 0; i < sizeof required_caps / sizeof required_caps[0]; i++) {
        if (required_caps[i].irqchip_only && !irqchip) continue;
        if (kio(kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(required_caps[i].cap)) <= 0) {
            snprintf(buf, n, "KVM lacks %s", required_caps[i].name);
            return buf;
        }
    }
    return NULL;
}

/* ---- open and close ------------------------------------------------------------------------ */

void vmm_config_default(vmm_config *c)
{
    memset(c, 0, sizeof *c);
    c->mem_bytes = 64ull << 20;
    c->shared_bytes = 1u << 20;
    c->irqchip = 1;
    c->wall_s = 10;
    c->max_exits = 1000000;
    c->max_serial = 64 << 10;
}

static cr_code check_config(const vmm_config *c, cr_error *err)
{
    if (c->mem_bytes < VMM_MIN_MEM || c->mem_bytes > VMM_MAX_MEM || c->mem_bytes % 4096)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: guest memory %llu bytes: want a "
                            "multiple of 4096 in [%llu, %llu]", (unsigned long long)c->mem_bytes,
                            VMM_MIN_MEM, VMM_MAX_MEM);
    if (c->shared_bytes < 4096 || c->shared_bytes > VMM_MAX_SHARED || c->shared_bytes % 4096)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: shared region %u bytes: want a "
                            "multiple of 4096 up to %llu", c->shared_bytes, VMM_MAX_SHARED);
    if (!(c->wall_s > 0 && c->wall_s <= 86400))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: wall time %g s outside (0, 86400]",
                            c->wall_s);
    if (c->max_exits == 0)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: exit cap 0");
    return CR_OK;
}

static cr_code map_memory(vmm *vm, uint32_t slot, uint64_t gpa, uint64_t size, int fd,
                          uint64_t off, uint8_t **out, cr_error *err)
{
    /* NORESERVE: the guest touches only what it uses; size is the bound, not the cost. From
     * a snapshot file, MAP_PRIVATE: pages come in as the guest touches them, and what it
     * writes stays this VM's own copy. */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_NORESERVE | (fd < 0 ? MAP_ANONYMOUS : 0), fd, (off_t)off);
    if (p == MAP_FAILED) return vmm_fail(err, "mmap guest memory", errno);
    *out = p;
    struct kvm_userspace_memory_region r = {
        .slot = slot, .guest_phys_addr = gpa, .memory_size = size,
        .userspace_addr = (uint64_t)(uintptr_t)p,
    };
    if (kio(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
        return vmm_fail(err, "KVM_SET_USER_MEMORY_REGION", errno);
    return CR_OK;
}

/* The package image at VMM_PMEM_GPA: the file's pages, shared by every VM that maps it and
 * read-only (a guest's write to it exits as MMIO and is dropped, vmm_run()). */
static cr_code map_pmem(vmm *vm, const char *path, cr_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: package image %s: %s", path,
                            strerror(e));
    }
    uint64_t size = (uint64_t)st.st_size;
    if (!S_ISREG(st.st_mode) || size == 0 || size % VMM_PMEM_ALIGN || size > VMM_PMEM_MAX) {
        close(fd);
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: package image %s: %llu bytes, want "
                            "a file of a multiple of %llu bytes up to %llu", path,
                            (unsigned long long)size, VMM_PMEM_ALIGN, VMM_PMEM_MAX);
    }
    if (kio(vm->kvm_fd, KVM_CHECK_EXTENSION, KIO_VAL(KVM_CAP_READONLY_MEM)) <= 0) {
        close(fd);
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: KVM lacks KVM_CAP_READONLY_MEM for "
                            "the package image");
    }
    void *p = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return vmm_fail(err, "mmap the package image", errno);
    vm->pmem = p;
    vm->pmem_bytes = size;
    struct kvm_userspace_memory_region r = {
        .slot = 2, .flags = KVM_MEM_READONLY, .guest_phys_addr = VMM_PMEM_GPA,
        .memory_size = size, .userspace_addr = (uint64_t)(uintptr_t)p,
    };
    if (kio(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
        return vmm_fail(err, "KVM_SET_USER_MEMORY_REGION (package image)", errno);
    return CR_OK;
}

/* The host CPU's features as KVM can virtualize them, passed through unchanged: the guest
 * then runs the host's own python3 build without illegal-instruction surprises. */
static cr_code set_cpuid(vmm *vm, cr_error *err)
{
    struct kvm_cpuid2 *c = NULL;
    cr_code rc = CR_OK;
    for (uint32_t n = 64;; n *= 2) {
        free(c);
        if (!(c = calloc(1, sizeof *c + n * sizeof c->entries[0]))) {
            rc = cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: CPUID table");
            goto out;
        }
        c->nent = n;
        if (kio(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) break;
        if (errno != E2BIG || n >= CPUID_MAX_ENTRIES) {
            rc = vmm_fail(err, "KVM_GET_SUPPORTED_CPUID", errno);
            goto out;
        }
    }
    /* KVM leaves out the one bit it cannot know: that this is a VM. Linux looks for its
     * paravirtual clock and devices only when CPUID.1:ECX says "hypervisor". */
    for (uint32_t i = 0; i < c->nent; i++)
        if (c->entries[i].function == 1) c->entries[i].ecx |= 1u << 31;
    if (kio(vm->vcpu_fd, KVM_SET_CPUID2, c) < 0) rc = vmm_fail(err, "KVM_SET_CPUID2", errno);
    else vm->cpuid_nent = c->nent;
out:
    free(c);
    return rc;
}

/* Linux leaves LINT0/LINT1 as it finds them when it has no MP table: set them as a PC's
 * firmware does, the PIC's output as ExtINT on LINT0 and NMI on LINT1. */
static cr_code wire_lapic(int vcpu_fd, cr_error *err)
{
    struct kvm_lapic_state l;
    uint32_t v;
    if (kio(vcpu_fd, KVM_GET_LAPIC, &l) < 0) return vmm_fail(err, "KVM_GET_LAPIC", errno);
    memcpy(&v, l.regs + 0x350, 4);
    v = (v & ~0x700u) | (7u << 8);                     /* LINT0: ExtINT */
    memcpy(l.regs + 0x350, &v, 4);
    memcpy(&v, l.regs + 0x360, 4);
    v = (v & ~0x700u) | (4u << 8);                     /* LINT1: NMI */
    memcpy(l.regs + 0x360, &v, 4);
    if (kio(vcpu_fd, KVM_SET_LAPIC, &l) < 0) return vmm_fail(err, "KVM_SET_LAPIC", errno);
    return CR_OK;
}

cr_code vmm_open(const vmm_config *cfg, vmm **out, cr_error *err)
{
    return vmm_create(cfg, -1, 0, out, err);
}

cr_code vmm_create(const vmm_config *cfg, int mem_fd, uint64_t mem_off, vmm **out,
                   cr_error *err)
{
    cr_code rc;
    vmm *vm = NULL;
    char why[128];
    const char *lack;
    int n;

    *out = NULL;
    if ((rc = check_config(cfg, err)) != CR_OK) return rc;
    if (!(vm = calloc(1, sizeof *vm))) return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: vmm");
    vm->cfg = *cfg;
    vm->kvm_fd = vm->vm_fd = vm->vcpu_fd = -1;
    /* Unbounded as a cr_buf: serial_put() keeps it a ring of max_serial bytes itself, and a
     * capped cr_buf takes nothing more once cut. */
    cr_buf_init(&vm->serial, 0);

    if ((vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
        rc = vmm_fail(err, "open /dev/kvm", errno);
        goto fail;
    }
    if ((lack = check_kvm(vm->kvm_fd, cfg->irqchip, why, sizeof why))) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s (try --tier ns)", lack);
        goto fail;
    }
    if ((vm->vm_fd = kio(vm->kvm_fd, KVM_CREATE_VM, KIO_VAL(0))) < 0) {
        rc = vmm_fail(err, "KVM_CREATE_VM", errno);
        goto fail;
    }
    /* Intel runs real mode through a TSS of KVM's own; it must sit outside our memory. */
    if (kio(vm->vm_fd, KVM_SET_TSS_ADDR, KIO_VAL(TSS_GPA)) < 0) {
        rc = vmm_fail(err, "KVM_SET_TSS_ADDR", errno);
        goto fail;
    }
    if ((rc = map_memory(vm, 0, 0, cfg->mem_bytes, mem_fd, mem_off, &vm->ram, err)) != CR_OK)
        goto fail;
    if ((rc = map_memory(vm, 1, CRVM_SHARED_GPA, cfg->shared_bytes, -1, 0, &vm->shared, err)) !=
        CR_OK)
        goto fail;
    if (cfg->pmem_path && (rc = map_pmem(vm, cfg->pmem_path, err)) != CR_OK) goto fail;
    if (cfg->irqchip) {
        /* The irqchip before the vCPU, so the vCPU gets an in-kernel local APIC. */
        if (kio(vm->vm_fd, KVM_CREATE_IRQCHIP, NULL) < 0) {
            rc = vmm_fail(err, "KVM_CREATE_IRQCHIP", errno);
            goto fail;
        }
        struct kvm_pit_config pit = { .flags = 0 };
        if (kio(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
            rc = vmm_fail(err, "KVM_CREATE_PIT2", errno);
            goto fail;
        }
    }
    if ((n = kio(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, NULL)) < (int)sizeof(struct kvm_run)) {
        rc = n < 0 ? vmm_fail(err, "KVM_GET_VCPU_MMAP_SIZE", errno)
                   : cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: vCPU mmap size %d", n);
        goto fail;
    }
    vm->run_size = (size_t)n;
    if ((vm->vcpu_fd = kio(vm->vm_fd, KVM_CREATE_VCPU, KIO_VAL(0))) < 0) {
        rc = vmm_fail(err, "KVM_CREATE_VCPU", errno);
        goto fail;
    }
    void *run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vm->vcpu_fd, 0);
    if (run == MAP_FAILED) {
        rc = vmm_fail(err, "mmap kvm_run", errno);
        goto fail;
    }
    vm->run = run;
    if ((rc = set_cpuid(vm, err)) != CR_OK) goto fail;
    if (cfg->irqchip && (rc = wire_lapic(vm->vcpu_fd, err)) != CR_OK) goto fail;
    *out = vm;
    return CR_OK;
fail:
    vmm_close(vm);
    return rc;
}

void vmm_close(vmm *vm)
{
    if (!vm) return;
    if (vm->run) munmap(vm->run, vm->run_size);
    if (vm->vcpu_fd >= 0) close(vm->vcpu_fd);
    if (vm->vm_fd >= 0) close(vm->vm_fd);
    if (vm->kvm_fd >= 0) close(vm->kvm_fd);
    if (vm->ram) munmap(vm->ram, vm->cfg.mem_bytes);
    if (vm->shared) munmap(vm->shared, vm->cfg.shared_bytes);
    if (vm->pmem) munmap((void *)vm->pmem, vm->pmem_bytes);
    cr_buf_free(&vm->serial);
    free(vm);
}

/* ---- guest memory ---------------------------------------------------------------------------- */

uint64_t vmm_pmem_size(const vmm *vm) { return vm->pmem_bytes; }

uint8_t *vmm_guest_ptr(vmm *vm, uint64_t gpa, uint64_t len)
{
    uint64_t mem = vm->cfg.mem_bytes, sh = vm->cfg.shared_bytes;
    if (len <= mem && gpa <= mem - len) return vm->ram + gpa;
    if (gpa >= CRVM_SHARED_GPA && len <= sh && gpa - CRVM_SHARED_GPA <= sh - len)
        return vm->shared + (gpa - CRVM_SHARED_GPA);
    return NULL;
}

cr_code vmm_load(vmm *vm, uint64_t gpa, const void *bytes, size_t len, cr_error *err)
{
    uint8_t *p = vmm_guest_ptr(vm, gpa, len);
    if (!p)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: %zu bytes at 0x%llx do not fit guest "
                            "memory", len, (unsigned long long)gpa);
    memcpy(p, bytes, len);
    return CR_OK;
}

/* ---- vCPU state --------------------------------------------------------------------------- */

cr_code vmm_set_real_mode(vmm *vm, uint16_t cs, uint16_t ip, cr_error *err)
{
    struct kvm_sregs s;
    if (kio(vm->vcpu_fd, KVM_GET_SREGS, &s) < 0) return vmm_fail(err, "KVM_GET_SREGS", errno);
    s.cs.selector = cs;
    s.cs.base = (uint64_t)cs << 4;
    struct kvm_segment *data[] = { &s.ds, &s.es, &s.fs, &s.gs, &s.ss };
    for (size_t i = 0; i < sizeof data / sizeof data[0]; i++) {
        data[i]->selector = 0;
        data[i]->base = 0;
    }
    if (kio(vm->vcpu_fd, KVM_SET_SREGS, &s) < 0) return vmm_fail(err, "KVM_SET_SREGS", errno);
    struct kvm_regs r = { .rip = ip, .rflags = 2 };
    if (kio(vm->vcpu_fd, KVM_SET_REGS, &r) < 0) return vmm_fail(err, "KVM_SET_REGS", errno);
    return CR_OK;
}

/* A descriptor as the CPU reads it from the GDT, from the fields KVM keeps unpacked. */
static uint64_t gdt_entry(const struct kvm_segment *s)
{
    uint64_t lim = s->g ? s->limit >> 12 : s->limit;
    return (lim & 0xffff) | ((s->base & 0xffffff) << 16) | ((uint64_t)s->type << 40) |
           ((uint64_t)s->s << 44) | ((uint64_t)s->dpl << 45) | ((uint64_t)s->present << 47) |
           (((lim >> 16) & 0xf) << 48) | ((uint64_t)s->l << 53) | ((uint64_t)s->db << 54) |
           ((uint64_t)s->g << 55) | (((s->base >> 24) & 0xff) << 56);
}

cr_code vmm_set_long_mode(vmm *vm, uint64_t rip, uint64_t rsp, uint64_t rsi, cr_error *err)
{
    /* Selectors 0x10 and 0x18 are __BOOT_CS and __BOOT_DS of Linux's boot protocol. */
    struct kvm_segment code = { .limit = 0xffffffff, .selector = 0x10, .type = 11,
                                .present = 1, .s = 1, .l = 1, .g = 1 };
    struct kvm_segment data = { .limit = 0xffffffff, .selector = 0x18, .type = 3,
                                .present = 1, .s = 1, .db = 1, .g = 1 };
    struct kvm_segment tss = { .limit = 0xfffff, .selector = 0x20, .type = 11, .present = 1,
                               .g = 1 };
    uint64_t gdt[5] = { 0, 0, gdt_entry(&code), gdt_entry(&data), gdt_entry(&tss) };
    uint64_t *pml4 = (uint64_t *)vmm_guest_ptr(vm, VMM_PML4_GPA, 6 * 4096);
    cr_code rc;

    if ((rc = vmm_load(vm, VMM_GDT_GPA, gdt, sizeof gdt, err)) != CR_OK) return rc;
    if (!pml4) return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: no room for page tables");
    /* Identity map of the low 4 GiB in 2 MiB pages: RAM and the shared region alike. */
    uint64_t *pdpt = pml4 + 512, *pd = pml4 + 1024;
    memset(pml4, 0, 6 * 4096);
    pml4[0] = (VMM_PML4_GPA + 0x1000) | 3;
    for (uint64_t i = 0; i < 4; i++) pdpt[i] = (VMM_PML4_GPA + 0x2000 + i * 0x1000) | 3;
    for (uint64_t i = 0; i < 4 * 512; i++) pd[i] = (i << 21) | 0x83;   /* present, rw, 2M */

    struct kvm_sregs s;
    if (kio(vm->vcpu_fd, KVM_GET_SREGS, &s) < 0) return vmm_fail(err, "KVM_GET_SREGS", errno);
    s.cs = code;
    s.ds = s.es = s.fs = s.gs = s.ss = data;
    s.tr = tss;
    s.gdt.base = VMM_GDT_GPA;
    s.gdt.limit = sizeof gdt - 1;
    s.cr3 = VMM_PML4_GPA;
    s.cr4 = 0x20 | 0x200 | 0x400;              /* PAE, OSFXSR, OSXMMEXCPT */
    s.cr0 = 0x80050033;                        /* PG, AM, WP, NE, ET, MP, PE */
    s.efer = 0x100 | 0x400;                    /* LME, LMA */
    /* The local APIC at its usual address, enabled, this vCPU the bootstrap processor. */
    if (vm->cfg.irqchip) s.apic_base = 0xfee00000 | 0x800 | 0x100;
    if (kio(vm->vcpu_fd, KVM_SET_SREGS, &s) < 0) return vmm_fail(err, "KVM_SET_SREGS", errno);
    struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };
    if (kio(vm->vcpu_fd, KVM_SET_FPU, &fpu) < 0) return vmm_fail(err, "KVM_SET_FPU", errno);
    struct kvm_regs r = { .rip = rip, .rsp = rsp, .rsi = rsi, .rflags = 2 };
    if (kio(vm->vcpu_fd, KVM_SET_REGS, &r) < 0) return vmm_fail(err, "KVM_SET_REGS", errno);
    return CR_OK;
}

/* ---- devices ------------------------------------------------------------------------------ */

/* An 8250 without interrupts or input, just enough for Linux's probe and polled console:
 * registers read back, the transmitter is always empty, loopback mirrors MCR into MSR. */
static uint8_t uart_in(vmm *vm, unsigned reg)
{
    struct uart *u = &vm->uart;
    int dlab = u->lcr & 0x80;
    switch (reg) {
    case 0: return dlab ? u->dll : 0;
    case 1: return dlab ? u->dlm : u->ier;
    case 2: return 0x01;                               /* no interrupt pending */
    case 3: return u->lcr;
    case 4: return u->mcr;
    case 5: return 0x60;                               /* THR empty, transmitter idle */
    case 6:
        if (u->mcr & 0x10)
            return (uint8_t)(((u->mcr & 1) << 5) | ((u->mcr & 2) << 3) |
                             ((u->mcr & 4) << 4) | ((u->mcr & 8) << 4));
        return 0xb0;                                   /* DCD, DSR, CTS */
    default: return u->scr;
    }
}

/* Keeps the last max_serial bytes, not the first: a dying guest says why at the end. When
 * full, the older half goes, so each byte is moved at most once on average. */
static void serial_put(vmm *vm, char c)
{
    cr_buf *b = &vm->serial;
    size_t max = vm->cfg.max_serial;
    if (b->len >= max) {
        size_t keep = max / 2;
        memmove(b->p, b->p + b->len - keep, keep);
        b->len = keep;
        b->p[keep] = '\0';
        b->truncated = 1;
    }
    cr_buf_putc(b, c);
}

static void uart_out(vmm *vm, unsigned reg, uint8_t v)
{
    struct uart *u = &vm->uart;
    int dlab = u->lcr & 0x80;
    switch (reg) {
    case 0:
        if (dlab) u->dll = v;
        else if (vm->cfg.max_serial) serial_put(vm, (char)v);
        break;
    case 1:
        if (dlab) u->dlm = v;
        else u->ier = v & 0x0f;
        break;
    case 3: u->lcr = v; break;
    case 4: u->mcr = v & 0x1f; break;
    case 7: u->scr = v; break;
    default: break;                                    /* FCR, read-only LSR/MSR */
    }
}

/* The CMOS clock, read-only, from the host's UTC. Without it Linux polls for an update that
 * never ends (all-ones reads say "update in progress") 10000 times on each of two ports,
 * which costs seconds where exits are slow. */
static uint8_t bcd(int v) { return (uint8_t)(((v / 10) << 4) | (v % 10)); }

/* UTC date from days since 1970-01-01 (the civil-from-days algorithm): plain arithmetic,
 * because gmtime_r() opens the time zone file, which the jailed VMM may not. */
static void civil(int64_t days, int *y, int *m, int *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static uint8_t cmos_in(const vmm *vm)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t t = ts.tv_sec > 0 ? ts.tv_sec : 0, days = t / 86400, sec = t % 86400;
    int y, m, d;
    civil(days, &y, &m, &d);
    switch (vm->cmos_index) {
    case 0x00: return bcd((int)(sec % 60));
    case 0x02: return bcd((int)(sec / 60 % 60));
    case 0x04: return bcd((int)(sec / 3600));
    case 0x06: return bcd((int)((days + 4) % 7) + 1);  /* 1970-01-01 was a Thursday */
    case 0x07: return bcd(d);
    case 0x08: return bcd(m);
    case 0x09: return bcd(y % 100);
    case 0x32: return bcd(y / 100);
    case 0x0a: return 0x26;                            /* no update in progress */
    case 0x0b: return 0x02;                            /* 24-hour, BCD, no interrupts */
    case 0x0d: return 0x80;                            /* battery good */
    default: return 0;
    }
}

static cr_code doorbell(const uint8_t *data, unsigned size, vmm_stop *stop,
                        cr_error *err)
{
    uint32_t v;
    if (size != 4)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: doorbell: %u-byte write, want 4",
                            size);
    memcpy(&v, data, 4);
    if (v == CRVM_RING_RESULT) *stop = VMM_STOP_DOORBELL;
    else if (v == CRVM_RING_READY) *stop = VMM_STOP_READY;
    else if (v != CRVM_RING_BOOTED)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: doorbell: unknown value 0x%x", v);
    return CR_OK;
}

static void count_io(vmm *vm, uint16_t port)
{
    for (size_t i = 0; i < sizeof vm->io_hist / sizeof vm->io_hist[0]; i++) {
        if (vm->io_hist[i].n == 0) vm->io_hist[i].port = port;
        if (vm->io_hist[i].port == port) {
            vm->io_hist[i].n++;
            return;
        }
    }
    vm->io_other++;
}

static cr_code handle_io(vmm *vm, vmm_stop *stop, cr_error *err)
{
    struct kvm_run *run = vm->run;
    unsigned size = run->io.size, port = run->io.port;
    count_io(vm, (uint16_t)port);
    uint64_t bytes = (uint64_t)size * run->io.count;
    if (run->io.data_offset > vm->run_size || bytes > vm->run_size - run->io.data_offset)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: KVM_EXIT_IO data outside kvm_run");
    uint8_t *data = (uint8_t *)run + run->io.data_offset;
    int out = run->io.direction == KVM_EXIT_IO_OUT;
    cr_code rc;

    for (uint32_t i = 0; i < run->io.count && *stop == VMM_STOP_NONE; i++, data += size) {
        if (port >= COM1 && port < COM1 + 8) {
            if (out) uart_out(vm, port - COM1, data[0]);
            else memset(data, uart_in(vm, port - COM1), size);
        } else if (port == PCI_CONF_ADDR && size == 4) {
            /* The address latch alone: the kernel finds a PCI host this way, enumerates no
             * device (every config read is all-ones) and, doing so, lists the e820's
             * persistent memory as a resource, which the package image's driver needs. */
            if (out) memcpy(&vm->pci_addr, data, 4);
            else memcpy(data, &vm->pci_addr, 4);
        } else if (port == CMOS_INDEX && out) {
            vm->cmos_index = data[0] & 0x7f;
        } else if (port == CMOS_DATA && !out) {
            memset(data, cmos_in(vm), size);
        } else if (port == CRVM_DOORBELL_PORT && out) {
            if ((rc = doorbell(data, size, stop, err)) != CR_OK) return rc;
        } else if (port == I8042_CMD && out && data[0] == I8042_RESET) {
            *stop = VMM_STOP_RESET;
        } else if (port == I8042_CMD) {
            memset(data, I8042_STATUS, size);          /* other commands vanish */
        } else if (!out) {
            memset(data, 0xff, size);                  /* absent hardware floats high */
        }
    }
    return CR_OK;
}

static const char *internal_error_name(uint32_t sub)
{
    switch (sub) {
    case KVM_INTERNAL_ERROR_EMULATION: return "instruction emulation failed";
    case KVM_INTERNAL_ERROR_SIMUL_EX: return "exception while delivering an exception";
    case KVM_INTERNAL_ERROR_DELIVERY_EV: return "exit while delivering an event";
    case KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON: return "unexpected exit reason";
    default: return "unknown";
    }
}

static cr_code handle_exit(vmm *vm, vmm_stop *stop, cr_error *err)
{
    struct kvm_run *run = vm->run;
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        return handle_io(vm, stop, err);
    case KVM_EXIT_MMIO:
        /* No MMIO devices: reads see all-ones, writes vanish (the LAPIC and IOAPIC, when
         * there are any, are in the kernel and never get here). */
        if (!run->mmio.is_write) memset(run->mmio.data, 0xff, sizeof run->mmio.data);
        vm->mmio_exits++;
        /* The doorbell's second door (proto.h): a write to its page. */
        if (run->mmio.is_write && run->mmio.phys_addr == CRVM_DOORBELL_GPA)
            return doorbell(run->mmio.data, run->mmio.len, stop, err);
        return CR_OK;
    case KVM_EXIT_HLT:
        *stop = VMM_STOP_HLT;
        return CR_OK;
    case KVM_EXIT_SHUTDOWN:
        *stop = VMM_STOP_SHUTDOWN;
        return CR_OK;
    case KVM_EXIT_SYSTEM_EVENT:
        *stop = run->system_event.type == KVM_SYSTEM_EVENT_RESET ? VMM_STOP_RESET
                                                                 : VMM_STOP_SHUTDOWN;
        return CR_OK;
    case KVM_EXIT_INTR:
        return CR_OK;
    case KVM_EXIT_FAIL_ENTRY:
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: KVM_EXIT_FAIL_ENTRY: the CPU refused "
                            "the guest state (hardware reason 0x%llx)",
                            (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
    case KVM_EXIT_INTERNAL_ERROR:
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: KVM_EXIT_INTERNAL_ERROR: suberror %u "
                            "(%s)", run->internal.suberror,
                            internal_error_name(run->internal.suberror));
    default:
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: unexpected exit reason %u",
                            run->exit_reason);
    }
}

/* ---- the run loop --------------------------------------------------------------------------- */

/* The kvm_run of the vmm_run() active on this thread, for the kick handler. */
static _Thread_local struct kvm_run *volatile tl_run;
static pthread_once_t kick_once = PTHREAD_ONCE_INIT;
static int kick_errno;

/* Setting immediate_exit closes the window between our deadline check and KVM_RUN: if the
 * signal lands there, KVM_RUN returns EINTR at once instead of running the guest on. */
static void kick_handler(int sig, siginfo_t *si, void *uc)
{
    CR_UNUSED(sig); CR_UNUSED(si); CR_UNUSED(uc);
    struct kvm_run *r = tl_run;
    if (r) r->immediate_exit = 1;
}

static void kick_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = kick_handler;
    sa.sa_flags = SA_SIGINFO;        /* no SA_RESTART: KVM_RUN must come back with EINTR */
    sigemptyset(&sa.sa_mask);
    if (sigaction(VMM_KICK_SIGNAL, &sa, NULL) < 0) kick_errno = errno;
}

cr_code vmm_kick_init(cr_error *err)
{
    if (pthread_once(&kick_once, kick_install) != 0 || kick_errno)
        return vmm_fail(err, "install the vCPU kick handler", kick_errno ? kick_errno : EINVAL);
    return CR_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

cr_code vmm_run(vmm *vm, vmm_stop *stop, cr_error *err)
{
    cr_code rc = CR_OK;
    timer_t timer;
    int have_timer = 0, mask_set = 0;
    sigset_t kick, old;

    *stop = VMM_STOP_NONE;
    if ((rc = vmm_kick_init(err)) != CR_OK) return rc;
    double deadline = now_s() + vm->cfg.wall_s;

    tl_run = vm->run;
    vm->run->immediate_exit = 0;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = VMM_KICK_SIGNAL;
    sev._sigev_un._tid = gettid();
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0) {
        rc = vmm_fail(err, "timer_create", errno);
        goto out;
    }
    have_timer = 1;
    sigemptyset(&kick);
    sigaddset(&kick, VMM_KICK_SIGNAL);
    if ((errno = pthread_sigmask(SIG_UNBLOCK, &kick, &old)) != 0) {
        rc = vmm_fail(err, "unblock the vCPU kick signal", errno);
        goto out;
    }
    mask_set = 1;
    double ws = vm->cfg.wall_s;
    struct itimerspec its = { .it_value = { (time_t)ws, (long)((ws - floor(ws)) * 1e9) } };
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    if (timer_settime(timer, 0, &its, NULL) < 0) {
        rc = vmm_fail(err, "timer_settime", errno);
        goto out;
    }

    while (*stop == VMM_STOP_NONE) {
        if (vm->exits >= vm->cfg.max_exits) {
            *stop = VMM_STOP_EXITS;
            break;
        }
        int r = ioctl(vm->vcpu_fd, KVM_RUN, 0);
        vm->exits++;             /* EINTR too: a storm of foreign signals ends at the cap */
        if (r < 0 && errno != EINTR && errno != EAGAIN) {
            rc = vmm_fail(err, "KVM_RUN", errno);
            break;
        }
        if (r == 0 && (rc = handle_exit(vm, stop, err)) != CR_OK) break;
        if (r < 0) vm->run->immediate_exit = 0;
        if (*stop == VMM_STOP_NONE && now_s() >= deadline) *stop = VMM_STOP_TIMEOUT;
    }
out:
    tl_run = NULL;
    vm->run->immediate_exit = 0;
    if (have_timer) timer_delete(timer);
    if (mask_set) pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

const char *vmm_serial(const vmm *vm, size_t *len, int *truncated)
{
    if (len) *len = vm->serial.len;
    if (truncated) *truncated = vm->serial.truncated;
    return vm->serial.p ? vm->serial.p : "";
}

uint64_t vmm_exit_count(const vmm *vm) { return vm->exits; }

const vmm_config *vmm_get_config(const vmm *vm) { return &vm->cfg; }

void vmm_exit_stats(const vmm *vm, char *buf, size_t n)
{
    size_t used = 0;
    if (!n) return;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, n, "%llu exits, mmio %llu", (unsigned long long)vm->exits,
                             (unsigned long long)vm->mmio_exits);
    for (size_t i = 0; i < sizeof vm->io_hist / sizeof vm->io_hist[0] && used < n; i++)
        if (vm->io_hist[i].n)
            used += (size_t)snprintf(buf + used, n - used, ", port 0x%x %llu",
                                     vm->io_hist[i].port,
                                     (unsigned long long)vm->io_hist[i].n);
    if (used < n && vm->io_other)
        snprintf(buf + used, n - used, ", other ports %llu", (unsigned long long)vm->io_other);
}

void vmm_stats_open(vmm *vm, int fds[2])
{
    fds[0] = kio(vm->vm_fd, KVM_GET_STATS_FD, NULL);
    fds[1] = kio(vm->vcpu_fd, KVM_GET_STATS_FD, NULL);
}

/* The file is a header, descriptors (each with a name of name_size bytes) and the values: a
 * fresh descriptor reads it all from offset 0 in one read(), in the jail. */
void vmm_stats_format(int fd, char *buf, size_t n)
{
    static uint8_t b[1 << 16];
    struct kvm_stats_header h;
    size_t used = 0;
    buf[0] = '\0';
    if (fd < 0) return;
    ssize_t got = read(fd, b, sizeof b);
    close(fd);
    if (got < (ssize_t)sizeof h) return;
    memcpy(&h, b, sizeof h);
    size_t dsz = sizeof(struct kvm_stats_desc) + h.name_size;
    for (uint32_t i = 0; i < h.num_desc && used < n; i++) {
        struct kvm_stats_desc d;
        uint64_t v;
        size_t off = (size_t)h.desc_offset + i * dsz;
        if (off + dsz > (size_t)got) break;
        memcpy(&d, b + off, sizeof d);
        size_t at = (size_t)h.data_offset + d.offset;
        if (d.size != 1 || at + sizeof v > (size_t)got) continue;   /* histograms left out */
        memcpy(&v, b + at, sizeof v);
        if (v) used += (size_t)snprintf(buf + used, n - used, " %.*s=%llu", (int)h.name_size,
                                        (const char *)b + off + sizeof d, (unsigned long long)v);
    }
}

const char *vmm_stop_name(vmm_stop stop)
{
    static const char *const names[] = {
        [VMM_STOP_NONE] = "none", [VMM_STOP_DOORBELL] = "doorbell", [VMM_STOP_HLT] = "hlt",
        [VMM_STOP_SHUTDOWN] = "shutdown", [VMM_STOP_RESET] = "reset",
        [VMM_STOP_TIMEOUT] = "timeout", [VMM_STOP_EXITS] = "exit cap",
        [VMM_STOP_READY] = "ready",
    };
    if ((unsigned)stop < sizeof names / sizeof names[0]) return names[stop];
    return "unknown";
}

/* ---- the job/result region --------------------------------------------------------------- */

#define JOB_OFF ((sizeof(struct crvm_page) + 63) & ~(size_t)63)

cr_code vmm_page_write(vmm *vm, const void *job, size_t job_len, const vmm_job_limits *lim,
                       cr_error *err)
{
    return vmm_page_write_ex(vm, job, job_len, NULL, 0, 0, 0, lim, err);
}

cr_code vmm_page_write_ex(vmm *vm, const void *job, size_t job_len, const void *data,
                          size_t data_len, uint32_t flags, int reseed,
                          const vmm_job_limits *lim, cr_error *err)
{
    uint32_t size = vm->cfg.shared_bytes;
    size_t data_off = (JOB_OFF + job_len + 63) & ~(size_t)63;
    if (job_len > size - JOB_OFF || data_len > size || data_off > size - data_len)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "kvm: job of %zu bytes and data of %zu do "
                            "not fit the %u-byte shared region", job_len, data_len, size);
    struct crvm_page h = {
        .magic = CRVM_MAGIC, .version = CRVM_VERSION, .size = size,
        .header_size = sizeof h, .job = { (uint32_t)JOB_OFF, (uint32_t)job_len },
        .wall_ms = lim->wall_ms, .cpu_ms = lim->cpu_ms, .memory_bytes = lim->memory_bytes,
        .max_procs = lim->max_procs, .max_stdout = lim->max_stdout,
        .max_stderr = lim->max_stderr, .max_report = lim->max_report,
        .tmp_bytes = lim->tmp_bytes, .artifact_bytes = lim->artifact_bytes,
        .max_artifacts = lim->max_artifacts, .max_artifact_span = lim->max_artifact_span,
        .job_flags = flags,
        .data = { (uint32_t)(data_len ? data_off : 0), (uint32_t)data_len },
    };
    if (reseed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        h.host_realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        if (getrandom(h.entropy, sizeof h.entropy, 0) != (ssize_t)sizeof h.entropy)
            return vmm_fail(err, "getrandom for the guest's entropy", errno);
        h.entropy_len = sizeof h.entropy;
    }
    memset(vm->shared, 0, JOB_OFF);
    memcpy(vm->shared, &h, sizeof h);
    if (job_len) memcpy(vm->shared + JOB_OFF, job, job_len);
    if (data_len) memcpy(vm->shared + data_off, data, data_len);
    vm->lim = *lim;
    vm->page_written = 1;
    return CR_OK;
}

static cr_code check_span(const struct crvm_page *h, const char *name, struct crvm_span s,
                          uint32_t max, const char *max_name, cr_error *err)
{
    if (s.len > max)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: %s span %u+%u exceeds "
                            "%s %u", name, s.off, s.len, max_name, max);
    if (s.off < h->header_size || (uint64_t)s.off + s.len > h->size)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: %s span %u+%u outside "
                            "the region [%u, %u)", name, s.off, s.len, h->header_size, h->size);
    return CR_OK;
}

static cr_code copy_span(const uint8_t *region, struct crvm_span s, char **out, size_t *len,
                         cr_error *err)
{
    if (!(*out = malloc((size_t)s.len + 1)))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: result copy of %u bytes", s.len);
    memcpy(*out, region + s.off, s.len);
    (*out)[s.len] = '\0';
    *len = s.len;
    return CR_OK;
}

cr_code vmm_page_read(vmm *vm, vmm_page_result *res, cr_error *err)
{
    memset(res, 0, sizeof *res);
    if (!vm->page_written)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: no job was written to the region");
    return vmm_page_parse(vm->shared, vm->cfg.shared_bytes, &vm->lim, res, err);
}

cr_code vmm_page_parse(const uint8_t *region, size_t size, const vmm_job_limits *lim,
                       vmm_page_result *res, cr_error *err)
{
    struct crvm_page h;
    cr_code rc;

    memset(res, 0, sizeof *res);
    if (size < sizeof h || size > UINT32_MAX)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: a region of %zu bytes", size);
    /* One copy: every check and every use below sees the same header. */
    memcpy(&h, region, sizeof h);
    if (h.magic != CRVM_MAGIC || h.version != CRVM_VERSION || h.size != size ||
        h.header_size != sizeof h)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: header changed (magic "
                            "0x%x, version %u, size %u, header %u)", h.magic, h.version, h.size,
                            h.header_size);
    if (h.exited > 1 || (!h.exited && (h.term_signal == 0 || h.term_signal > 64)))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: exited %u with signal "
                            "%u", h.exited, h.term_signal);
    if (h.result_flags & ~(CRVM_OUT_TRUNCATED | CRVM_ERR_TRUNCATED | CRVM_SETUP_FAILED))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: unknown flags 0x%x",
                            h.result_flags);
    if ((rc = check_span(&h, "out", h.out, lim->max_stdout, "max_stdout", err)) != CR_OK ||
        (rc = check_span(&h, "err", h.err, lim->max_stderr, "max_stderr", err)) != CR_OK ||
        (rc = check_span(&h, "report", h.report, lim->max_report, "max_report", err)) != CR_OK ||
        (rc = check_span(&h, "artifacts", h.artifacts, lim->max_artifact_span,
                         "max_artifact_span", err)) != CR_OK)
        return rc;
    struct { const char *name; const char *s; size_t n; } notes[] = {
        { "limit_detail", h.limit_detail, sizeof h.limit_detail },
        { "tier_note", h.tier_note, sizeof h.tier_note },
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (!memchr(notes[i].s, '\0', notes[i].n))
            return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: %s is not NUL-ended",
                                notes[i].name);
    memcpy(res->limit_detail, h.limit_detail, sizeof res->limit_detail);
    memcpy(res->tier_note, h.tier_note, sizeof res->tier_note);
    res->run_ns = h.run_ns;
    res->cpu_ns = h.cpu_ns;
    res->peak_bytes = h.peak_bytes;
    res->exited = (int)h.exited;
    res->exit_code = h.exit_code;
    res->term_signal = (int)h.term_signal;
    res->limit = h.limit;
    res->flags = h.result_flags;
    memcpy(res->guest_ns, h.guest_ns, sizeof res->guest_ns);
    if ((rc = copy_span(region, h.out, &res->stdout_text, &res->stdout_len, err)) != CR_OK ||
        (rc = copy_span(region, h.err, &res->stderr_text, &res->stderr_len, err)) != CR_OK ||
        (rc = copy_span(region, h.report, &res->report, &res->report_len, err)) != CR_OK ||
        (rc = copy_span(region, h.artifacts, &res->artifacts, &res->artifacts_len, err)) != CR_OK)
        vmm_page_result_free(res);
    return rc;
}

void vmm_page_result_free(vmm_page_result *res)
{
    if (!res) return;
    free(res->stdout_text);
    free(res->stderr_text);
    free(res->report);
    free(res->artifacts);
    memset(res, 0, sizeof *res);
}

/* ---- host detection ------------------------------------------------------------------------ */

static int path_exists(const char *root, const char *path)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, path);
    return access(p, F_OK) == 0;
}

/* 1: the first "flags" line of cpuinfo names vmx or svm; 0: it names neither; -1: no such
 * line could be read. Only the first 4096 lines are looked at. */
static int cpu_has_virt(const char *root)
{
    char path[512], line[8192];
    snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
    FILE *f = fopen(path, "re");
    int found = -1;
    if (!f) return -1;
    for (int i = 0; i < 4096 && found < 0 && fgets(line, sizeof line, f); i++) {
        if (strncmp(line, "flags", 5) != 0) continue;
        found = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w;
             w = strtok_r(NULL, " \t\n", &save))
            if (!strcmp(w, "vmx") || !strcmp(w, "svm")) found = 1;
    }
    fclose(f);
    return found;
}

int vmm_host_check(const char *root, char *why, size_t n)
{
    char path[512], msg[256], lack_buf[128];
    const char *lack;
    int fd, virt, ok = 0;

    /* No KVM at all says so first, with what the CPU offers: whether loading a module or
     * only another machine would help. */
    if (!path_exists(root, "/dev/kvm")) {
        virt = cpu_has_virt(root);
        snprintf(msg, sizeof msg, "no /dev/kvm on this host%s", virt > 0
                 ? " (the CPU has vmx/svm: load kvm_intel or kvm_amd)"
                 : virt == 0 ? " (the CPU has no vmx/svm: a VM without nested virtualization)"
                 : "");
    /* PVM runs guests in a software emulator that dies on a real kernel's first cmpxchg16b
     * or xrstor: tiny guests run, Linux does not. */
    } else if (path_exists(root, "/sys/module/kvm_pvm")) {
        snprintf(msg, sizeof msg, "/dev/kvm is kvm_pvm, a software hypervisor that cannot run "
                 "a Linux guest");
    } else if ((virt = cpu_has_virt(root)) <= 0) {
        snprintf(msg, sizeof msg, virt ? "cannot read the CPU flags in /proc/cpuinfo"
                                       : "the CPU has no vmx/svm (a VM without nested "
                                         "virtualization)");
    } else if (snprintf(path, sizeof path, "%s/dev/kvm", root),
               (fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
        snprintf(msg, sizeof msg, "cannot open /dev/kvm: %s%s", strerror(errno),
                 errno == EACCES || errno == EPERM ? " (join group kvm)" : "");
    } else {
        lack = check_kvm(fd, 1, lack_buf, sizeof lack_buf);
        close(fd);
        if (lack) snprintf(msg, sizeof msg, "%s", lack);
        else ok = 1;
    }
    if (n) snprintf(why, n, "%s", ok ? "" : msg);
    if (n && !ok) snprintf(why + strlen(why), n - strlen(why), "; try --tier ns");
    return ok;
}

int kvm_can_boot_linux(char *why, size_t n)
{
    return vmm_host_check("", why, n);
}
