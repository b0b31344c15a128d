/* sandbox/kvm/boot.c: Linux's x86 boot protocol for a bzImage, 64-bit entry
 * (Documentation/x86/boot.rst): the protected-mode kernel at its preferred address, the
 * initramfs high in RAM, a zero page with the setup header, the e820 map and the command
 * line, and the vCPU in long mode at startup_64 with rsi pointing at the zero page. No BIOS,
 * no ACPI, no MP table: one CPU (vmm_open() wires the PIC to the local APIC). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"

/* Offsets in the bzImage and in boot_params (struct boot_params, struct setup_header). */
#define HDR_SETUP_SECTS 0x1f1
#define HDR_BOOT_FLAG 0x1fe
#define HDR_JUMP 0x200
#define HDR_MAGIC 0x202
#define HDR_VERSION 0x206
#define HDR_TYPE_OF_LOADER 0x210
#define HDR_LOADFLAGS 0x211
#define HDR_RAMDISK_IMAGE 0x218
#define HDR_RAMDISK_SIZE 0x21c
#define HDR_HEAP_END_PTR 0x224
#define HDR_CMD_LINE_PTR 0x228
#define HDR_INITRD_ADDR_MAX 0x22c
#define HDR_XLOADFLAGS 0x236
#define HDR_CMDLINE_SIZE 0x238
#define HDR_PREF_ADDRESS 0x258
#define HDR_INIT_SIZE 0x260
#define BP_E820_ENTRIES 0x1e8
#define BP_E820_TABLE 0x2d0
#define E820_MAX 128

#define MAX_KERNEL (64u << 20)
#define STARTUP_64 0x200u           /* 64-bit entry: this far into the protected-mode part */

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static cr_code boot_fail(cr_error *err, const char *what, const char *path, int e)
{
    return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s %s: %s", what, path, strerror(e));
}

/* Reads the whole file at `path` into guest memory at gpa (at most max bytes). */
static cr_code read_into(vmm *vm, const char *path, uint64_t gpa, uint64_t max, uint64_t *size,
                         cr_error *err)
{
    struct stat st;
    cr_code rc = CR_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return boot_fail(err, "open", path, errno);
    if (fstat(fd, &st) < 0) {
        rc = boot_fail(err, "stat", path, errno);
        goto out;
    }
    uint8_t *dst = vmm_guest_ptr(vm, gpa, (uint64_t)st.st_size);
    if ((uint64_t)st.st_size > max || !dst) {
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s: %lld bytes do not fit guest memory "
                          "at 0x%llx", path, (long long)st.st_size, (unsigned long long)gpa);
        goto out;
    }
    for (uint64_t done = 0; done < (uint64_t)st.st_size;) {
        ssize_t n = read(fd, dst + done, (size_t)st.st_size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            rc = n < 0 ? boot_fail(err, "read", path, errno)
                       : cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s shrank while read", path);
            goto out;
        }
        done += (uint64_t)n;
    }
    *size = (uint64_t)st.st_size;
out:
    close(fd);
    return rc;
}

static void e820_add(uint8_t *bp, uint64_t addr, uint64_t size, uint32_t type)
{
    uint8_t n = bp[BP_E820_ENTRIES];
    uint8_t *e = bp + BP_E820_TABLE + 20u * n;
    memcpy(e, &addr, 8);
    memcpy(e + 8, &size, 8);
    memcpy(e + 16, &type, 4);
    bp[BP_E820_ENTRIES] = (uint8_t)(n + 1);
}

