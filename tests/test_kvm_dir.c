/* tests/test_kvm_dir.c: where the kvm tier finds its kernel and initramfs (the precedence of
 * the caller's directory, $CALCROUTE_KVM_DIR, the installed one and a checkout's build tree,
 * and what it says when they are missing), and the VMM's cgroup, made on this host as the
 * ns tier's are. No guest runs here.
 *
 *     test_kvm_dir --resolve     prints "FROM DIR" of the default resolution and exits
 *                                (tests/test_install.sh runs a copy from a staged prefix) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"
#include "tests/testlib.h"

static char root[64];

static void put(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

static void dir(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static const char *at(const char *rel)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", root, rel);
    return p[i];
}

#define ADVICE "make install-kvm installs them, --kvm-dir names another directory; try --tier ns"

static void test_precedence_on_fake_trees(void)
{
    kvm_paths p;
    char why[512], want[512];
    dir("inst"); dir("build"); dir("env"); dir("mine");
    const char *inst = at("inst"), *build = at("build");

    /* Nothing installed, nothing built: both places named, the files missing in the first. */
    CHECK_INT(kvm_dir_resolve_in(NULL, NULL, inst, build, &p, why, sizeof why), 0);
    snprintf(want, sizeof want, "no vmlinuz and initrd.cpio in %s (installed) nor in %s (a "
             "checkout's build): " ADVICE, inst, build);
    CHECK_STR(why, want);
    CHECK_STR(p.dir, inst);
    CHECK_INT(kvm_dir_resolve_in(NULL, "", NULL, build, &p, why, sizeof why), 0);
    snprintf(want, sizeof want, "no vmlinuz and initrd.cpio in %s (a checkout's build): "
             ADVICE, build);
    CHECK_STR(why, want);
    CHECK_INT(kvm_dir_resolve_in(NULL, NULL, NULL, NULL, &p, why, sizeof why), 0);
    CHECK_STR(why, "no kvm directory: " ADVICE);

    /* Half installed: the file that is missing is the one named. */
    put("inst/vmlinuz");
    CHECK_INT(kvm_dir_resolve_in(NULL, NULL, inst, NULL, &p, why, sizeof why), 0);
    snprintf(want, sizeof want, "no initrd.cpio in %s (installed): " ADVICE, inst);
    CHECK_STR(why, want);

    /* The build tree when the installed one is incomplete; the installed one first. */
    put("build/vmlinuz"); put("build/initrd.cpio");
    CHECK_INT(kvm_dir_resolve_in(NULL, NULL, inst, build, &p, why, sizeof why), 1);
    CHECK_STR(p.from, "build tree");
    CHECK_STR(p.kernel, at("build/vmlinuz"));
    CHECK_STR(p.initrd, at("build/initrd.cpio"));
    CHECK_STR(why, "");
    put("inst/initrd.cpio");
    CHECK_INT(kvm_dir_resolve_in(NULL, NULL, inst, build, &p, why, sizeof why), 1);
    CHECK_STR(p.from, "installed");
    CHECK_STR(p.dir, inst);

    /* The environment's directory over both, even empty: a named place is never passed over. */
    CHECK_INT(kvm_dir_resolve_in(NULL, at("env"), inst, build, &p, why, sizeof why), 0);
    snprintf(want, sizeof want, "no vmlinuz and initrd.cpio in %s ($CALCROUTE_KVM_DIR): "
             ADVICE, at("env"));
    CHECK_STR(why, want);
    put("env/vmlinuz"); put("env/initrd.cpio");
    CHECK_INT(kvm_dir_resolve_in(NULL, at("env"), inst, build, &p, why, sizeof why), 1);
    CHECK_STR(p.from, "$CALCROUTE_KVM_DIR");
    CHECK_STR(p.kernel, at("env/vmlinuz"));

    /* The caller's over the environment's. */
    put("mine/initrd.cpio");
    CHECK_INT(kvm_dir_resolve_in(at("mine"), at("env"), inst, build, &p, why, sizeof why), 0);
    snprintf(want, sizeof want, "no vmlinuz in %s (the kvm directory configured): " ADVICE,
             at("mine"));
    CHECK_STR(why, want);
    put("mine/vmlinuz");
    CHECK_INT(kvm_dir_resolve_in(at("mine"), at("env"), inst, build, &p, why, sizeof why), 1);
    CHECK_STR(p.from, "kvm_dir");
    CHECK_STR(p.initrd, at("mine/initrd.cpio"));
    /* The package image is optional: named beside them, and taken when it is there. */
    CHECK_STR(p.pkgs, at("mine/pkgs.erofs"));
    CHECK_INT(p.has_pkgs, 0);
    put("mine/pkgs.erofs");
    CHECK_INT(kvm_dir_resolve_in(at("mine"), at("env"), inst, build, &p, why, sizeof why), 1);
    CHECK_INT(p.has_pkgs, 1);
    CHECK_STR(why, "");
}

