/* sandbox/kvm/paths.c: the kvm directory, where the guest's kernel and initramfs live.
 *
 * The installed one is found from the running library's own path (or the program's, for
 * calc-route, which links the library in), so an installation under any PREFIX, staged under
 * DESTDIR or moved, finds its own: PREFIX/lib/libcalcroute.so and PREFIX/bin/calc-route both
 * lead to PREFIX/lib/calcroute/kvm. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"

/* PREFIX of the object this code is part of: its real path, two levels up. 0, or -1 when it
 * cannot be told (then only the other places are looked in). */
static int own_prefix(char *out, size_t len)
{
    char real[PATH_MAX];
    const char *self = "/proc/self/exe";
    Dl_info info;
    struct link_map *lm = NULL;
    /* A shared library's link map names its file; the program's is "" (and dladdr() gives
     * its argv[0], which a chdir() makes wrong), as is a static program's lack of one. */
    if (dladdr1((void *)kvm_dir_resolve, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
        lm->l_name && lm->l_name[0])
        self = lm->l_name;
    if (!realpath(self, real)) return -1;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(real, '/');
        if (!slash || slash == real) return -1;
        *slash = '\0';
    }
    return (size_t)snprintf(out, len, "%s", real) < len ? 0 : -1;
}

/* Fills p's paths for `dir`; the missing files' names into `missing` ("" when both read). */
static int look(kvm_paths *p, const char *dir, const char *from, char *missing, size_t n)
{
    int kernel_ok, initrd_ok;
    snprintf(p->dir, sizeof p->dir, "%s", dir);
    snprintf(p->kernel, sizeof p->kernel, "%s/" KVM_KERNEL_FILE, dir);
    snprintf(p->initrd, sizeof p->initrd, "%s/" KVM_INITRD_FILE, dir);
    snprintf(p->pkgs, sizeof p->pkgs, "%s/" KVM_PKGS_FILE, dir);
    p->has_pkgs = access(p->pkgs, R_OK) == 0;
    p->from = from;
    kernel_ok = access(p->kernel, R_OK) == 0;
    initrd_ok = access(p->initrd, R_OK) == 0;
    snprintf(missing, n, "%s%s%s", kernel_ok ? "" : KVM_KERNEL_FILE,
             !kernel_ok && !initrd_ok ? " and " : "", initrd_ok ? "" : KVM_INITRD_FILE);
    return kernel_ok && initrd_ok;
}

#define KVM_DIR_ADVICE "make install-kvm installs them, --kvm-dir names another directory; " \
                       "try --tier ns"

int kvm_dir_resolve_in(const char *kvm_dir, const char *env, const char *installed,
                       const char *build, kvm_paths *p, char *why, size_t why_len)
{
    char missing[64], first[64];
    kvm_paths inst;
    if (why_len) why[0] = '\0';
    /* Named ones are taken as they are: a directory the caller chose is never passed over. */
    if (kvm_dir && *kvm_dir) {
        if (look(p, kvm_dir, "kvm_dir", missing, sizeof missing)) return 1;
        snprintf(why, why_len, "no %s in %s (the kvm directory configured): " KVM_DIR_ADVICE,
                 missing, p->dir);
        return 0;
    }
    if (env && *env) {
        if (look(p, env, "$" KVM_DIR_ENV, missing, sizeof missing)) return 1;
        snprintf(why, why_len, "no %s in %s ($" KVM_DIR_ENV "): " KVM_DIR_ADVICE, missing,
                 p->dir);
        return 0;
    }
    if (installed && look(p, installed, "installed", first, sizeof first)) return 1;
    inst = *p;
    if (build && look(p, build, "build tree", missing, sizeof missing)) return 1;
    if (installed && build)
        snprintf(why, why_len, "no %s in %s (installed) nor in %s (a checkout's build): "
                 KVM_DIR_ADVICE, first, inst.dir, p->dir);
    else if (installed)
        snprintf(why, why_len, "no %s in %s (installed): " KVM_DIR_ADVICE, first, inst.dir);
    else if (build)
        snprintf(why, why_len, "no %s in %s (a checkout's build): " KVM_DIR_ADVICE, missing,
                 p->dir);
    else
        snprintf(why, why_len, "no kvm directory: " KVM_DIR_ADVICE);
    if (installed) *p = inst;
    return 0;
}

int kvm_dir_resolve(const char *kvm_dir, kvm_paths *p, char *why, size_t why_len)
{
    char prefix[PATH_MAX], installed[PATH_MAX + sizeof KVM_DIR_INSTALLED];
    int have = own_prefix(prefix, sizeof prefix) == 0;
    if (have) snprintf(installed, sizeof installed, "%s/" KVM_DIR_INSTALLED, prefix);
    return kvm_dir_resolve_in(kvm_dir, getenv(KVM_DIR_ENV), have ? installed : NULL,
                              KVM_DIR_BUILD, p, why, why_len);
}
