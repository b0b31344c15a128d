/* tests/test_kvm.c: the VMM with tiny guests of our own (a few real-mode or long-mode
 * instructions assembled by hand below), the job/result region's checks, and host detection.
 * Tests that need a working /dev/kvm SKIP with the reason where it does not open; the nested
 * test host (tests/kvm-host/) runs them all. */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"
#include "tests/kvm_span.h"
#include "tests/testlib.h"

#define CODE_GPA 0x1000u
#define DATA_GPA 0x2000u
#define TEMPLATE_GPA 0x30000u       /* what the page guest copies over the region */

static char kvm_why[256];           /* "" when /dev/kvm opened */

/* CHECK that also yields whether it held, so a test can stop there. */
#define CHECK_RET(c) ((c) ? (t_pass++, 1) : (t_fail++, \
    fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c), 0))

static vmm *open_vm(int irqchip, double wall_s, uint64_t max_exits, size_t max_serial)
{
    vmm_config c;
    cr_error e = {0};
    vmm *vm = NULL;
    vmm_config_default(&c);
    c.mem_bytes = 4u << 20;
    c.irqchip = irqchip;
    c.wall_s = wall_s;
    c.max_exits = max_exits;
    c.max_serial = max_serial;
    if (vmm_open(&c, &vm, &e) != CR_OK) fprintf(stderr, "vmm_open: %s\n", e.message);
    return vm;
}

/* Loads `code` at CODE_GPA, enters it in real mode and runs it; the stop, or -1 on error. */
static int run_real(vmm *vm, const uint8_t *code, size_t n, cr_error *e)
{
    vmm_stop stop;
    if (vmm_load(vm, CODE_GPA, code, n, e) != CR_OK) return -1;
    if (vmm_set_real_mode(vm, 0, CODE_GPA, e) != CR_OK) return -1;
    if (vmm_run(vm, &stop, e) != CR_OK) return -1;
    return (int)stop;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define NEED_KVM() do { if (kvm_why[0]) { SKIP("%s", kvm_why); return; } } while (0)

/* ---- without KVM -------------------------------------------------------------------------- */

static void test_config_checked_first(void)
{
    vmm_config c;
    cr_error e = {0};
    vmm *vm = (vmm *)1;
    vmm_config_default(&c);
    c.mem_bytes = 12345;
    CHECK_INT(vmm_open(&c, &vm, &e), CR_EUSAGE);
    CHECK(vm == NULL);
    CHECK(strstr(e.message, "guest memory 12345 bytes") != NULL);
    vmm_config_default(&c);
    c.shared_bytes = (uint32_t)VMM_MAX_SHARED + 4096;
    CHECK_INT(vmm_open(&c, &vm, &e), CR_EUSAGE);
    vmm_config_default(&c);
    c.wall_s = 0;
    CHECK_INT(vmm_open(&c, &vm, &e), CR_EUSAGE);
    CHECK_STR(e.message, "kvm: wall time 0 s outside (0, 86400]");
    vmm_close(NULL);
}

static void test_open_without_kvm_advises_ns(void)
{
    vmm_config c;
    cr_error e = {0};
    vmm *vm = NULL;
    if (access("/dev/kvm", F_OK) == 0) {
        SKIP("this host has /dev/kvm");
        return;
    }
    vmm_config_default(&c);
    CHECK_INT(vmm_open(&c, &vm, &e), CR_ESANDBOX);
    CHECK_STR(e.message, "kvm: open /dev/kvm: No such file or directory (no usable /dev/kvm: "
                         "try --tier ns)");
    CHECK(vm == NULL);
}

static void test_stop_names(void)
{
    CHECK_STR(vmm_stop_name(VMM_STOP_DOORBELL), "doorbell");
    CHECK_STR(vmm_stop_name(VMM_STOP_TIMEOUT), "timeout");
    CHECK_STR(vmm_stop_name((vmm_stop)99), "unknown");
}

/* ---- host detection on fake trees --------------------------------------------------------- */

static char fake_root[64];

static void put_file(const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s%s", fake_root, rel);
    FILE *f = fopen(p, "w");
    if (!f) { perror(p); return; }
    fputs(text, f);
    fclose(f);
}

static int sub(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s%s", fake_root, rel);
    return mkdir(p, 0755) == 0 || errno == EEXIST;
}

static void test_host_check_fake_trees(void)
{
    char why[256];
    snprintf(fake_root, sizeof fake_root, "/tmp/cr_kvm_test.XXXXXX");
    if (!mkdtemp(fake_root)) { SKIP("mkdtemp: %s", strerror(errno)); return; }
    CHECK(sub("/proc") && sub("/sys") && sub("/sys/module") && sub("/dev"));

    /* No /dev/kvm: said first, with what the CPU flags (if readable) mean for it. */
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "no /dev/kvm on this host; try --tier ns");
    put_file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 hypervisor lm\n");
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "no /dev/kvm on this host (the CPU has no vmx/svm: a VM without nested "
                   "virtualization); try --tier ns");
    put_file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vmx lm\n");
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "no /dev/kvm on this host (the CPU has vmx/svm: load kvm_intel or "
                   "kvm_amd); try --tier ns");

    put_file("/dev/kvm", "");           /* a file, not KVM: its ioctls fail */
    put_file("/proc/cpuinfo", "processor\t: 0\n");
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "cannot read the CPU flags in /proc/cpuinfo; try --tier ns");

    put_file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 hypervisor lm\n");
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "the CPU has no vmx/svm (a VM without nested virtualization); "
                   "try --tier ns");

    put_file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu svm lm\n");
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "KVM_GET_API_VERSION: Inappropriate ioctl for device; try --tier ns");

    CHECK(sub("/sys/module/kvm_pvm"));
    CHECK_INT(vmm_host_check(fake_root, why, sizeof why), 0);
    CHECK_STR(why, "/dev/kvm is kvm_pvm, a software hypervisor that cannot run a Linux guest; "
                   "try --tier ns");
    CHECK_INT(vmm_host_check(fake_root, NULL, 0), 0);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", fake_root);
    CHECK_INT(system(cmd), 0);
}

/* This host: the PVM machines say so; the nested test host (which sets
 * CR_EXPECT_KVM_LINUX=1) must say yes. */
static void test_host_check_here(void)
{
    char why[256];
    int ok = kvm_can_boot_linux(why, sizeof why);
    const char *expect = getenv("CR_EXPECT_KVM_LINUX");
    if (access("/sys/module/kvm_pvm", F_OK) == 0) {
        CHECK_INT(ok, 0);
        CHECK(strstr(why, "kvm_pvm") != NULL);
    } else if (expect && !strcmp(expect, "1")) {
        CHECK_INT(ok, 1);
        CHECK_STR(why, "");
    } else {
        CHECK(ok ? why[0] == '\0' : strstr(why, "try --tier ns") != NULL);
    }
}