/* The real resolution: the environment, and build/kvm of the current directory (this binary
 * lives in a build tree, under no installed prefix). */
static void test_resolve_env_and_build_tree(void)
{
    kvm_paths p;
    char why[512], cwd[PATH_MAX], want[512];
    const char *saved = getenv(KVM_DIR_ENV);
    char *keep = saved ? strdup(saved) : NULL;
    dir("co"); dir("co/build"); dir("co/build/kvm");
    put("co/build/kvm/vmlinuz"); put("co/build/kvm/initrd.cpio");

    setenv(KVM_DIR_ENV, at("env"), 1);
    CHECK_INT(kvm_dir_resolve(NULL, &p, why, sizeof why), 1);
    CHECK_STR(p.from, "$CALCROUTE_KVM_DIR");
    CHECK_INT(kvm_dir_resolve(at("mine"), &p, why, sizeof why), 1);
    CHECK_STR(p.from, "kvm_dir");

    unsetenv(KVM_DIR_ENV);
    if (!getcwd(cwd, sizeof cwd) || chdir(at("co")) < 0) { CHECK(!"chdir"); goto out; }
    CHECK_INT(kvm_dir_resolve(NULL, &p, why, sizeof why), 1);
    CHECK_STR(p.from, "build tree");
    CHECK_STR(p.kernel, "build/kvm/vmlinuz");
    if (chdir(root) < 0) CHECK(!"chdir");
    CHECK_INT(kvm_dir_resolve(NULL, &p, why, sizeof why), 0);
    /* The installed place is this binary's prefix's: named first, then build/kvm. */
    snprintf(want, sizeof want, "/" KVM_DIR_INSTALLED " (installed) nor in build/kvm (a "
             "checkout's build): " ADVICE);
    CHECK(strncmp(why, "no vmlinuz and initrd.cpio in /", 31) == 0);
    CHECK(strlen(why) > strlen(want) && !strcmp(why + strlen(why) - strlen(want), want));
    CHECK_INT(chdir(cwd), 0);
out:
    if (keep) setenv(KVM_DIR_ENV, keep, 1);
    free(keep);
}

/* What the tier says: the host's lack first (installing would not help), else the files. */
static void test_available_message(void)
{
    char host[256], why[512], want[512];
    if (!kvm_can_boot_linux(host, sizeof host)) {
        CHECK_INT(sandbox_kvm_available(at("inst"), why, sizeof why), 0);
        CHECK_STR(why, host);
        fprintf(stderr, "this host: %s\n", host);
        return;
    }
    dir("empty");
    CHECK_INT(sandbox_kvm_available(at("empty"), why, sizeof why), 0);
    snprintf(want, sizeof want, "no vmlinuz and initrd.cpio in %s (the kvm directory "
             "configured): " ADVICE, at("empty"));
    CHECK_STR(why, want);
}

