/* sandbox/kvm/vmm.h: a minimal virtual machine monitor over /dev/kvm (the kvm tier).
 *
 * One VM with one vCPU per run: guest RAM from physical address 0, the job/result region of
 * proto.h at CRVM_SHARED_GPA, the package image read-only at VMM_PMEM_GPA when given, an 8250
 * serial port at 0x3f8 whose output is kept for diagnostics, a read-only CMOS clock, the PCI
 * configuration address latch (a host bridge with no device behind it), the doorbell port,
 * and nothing else (other ports read as all-ones and ignore writes, as absent hardware does). The run loop is bounded by a wall clock and a count of
 * exits; the VM and everything it holds go with vmm_close().
 *
 *     vmm_config c; vmm *vm; vmm_stop stop;
 *     vmm_config_default(&c);
 *     if ((rc = vmm_open(&c, &vm, err)) != CR_OK) return rc;   // "no /dev/kvm: try --tier ns"
 *     vmm_load(vm, 0x1000, code, n, err); vmm_set_real_mode(vm, 0, 0x1000, err);
 *     vmm_run(vm, &stop, err);            // VMM_STOP_HLT, _DOORBELL, _TIMEOUT, ...
 *     vmm_close(vm);
 *
 * Not thread-safe: one thread drives one vmm. vmm_run() uses the signal VMM_KICK_SIGNAL on
 * the calling thread to end KVM_RUN at the wall-clock deadline; it installs a handler for it
 * once per process (the handler does nothing for threads not inside vmm_run()).
 */
#ifndef CR_KVM_VMM_H
#define CR_KVM_VMM_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "sandbox/kvm/proto.h"
#include "sandbox/ns/ns.h"
#include "sandbox/job/job.h"

/* The tier's entry points (its ops, sandbox_tier_kvm, hold them): sandbox_run()'s contract,
 * job->tier ignored; kvm_dir as in sandbox_job (NULL: the default places). */
cr_code sandbox_kvm_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err);
int sandbox_kvm_available(const char *kvm_dir, char *why, size_t why_len);

#define VMM_KICK_SIGNAL (SIGRTMIN + 4)
#define VMM_MAX_MEM (3ull << 30)        /* RAM stays below the 32-bit hole and the region */
#define VMM_MIN_MEM (1ull << 20)        /* page tables and the boot data live below 1 MiB */
#define VMM_MAX_SHARED (256ull << 20)   /* /out's 64 MiB default fits, with room to spare */
/* The package image (sandbox/guest/build-pkgs.sh), when given, is guest-physical memory from
 * 4 GiB up, above everything else, mapped read-only from its file and shown to the guest as
 * legacy persistent memory (an e820 entry of type 12: Linux's nd_e820 makes it /dev/pmem0).
 * Its size is a multiple of VMM_PMEM_ALIGN, the unit in which Linux maps device memory. */
#define VMM_PMEM_GPA (4ull << 30)
#define VMM_PMEM_ALIGN (2ull << 20)
#define VMM_PMEM_MAX (16ull << 30)

/* Fixed guest-physical addresses of what the VMM builds in low memory. */
#define VMM_GDT_GPA 0x500ull
#define VMM_ZERO_PAGE_GPA 0x7000ull     /* Linux boot_params */
#define VMM_PML4_GPA 0x9000ull          /* then the PDPT and four page directories */
#define VMM_CMDLINE_GPA 0x20000ull

typedef struct {
    uint64_t mem_bytes;       /* guest RAM, a multiple of 4 KiB in [VMM_MIN_MEM, VMM_MAX_MEM] */
    uint32_t shared_bytes;    /* the job/result region, multiple of 4 KiB, <= VMM_MAX_SHARED */
    int irqchip;              /* 1: in-kernel PIC/IOAPIC/LAPIC and PIT, which a Linux guest
                                 needs; then HLT never leaves the kernel, so a tiny guest that
                                 stops with HLT wants 0 */
    double wall_s;            /* vmm_run() gives up after this long (per call) */
    uint64_t max_exits;       /* ... or after this many exits to the VMM */
    size_t max_serial;        /* the last this many bytes of serial output are kept */
    const char *pmem_path;    /* the package image, or NULL: see VMM_PMEM_GPA */
} vmm_config;