/* ---- tiny guests --------------------------------------------------------------------------- */

static void test_real_mode_serial_hi(void)
{
    NEED_KVM();
    static const uint8_t code[] = {
        0xba, 0xf8, 0x03,       /* mov dx, 0x3f8 */
        0xb0, 'h', 0xee,        /* mov al, 'h'; out dx, al */
        0xb0, 'i', 0xee,        /* mov al, 'i'; out dx, al */
        0xf4,                   /* hlt */
    };
    cr_error e = {0};
    vmm *vm = open_vm(0, 5, 1000, 1024);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_real(vm, code, sizeof code, &e), VMM_STOP_HLT);
    size_t len;
    int cut;
    CHECK_STR(vmm_serial(vm, &len, &cut), "hi");
    CHECK_INT(len, 2);
    CHECK_INT(cut, 0);
    vmm_close(vm);
}

static void test_serial_string_out_capped(void)
{
    NEED_KVM();
    static const uint8_t code[] = {
        0xbe, 0x00, 0x20,       /* mov si, DATA_GPA */
        0xb9, 0x0a, 0x00,       /* mov cx, 10 */
        0xba, 0xf8, 0x03,       /* mov dx, 0x3f8 */
        0xf3, 0x6e,             /* rep outsb */
        0xe4, 0x99,             /* in al, 0x99 (nothing there) */
        0xee,                   /* out dx, al */
        0xf4,
    };
    cr_error e = {0};
    vmm *vm = open_vm(0, 5, 1000, 4);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(vmm_load(vm, DATA_GPA, "helloworld", 10, &e), CR_OK);
    CHECK_INT(run_real(vm, code, sizeof code, &e), VMM_STOP_HLT);
    int cut;
    /* The tail is kept: full at "hell", "ll" + "o", ... "ld" + the absent port's 0xff. */
    CHECK_STR(vmm_serial(vm, NULL, &cut), "ld\xff");
    CHECK_INT(cut, 1);
    vmm_close(vm);

    /* With room for all of it. */
    vm = open_vm(0, 5, 1000, 64);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(vmm_load(vm, DATA_GPA, "helloworld", 10, &e), CR_OK);
    CHECK_INT(run_real(vm, code, sizeof code, &e), VMM_STOP_HLT);
    CHECK_STR(vmm_serial(vm, NULL, NULL), "helloworld\xff");
    vmm_close(vm);
}

static void test_spin_hits_wall_clock(void)
{
    NEED_KVM();
    static const uint8_t spin[] = { 0xeb, 0xfe };             /* jmp $ */
    static const uint8_t sleep[] = { 0xfa, 0xf4, 0xeb, 0xfc };  /* cli; hlt; jmp back */
    cr_error e = {0};

    vmm *vm = open_vm(0, 0.3, 1000000, 64);
    if (!CHECK_RET(vm)) return;
    double t0 = now();
    CHECK_INT(run_real(vm, spin, sizeof spin, &e), VMM_STOP_TIMEOUT);
    double dt = now() - t0;
    CHECK(dt >= 0.29 && dt < SECS(3.0));   /* slower under emulation (the nested test host) */
    vmm_close(vm);

    /* With the in-kernel irqchip, HLT sleeps in the kernel: only the kick ends it. */
    vm = open_vm(1, 0.3, 1000000, 64);
    if (!CHECK_RET(vm)) return;
    t0 = now();
    CHECK_INT(run_real(vm, sleep, sizeof sleep, &e), VMM_STOP_TIMEOUT);
    dt = now() - t0;
    CHECK(dt >= 0.29 && dt < SECS(3.0));
    vmm_close(vm);
}

static void test_exit_cap(void)
{
    NEED_KVM();
    static const uint8_t code[] = { 0xe6, 0x80, 0xeb, 0xfc };  /* out 0x80, al; jmp back */
    cr_error e = {0};
    vmm *vm = open_vm(0, 10, 1000, 64);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_real(vm, code, sizeof code, &e), VMM_STOP_EXITS);
    CHECK_INT(vmm_exit_count(vm), 1000);
    vmm_close(vm);
}

static void test_triple_fault_and_reset(void)
{
    NEED_KVM();
    /* An IDT of limit 0: int3 faults, the fault faults, and the CPU shuts down. */
    static const uint8_t fault[] = {
        0x0f, 0x01, 0x1e, 0x00, 0x20,   /* lidt [DATA_GPA] */
        0xcc,                           /* int3 */
        0xf4,
    };
    static const uint8_t reset[] = { 0xb0, 0xfe, 0xe6, 0x64, 0xf4 };  /* i8042 reset */
    static const uint8_t zero_idt[6] = {0};
    cr_error e = {0};
    vmm *vm = open_vm(0, 5, 1000, 64);
    if (!CHECK_RET(vm)) return;
    if (access("/sys/module/kvm_pvm", F_OK) == 0) {
        /* Measured: kvm_pvm never reports the shutdown; the guest runs to the wall clock. */
        SKIP("kvm_pvm does not report a triple fault (the guest spins until the wall clock)");
    } else {
        CHECK_INT(vmm_load(vm, DATA_GPA, zero_idt, sizeof zero_idt, &e), CR_OK);
        CHECK_INT(run_real(vm, fault, sizeof fault, &e), VMM_STOP_SHUTDOWN);
    }
    vmm_close(vm);

    vm = open_vm(0, 5, 1000, 64);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_real(vm, reset, sizeof reset, &e), VMM_STOP_RESET);
    vmm_close(vm);
}

/* The package image is mapped whole, in VMM_PMEM_ALIGN units, and never as writable guest
 * memory: a file of another size, or none, is refused at open, naming it. */
static void test_package_image_mapped(void)
{
    NEED_KVM();
    char path[] = "/tmp/cr-pmem-XXXXXX";
    int fd = mkstemp(path);
    if (!CHECK_RET(fd >= 0)) return;
    vmm_config c;
    vmm *vm = NULL;
    cr_error e = {0};
    vmm_config_default(&c);
    c.pmem_path = path;
    CHECK(ftruncate(fd, 4097) == 0);
    CHECK_INT(vmm_open(&c, &vm, &e), CR_ESANDBOX);
    char want[256];
    snprintf(want, sizeof want, "kvm: package image %s: 4097 bytes, want a file of a multiple "
             "of 2097152 bytes up to 17179869184", path);
    CHECK_STR(e.message, want);
    CHECK(vm == NULL);
    CHECK(ftruncate(fd, 2 * VMM_PMEM_ALIGN) == 0);
    if (CHECK_RET(vmm_open(&c, &vm, &e) == CR_OK)) {
        CHECK_INT(vmm_pmem_size(vm), 2 * VMM_PMEM_ALIGN);
        CHECK(vmm_guest_ptr(vm, VMM_PMEM_GPA, 4096) == NULL);    /* not the VMM's to write */
        vmm_close(vm);
    } else {
        fprintf(stderr, "open: %s\n", e.message);
    }
    close(fd);
    unlink(path);
    c.pmem_path = path;
    CHECK_INT(vmm_open(&c, &vm, &e), CR_ESANDBOX);
    snprintf(want, sizeof want, "kvm: package image %s: No such file or directory", path);
    CHECK_STR(e.message, want);
}