static int read_text(const char *d, const char *file, char *buf, size_t len)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", d, file);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* The VMM's cgroup on this host: its limits written, joined by a child, gone once removed. */
static void test_vmm_cgroup(void)
{
    vmm_config c;
    ns_cgroup cg;
    char buf[256], want[64];
    vmm_config_default(&c);
    c.mem_bytes = 64ull << 20;
    c.shared_bytes = 1u << 20;
    CHECK_INT(vmm_cgroup_memory(&c), (64ull + 2 + 64) << 20);
    vmm_cgroup_create(&cg, &c);
    if (!cg.has_mem || !cg.has_pids) {
        /* What bounds the VMM instead, in the words of vmm_cgroup_create(). */
        const char *w = !cg.has_mem && !cg.has_pids
            ? "VMM without a cgroup: its memory bounded by the VM's size only, its tasks by "
              "its seccomp filter"
            : !cg.has_mem ? "VMM without a memory cgroup: its memory bounded by the VM's size only"
                          : "VMM without a pids cgroup: its tasks by its seccomp filter";
        CHECK_STR(cg.note, w);
        ns_cgroup_destroy(&cg);
        SKIP("%s", cg.note);
        return;
    }
    CHECK_STR(cg.note, "");
    snprintf(want, sizeof want, "%llu", (unsigned long long)vmm_cgroup_memory(&c));
    CHECK_INT(read_text(cg.mem, cg.version == 1 ? "memory.limit_in_bytes" : "memory.max", buf,
                        sizeof buf), 0);
    CHECK_STR(buf, want);
    CHECK_INT(read_text(cg.version == 1 ? cg.pids : cg.mem, "pids.max", buf, sizeof buf), 0);
    CHECK_STR(buf, "1");

    /* A child joins as the VMM does; a fork there is refused (pids.max 1). */
    pid_t pid = fork();
    if (pid == 0) {
        cr_error e = {0};
        if (vmm_cgroup_join(&cg, &e) != CR_OK) _exit(1);
        pid_t g = fork();
        if (g == 0) _exit(0);
        _exit(g < 0 && errno == EAGAIN ? 0 : 2);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* Memory past memory.max ends the process that joined, and the cgroup counts the kill
     * (what run_child() names). */
    pid = fork();
    if (pid == 0) {
        cr_error e = {0};
        size_t n = (size_t)vmm_cgroup_memory(&c) + (32u << 20);
        if (vmm_cgroup_join(&cg, &e) != CR_OK) _exit(1);
        char *p = malloc(n);
        for (size_t i = 0; p && i < n; i += 4096) p[i] = 1;
        _exit(2);
    }
    status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_INT(ns_cgroup_oom_kills(&cg), 1);
    char note[300];
    vmm_cgroup_note(&cg, &c, note, sizeof note);
    CHECK(strncmp(note, "VMM memory peak ", 16) == 0 && strstr(note, " MiB (cgroup max 130 MiB)"));
    char mem[PATH_MAX];
    snprintf(mem, sizeof mem, "%s", cg.mem);
    ns_cgroup_destroy(&cg);
    CHECK(access(mem, F_OK) < 0 && errno == ENOENT);

    /* A join into a cgroup that is gone says which step failed. */
    snprintf(cg.mem, sizeof cg.mem, "%s", mem);
    cr_error e = {0};
    CHECK_INT(vmm_cgroup_join(&cg, &e), CR_ESANDBOX);
    CHECK_STR(e.message, "kvm: jail: join cgroup: No such file or directory");
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--resolve")) {
        kvm_paths p;
        char why[512];
        kvm_dir_resolve(NULL, &p, why, sizeof why);
        printf("%s %s\n", p.from, p.dir);
        return 0;
    }
    snprintf(root, sizeof root, "/tmp/cr_kvm_dir.XXXXXX");
    if (!mkdtemp(root)) { SKIP("mkdtemp: %s", strerror(errno)); return TEST_SUMMARY(); }
    test_precedence_on_fake_trees();
    test_resolve_env_and_build_tree();
    test_available_message();
    test_vmm_cgroup();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK_INT(system(cmd), 0);
    return TEST_SUMMARY();
}