/* 64 MiB RAM, 1 MiB region, irqchip on, 10 s, 1e6 exits, 64 KiB of serial, no image. */
void vmm_config_default(vmm_config *c);

typedef enum {
    VMM_STOP_NONE = 0,
    VMM_STOP_DOORBELL,        /* the guest rang CRVM_RING_RESULT: read the page */
    VMM_STOP_HLT,             /* HLT (only without irqchip) */
    VMM_STOP_SHUTDOWN,        /* triple fault */
    VMM_STOP_RESET,           /* reset through the i8042 (Linux's reboot=k, or a panic) */
    VMM_STOP_TIMEOUT,         /* the wall clock ran out */
    VMM_STOP_EXITS,           /* the exit cap was reached */
    VMM_STOP_READY            /* the guest rang CRVM_RING_READY: save it (vmm_snapshot_save) */
} vmm_stop;

const char *vmm_stop_name(vmm_stop stop);   /* "doorbell", "hlt", ...; never NULL */

typedef struct vmm vmm;

/* Creates the VM and its vCPU (CPUID from KVM_GET_SUPPORTED_CPUID), and maps the package
 * image when cfg names one (CR_ESANDBOX when it cannot be opened or is not a whole number of
 * VMM_PMEM_ALIGN up to VMM_PMEM_MAX, or KVM has no read-only memory). On CR_OK *out is the
 * caller's: vmm_close(). CR_EUSAGE for a bad config; CR_ESANDBOX naming the step and advice
 * for the errno ("no /dev/kvm: try --tier ns"). */
cr_code vmm_open(const vmm_config *cfg, vmm **out, cr_error *err);
void vmm_close(vmm *vm);                     /* NULL is a no-op */

/* A host pointer to guest bytes [gpa, gpa + len) in RAM or in the region; NULL when the range
 * is not wholly inside one of them. Borrowed: valid until vmm_close(). */
uint8_t *vmm_guest_ptr(vmm *vm, uint64_t gpa, uint64_t len);
/* The package image's size at VMM_PMEM_GPA; 0 when the VM has none. */
uint64_t vmm_pmem_size(const vmm *vm);
/* Copies bytes into guest memory; CR_EUSAGE when they do not fit. */
cr_code vmm_load(vmm *vm, uint64_t gpa, const void *bytes, size_t len, cr_error *err);

/* vCPU state for the first instruction. Real mode: CS:IP, flat data segments at 0.
 * Long mode: identity-mapped 4 GiB (2 MiB pages at VMM_PML4_GPA), a GDT at VMM_GDT_GPA with
 * code 0x10 and data 0x18 as the Linux 64-bit boot protocol wants, and rsi (boot_params). */
cr_code vmm_set_real_mode(vmm *vm, uint16_t cs, uint16_t ip, cr_error *err);
cr_code vmm_set_long_mode(vmm *vm, uint64_t rip, uint64_t rsp, uint64_t rsi, cr_error *err);

/* Runs the vCPU until a stop. CR_OK with *stop set for every way a guest can end (doorbell,
 * halt, triple fault, reset, time or exit cap); CR_ESANDBOX when KVM fails or refuses the
 * guest (KVM_EXIT_FAIL_ENTRY, KVM_EXIT_INTERNAL_ERROR, an unknown exit or doorbell value),
 * the exit named in err. May be called again after a doorbell stop. */
cr_code vmm_run(vmm *vm, vmm_stop *stop, cr_error *err);

/* Installs the handler of VMM_KICK_SIGNAL (once per process; vmm_run() calls it too). */
cr_code vmm_kick_init(cr_error *err);

/* Jails the calling process for the rest of its life (jail.c): new network, IPC and UTS
 * namespaces where the host allows (else `note` says so), no new privileges, no core dumps,
 * and a seccomp filter that allows KVM_RUN, read/write, timers, memory and exit; any other
 * call ends the process with exit status VMM_JAIL_TRAPPED, the call's number on stderr. For
 * a process that only runs a VM already set up. */