static void test_guest_ptr_bounds(void)
{
    NEED_KVM();
    vmm *vm = open_vm(0, 5, 1000, 64);
    if (!CHECK_RET(vm)) return;
    uint64_t mem = 4u << 20, sh = 1u << 20;
    CHECK(vmm_guest_ptr(vm, mem - 1, 1) != NULL);
    CHECK(vmm_guest_ptr(vm, mem - 1, 2) == NULL);
    CHECK(vmm_guest_ptr(vm, UINT64_MAX, 2) == NULL);
    CHECK(vmm_guest_ptr(vm, 0, UINT64_MAX) == NULL);
    CHECK(vmm_guest_ptr(vm, CRVM_SHARED_GPA, sh) != NULL);
    CHECK(vmm_guest_ptr(vm, CRVM_SHARED_GPA + 1, sh) == NULL);
    CHECK(vmm_guest_ptr(vm, CRVM_SHARED_GPA - 1, 2) == NULL);
    cr_error e = {0};
    CHECK_INT(vmm_load(vm, mem - 2, "abc", 3, &e), CR_EUSAGE);
    vmm_close(vm);
}

/* ---- the job/result region through a long-mode guest ----------------------------------------
 * The guest copies a template of the region (header and data, laid out by the test) over the
 * region with rep movsb and rings the doorbell with `ring`: every malformed result a guest
 * could leave is one template away. */

static const vmm_job_limits lim = {
    .wall_ms = 1000, .cpu_ms = 1000, .max_procs = 4, .memory_bytes = 1 << 20,
    .max_stdout = 65536, .max_stderr = 4096, .max_report = 4096,
};

static int run_page_guest(vmm *vm, const struct crvm_page *tpl, const char *data,
                          uint32_t data_off, uint32_t ring, uint8_t ring_size, cr_error *e)
{
    uint32_t n = data_off + (uint32_t)strlen(data);
    uint8_t *t = vmm_guest_ptr(vm, TEMPLATE_GPA, n);
    if (!t) return -1;
    memcpy(t, tpl, sizeof *tpl);
    memcpy(t + data_off, data, strlen(data));
    uint8_t code[] = {
        0xbe, 0x00, 0x00, 0x03, 0x00,                   /* mov esi, TEMPLATE_GPA */
        0xbf, 0x00, 0x00, 0x00, 0xd0,                   /* mov edi, CRVM_SHARED_GPA */
        0xb9, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), 0,  /* mov ecx, n */
        0xf3, 0xa4,                                     /* rep movsb */
        0x66, 0xba, 0x00, 0x0f,                         /* mov dx, CRVM_DOORBELL_PORT */
        0xb8, (uint8_t)ring, (uint8_t)(ring >> 8), (uint8_t)(ring >> 16),
        (uint8_t)(ring >> 24),                          /* mov eax, ring */
        0xef,                                           /* out dx, eax */
        0xf4,                                           /* hlt */
    };
    if (ring_size == 1) code[26] = 0xee;                /* out dx, al */
    vmm_stop stop;
    if (vmm_load(vm, 0x100000, code, sizeof code, e) != CR_OK) return -1;
    if (vmm_set_long_mode(vm, 0x100000, 0x80000, 0, e) != CR_OK) return -1;
    if (vmm_run(vm, &stop, e) != CR_OK) return -1;
    return (int)stop;
}

/* The host's header as the guest found it, with a good result in it. */
static struct crvm_page good_result(vmm *vm)
{
    struct crvm_page h;
    memcpy(&h, vmm_guest_ptr(vm, CRVM_SHARED_GPA, sizeof h), sizeof h);
    h.exited = 1;
    h.exit_code = 0;
    h.out = (struct crvm_span){ 0x1000, 3 };
    h.err = (struct crvm_span){ 0x1003, 0 };
    h.report = (struct crvm_span){ 0x1003, 9 };
    h.artifacts = (struct crvm_span){ 0x100c, 0 };
    return h;
}

static vmm *page_vm(cr_error *e)
{
    vmm *vm = open_vm(0, 5, 1000, 64);
    if (vm && vmm_page_write(vm, "code 9\nprint(42)\n", 17, &lim, e) != CR_OK) {
        vmm_close(vm);
        return NULL;
    }
    return vm;
}

static void test_page_round_trip(void)
{
    NEED_KVM();
    cr_error e = {0};
    vmm *vm = page_vm(&e);
    if (!CHECK_RET(vm)) return;
    const struct crvm_page *host = (const void *)vmm_guest_ptr(vm, CRVM_SHARED_GPA, 4096);
    CHECK_INT(host->magic, CRVM_MAGIC);
    CHECK_INT(host->job.len, 17);
    CHECK(memcmp((const char *)host + host->job.off, "code 9\nprint(42)\n", 17) == 0);
    CHECK_INT(host->max_stdout, 65536);

    struct crvm_page h = good_result(vm);
    h.exit_code = 3;
    h.result_flags = CRVM_ERR_TRUNCATED;
    h.limit = SANDBOX_LIMIT_PROCS;
    h.run_ns = 1500000000;
    h.cpu_ns = 700000000;
    h.peak_bytes = 9 << 20;
    snprintf(h.limit_detail, sizeof h.limit_detail, "processes 16");
    snprintf(h.tier_note, sizeof h.tier_note, "no pids cgroup: processes bounded by RLIMIT_NPROC only");
    CHECK_INT(run_page_guest(vm, &h, "42\nvalue 2\n42", 0x1000, CRVM_RING_RESULT, 4, &e),
              VMM_STOP_DOORBELL);
    vmm_page_result r;
    CHECK_INT(vmm_page_read(vm, &r, &e), CR_OK);
    CHECK_STR(r.stdout_text, "42\n");
    CHECK_STR(r.stderr_text, "");
    CHECK_STR(r.report, "value 2\n4");
    CHECK_INT(r.exited, 1);
    CHECK_INT(r.exit_code, 3);
    CHECK_INT(r.flags, CRVM_ERR_TRUNCATED);
    CHECK_INT(r.limit, SANDBOX_LIMIT_PROCS);
    CHECK_INT(r.run_ns, 1500000000);
    CHECK_INT(r.cpu_ns, 700000000);
    CHECK_INT(r.peak_bytes, 9 << 20);
    CHECK_STR(r.limit_detail, "processes 16");
    CHECK_STR(r.tier_note, "no pids cgroup: processes bounded by RLIMIT_NPROC only");
    /* Into the outcome as the ns tier fills it: the guest's figures and words. */
    sandbox_outcome oc;
    memset(&oc, 0, sizeof oc);
    CHECK_INT(kvm_take_result(&r, &oc, &e), CR_OK);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_PROCS);
    CHECK_STR(oc.limit_detail, "processes 16");
    CHECK(oc.wall_s == 1.5 && oc.cpu_s == 0.7);
    CHECK_INT(oc.peak_memory_bytes, 9 << 20);
    CHECK_STR(oc.stdout_buf.p, "42\n");
    CHECK_INT(oc.stderr_buf.truncated, 1);
    sandbox_outcome_free(&oc);
    /* A guest that could not set the run up: its reason, as a sandbox error. */
    r.flags = CRVM_SETUP_FAILED;
    free(r.stderr_text);
    r.stderr_text = strdup("ns: mount proc: Operation not permitted\nmore");
    CHECK_INT(kvm_take_result(&r, &oc, &e), CR_ESANDBOX);
    CHECK_STR(e.message, "kvm: guest: ns: mount proc: Operation not permitted");
    sandbox_outcome_free(&oc);
    vmm_page_result_free(&r);
    vmm_page_result_free(NULL);
    vmm_close(vm);
}

