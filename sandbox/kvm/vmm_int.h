/* sandbox/kvm/vmm_int.h: the vmm's insides, shared by vmm.c and snapshot.c only. */
#ifndef CR_KVM_VMM_IMPL_H
#define CR_KVM_VMM_IMPL_H

#include <errno.h>
#include <sys/ioctl.h>

#include "sandbox/kvm/vmm.h"

struct uart {
    uint8_t ier, lcr, mcr, scr, dll, dlm;
};

struct vmm {
    vmm_config cfg;
    int kvm_fd, vm_fd, vcpu_fd;
    uint8_t *ram, *shared;
    const uint8_t *pmem;            /* the package image, read-only; NULL when none */
    uint64_t pmem_bytes;
    struct kvm_run *run;
    size_t run_size;
    cr_buf serial;
    struct uart uart;
    uint8_t cmos_index;
    uint32_t pci_addr;              /* PCI configuration address latch (0xcf8) */
    uint64_t exits;
    struct { uint16_t port; uint64_t n; } io_hist[32];   /* where the exits go: diagnostics */
    uint64_t io_other, mmio_exits;
    int page_written;
    vmm_job_limits lim;
    uint32_t cpuid_nent;            /* entries of the CPUID table the vCPU was given */
};

/* KVM ioctls that only set up state are safe to repeat when a signal cut them short. */
static inline int kio(int fd, unsigned long req, void *arg)
{
    int r, tries = 0;
    do r = ioctl(fd, req, arg);
    while (r < 0 && errno == EINTR && ++tries < 100);
    return r;
}

#define KIO_VAL(v) ((void *)(uintptr_t)(v))

/* "kvm: WHAT: strerror(e)" with advice for the usual errno. */
cr_code vmm_fail(cr_error *err, const char *what, int e);
/* vmm_open() with guest RAM mapped copy-on-write from mem_fd at mem_off (a snapshot's memory)
 * when mem_fd >= 0, else anonymous. */
cr_code vmm_create(const vmm_config *cfg, int mem_fd, uint64_t mem_off, vmm **out,
                   cr_error *err);

#endif