#define VMM_JAIL_TRAPPED 125
cr_code vmm_jail(char *note, size_t note_len, cr_error *err);

/* The VMM process's cgroup (jail.c; the ns tier's code, sandbox/ns/cgroup.c): made by the
 * caller before it forks the VMM, joined by the VMM first thing, so that all it allocates
 * and the guest's RAM are charged to it, removed with ns_cgroup_destroy() once the VMM is
 * reaped. memory.max is vmm_cgroup_memory(): the guest's RAM, the region twice (the guest's
 * and the copy of the result the VMM sends), and VMM_CGROUP_OVERHEAD for the process itself
 * (its binary's and libraries' pages it touches, its heap, the page cache of the kernel,
 * initramfs and package image it reads, which is reclaimable) and the kernel's accounted
 * memory for the VM (page tables, the vCPU). pids.max is VMM_CGROUP_TASKS: the VMM is one thread and starts
 * nothing. Where the host has no cgroup (or controller) to give, the run goes on and cg->note
 * says what bounds the VMM instead, as the ns tier's runs do. */
#define VMM_CGROUP_OVERHEAD (64ull << 20)
#define VMM_CGROUP_TASKS 1
uint64_t vmm_cgroup_memory(const vmm_config *cfg);
void vmm_cgroup_create(ns_cgroup *cg, const vmm_config *cfg);
/* Moves the calling process into cg (a no-op for what was not made). CR_ESANDBOX naming the
 * step ("kvm: jail: join cgroup: ..."). */
cr_code vmm_cgroup_join(const ns_cgroup *cg, cr_error *err);
/* For the tier note once the VMM is reaped: its memory's high-water mark against the
 * cgroup's limit where the cgroup keeps one, else cg->note ("" when all was made). */
void vmm_cgroup_note(const ns_cgroup *cg, const vmm_config *cfg, char *note, size_t len);

/* Serial output so far, its last max_serial bytes or more (NUL-ended, "" when none).
 * Borrowed: valid until the next vmm_run() or vmm_close(). *truncated (when non-NULL) says
 * whether older output was dropped. */
const char *vmm_serial(const vmm *vm, size_t *len, int *truncated);
uint64_t vmm_exit_count(const vmm *vm);
const vmm_config *vmm_get_config(const vmm *vm);     /* borrowed from vm */
/* "N exits, mmio N, port 0x3f8 N, ..." into buf: where a slow guest spends its exits. */
void vmm_exit_stats(const vmm *vm, char *buf, size_t n);
/* KVM's own counters (binary stats, Linux 5.14+) of the VM into fds[0] and of its vCPU into
 * fds[1], -1 where there are none: opened before the jail, each read once after the run as
 * " name=value" for the non-zero ones, and closed (CR_KVM_CONSOLE=1 prints them: the nested
 * page faults of a restored guest are there). */
void vmm_stats_open(vmm *vm, int fds[2]);
void vmm_stats_format(int fd, char *buf, size_t n);

/* Loads a bzImage and its initramfs (boot.c) and points the vCPU at the kernel's 64-bit
 * entry; extra_len bytes at `extra` (another cpio archive, kvm_data_archive()) follow the
 * initramfs. The e820 map has the package image when the VM has one. Wants irqchip on and RAM for the kernel's init_size above 16 MiB plus the
 * initramfs. CR_ESANDBOX naming the file and what is wrong with it. */
cr_code vmm_boot_linux(vmm *vm, const char *kernel, const char *initrd, const void *extra,
                       size_t extra_len, const char *cmdline, cr_error *err);

/* The directory data_dir as a cpio "newc" archive of "data" and everything under it (data.c),
 * appended to `out`: what the ns tier's code would see through its read-only bind mount, in
 * name order, owned by root with write bits cleared; at most max_bytes, DATA_MAX_ENTRIES
 * entries and DATA_MAX_DEPTH levels, else CR_ELIMIT advising the ns tier. */
cr_code kvm_data_archive(const char *data_dir, uint64_t max_bytes, cr_buf *out, cr_error *err);