/* Each malformed header, and the error it must give. */
static void test_page_rejects_bad_results(void)
{
    NEED_KVM();
    static const struct {
        const char *what;
        const char *want;
    } cases[] = {
        { "huge out length", "kvm: result page: out span 4096+4294967280 exceeds max_stdout "
                             "65536" },
        { "out past the end", "kvm: result page: out span 1048000+1000 outside the region "
                              "[664, 1048576)" },
        { "out in the header", "kvm: result page: out span 8+3 outside the region [664, "
                               "1048576)" },
        { "oversized stderr", "kvm: result page: err span 4099+5000 exceeds max_stderr 4096" },
        { "magic changed", "kvm: result page: header changed (magic 0x0, version 4, size "
                           "1048576, header 664)" },
        { "size grown", "kvm: result page: header changed (magic 0x4d565243, version 4, size "
                        "4294967295, header 664)" },
        { "no exit, no signal", "kvm: result page: exited 0 with signal 0" },
        { "unknown flag", "kvm: result page: unknown flags 0x80" },
        { "unended note", "kvm: result page: tier_note is not NUL-ended" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_error e = {0};
        vmm *vm = page_vm(&e);
        if (!CHECK_RET(vm)) return;
        struct crvm_page h = good_result(vm);
        switch (i) {
        case 0: h.out.len = 0xfffffff0u; break;
        case 1: h.out = (struct crvm_span){ 1048000, 1000 }; break;
        case 2: h.out.off = 8; break;
        case 3: h.err.len = 5000; break;
        case 4: h.magic = 0; break;
        case 5: h.size = 0xffffffffu; break;
        case 6: h.exited = 0; break;
        case 7: h.result_flags = 0x80; break;
        case 8: memset(h.tier_note, 'x', sizeof h.tier_note); break;
        }
        CHECK_INT(run_page_guest(vm, &h, "42\n", 0x1000, CRVM_RING_RESULT, 4, &e),
                  VMM_STOP_DOORBELL);
        vmm_page_result r;
        memset(&r, 0x5a, sizeof r);
        if (vmm_page_read(vm, &r, &e) != CR_ESANDBOX)
            fprintf(stderr, "case %s: accepted\n", cases[i].what);
        CHECK_STR(e.message, cases[i].want);
        CHECK(r.stdout_text == NULL && r.stderr_text == NULL && r.report == NULL);
        vmm_close(vm);
    }
    CHECK_INT(sizeof(struct crvm_page), 664);
}

static void test_doorbell_misuse(void)
{
    NEED_KVM();
    cr_error e = {0};
    vmm *vm = page_vm(&e);
    if (!CHECK_RET(vm)) return;
    struct crvm_page h = good_result(vm);
    CHECK_INT(run_page_guest(vm, &h, "42\n", 0x1000, 7, 4, &e), -1);
    CHECK_STR(e.message, "kvm: doorbell: unknown value 0x7");
    vmm_close(vm);

    vm = page_vm(&e);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_page_guest(vm, &h, "42\n", 0x1000, 1, 1, &e), -1);
    CHECK_STR(e.message, "kvm: doorbell: 1-byte write, want 4");
    vmm_close(vm);

    /* BOOTED is a timestamp, not a stop: the guest goes on to its HLT. */
    vm = page_vm(&e);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_page_guest(vm, &h, "42\n", 0x1000, CRVM_RING_BOOTED, 4, &e), VMM_STOP_HLT);
    vmm_close(vm);
}

/* A guest that halts without ringing leaves the host's header: no result in it. */
static void test_never_rings(void)
{
    NEED_KVM();
    static const uint8_t code[] = { 0xf4 };
    cr_error e = {0};
    vmm *vm = page_vm(&e);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_real(vm, code, sizeof code, &e), VMM_STOP_HLT);
    vmm_page_result r;
    CHECK_INT(vmm_page_read(vm, &r, &e), CR_ESANDBOX);
    CHECK_STR(e.message, "kvm: result page: exited 0 with signal 0");
    vmm_close(vm);

    vm = open_vm(0, 5, 1000, 64);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(vmm_page_read(vm, &r, &e), CR_EUSAGE);
    CHECK_INT(vmm_page_write(vm, "x", (1u << 20), &lim, &e), CR_ELIMIT);
    vmm_close(vm);
}


/* ---- the artifacts span, without a VM ------------------------------------------------------
 * What the guest's walk of /out sends (proto.h), built by hand, and what the host makes of it:
 * the ns tier's collection over a rebuilt tree, or an error naming the bad record. */

/* A private directory for the test, made fresh. */
static void fresh_dir(char *dir, size_t n, const char *what)
{
    snprintf(dir, n, "/tmp/calcroute-test-%s.XXXXXX", what);
    if (!mkdtemp(dir)) dir[0] = '\0';
}

static int dir_entries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f && fscanf(f, "%d", &n) != 1) n = -1;
    if (f) pclose(f);
    return n;
}

