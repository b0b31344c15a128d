/* sandbox/ns/userns.c: why the kernel refused the ns tier's namespaces.
 *
 * clone() with CLONE_NEWUSER fails with EPERM or ENOSPC for several unrelated reasons, and
 * the fix differs for each: a sysctl (max_user_namespaces, Debian's
 * unprivileged_userns_clone, Ubuntu's AppArmor restriction), a container's seccomp profile,
 * a chroot. The probe names the one it can see instead of guessing the first. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/ns/ns.h"

/* The first line of PROC/REL, without its newline; "" when it cannot be read. */
static void read_line(const char *proc, const char *rel, char *buf, size_t len)
{
    char path[512];
    buf[0] = 0;
    snprintf(path, sizeof path, "%s/%s", proc, rel);
    FILE *f = fopen(path, "re");
    if (!f) return;
    if (!fgets(buf, (int)len, f)) buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

/* Whether PROC/self/status says a seccomp filter is on this process ("Seccomp:\t2"). */
static int filtered(const char *proc)
{
    char path[512], line[128];
    int on = 0;
    snprintf(path, sizeof path, "%s/self/status", proc);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Seccomp:", 8) == 0) { on = strtol(line + 8, NULL, 10) == 2; break; }
    fclose(f);
    return on;
}

/* Whether this process's root is not its mount namespace's (a chroot), as far as PROC/1/root
 * can be read; the kernel refuses a new user namespace to a chrooted process. */
static int chrooted(const char *proc)
{
    char path[512];
    struct stat mine, ns;
    snprintf(path, sizeof path, "%s/1/root/", proc);
    if (stat("/", &mine) < 0 || stat(path, &ns) < 0) return 0;
    return mine.st_dev != ns.st_dev || mine.st_ino != ns.st_ino;
}

void ns_userns_refusal(const char *proc, int err, int root, char *why, size_t len)
{
    char v[64];
    if (err == ENOSPC) {
        read_line(proc, "sys/user/max_user_namespaces", v, sizeof v);
        if (strcmp(v, "0") == 0)
            snprintf(why, len, "user namespaces are off (/proc/sys/user/max_user_namespaces is 0)");
        else
            snprintf(why, len, "this user has all the user namespaces it may have "
                     "(/proc/sys/user/max_user_namespaces is %s)", v[0] ? v : "unreadable");
        return;
    }
    if (err == EUSERS) {
        snprintf(why, len, "user namespaces are nested as deep as the kernel allows (32)");
        return;
    }
    if (err != EPERM) { why[0] = 0; return; }
    read_line(proc, "sys/kernel/unprivileged_userns_clone", v, sizeof v);
    if (!root && strcmp(v, "0") == 0) {
        snprintf(why, len, "unprivileged user namespaces are off "
                 "(/proc/sys/kernel/unprivileged_userns_clone is 0)");
        return;
    }
    read_line(proc, "sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof v);
    if (!root && strcmp(v, "1") == 0) {
        snprintf(why, len, "AppArmor restricts unprivileged user namespaces "
                 "(/proc/sys/kernel/apparmor_restrict_unprivileged_userns is 1)");
        return;
    }
    if (chrooted(proc)) {
        snprintf(why, len, "the process runs in a chroot, where the kernel refuses new user "
                 "namespaces");
        return;
    }
    if (filtered(proc)) {
        snprintf(why, len, "a seccomp filter on this process refuses them: a container's "
                 "default profile?");
        return;
    }
    snprintf(why, len, "refused by the kernel or a security module; no user-namespace setting "
             "under /proc/sys is off");
}