/* ---- snapshots (snapshot.c) ---------------------------------------------------------------
 * A VM stopped at an exit (the guest's CRVM_RING_READY), saved to one file:
 *
 *   [0, 4096)             vmm_snap_header (little-endian), then zeros
 *   [4096, +state_len)    the VM's state: MP state, regs, sregs, XSAVE, XCRs, debug registers,
 *                         LAPIC, vCPU events, PIT, KVM clock, PIC master, PIC slave, IOAPIC,
 *                         the serial port's registers; then nmsrs struct kvm_msr_entry (every
 *                         MSR of KVM_GET_MSR_INDEX_LIST this vCPU has, the TSC deadline last),
 *                         then ncpuid struct kvm_cpuid_entry2
 *   [mem_off, +mem_bytes) guest RAM from address 0, sparse (zero pages are holes)
 *   [ws_off, ...)         the working set (optional): ws_write then ws_read ranges of
 *                         guest pages, each {u32 first page, u32 page count}
 *
 * The header names what made it (vmm_snap_id): a snapshot of another kernel, initramfs or
 * VMM build is refused on load. The guest's job/result region is not saved: a restored VM
 * gets a fresh one of shared_bytes. */
#define VMM_SNAP_MAGIC 0x50414e534d565243ull   /* "CRVMSNAP" read as a little-endian u64 */
#define VMM_SNAP_VERSION 3u
#define VMM_SNAP_HEADER 4096u
#define VMM_SNAP_MAX_MSRS 1024u
#define VMM_SNAP_MAX_CPUID 512u

/* What a snapshot belongs to: the kernel's, the initramfs's and the package image's size,
 * modification time (ns) and inode (the image's all 0 when there is none: its guest has its
 * files mapped, and the python in it has imported from them), and the VMM's state layout,
 * region protocol and the guest's kernel command line (a hash), NUL-ended. */
typedef struct {
    uint64_t kernel[3], initrd[3], pmem[3];
    char build[64];
} vmm_snap_id;

typedef struct {
    uint64_t magic;                     /* VMM_SNAP_MAGIC */
    uint32_t version, header_size;      /* VMM_SNAP_VERSION, sizeof(vmm_snap_header) */
    uint64_t mem_bytes;                 /* guest RAM */
    uint32_t shared_bytes, irqchip;     /* the region's size; 1: in-kernel irqchip and PIT */
    uint64_t state_off, state_len, mem_off;
    uint32_t nmsrs, ncpuid;
    uint32_t tsc_khz, reserved;         /* the vCPU's TSC rate (0: unknown) */
    vmm_snap_id id;
    /* What a restored guest touched running a first job (vmm_snapshot_learn()): the pages it
     * wrote and those it only read, as ranges after the memory; 0, 0 and 0 when not known. */
    uint64_t ws_off;
    uint32_t ws_write, ws_read;
} vmm_snap_header;
#define VMM_SNAP_MAX_RANGES (1u << 18)

/* The identity of kernel + initrd + package image (stat; pmem NULL for none), of this VMM
 * build and of the command line. CR_ESANDBOX naming a file that cannot be stat'ed. */
cr_code vmm_snap_identity(const char *kernel, const char *initrd, const char *pmem,
                          const char *cmdline, vmm_snap_id *id, cr_error *err);
/* Checks the first len bytes of a snapshot of file_size bytes against `want`: magic,
 * version, identity, sizes in range, a layout that adds up to the file. Bounded and pure (the
 * unit tests' and fuzzers' entry). CR_ESANDBOX naming the first thing wrong ("kvm: snapshot
 * made from another kernel: refused"). */
cr_code vmm_snap_header_parse(const void *buf, size_t len, uint64_t file_size,
                              const vmm_snap_id *want, vmm_snap_header *h, cr_error *err);
/* Saves vm, stopped after an exit of vmm_run(), to `path`: written to a temporary file
 * beside it, mode 0444, and renamed over it. The VM stays usable. */
cr_code vmm_snapshot_save(vmm *vm, const vmm_snap_id *id, const char *path, cr_error *err);
/* A new VM from the snapshot at path (checked against id): cfg's memory, region and irqchip
 * are the snapshot's, its clocks, caps and package image the caller's (id names the image). RAM is mapped MAP_PRIVATE from the
 * file, read lazily; the region is fresh (vmm_page_write() it). CR_EIO when the file cannot
 * be opened, CR_ESANDBOX when it is refused or KVM refuses the state. */