static void rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void test_artifacts_rebuilt_and_collected(void)
{
    static uint8_t span[4096];
    char tmp[128], dest[128], path[300];
    size_t n = 0;
    n = kvm_span_put(span, n, CRVM_ENT_DIR, "d", NULL);
    n = kvm_span_put(span, n, CRVM_ENT_FILE, "d/a.csv", "x,y\n1,2\n");
    n = kvm_span_put(span, n, CRVM_ENT_OTHER, "f", NULL);
    n = kvm_span_put(span, n, CRVM_ENT_FILE, "r.txt", "42\n");
    n = kvm_span_put(span, n, CRVM_ENT_SYMLINK, "s", NULL);
    n = kvm_span_put(span, n, CRVM_ENT_DROPPED, "z.bin", NULL);
    n = kvm_span_put(span, n, CRVM_ENT_FILE, "zz", "");
    fresh_dir(tmp, sizeof tmp, "tmpdir");
    fresh_dir(dest, sizeof dest, "out");
    if (!CHECK_RET(tmp[0] && dest[0])) return;
    setenv("TMPDIR", tmp, 1);

    vmm_page_result r = { .artifacts = (char *)span, .artifacts_len = n };
    sandbox_limits sl = { .max_artifacts = 8, .artifact_bytes = 1000 };
    sandbox_outcome oc;
    cr_error e = {0};
    memset(&oc, 0, sizeof oc);
    if (kvm_take_artifacts(&r, dest, &sl, &oc, &e) != CR_OK) CHECK_STR(e.message, "");
    CHECK_INT(oc.artifact_count, 3);
    if (oc.artifact_count == 3) {
        CHECK_STR(oc.artifacts[0].name, "d/a.csv");
        CHECK_INT(oc.artifacts[0].size, 8);
        CHECK_STR(oc.artifacts[0].sha256,
                  "81bf9fa83c6f7f151bd491a98cd7d933de3965289e3ebd77c6c425f7eaa16392");
        CHECK_STR(oc.artifacts[1].name, "r.txt");
        CHECK_STR(oc.artifacts[1].sha256,
                  "084c799cd551dd1d8d5c5f9a5d593b2e931f5e36122ee5c793c1d08a19839cc0");
        snprintf(path, sizeof path, "%s/r.txt", dest);
        CHECK_STR(oc.artifacts[1].path, path);
        CHECK_STR(oc.artifacts[2].name, "zz");
        CHECK_INT(oc.artifacts[2].size, 0);
    }
    CHECK_STR(oc.artifact_note, "skipped non-file: f; skipped symlink: s; dropped over the "
                                "artifact limits: z.bin");
    CHECK_INT(oc.limit, SANDBOX_LIMIT_ARTIFACTS);
    CHECK_STR(oc.limit_detail, "artifacts: more than 8 files or 1000 bytes");
    /* The copy in dest holds the files only; the rebuilt tree under TMPDIR is gone. */
    snprintf(path, sizeof path, "%s/d", dest);
    CHECK_INT(dir_entries(path), 1);
    CHECK_INT(dir_entries(dest), 3);
    CHECK_INT(dir_entries(tmp), 0);
    sandbox_outcome_free(&oc);
    unsetenv("TMPDIR");
    rm_rf(tmp);
    rm_rf(dest);
}

/* Each malformed span, and the error it must give; nothing is left behind either way. */
static void test_artifacts_bad_records(void)
{
    static const char *want[] = {
        "kvm: result page: artifact record at 0 cut short",
        "kvm: result page: artifact record at 0 of type 9",
        "kvm: result page: artifact record at 0: content for a type 2",
        "kvm: result page: artifact record at 0: path of 0 and content of 0 bytes",
        "kvm: result page: artifact record at 0: path of 1 and content of 100 bytes",
        "kvm: result page: artifact record at 0: bad path '/etc'",
        "kvm: result page: artifact record at 0: bad path 'a/../b'",
        "kvm: result page: artifact record at 0: bad path 'a//b'",
        "kvm: result page: artifact record at 0: bad path 'a/'",
        "kvm: result page: artifact record at 0: bad path '1/2/3/4/5/6/7/8/9/10'",
        "kvm: result page: artifact 'a/b' before its directory",
        "kvm: result page: artifact 'a' twice or under a non-directory",
        "kvm: result page: artifact 's/x' before its directory",
        "kvm: result page: artifact record at 0 of type 1",
    };
    char tmp[128];
    fresh_dir(tmp, sizeof tmp, "bad");
    if (!CHECK_RET(tmp[0])) return;
    setenv("TMPDIR", tmp, 1);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint8_t span[256];
        size_t n = 0;
        memset(span, 0, sizeof span);
        switch (i) {
        case 0: n = 5; break;
        case 1: n = kvm_span_put(span, 0, 9, "a", NULL); break;
        case 2: n = kvm_span_put(span, 0, CRVM_ENT_DIR, "a", "x"); break;
        case 3: n = kvm_span_put(span, 0, CRVM_ENT_FILE, "", NULL); break;
        case 4:
            n = kvm_span_put(span, 0, CRVM_ENT_FILE, "a", "xyz");
            span[8] = 100;            /* size claims more than the span holds */
            break;
        case 5: n = kvm_span_put(span, 0, CRVM_ENT_FILE, "/etc", "x"); break;
        case 6: n = kvm_span_put(span, 0, CRVM_ENT_FILE, "a/../b", "x"); break;
        case 7: n = kvm_span_put(span, 0, CRVM_ENT_FILE, "a//b", "x"); break;
        case 8: n = kvm_span_put(span, 0, CRVM_ENT_DIR, "a/", NULL); break;
        case 9: n = kvm_span_put(span, 0, CRVM_ENT_FILE, "1/2/3/4/5/6/7/8/9/10", "x"); break;
        case 10: n = kvm_span_put(span, 0, CRVM_ENT_FILE, "a/b", "x"); break;
        case 11:
            n = kvm_span_put(span, 0, CRVM_ENT_FILE, "a", "x");
            n = kvm_span_put(span, n, CRVM_ENT_DIR, "a", NULL);
            break;
        case 12:
            n = kvm_span_put(span, 0, CRVM_ENT_SYMLINK, "s", NULL);
            n = kvm_span_put(span, n, CRVM_ENT_FILE, "s/x", "x");
            break;
        case 13:
            n = kvm_span_put(span, 0, CRVM_ENT_FILE, "a", "x");
            span[1] = 1;              /* a reserved byte set */
            break;
        }
        vmm_page_result r = { .artifacts = (char *)span, .artifacts_len = n };
        sandbox_limits sl = { .max_artifacts = 8, .artifact_bytes = 1000 };
        sandbox_outcome oc;
        cr_error e = {0};
        memset(&oc, 0, sizeof oc);
        CHECK_INT(kvm_take_artifacts(&r, NULL, &sl, &oc, &e), CR_ESANDBOX);
        CHECK_STR(e.message, want[i]);
        CHECK_INT(oc.artifact_count, 0);
        sandbox_outcome_free(&oc);
    }
    CHECK_INT(dir_entries(tmp), 0);
    unsetenv("TMPDIR");
    rm_rf(tmp);
}