cr_code vmm_boot_linux(vmm *vm, const char *kernel, const char *initrd, const void *extra,
                       size_t extra_len, const char *cmdline, cr_error *err)
{
    uint64_t mem = vmm_get_config(vm)->mem_bytes, ksize = 0, isize = 0;
    cr_code rc;
    /* The whole bzImage goes first to where the initramfs will end up; its protected-mode
     * part is then moved to the preferred address. The top of RAM is free until then. */
    uint8_t *bp = vmm_guest_ptr(vm, VMM_ZERO_PAGE_GPA, 4096);
    if (!bp) return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: no room for the zero page");
    uint64_t stage = mem / 2;
    if ((rc = read_into(vm, kernel, stage, mem / 2 < MAX_KERNEL ? mem / 2 : MAX_KERNEL, &ksize,
                        err)) != CR_OK)
        return rc;
    uint8_t *k = vmm_guest_ptr(vm, stage, ksize);
    if (ksize < 0x1000 || k[HDR_BOOT_FLAG] != 0x55 || k[HDR_BOOT_FLAG + 1] != 0xaa ||
        rd32(k + HDR_MAGIC) != 0x53726448u)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s is not a bzImage", kernel);
    uint16_t version;
    memcpy(&version, k + HDR_VERSION, 2);
    uint16_t xload;
    memcpy(&xload, k + HDR_XLOADFLAGS, 2);
    if (version < 0x020c || !(xload & 1))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s: boot protocol %x.%02x without "
                            "a 64-bit entry (want 2.12+)", kernel, version >> 8, version & 0xff);
    uint64_t setup = ((uint64_t)(k[HDR_SETUP_SECTS] ? k[HDR_SETUP_SECTS] : 4) + 1) * 512;
    uint64_t pref = rd64(k + HDR_PREF_ADDRESS), init_size = rd32(k + HDR_INIT_SIZE);
    uint64_t hdr_end = HDR_JUMP + 2 + k[HDR_JUMP + 1];
    if (setup >= ksize || hdr_end > 0x1000 || pref < (1u << 20) || pref % 4096)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s: bad setup header", kernel);
    uint64_t kend = pref + (init_size > ksize - setup ? init_size : ksize - setup);
    if (kend > stage)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %llu MiB of guest memory is too "
                            "little for %s", (unsigned long long)(mem >> 20), kernel);

    memset(bp, 0, 4096);
    memcpy(bp + HDR_SETUP_SECTS, k + HDR_SETUP_SECTS, hdr_end - HDR_SETUP_SECTS);
    if ((rc = vmm_load(vm, pref, k + setup, ksize - setup, err)) != CR_OK) return rc;

    /* The initramfs, as high as the kernel may read it. */
    uint64_t top = mem;
    uint64_t imax = (uint64_t)rd32(bp + HDR_INITRD_ADDR_MAX) + 1;
    if (imax < top) top = imax;
    struct stat st;
    if (stat(initrd, &st) < 0) return boot_fail(err, "stat", initrd, errno);
    /* The extra archive follows the file at a 4-byte boundary, as concatenated cpio archives
     * must; the kernel unpacks both into one root. */
    uint64_t whole = (((uint64_t)st.st_size + 3) & ~3ull) + extra_len;
    if (whole + kend > top)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: initramfs %s (%lld bytes) and %zu "
                            "bytes of data do not fit %llu MiB of guest memory", initrd,
                            (long long)st.st_size, extra_len, (unsigned long long)(mem >> 20));
    uint64_t iaddr = (top - whole) & ~0xfffull;
    if ((rc = read_into(vm, initrd, iaddr, top - iaddr, &isize, err)) != CR_OK) return rc;
    if (extra_len) {
        isize = (isize + 3) & ~3ull;
        if ((rc = vmm_load(vm, iaddr + isize, extra, extra_len, err)) != CR_OK) return rc;
        isize += extra_len;
    }

    size_t clen = strlen(cmdline);
    uint32_t cmax = rd32(bp + HDR_CMDLINE_SIZE);
    if (clen > cmax || clen >= 4096)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: command line of %zu bytes (at most %u)",
                            clen, cmax < 4095 ? cmax : 4095);
    if ((rc = vmm_load(vm, VMM_CMDLINE_GPA, cmdline, clen + 1, err)) != CR_OK) return rc;

    bp[HDR_TYPE_OF_LOADER] = 0xff;                     /* undefined boot loader */
    bp[HDR_LOADFLAGS] |= 0x01 | 0x80;                  /* LOADED_HIGH, CAN_USE_HEAP */
    bp[HDR_HEAP_END_PTR] = 0x00;
    bp[HDR_HEAP_END_PTR + 1] = 0xfe;
    wr32(bp + HDR_CMD_LINE_PTR, (uint32_t)VMM_CMDLINE_GPA);
    wr32(bp + HDR_RAMDISK_IMAGE, (uint32_t)iaddr);
    wr32(bp + HDR_RAMDISK_SIZE, (uint32_t)isize);
    e820_add(bp, 0, 0x9fc00, 1);                       /* low RAM, below the EBDA */
    e820_add(bp, 0x100000, mem - 0x100000, 1);
    e820_add(bp, CRVM_DOORBELL_GPA, 4096, 2);          /* reserved: the doorbell page */
    e820_add(bp, CRVM_SHARED_GPA, vmm_get_config(vm)->shared_bytes, 2);   /* reserved: the region */
    if (vmm_pmem_size(vm)) e820_add(bp, VMM_PMEM_GPA, vmm_pmem_size(vm), 12);   /* legacy pmem */

    return vmm_set_long_mode(vm, pref + STARTUP_64, 0x8ff0, VMM_ZERO_PAGE_GPA, err);
}