cr_code vmm_snapshot_restore(const vmm_config *cfg, const char *path, const vmm_snap_id *id,
                             vmm **out, cr_error *err);
/* Adds the working set to the snapshot at path, which vm was restored from and has since run
 * a job like the ones to come: the pages of its RAM it wrote (private copies now) and those
 * it read (mapped from the file), from /proc/self/pagemap. A restore then copies and maps
 * them before the guest runs, where each would otherwise cost it one to three exits. The
 * file must have none yet; it stays 0444. */
cr_code vmm_snapshot_learn(vmm *vm, const char *path, cr_error *err);

/* ---- the job/result region ---------------------------------------------------------------- */

/* What the host asks of the guest, besides the job bytes. */
typedef struct {
    uint32_t wall_ms, cpu_ms, max_procs;
    uint64_t memory_bytes;
    uint32_t max_stdout, max_stderr, max_report;
    uint64_t tmp_bytes, artifact_bytes;
    uint32_t max_artifacts, max_artifact_span;
} vmm_job_limits;

/* Writes the header and the job bytes into the region (which it clears first).
 * CR_ELIMIT when they do not fit. */
cr_code vmm_page_write(vmm *vm, const void *job, size_t job_len, const vmm_job_limits *lim,
                       cr_error *err);
/* The same with the job's flags (CRVM_JOB_*) and data_len bytes of a /data archive after the
 * job; with `reseed`, the host's wall clock and 64 fresh random bytes for a restored guest. */
cr_code vmm_page_write_ex(vmm *vm, const void *job, size_t job_len, const void *data,
                          size_t data_len, uint32_t flags, int reseed,
                          const vmm_job_limits *lim, cr_error *err);

/* The result the guest left, copied out of guest memory. Every buffer is owned by the
 * struct: vmm_page_result_free(). */
typedef struct {
    int exited, exit_code, term_signal;
    uint32_t limit, flags;
    char *stdout_text, *stderr_text, *report;   /* NUL-ended copies; never NULL on CR_OK */
    char *artifacts;                     /* the artifacts span (proto.h), unchecked */
    size_t stdout_len, stderr_len, report_len, artifacts_len;
    uint64_t run_ns, cpu_ns, peak_bytes;
    char limit_detail[128], tier_note[256];   /* NUL-ended */
    uint64_t guest_ns[4];
} vmm_page_result;

/* Reads and checks the header the guest wrote: magic, version, size and header size as the
 * host set them, every span inside the region, no length above the limit the host asked for.
 * CR_ESANDBOX naming the first bad field ("result page: out span 4096+70000 exceeds
 * max_stdout 65536"); nothing to free then. */
cr_code vmm_page_read(vmm *vm, vmm_page_result *res, cr_error *err);
/* What vmm_page_read() does to the region, on any `size` bytes (the fuzz target's entry):
 * the header copied once and checked (h.size must be `size`), every span checked against the
 * region and against `lim`, then copied out. */
cr_code vmm_page_parse(const uint8_t *region, size_t size, const vmm_job_limits *lim,
                       vmm_page_result *res, cr_error *err);
/* kvm_tier.c: a parsed result into the sandbox outcome the ns tier also fills (the limit
 * checked, the report parsed by sandbox_report_parse()). The outcome is the caller's to free
 * with sandbox_outcome_free(), whatever the return. */
cr_code kvm_take_result(const vmm_page_result *r, sandbox_outcome *out, cr_error *err);
void vmm_page_result_free(vmm_page_result *res);   /* NULL is a no-op; zeroes it */

/* ---- artifacts (artifacts.c) ------------------------------------------------------------ */

/* One record of the artifacts span (proto.h), pointing into the span. */
typedef struct {
    uint8_t type;                        /* CRVM_ENT_* */
    const char *path;                    /* path_len bytes, not NUL-ended */
    uint32_t path_len;
    const uint8_t *data;                 /* size bytes of a CRVM_ENT_FILE */
    uint32_t size;
} kvm_entry;