/* The data directory as the archive the guest unpacks at /data: checked with cpio(1) itself,
 * entry by entry (name order, owner root, write bits cleared, a symlink's target, the caller's
 * private file readable by "other" as the ns tier's code reads it, another user's without its
 * content, a fifo left out), and its bounds. */
static void test_data_archive(void)
{
    char dir[128], file[300], cmd[600];
    if (system("cpio --version 2>/dev/null | grep -q GNU") != 0) {
        SKIP("no GNU cpio to read the archive back (busybox's lists no owners)");
        return;
    }
    fresh_dir(dir, sizeof dir, "data");
    if (!CHECK_RET(dir[0])) return;
    static const struct { const char *name, *text; int mode; } files[] = {
        { "prices.csv", "d,p\n1,2.5\n", 0644 }, { "sub/b.txt", "b\n", 0755 },
        { "secret", "s3cret\n", 0600 }, { "theirs", "t\n", 0640 },
    };
    snprintf(file, sizeof file, "%s/sub", dir);
    mkdir(file, 0750);
    for (size_t i = 0; i < 4; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, files[i].name);
        FILE *f = fopen(file, "w");
        if (f) {
            fputs(files[i].text, f);
            fclose(f);
        }
        chmod(file, (mode_t)files[i].mode);
    }
    /* Another user's file: the caller's ids are not its owner's or group's. */
    snprintf(file, sizeof file, "%s/theirs", dir);
    CHECK_INT(chown(file, geteuid() + 4242, getegid() + 4242), 0);
    snprintf(file, sizeof file, "%s/link", dir);
    CHECK_INT(symlink("prices.csv", file), 0);
    snprintf(file, sizeof file, "%s/fifo", dir);
    CHECK_INT(mkfifo(file, 0644), 0);
    chmod(dir, 0755);

    cr_buf b;
    cr_error e = {0};
    cr_buf_init(&b, 0);
    CHECK_INT(kvm_data_archive(dir, 1 << 20, &b, &e), CR_OK);
    snprintf(file, sizeof file, "%s.cpio", dir);
    FILE *f = fopen(file, "wb");
    if (f) {
        fwrite(b.p, 1, b.len, f);
        fclose(f);
    }
    CHECK_INT(b.len % 4, 0);
    snprintf(cmd, sizeof cmd, "cpio -itv --quiet < '%s' 2>&1 | awk '{print $1, $3, $5, $9, $11}'",
             file);
    FILE *p = popen(cmd, "r");
    char got[1024] = "";
    size_t n = p ? fread(got, 1, sizeof got - 1, p) : 0;
    got[n] = '\0';
    if (p) pclose(p);
    CHECK_STR(got, "dr-xr-xr-x root 0 data \n"
                   "lrwxrwxrwx root 10 data/link prices.csv\n"
                   "-r--r--r-- root 10 data/prices.csv \n"
                   "-r-----r-- root 7 data/secret \n"
                   "dr-xr-xr-x root 0 data/sub \n"
                   "-r-xr-xr-x root 2 data/sub/b.txt \n"
                   "-r--r----- root 0 data/theirs \n");
    /* The content, read back by cpio: the file and the symlink's target. */
    snprintf(cmd, sizeof cmd, "cpio -i --quiet --to-stdout data/prices.csv < '%s'", file);
    p = popen(cmd, "r");
    n = p ? fread(got, 1, sizeof got - 1, p) : 0;
    got[n] = '\0';
    if (p) pclose(p);
    CHECK_STR(got, "d,p\n1,2.5\n");
    unlink(file);

    cr_buf_reset(&b);
    CHECK_INT(kvm_data_archive(dir, 300, &b, &e), CR_ELIMIT);
    snprintf(cmd, sizeof cmd, "kvm: the data directory %s is larger than the kvm tier carries "
             "(300 bytes, 16384 entries, 32 levels); try --tier ns", dir);
    CHECK_STR(e.message, cmd);
    cr_buf_reset(&b);
    CHECK_INT(kvm_data_archive("/nonexistent-data", 1 << 20, &b, &e), CR_EUSAGE);
    CHECK_STR(e.message, "/nonexistent-data: No such file or directory");
    cr_buf_free(&b);
    rm_rf(dir);
}

/* The VMM's jail: after it, the host's tree is out of reach by path (stat, which the filter
 * allows, finds nothing), and an open ends the process with VMM_JAIL_TRAPPED. */
