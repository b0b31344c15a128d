/* test_ns_refusal: what the ns tier says when the kernel refuses its user namespace, for each
 * host setting that can (sandbox/ns/userns.c), read from a /proc of the test's own making. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/ns/ns.h"
#include "tests/testlib.h"

static char proc[64];

static void put(const char *rel, const char *text)
{
    char path[256], dir[256];
    snprintf(path, sizeof path, "%s/%s", proc, rel);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *s = dir + strlen(proc) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(dir, 0700);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fputs(text, f);
    fclose(f);
}

static const char *why(int err, int root)
{
    static char buf[320];
    ns_userns_refusal(proc, err, root, buf, sizeof buf);
    return buf;
}

int main(void)
{
    snprintf(proc, sizeof proc, "/tmp/cr-ns-refusal-XXXXXX");
    if (!mkdtemp(proc)) { perror("mkdtemp"); return 1; }
    /* Nothing readable: the kernel or a security module, no setting to blame. */
    CHECK_STR(why(EPERM, 0), "refused by the kernel or a security module; no user-namespace "
              "setting under /proc/sys is off");
    CHECK_STR(why(EINVAL, 0), "");
    CHECK_STR(why(EUSERS, 0), "user namespaces are nested as deep as the kernel allows (32)");
    put("sys/user/max_user_namespaces", "0\n");
    CHECK_STR(why(ENOSPC, 1), "user namespaces are off (/proc/sys/user/max_user_namespaces is 0)");
    put("sys/user/max_user_namespaces", "15000\n");
    CHECK_STR(why(ENOSPC, 0), "this user has all the user namespaces it may have "
              "(/proc/sys/user/max_user_namespaces is 15000)");
    /* The per-user switches bind only a caller that is not root. */
    put("sys/kernel/unprivileged_userns_clone", "0\n");
    CHECK_STR(why(EPERM, 0), "unprivileged user namespaces are off "
              "(/proc/sys/kernel/unprivileged_userns_clone is 0)");
    put("sys/kernel/unprivileged_userns_clone", "1\n");
    put("sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
    CHECK_STR(why(EPERM, 0), "AppArmor restricts unprivileged user namespaces "
              "(/proc/sys/kernel/apparmor_restrict_unprivileged_userns is 1)");
    put("self/status", "Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t1\n");
    CHECK_STR(why(EPERM, 1), "a seccomp filter on this process refuses them: a container's "
              "default profile?");
    put("self/status", "Name:\tx\nSeccomp:\t0\n");
    CHECK_STR(why(EPERM, 1), "refused by the kernel or a security module; no user-namespace "
              "setting under /proc/sys is off");
    /* A root that is not /: the test's directory stands for pid 1's root. */
    char link[128];
    snprintf(link, sizeof link, "%s/1", proc);
    mkdir(link, 0700);
    snprintf(link, sizeof link, "%s/1/root", proc);
    if (symlink(proc, link) < 0) perror(link);
    CHECK_STR(why(EPERM, 1), "the process runs in a chroot, where the kernel refuses new user "
              "namespaces");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", proc);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", proc);
    return TEST_SUMMARY();
}