/* Checks the record at *pos of the span [p, p + n) and moves *pos past it: a known type,
 * reserved bytes 0, content only for a file, everything inside the span, a path that is
 * relative, '/'-separated, without an empty, "." or ".." component, shorter than
 * SANDBOX_ARTIFACT_NAME_MAX and no deeper than the walk goes. CR_ESANDBOX naming the record. */
cr_code kvm_entry_next(const uint8_t *p, size_t n, size_t *pos, kvm_entry *e, cr_error *err);
/* Makes the tree the records describe under the directory `root` (borrowed; empty and the
 * host's own): directories, files with their content, symlinks and fifos as stand-ins for
 * what the guest had, and each dropped file as a sparse one of dropped_size bytes. Every
 * parent must come before its entries, and no name twice. */
cr_code kvm_artifacts_unpack(const uint8_t *p, size_t n, int root, uint64_t dropped_size,
                             cr_error *err);
/* The artifacts of a parsed result into the outcome, as the ns tier collects them (copies
 * into out_dir when non-NULL), through a private directory under $TMPDIR or /tmp that is
 * gone on return. */
cr_code kvm_take_artifacts(const vmm_page_result *r, const char *out_dir,
                           const sandbox_limits *lim, sandbox_outcome *out, cr_error *err);

/* ---- the kvm directory (paths.c) -----------------------------------------------------------
 * One directory holds what the tier boots: KVM_KERNEL_FILE and KVM_INITRD_FILE (made by
 * `make kvm-kernel kvm-guest`, installed by `make install-kvm`). Where it is, first found:
 * the caller's kvm_dir (the engine option kvm_dir, --kvm-dir, Python's kvm_dir=), $CALCROUTE_KVM_DIR,
 * the installed one (KVM_DIR_INSTALLED under the prefix the running library or calc-route
 * was installed to) when it holds both files, else KVM_DIR_BUILD of the current directory
 * (running from a checkout's top, which `make kvm-kernel kvm-guest` fills). */
#define KVM_KERNEL_FILE "vmlinuz"
#define KVM_INITRD_FILE "initrd.cpio"
/* Optional beside them (`make kvm-pkgs`): the package image; without it the guest's python
 * has the standard library only. */
#define KVM_PKGS_FILE "pkgs.erofs"
#define KVM_DIR_ENV "CALCROUTE_KVM_DIR"
#define KVM_DIR_INSTALLED "lib/calcroute/kvm"
#define KVM_DIR_BUILD "build/kvm"

typedef struct {
    char dir[PATH_MAX];
    char kernel[PATH_MAX + 16], initrd[PATH_MAX + 16];   /* dir/KVM_KERNEL_FILE, ... */
    char pkgs[PATH_MAX + 16];         /* dir/KVM_PKGS_FILE */
    int has_pkgs;                     /* 1 when it is readable */
    const char *from;     /* static: "kvm_dir", "$CALCROUTE_KVM_DIR", "installed", "build tree" */
} kvm_paths;

/* 1 when both files are readable in the directory chosen, p filled; else 0 with p naming
 * where it looked and why saying which file is missing where, and how to get it. */
int kvm_dir_resolve(const char *kvm_dir, kvm_paths *p, char *why, size_t why_len);
/* The same with the environment's value, the installed directory and the build tree's given
 * (each NULL: none): tests point them at fake trees. */
int kvm_dir_resolve_in(const char *kvm_dir, const char *env, const char *installed,
                       const char *build, kvm_paths *p, char *why, size_t why_len);

/* ---- host detection --------------------------------------------------------------------- */

/* 1 when this host can run a Linux guest under KVM; else 0 with the reason in why (a PVM
 * software hypervisor, a CPU without vmx/svm, no /dev/kvm, a missing KVM capability), which
 * ends with the advice "try --tier ns". */
int kvm_can_boot_linux(char *why, size_t n);
/* The same, with every path (/sys/module, /proc/cpuinfo, /dev/kvm) under `root` ("" for the
 * real host): tests point it at a fake tree. */
int vmm_host_check(const char *root, char *why, size_t n);

#endif