static void test_jail(void)
{
    int pfd[2], status = 0;
    if (pipe(pfd) < 0) { CHECK(!"pipe"); return; }
    pid_t pid = fork();
    if (pid == 0) {
        char note[128], line[160];
        struct stat sb;
        cr_error e = {0};
        int null = open("/dev/null", O_WRONLY);   /* the trap's message is expected */
        close(pfd[0]);
        if (null >= 0) dup2(null, 2);
        if (vmm_jail(note, sizeof note, &e) != CR_OK) _exit(1);
        int usr = stat("/usr", &sb) < 0 ? errno : 0;
        int root = stat("/", &sb) < 0 ? -1 : (int)(sb.st_mode & 0777);
        int n = snprintf(line, sizeof line, "%s|%d|%o", note, usr, root);
        if (write(pfd[1], line, (size_t)n) != n) _exit(1);
        close(pfd[1]);
        (void)!open("/etc/passwd", O_RDONLY);
        _exit(0);
    }
    close(pfd[1]);
    char got[200] = "";
    ssize_t n = read(pfd[0], got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    close(pfd[0]);
    waitpid(pid, &status, 0);
    if (!strncmp(got, "VMM without namespaces", 22)) {
        SKIP("no namespaces for the jail here: %s", got);
    } else {
        CHECK_STR(got, "|2|555");      /* no note, ENOENT, the empty read-only root */
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == VMM_JAIL_TRAPPED);
}

/* ---- snapshots ----------------------------------------------------------------------------- */

/* Two files standing in for a kernel and an initramfs, for an identity. */
static void snap_files(char *dir, size_t n, char *kernel, char *initrd, size_t m)
{
    fresh_dir(dir, n, "snap");
    snprintf(kernel, m, "%s/vmlinuz", dir);
    snprintf(initrd, m, "%s/initrd.cpio", dir);
    int fd = open(kernel, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { (void)!write(fd, "kernel", 6); close(fd); }
    fd = open(initrd, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { (void)!write(fd, "initramfs", 9); close(fd); }
}

/* A header as vmm_snapshot_save() writes it for `id`, 4 MiB of RAM. */
static vmm_snap_header good_header(const vmm_snap_id *id, uint64_t *file_size)
{
    vmm_snap_header h = {
        .magic = VMM_SNAP_MAGIC, .version = VMM_SNAP_VERSION, .header_size = sizeof h,
        .mem_bytes = 4u << 20, .shared_bytes = 1u << 20, .irqchip = 0,
        .state_off = VMM_SNAP_HEADER, .nmsrs = 10, .ncpuid = 20, .id = *id,
    };
    h.state_len = 0;
    *file_size = 0;
    return h;
}

/* The header checks, without KVM: every field out of line is named, and the layout must
 * add up to the file. The right layout comes from a first parse that reports it. */
static void test_snap_header_checks(void)
{
    char dir[64], kernel[128], initrd[128];
    vmm_snap_id id, other;
    vmm_snap_header h, got;
    cr_error e = {0};
    uint64_t size;
    snap_files(dir, sizeof dir, kernel, initrd, sizeof kernel);
    CHECK_INT(vmm_snap_identity(kernel, initrd, NULL, "", &id, &e), CR_OK);
    CHECK(strncmp(id.build, "crvm4 snap3 state", 17) == 0);
    /* No package image: its identity is all zeros; with one, the file's. */
    CHECK(id.pmem[0] == 0 && id.pmem[1] == 0 && id.pmem[2] == 0);
    CHECK_INT(vmm_snap_identity(kernel, initrd, initrd, "", &other, &e), CR_OK);
    CHECK(memcmp(other.pmem, other.initrd, sizeof other.pmem) == 0);
    CHECK_INT(vmm_snap_identity(kernel, "/nonexistent/initrd", NULL, "", &other, &e), CR_ESANDBOX);
    CHECK_STR(e.message, "kvm: snapshot: stat /nonexistent/initrd: No such file or directory");

    h = good_header(&id, &size);
    /* The layout error says what it found; take the state length from a save-like sum. */
    CHECK_INT(vmm_snap_header_parse(&h, sizeof h, 0, &id, &got, &e), CR_ESANDBOX);
    CHECK(strstr(e.message, "kvm: snapshot: layout (state 4096+0, memory at 0, file 0 bytes)") != NULL);
    /* Find state_len by the rule: every len the parser accepts is the one it computes. */
    uint64_t slen = 0;
    for (uint64_t try = 4096; try < 65536 && !slen; try += 8) {
        h.state_len = try;
        h.mem_off = (VMM_SNAP_HEADER + try + 4095) & ~4095ull;
        if (vmm_snap_header_parse(&h, sizeof h, h.mem_off + h.mem_bytes, &id, &got, &e) == CR_OK)
            slen = try;
    }
    CHECK(slen > 4096);
    size = h.mem_off + h.mem_bytes;
    CHECK_INT(got.nmsrs, 10);
    CHECK_INT(got.mem_bytes, 4u << 20);
    vmm_snap_header ws = h;
    ws.ws_off = size;
    ws.ws_write = 2;
    ws.ws_read = 1;
    CHECK_INT(vmm_snap_header_parse(&ws, sizeof ws, size + 24, &id, &got, &e), CR_OK);
    CHECK_INT(got.ws_write, 2);

    static const char *const want[] = {
        "kvm: snapshot: 8 bytes, shorter than its header",
        "kvm: snapshot: not a snapshot (magic)",
        "kvm: snapshot: format 4 (header ",
        "kvm: snapshot made from another kernel: refused",
        "kvm: snapshot made from another initramfs: refused",
        "kvm: snapshot made from another VMM build: refused",
        "kvm: snapshot: build not NUL-ended",
        "kvm: snapshot: memory 12345, region 1048576, irqchip 0 out of range",
        "kvm: snapshot: 4000 MSRs, 20 CPUID entries",
        "kvm: snapshot: layout (state 4096+",
        "kvm: snapshot: layout (state 4096+",
        "kvm: snapshot: layout (state 4096+",
        "kvm: snapshot: layout (state 4096+",
        "kvm: snapshot: 262145 working-set ranges",
        "kvm: snapshot made from another package image: refused",
    };
    for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
        vmm_snap_header b = h;
        uint64_t fsize = size;
        size_t len = sizeof b;
        switch (i) {
        case 0: len = 8; break;
        case 1: b.magic ^= 1; break;
        case 2: b.version = 4; break;
        case 3: b.id.kernel[1]++; break;
        case 4: b.id.initrd[0]++; break;
        case 5: b.id.build[0] ^= 1; break;
        case 6: memset(b.id.build, 'x', sizeof b.id.build); break;
        case 7: b.mem_bytes = 12345; break;
        case 8: b.nmsrs = 4000; break;
        case 9: fsize = size + 4096; break;
        case 10: b.mem_off += 4096; break;
        /* A working set is the file's last part, of its ranges' size. */
        case 11: b.ws_write = 2; b.ws_off = size; break;
        case 12: b.ws_read = 1; b.ws_off = size + 8; fsize = size + 8; break;
        case 13: b.ws_write = VMM_SNAP_MAX_RANGES; b.ws_read = 1; break;
        case 14: b.id.pmem[2]++; break;
        }
        /* A build string that is not NUL-ended is one the caller's differs from, too:
         * compare with an id that carries it, so that the NUL check is the one seen. */
        vmm_snap_id w = id;
        if (i == 6) w.build[0] = 'x', memset(w.build, 'x', sizeof w.build);
        CHECK_INT(vmm_snap_header_parse(&b, len, fsize, &w, &got, &e), CR_ESANDBOX);
        if (strncmp(e.message, want[i], strlen(want[i])))
            fprintf(stderr, "case %d: got [%s], want [%s...]\n", i, e.message, want[i]);
        CHECK(strncmp(e.message, want[i], strlen(want[i])) == 0);
    }
    rm_rf(dir);
}

/* A tiny guest stops at the ready ring with a register set; the snapshot of it, restored
 * twice, runs on from there in each copy: the register came back, memory changed by one
 * copy (or by the original after the save) is not seen by the next, the file is sparse. */
static void test_snapshot_tiny_guest(void)
{
    NEED_KVM();
    static const uint8_t code[] = {
        0xbe, 0xef, 0xbe,                   /* mov si, 0xbeef */
        0x66, 0xb8, 0x03, 0, 0, 0,          /* mov eax, CRVM_RING_READY */
        0xba, 0x00, 0x0f,                   /* mov dx, 0x0f00 */
        0x66, 0xef,                         /* out dx, eax: the ready point */
        0xff, 0x06, 0x00, 0x20,             /* inc word [0x2000] */
        0x89, 0x36, 0x02, 0x20,             /* mov [0x2002], si */
        0xf4,                               /* hlt */
    };
    char dir[64], kernel[128], initrd[128], path[160];
    vmm_snap_id id, other;
    cr_error e = {0};
    vmm_stop stop;
    snap_files(dir, sizeof dir, kernel, initrd, sizeof kernel);
    snprintf(path, sizeof path, "%s/snapshot", dir);
    if (!CHECK_RET(vmm_snap_identity(kernel, initrd, NULL, "", &id, &e) == CR_OK)) return;

    vmm *vm = open_vm(0, 5, 1000, 1024);
    if (!CHECK_RET(vm)) return;
    CHECK_INT(run_real(vm, code, sizeof code, &e), VMM_STOP_READY);
    uint16_t *w = (uint16_t *)vmm_guest_ptr(vm, DATA_GPA, 4);
    w[0] = 41;                                          /* saved with the snapshot */
    if (!CHECK_RET(vmm_snapshot_save(vm, &id, path, &e) == CR_OK)) {
        fprintf(stderr, "save: %s\n", e.message);
        vmm_close(vm);
        rm_rf(dir);
        return;
    }
    /* The original runs on, after the save. */
    CHECK_INT(vmm_run(vm, &stop, &e), CR_OK);
    CHECK_INT(stop, VMM_STOP_HLT);
    CHECK_INT(w[0], 42);
    CHECK_INT(w[1], 0xbeef);
    w[0] = 1000;
    vmm_close(vm);

    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0444);
    CHECK(st.st_size > (4 << 20) && (uint64_t)st.st_blocks * 512 < (1u << 20));   /* sparse */

    vmm_config c;
    vmm_config_default(&c);
    c.irqchip = 1;                 /* the snapshot's wins */
    c.wall_s = 5;
    c.max_exits = 1000;
    for (int round = 0; round < 2; round++) {
        vmm *r = NULL;
        if (!CHECK_RET(vmm_snapshot_restore(&c, path, &id, &r, &e) == CR_OK)) {
            fprintf(stderr, "restore: %s\n", e.message);
            break;
        }
        CHECK_INT(vmm_get_config(r)->mem_bytes, 4u << 20);
        CHECK_INT(vmm_get_config(r)->irqchip, 0);
        uint16_t *rw = (uint16_t *)vmm_guest_ptr(r, DATA_GPA, 4);
        CHECK_INT(rw[0], 41);                           /* neither the original's nor round 0's */
        CHECK_INT(rw[1], 0);
        CHECK_INT(vmm_run(r, &stop, &e), CR_OK);
        CHECK_INT(stop, VMM_STOP_HLT);
        CHECK_INT(rw[0], 42);
        CHECK_INT(rw[1], 0xbeef);                       /* si came back */
        CHECK(vmm_exit_count(r) <= 2);
        vmm_close(r);
    }
    /* A first job's pages kept with it: the page the guest wrote among those it copies at
     * restore, which then runs as before; learned once only. */
    vmm *l = NULL;
    if (CHECK_RET(vmm_snapshot_restore(&c, path, &id, &l, &e) == CR_OK)) {
        CHECK_INT(vmm_run(l, &stop, &e), CR_OK);
        CHECK_INT(vmm_snapshot_learn(l, path, &e), CR_OK);
        CHECK_INT(vmm_snapshot_learn(l, path, &e), CR_ESANDBOX);
        CHECK(strstr(e.message, "has a working set") != NULL);
        vmm_close(l);
    }
    {
        int hf = open(path, O_RDONLY);
        vmm_snap_header lh;
        struct stat ls;
        CHECK(hf >= 0 && pread(hf, &lh, sizeof lh, 0) == (ssize_t)sizeof lh && fstat(hf, &ls) == 0);
        CHECK(lh.ws_write >= 1 && lh.ws_read >= 1);
        CHECK((ls.st_mode & 0777) == 0444);
        struct { uint32_t first, count; } rg[64];
        uint32_t nr = lh.ws_write + lh.ws_read, hit = 0;
        ssize_t want = (ssize_t)(nr * sizeof rg[0]);
        CHECK(nr <= 64 && pread(hf, rg, (size_t)want, (off_t)lh.ws_off) == want);
        for (uint32_t i = 0; i < lh.ws_write && i < 64; i++)
            hit |= rg[i].first <= DATA_GPA / 4096 && DATA_GPA / 4096 < rg[i].first + rg[i].count;
        CHECK(hit);
        if (hf >= 0) close(hf);
    }
    if (CHECK_RET(vmm_snapshot_restore(&c, path, &id, &l, &e) == CR_OK)) {
        uint16_t *lw = (uint16_t *)vmm_guest_ptr(l, DATA_GPA, 4);
        CHECK_INT(lw[0], 41);
        CHECK_INT(vmm_run(l, &stop, &e), CR_OK);
        CHECK_INT(stop, VMM_STOP_HLT);
        CHECK_INT(lw[0], 42);
        CHECK_INT(lw[1], 0xbeef);
        vmm_close(l);
    }
    /* The file is untouched by the copies. */
    int fd = open(path, O_RDONLY);
    uint16_t v = 0;
    CHECK(fd >= 0 && pread(fd, &v, 2, 0) == 2);
    vmm_snap_header h;
    CHECK(pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h);
    CHECK(pread(fd, &v, 2, (off_t)(h.mem_off + DATA_GPA)) == 2 && v == 41);
    close(fd);

    /* Another kernel: refused, named. */
    other = id;
    other.kernel[0]++;
    vmm *r = (vmm *)1;
    CHECK_INT(vmm_snapshot_restore(&c, path, &other, &r, &e), CR_ESANDBOX);
    CHECK_STR(e.message, "kvm: snapshot made from another kernel: refused");
    CHECK(r == NULL);
    CHECK_INT(vmm_snapshot_restore(&c, "/nonexistent/snap", &id, &r, &e), CR_EIO);
    rm_rf(dir);
}

int main(void)
{
    vmm *probe = NULL;
    cr_error e = {0};
    vmm_config c;
    vmm_config_default(&c);
    if (vmm_open(&c, &probe, &e) != CR_OK) snprintf(kvm_why, sizeof kvm_why, "%s", e.message);
    vmm_close(probe);

    test_config_checked_first();
    test_open_without_kvm_advises_ns();
    test_stop_names();
    test_host_check_fake_trees();
    test_host_check_here();
    test_real_mode_serial_hi();
    test_serial_string_out_capped();
    test_spin_hits_wall_clock();
    test_exit_cap();
    test_triple_fault_and_reset();
    test_guest_ptr_bounds();
    test_package_image_mapped();
    test_page_round_trip();
    test_page_rejects_bad_results();
    test_doorbell_misuse();
    test_never_rings();
    test_artifacts_rebuilt_and_collected();
    test_artifacts_bad_records();
    test_data_archive();
    test_jail();
    test_snap_header_checks();
    test_snapshot_tiny_guest();
    return TEST_SUMMARY();
}
