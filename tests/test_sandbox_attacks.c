/* tests/test_sandbox_attacks.c: hostile programs against the ns tier, each with the exact
 * containment it must meet, then a check that the suite left nothing on the host: no process,
 * no mount, no cgroup, no file.
 *
 * Network: the only listener is one this test opens on the host's 127.0.0.1, and the only
 * addresses the code tries are that one, 192.0.2.1 (TEST-NET-1, never routed) and a DNS name
 * (the sandbox has no resolver and no route, so nothing leaves it). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/testlib.h"
#include "tests/test_sandbox_util.h"
#include "sandbox/ns/ns.h"

/* Every table program starts with these helpers: t(f) runs f and gives the errno of an
 * OSError or 'ok'; sc(...) is a raw system call giving (result, errno). */
#define PRELUDE \
    "import os, sys, ctypes, socket\n" \
    "libc = ctypes.CDLL(None, use_errno=True)\n" \
    "def t(f):\n" \
    "    try:\n" \
    "        f()\n" \
    "    except OSError as e:\n" \
    "        return e.errno\n" \
    "    return 'ok'\n" \
    "def sc(*a):\n" \
    "    r = libc.syscall(*a)\n" \
    "    return r, ctypes.get_errno()\n"

typedef struct {
    const char *name;
    const char *code;     /* after PRELUDE */
    const char *want;     /* exact stdout */
} attack;

static const attack table[] = {
    /* host secrets */
    { "etc_shadow", "print(t(lambda: open('/etc/shadow').read()))", "2\n" },
    { "root_home", "print(t(lambda: os.listdir('/root')))", "2\n" },
    { "etc_is_bare",   /* the last two only where the host has them */
      "print(set(os.listdir('/etc')) <= {'alternatives', 'ld.so.cache', 'matplotlibrc', 'fonts'})",
      "True\n" },
    /* pid 1 is the runner (nothing of the caller's runs in there), whose parent is outside:
     * invisible; the code is its child, which can neither read nor write it (the runner
     * holds the report and is not dumpable). */
    { "pid1_memory",
      "print(t(lambda: open('/proc/1/environ', 'rb').read()), t(lambda: open('/proc/1/mem', 'r+b')),"
      " t(lambda: os.listdir('/proc/1/root')), t(lambda: open('/proc/1/fd/4', 'wb')))",
      "13 13 13 13\n" },
    { "no_parent", "print(os.getpid(), os.getppid())", "2 1\n" },
    { "caller_environment",
      "print(sorted(os.environ))\n"
      "print(b'CALCROUTE_ATTACK_SECRET' in open('/proc/self/environ', 'rb').read())",
      "['HOME', 'LANG', 'MPLBACKEND', 'MPLCONFIGDIR', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', "
      "'PATH', 'PYTHONHASHSEED', 'PYTHONSAFEPATH', 'TMPDIR', 'XDG_CACHE_HOME']\nFalse\n" },
    { "no_sys", "print(os.path.exists('/sys'), os.path.exists('/home'))", "False False\n" },
    /* the filesystem */
    { "write_usr_and_root",
      "print(t(lambda: open('/usr/evil', 'w')), t(lambda: open('/evil', 'w')), t(lambda: os.mkdir('/x')))",
      "30 30 30\n" },
    { "proc_sys_write", "print(t(lambda: open('/proc/sys/kernel/hostname', 'w').write('x')))", "13\n" },
    { "hardlink_out_of_tree",
      "print(t(lambda: os.link(os.path.realpath(sys.executable), '/out/py')))", "18\n" },
    { "tmp_noexec",
      "open('/tmp/x.sh', 'w').write('#!/bin/sh\\necho hi\\n')\n"
      "os.chmod('/tmp/x.sh', 0o755)\n"
      "import subprocess\n"
      "print(t(lambda: subprocess.run(['/tmp/x.sh'])))", "13\n" },
    /* privileges */
    { "capabilities",
      "s = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
      "print(s['CapPrm'], s['CapEff'], s['CapBnd'], s['NoNewPrivs'], s['Seccomp'])",
      "0000000000000000 0000000000000000 0000000000000000 1 2\n" },
    { "setuid_binary",
      "import subprocess\n"
      "su = '/usr/bin/su' if os.path.exists('/usr/bin/su') else '/bin/su'\n"
      "r = subprocess.run([su, '-c', 'id -u'], capture_output=True, text=True)\n"
      "print(bool(os.statvfs('/usr').f_flag & os.ST_NOSUID), r.returncode != 0, r.stdout.strip() != '0')",
      "True True True\n" },
    { "uid_map", "m = open('/proc/self/uid_map').read().split()\nprint(m[0], m[2], os.getuid())", "0 1 0\n" },
    /* system calls the filter denies */
    { "ptrace_traceme", "print(libc.ptrace(0, 0, 0, 0), ctypes.get_errno())", "-1 1\n" },
    { "ptrace_attach_init", "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())", "-1 1\n" },
    { "mount_tmpfs", "print(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())", "-1 1\n" },
    { "umount_proc", "print(libc.umount2(b'/proc', 2), ctypes.get_errno())", "-1 1\n" },
    { "unshare_user", "print(libc.unshare(0x10000000), ctypes.get_errno())", "-1 1\n" },
    { "unshare_mount", "print(libc.unshare(0x20000), ctypes.get_errno())", "-1 1\n" },
    { "setns", "print(sc(308, 0, 0))", "(-1, 1)\n" },
    { "clone_new_namespaces",
      "print(sc(56, 0x10000000 | 17, 0, 0, 0, 0), sc(56, 0x40000000 | 17, 0, 0, 0, 0))",
      "(-1, 1) (-1, 1)\n" },
    /* The filter is an allow-list: a call it does not name is absent (ENOSYS), the kernel's
     * latest included: open_tree_attr (Linux 6.15), listmount and statmount (6.8). */
    { "unlisted_calls",
      "# open_tree_attr listmount statmount\n"
      "print(*[sc(nr, 0, 0, 0, 0, 0) for nr in (467, 458, 457)])",
      "(-1, 38) (-1, 38) (-1, 38)\n" },
    /* clone3 hides its flags from the filter: refused as absent, so libc falls back to clone. */
    { "clone3", "print(sc(435, 0, 0))", "(-1, 38)\n" },
    { "chroot_pivot_root",
      "print(libc.chroot(b'/tmp'), ctypes.get_errno(), sc(155, b'/tmp', b'/tmp'))",
      "-1 1 (-1, 1)\n" },
    { "kernel_surface",
      "# bpf perf_event_open userfaultfd io_uring_setup keyctl add_key kexec_load finit_module init_module delete_module\n"
      "print(*[sc(nr, 0, 0, 0, 0, 0)[1] for nr in (321, 298, 323, 425, 250, 248, 246, 313, 175, 176)])",
      "1 1 1 1 1 1 1 1 1 1\n" },
    /* Only the query (0xffffffff, zero-extended as the kernel's unsigned int) is allowed. */
    { "personality",
      "print(libc.personality(ctypes.c_ulong(0x0400000)), ctypes.get_errno(),"
      " libc.personality(ctypes.c_ulong(0xffffffff)))",
      "-1 1 0\n" },
    { "tiocsti",
      "import fcntl, termios\nprint(t(lambda: fcntl.ioctl(0, termios.TIOCSTI, b'x')))", "1\n" },
    { "sethostname", "print(socket.gethostname(), libc.sethostname(b'x', 1), ctypes.get_errno())",
      "calcroute -1 1\n" },
    /* network */
    { "socket_families",
      "# netlink packet bluetooth alg vsock\n"
      "print(*[t(lambda: socket.socket(f, socket.SOCK_DGRAM)) for f in (16, 17, 31, 38, 40)])",
      "1 1 1 1 1\n" },
    /* Unix sockets: none by socket() (connect() and sendto() reach any socket file the code
     * can name); connected pairs (multiprocessing, asyncio) work, datagram pairs do not. */
    { "unix_sockets",
      "print(t(lambda: socket.socket(socket.AF_UNIX)), t(lambda: socket.socket(socket.AF_UNIX, "
      "socket.SOCK_DGRAM)), t(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)),"
      " sc(41, 1, 1 | 0o2000000, 0)[1], sc(53, 1, 2, 0, ctypes.byref((ctypes.c_int * 2)()))[1])",
      "1 1 1 1 1\n" },
    { "socketpair_streams",
      "a, b = socket.socketpair()\na.sendall(b'ping')\n"
      "c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)\nc.send(b'pong')\n"
      "print(b.recv(4), d.recv(4))", "b'ping' b'pong'\n" },
    { "only_loopback",
      "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))",
      "['lo']\n" },
    { "connect_outside",
      "s = socket.socket()\ns.settimeout(2)\nprint(t(lambda: s.connect(('192.0.2.1', 80))))", "101\n" },
    { "dns_lookup",
      "try:\n    socket.getaddrinfo('example.com', 80)\n    print('resolved')\n"
      "except Exception as e:\n    print(type(e).__name__)", "gaierror\n" },
    /* devices and processes */
    { "raw_dev",
      "print(sorted(os.listdir('/dev')))\n"
      "print(t(lambda: open('/dev/sda', 'rb')), t(lambda: open('/dev/mem', 'rb')),"
      " t(lambda: os.mknod('/tmp/sda', 0o60600, os.makedev(8, 0))))",
      "['fd', 'null', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'urandom', 'zero']\n2 2 1\n" },
    { "pid_namespace",
      "import subprocess\n"
      "ls = subprocess.run(['/bin/ls', '/proc'], capture_output=True, text=True).stdout.split()\n"
      "print([p for p in ls if p.isdigit()])",
      "['1', '2', '3']\n" },   /* the runner, the code, and ls itself: nothing else exists */
    { "kill_everything",
      "import signal\nprint(t(lambda: os.kill(1, signal.SIGKILL)), t(lambda: os.kill(-1, signal.SIGKILL)))\n"
      "print('alive')", "ok 3\nalive\n" },   /* init ignores it; -1 spares init and finds no one else */
    /* Kernel objects charged to the caller's user on the host, whose quota (128 inotify
     * instances) the caller's other processes share, or to the host (AIO contexts). */
    { "inotify_fanotify_aio",
      "# inotify_init inotify_init1 fanotify_init io_setup\n"
      "print(*[sc(nr, 0, 0)[1] for nr in (253, 294, 300)], sc(206, 1, ctypes.byref(ctypes.c_ulong()))[1])",
      "1 1 1 1\n" },
    { "queues_and_locks",
      "import resource as r\n"
      "print(*[r.getrlimit(x) for x in (r.RLIMIT_MSGQUEUE, r.RLIMIT_SIGPENDING, r.RLIMIT_MEMLOCK)])",
      "(0, 0) (256, 256) (0, 0)\n" },
    { "interrupt_runner",
      "import signal, time\nos.kill(1, signal.SIGINT)\ntime.sleep(0.2)\nprint('alive')",
      "alive\n" },
    { "cgroup_is_rooted",
      "print(all(l.endswith(':/') for l in open('/proc/self/cgroup').read().split()))", "True\n" },
};

static void run_attack(const attack *a)
{
    char code[4096];
    sandbox_outcome oc;
    snprintf(code, sizeof code, "%s%s\n", PRELUDE, a->code);
    if (run_ns(code, NULL, NULL, NULL, NULL, &oc) != CR_OK) {
        fprintf(stderr, "attack %s: sandbox failed\n", a->name);
        CHECK(!"sandbox_run");
        return;
    }
    if (strcmp(out_text(&oc), a->want) || oc.limit != SANDBOX_LIMIT_NONE)
        fprintf(stderr, "attack %s%s: stdout [%s] limit %s stderr [%s]\n", a->name,
                test_pool ? " (warm)" : "", out_text(&oc), sandbox_limit_name(oc.limit),
                oc.stderr_buf.p ? oc.stderr_buf.p : "");
    CHECK_STR(out_text(&oc), a->want);
    CHECK_INT(oc.warm, test_pool != NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    CHECK_INT(oc.artifact_count, 0);
    sandbox_outcome_free(&oc);
}

/* What /proc would tell of the host reads empty: each masked file b'', each masked directory
 * []; a path the kernel lacks is absent (2). Each path exact on the ns tier, where the host's
 * /proc says which exist; in the kvm tier's guest, whose kernel is not the host's, masked or
 * absent. The boot's command line and id, which the uts namespace does not hide, are among
 * them. */
static void test_proc_masked(void)
{
    char code[2048] = PRELUDE "for p, d in (", *line, *save = NULL;
    int has_cmdline = 0, has_boot_id = 0;
    sandbox_outcome oc;
    size_t i;
    for (i = 0; i < ns_proc_masked_count; i++) {
        has_cmdline |= !strcmp(ns_proc_masked[i].path, "/proc/cmdline");
        has_boot_id |= !strcmp(ns_proc_masked[i].path, "/proc/sys/kernel/random/boot_id");
        snprintf(code + strlen(code), sizeof code - strlen(code), "('%s', %d), ",
                 ns_proc_masked[i].path, ns_proc_masked[i].dir);
    }
    CHECK(has_cmdline && has_boot_id);
    snprintf(code + strlen(code), sizeof code - strlen(code), "):\n"
             "    try:\n"
             "        print(p, repr(os.listdir(p) if d else open(p, 'rb').read()[:40]))\n"
             "    except OSError as e:\n"
             "        print(p, e.errno)\n");
    if (run_ns(code, NULL, NULL, NULL, NULL, &oc) != CR_OK) {
        CHECK(!"sandbox_run");
        return;
    }
    CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    CHECK_INT(oc.warm, test_pool != NULL);
    line = strtok_r(oc.stdout_buf.p ? oc.stdout_buf.p : (char[]){ 0 }, "\n", &save);
    for (i = 0; i < ns_proc_masked_count; i++, line = strtok_r(NULL, "\n", &save)) {
        char masked_line[96], absent_line[96];
        snprintf(masked_line, sizeof masked_line, "%s %s", ns_proc_masked[i].path,
                 ns_proc_masked[i].dir ? "[]" : "b''");
        snprintf(absent_line, sizeof absent_line, "%s 2", ns_proc_masked[i].path);
        if (SANDBOX_TEST_TIER != CR_TIER_NS) {
            if (!line || (strcmp(line, masked_line) && strcmp(line, absent_line)))
                fprintf(stderr, "proc mask: [%s]\n", line ? line : "(none)");
            CHECK(line && (!strcmp(line, masked_line) || !strcmp(line, absent_line)));
        } else {
            CHECK_STR(line ? line : "(none)",
                      access(ns_proc_masked[i].path, F_OK) == 0 ? masked_line : absent_line);
        }
    }
    CHECK(line == NULL);
    sandbox_outcome_free(&oc);
}

static void test_table(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) run_attack(&table[i]);
    test_proc_masked();
}

static void test_forged_report(void);

/* The table again on a warm pool's workers (ns tier only), each attack waiting for a ready
 * worker so that none of them starts cold; then the forged reports. */
static void test_table_warm(void)
{
    sandbox_pool_config cfg = { .size = 2, .refill = 1 };
    cr_error err = { 0 };
    if (SANDBOX_TEST_TIER != CR_TIER_NS) return;
    small_limits(&cfg.limits);
    if (sandbox_pool_open(&cfg, &test_pool, &err) != CR_OK) {
        fprintf(stderr, "sandbox_pool_open: %s\n", err.message);
        CHECK(!"pool");
        return;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (!sandbox_pool_wait_ready(test_pool, 1, SECS(60))) { CHECK(!"ready"); break; }
        run_attack(&table[i]);
    }
    if (sandbox_pool_wait_ready(test_pool, 1, SECS(60))) test_proc_masked();
    else CHECK(!"ready");
    test_forged_report();
    sandbox_pool_close(test_pool);
    test_pool = NULL;
}

/* ---- attacks that need the host side ----------------------------------------------------- */

static void test_data_read_only(void)
{
    char *data = make_dir("data"), path[512], globals[600], *before, *after;
    sandbox_outcome oc;
    FILE *f;
    if (!data) { CHECK(!"mkdtemp"); return; }
    snprintf(path, sizeof path, "%s/in.txt", data);
    if ((f = fopen(path, "w"))) { fputs("payload\n", f); fclose(f); }
    chmod(path, 0644);
    before = slurp(path);
    snprintf(globals, sizeof globals, "{\"host\": \"%s\"}", data);
    if (run_ns(PRELUDE "print(open('/data/in.txt').read().strip())\n"
               "print(t(lambda: open('/data/new', 'w')), t(lambda: open('/data/in.txt', 'a')) in (13, 30),"
               " t(lambda: os.unlink('/data/in.txt')), t(lambda: os.chmod('/data/in.txt', 0o777)))\n"
               "m = ''.join(open('/proc/self/' + f).read() for f in ('mountinfo', 'mounts', 'mountstats'))\n"
               "print(host in m, os.path.basename(host) in m)\n",
               NULL, data, NULL, globals, &oc) == CR_OK) {
        /* Appending is refused by permissions (the file is not the sandbox user's) or by a
         * read-only filesystem, whichever the kernel asks first; the rest by the read-only
         * mount. The host's path of the directory shows nowhere. */
        CHECK_STR(out_text(&oc), "payload\n30 True 30 30\nFalse False\n");
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    after = slurp(path);
    CHECK_STR(after, before);
    snprintf(path, sizeof path, "%s/new", data);
    CHECK(access(path, F_OK) < 0);
    free(before);
    free(after);
    remove_tree(data);
    free(data);
}

/* A data directory under a private parent (a service account's home, mode 0700), private
 * itself, with files only their owner, the caller, may read: the code reads them all, writes
 * none, and no part of the host's path shows in the mount table. */
static void test_data_private(void)
{
    char *home = make_dir("home"), dir[300], path[400], globals[700];
    sandbox_outcome oc;
    FILE *f;
    if (!home) { CHECK(!"mkdtemp"); return; }
    snprintf(dir, sizeof dir, "%s/data", home);
    snprintf(path, sizeof path, "%s/sub", dir);
    if (mkdir(dir, 0700) < 0 || mkdir(path, 0700) < 0) { CHECK(!"mkdir"); goto done; }
    snprintf(path, sizeof path, "%s/secret.csv", dir);
    if ((f = fopen(path, "w"))) { fputs("a,1\n", f); fclose(f); }
    chmod(path, 0600);
    snprintf(path, sizeof path, "%s/sub/deep.txt", dir);
    if ((f = fopen(path, "w"))) { fputs("deep", f); fclose(f); }
    chmod(path, 0600);
    chmod(home, 0700);
    snprintf(globals, sizeof globals, "{\"host\": \"%s\"}", dir);
    if (run_ns(PRELUDE "print(open('/data/secret.csv').read().strip(), open('/data/sub/deep.txt').read(),"
               " sorted(os.listdir('/data')), '.data' in os.listdir('/'))\n"
               "print(t(lambda: open('/data/new', 'w')), t(lambda: open('/data/secret.csv', 'a')) in (13, 30),"
               " t(lambda: os.mkdir('/data/sub/d')), t(lambda: os.chmod('/data/sub/deep.txt', 0o666)))\n"
               "m = ''.join(open('/proc/self/' + f).read() for f in ('mountinfo', 'mounts', 'mountstats'))\n"
               "print(host in m, os.path.basename(os.path.dirname(host)) in m)\n",
               NULL, dir, NULL, globals, &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "a,1 deep ['secret.csv', 'sub'] False\n30 True 30 30\nFalse False\n");
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    snprintf(path, sizeof path, "%s/sub/deep.txt", dir);
    char *after = slurp(path);
    CHECK_STR(after, "deep");
    free(after);
    snprintf(path, sizeof path, "%s/new", dir);
    CHECK(access(path, F_OK) < 0);
done:
    remove_tree(home);
    free(home);
}

/* A host service's socket left in the data directory: the code reaches it neither with a
 * socket of its own nor through a connected pair, and the listener sees nothing. */
static void test_data_unix_socket(void)
{
    char *data = make_dir("data");
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    sandbox_outcome oc;
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (!data || lfd < 0) { CHECK(!"set-up"); goto done; }
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/svc.sock", data);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 4) < 0 ||
        chmod(sa.sun_path, 0777) < 0) {
        CHECK(!"listen");
        goto done;
    }
    if (run_ns(PRELUDE "p = '/data/svc.sock'\n"
               "def own():\n    socket.socket(socket.AF_UNIX).connect(p)\n"
               "a, b = socket.socketpair()\n"
               "print(t(own), t(lambda: a.connect(p)) != 'ok', t(lambda: a.sendto(b'x', p)) != 'ok',"
               " sc(41, 1, 2, 0)[1])\n", NULL, data, NULL, NULL, &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "1 True True 1\n");
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    CHECK(accept(lfd, NULL, NULL) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
done:
    if (lfd >= 0) close(lfd);
    remove_tree(data);
    free(data);
}

static void test_host_loopback_listener(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof sa;
    char globals[64];
    sandbox_outcome oc;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 4) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &len) < 0) {
        SKIP("cannot listen on 127.0.0.1: %s", strerror(errno));
        if (lfd >= 0) close(lfd);
        return;
    }
    snprintf(globals, sizeof globals, "{\"port\": %d}", ntohs(sa.sin_port));
    if (run_ns(PRELUDE "s = socket.socket()\ns.settimeout(2)\n"
               "print(t(lambda: s.connect(('127.0.0.1', port))))\n", NULL, NULL, NULL, globals,
               &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "111\n");   /* ECONNREFUSED: the sandbox's own loopback */
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    /* And nothing reached the host's listener. */
    CHECK(accept(lfd, NULL, NULL) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    close(lfd);
}

static void test_signal_host_process(void)
{
    char globals[64];
    sandbox_outcome oc;
    snprintf(globals, sizeof globals, "{\"host_pid\": %ld}", (long)getpid());
    if (run_ns(PRELUDE "print(t(lambda: os.kill(host_pid, 9)), t(lambda: os.kill(host_pid, 0)))\n",
               NULL, NULL, NULL, globals, &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "3 3\n");   /* ESRCH: our pid does not exist in there */
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
}

/* 1 when some host process has this comm (process name). */
static int process_named(const char *comm)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    int found = 0;
    if (!d) return 0;
    while (!found && (de = readdir(d))) {
        char path[300], *c;
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
        if ((c = slurp(path))) {
            c[strcspn(c, "\n")] = 0;
            found = !strcmp(c, comm);
            free(c);
        }
    }
    closedir(d);
    return found;
}

static void test_double_forked_daemon(void)
{
    char globals[64], comm[16];
    sandbox_outcome oc;
    snprintf(comm, sizeof comm, "crd%ld", (long)getpid() % 1000000);
    snprintf(globals, sizeof globals, "{\"comm\": \"%s\"}", comm);
    /* The grandchild renames itself (visible in the host's /proc), says so, and sleeps. */
    if (run_ns(PRELUDE "r, w = os.pipe()\n"
               "if os.fork() == 0:\n"
               "    os.setsid()\n"
               "    if os.fork() == 0:\n"
               "        libc.prctl(15, comm.encode(), 0, 0, 0)\n"
               "        os.write(w, b'u')\n"
               "        import time\n"
               "        time.sleep(60)\n"
               "    os._exit(0)\n"
               "os.read(r, 1)\n"
               "print('daemon up')\n", NULL, NULL, NULL, globals, &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "daemon up\n");
        CHECK(oc.wall_s < SECS(5));
    } else CHECK(!"run");
    sandbox_outcome_free(&oc);
    CHECK(!process_named(comm));
}

static sandbox_outcome limit_run(const char *code, const sandbox_limits *lim, const char *out)
{
    sandbox_outcome oc;
    if (run_ns(code, lim, NULL, out, NULL, &oc) != CR_OK) {
        CHECK(!"sandbox_run");
        memset(&oc, 0, sizeof oc);
    }
    return oc;
}

static void test_fork_bombs(void)
{
    sandbox_limits lim;
    sandbox_outcome oc;
    small_limits(&lim);
    lim.max_procs = 16;
    /* Forks until refused, the children sleeping: refused well before the wall clock, and the
     * children die with the run. */
    oc = limit_run("import os, time\nkids = 0\ntry:\n    while True:\n"
                   "        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n"
                   "        kids += 1\nexcept OSError as e:\n    print('refused', e.errno, kids < 16)\n",
                   &lim, NULL);
    CHECK_STR(out_text(&oc), "refused 11 True\n");
    CHECK_INT(oc.limit, SANDBOX_LIMIT_PROCS);
    CHECK(oc.wall_s < SECS(5));
    sandbox_outcome_free(&oc);

    /* The classic: every process forks forever. Ends at the wall clock, processes capped. */
    lim.wall_s = SECS(2);
    oc = limit_run("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                   "        pass\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_WALL);
    CHECK(strstr(oc.limit_detail, "processes 16") != NULL);
    CHECK_INT(oc.exited, 0);
    CHECK_INT(oc.term_signal, SIGKILL);
    CHECK(oc.wall_s >= lim.wall_s && oc.wall_s < SECS(6));
    sandbox_outcome_free(&oc);
}

static void test_memory_bombs(void)
{
    sandbox_limits lim;
    sandbox_outcome oc;
    small_limits(&lim);
    lim.memory_bytes = 128u << 20;
    /* One big allocation: refused (MemoryError) before any page is touched. */
    oc = limit_run("x = b'x' * (1 << 30)\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_MEMORY);
    CHECK_STR(oc.error_type, "MemoryError");
    sandbox_outcome_free(&oc);

    /* Two processes, each under the per-process bound, together over it: the cgroup's OOM
     * killer steps in. */
    lim.wall_s = SECS(20);
    oc = limit_run("import os\nos.fork()\nblocks = [bytearray(b'y' * (1 << 20)) for _ in range(100)]\n"
                   "print('survived', flush=True)\n", &lim, NULL);
    if (!strstr(oc.tier_note, "no memory cgroup")) {
        CHECK_INT(oc.limit, SANDBOX_LIMIT_MEMORY);
        CHECK(oc.peak_memory_bytes <= (128u << 20));
    } else {
        SKIP("no memory cgroup on this host: %s", oc.tier_note);
    }
    sandbox_outcome_free(&oc);
}

static void test_time_bombs(void)
{
    sandbox_limits lim;
    sandbox_outcome oc;
    small_limits(&lim);
    lim.wall_s = SECS(60);
    lim.cpu_s = SECS(1);
    /* Ended by the CPU clock, before the wall clock: a loaded machine may give the spinner a
     * small share of a core, so the wall clock leaves it room for 60 times the CPU. */
    oc = limit_run("while True:\n    pass\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_CPU);
    CHECK(oc.wall_s < lim.wall_s);
    CHECK(oc.cpu_s >= lim.cpu_s);
    sandbox_outcome_free(&oc);

    /* CPU is counted over every process: two spinners reach the limit together. */
    oc = limit_run("import os\nos.fork()\nwhile True:\n    pass\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_CPU);
    CHECK(oc.wall_s < lim.wall_s);
    CHECK(oc.cpu_s >= lim.cpu_s);
    sandbox_outcome_free(&oc);

    small_limits(&lim);
    lim.wall_s = SECS(1);
    oc = limit_run("import time\ntime.sleep(60)\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_WALL);
    CHECK(oc.wall_s >= lim.wall_s && oc.wall_s < SECS(4));
    CHECK(oc.cpu_s < lim.wall_s);
    {
        char want[64];
        snprintf(want, sizeof want, "wall clock %.3f s", lim.wall_s);
        CHECK_STR(oc.limit_detail, want);
    }
    sandbox_outcome_free(&oc);
}

static void test_disk_and_output(void)
{
    sandbox_limits lim;
    sandbox_outcome oc;
    small_limits(&lim);
    oc = limit_run("f = open('/tmp/fill', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_DISK);
    CHECK_STR(oc.error_type, "OSError");
    sandbox_outcome_free(&oc);

    oc = limit_run("import os\nn = 0\ntry:\n    while True:\n"
                   "        open('/tmp/f%d' % n, 'w').close()\n        n += 1\n"
                   "except OSError as e:\n    print(e.errno, n <= 4096)\n", &lim, NULL);
    CHECK_STR(out_text(&oc), "28 True\n");
    sandbox_outcome_free(&oc);

    oc = limit_run("while True:\n    print('x' * 1000)\n", &lim, NULL);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_OUTPUT);
    CHECK_INT(oc.stdout_buf.len, lim.max_stdout);
    CHECK_INT(oc.stdout_buf.truncated, 1);
    CHECK(oc.wall_s < SECS(5));
    sandbox_outcome_free(&oc);

    /* stderr past its cap is dropped, and the run goes on. */
    oc = limit_run("import sys\nsys.stderr.write('e' * 10**6)\nprint('done')\n", &lim, NULL);
    CHECK_STR(out_text(&oc), "done\n");
    CHECK_INT(oc.stderr_buf.len, lim.max_stderr);
    CHECK_INT(oc.stderr_buf.truncated, 1);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    sandbox_outcome_free(&oc);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d) return -1;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_artifact_attacks(void)
{
    char *out = make_dir("out"), *host = make_dir("host"), target[512], lnk[512], path[512], *txt;
    sandbox_limits lim;
    sandbox_outcome oc;
    FILE *f;
    small_limits(&lim);
    if (!out || !host) { CHECK(!"mkdtemp"); goto done; }

    /* Symlinks the code plants in /out are never followed. */
    oc = limit_run("import os\nos.symlink('/etc/passwd', '/out/passwd')\nos.symlink('/', '/out/root')\n",
                   &lim, out);
    CHECK_INT(oc.artifact_count, 0);
    CHECK_STR(oc.artifact_note, "skipped symlink: passwd; skipped symlink: root");
    CHECK_INT(count_entries(out), 0);
    sandbox_outcome_free(&oc);

    /* A symlink already in the caller's directory is not written through. */
    snprintf(target, sizeof target, "%s/target", host);
    snprintf(lnk, sizeof lnk, "%s/evil", out);
    if ((f = fopen(target, "w"))) { fputs("original", f); fclose(f); }
    CHECK(symlink(target, lnk) == 0);
    oc = limit_run("open('/out/evil', 'w').write('pwned')\n", &lim, out);
    CHECK_INT(oc.artifact_count, 0);
    CHECK(strstr(oc.artifact_note, "not copied") != NULL);
    txt = slurp(target);
    CHECK_STR(txt, "original");
    free(txt);
    sandbox_outcome_free(&oc);
    unlink(lnk);

    /* A hard link in the caller's directory is not written through, nor is a FIFO (or a
     * FIFO where a directory would go) opened, which would block the copy for ever; a plain
     * file there is replaced. A FIFO the code leaves in /out is skipped, never opened. */
    alarm(120);   /* a blocked copy ends the suite, failed, instead of hanging it */
    snprintf(lnk, sizeof lnk, "%s/evil", out);
    CHECK(link(target, lnk) == 0);
    snprintf(path, sizeof path, "%s/fifo", out);
    CHECK(mkfifo(path, 0644) == 0);
    snprintf(path, sizeof path, "%s/sub", out);
    CHECK(mkfifo(path, 0644) == 0);
    snprintf(path, sizeof path, "%s/plain", out);
    if ((f = fopen(path, "w"))) { fputs("old", f); fclose(f); }
    oc = limit_run("import os\nfor n in ('evil', 'fifo', 'plain'):\n    open('/out/' + n, 'w').write('pwned')\n"
                   "os.mkdir('/out/sub')\nopen('/out/sub/x', 'w').write('pwned')\nos.mkfifo('/out/pipe')\n",
                   &lim, out);
    CHECK_INT(oc.artifact_count, 1);
    if (oc.artifact_count == 1) CHECK_STR(oc.artifacts[0].name, "plain");
    CHECK_STR(oc.artifact_note, "not copied (destination a link, a non-file or unwritable): evil; "
              "not copied (destination a link, a non-file or unwritable): fifo; "
              "skipped non-file: pipe; "
              "not copied (destination a link, a non-file or unwritable): sub/x");
    txt = slurp(target);
    CHECK_STR(txt, "original");
    free(txt);
    txt = slurp(path);
    CHECK_STR(txt, "pwned");
    free(txt);
    CHECK_INT(count_entries(out), 4);   /* evil fifo plain sub: no temporary file left */
    alarm(0);
    sandbox_outcome_free(&oc);
    /* Nor is a symlink where a directory would go followed. */
    snprintf(lnk, sizeof lnk, "%s/dir", out);
    CHECK(symlink(host, lnk) == 0);
    oc = limit_run("import os\nos.mkdir('/out/dir')\nopen('/out/dir/target', 'w').write('pwned')\n",
                   &lim, out);
    CHECK_INT(oc.artifact_count, 0);
    CHECK_STR(oc.artifact_note,
              "not copied (destination a link, a non-file or unwritable): dir/target");
    txt = slurp(target);
    CHECK_STR(txt, "original");
    free(txt);
    sandbox_outcome_free(&oc);
    remove_tree(out);
    free(out);
    out = make_dir("out");

    /* Too many files: the first max_artifacts by name are kept, the rest dropped. */
    oc = limit_run("for i in range(100):\n    open('/out/f%03d' % i, 'w').write('x')\n", &lim, out);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_ARTIFACTS);
    CHECK_INT(oc.artifact_count, 16);
    if (oc.artifact_count == 16) CHECK_STR(oc.artifacts[15].name, "f015");
    CHECK_INT(count_entries(out), 16);
    sandbox_outcome_free(&oc);

    /* A huge artifact stops at the size of /out. */
    remove_tree(out);
    free(out);
    out = make_dir("out");
    oc = limit_run("f = open('/out/big.bin', 'wb')\nfor _ in range(100):\n    f.write(b'z' * (1 << 20))\n",
                   &lim, out);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_ARTIFACTS);
    CHECK(oc.artifact_count <= 1);
    if (oc.artifact_count == 1) CHECK(oc.artifacts[0].size <= lim.artifact_bytes);
    sandbox_outcome_free(&oc);
done:
    remove_tree(out);
    remove_tree(host);
    free(out);
    free(host);
}

static int sandbox_processes(long owner);
static int runs_counted;   /* 1: runs get a cgroup, by which sandbox_processes() finds them */
#define SETTLE_S 60        /* bounds each wait below for processes to start or end */

/* 1 when some directory calcroute-PID-* exists in a cgroup hierarchy. */
static int cgroup_left(long pid)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "find /sys/fs/cgroup -maxdepth 6 -type d -name 'calcroute-%ld-*' 2>/dev/null | grep -q .",
             pid);
    return system(cmd) == 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* 1 once the runs of `owner` have some process (alive 1) or none (alive 0), 0 when that has
 * not come within SETTLE_S. */
static int await_runs(long owner, int alive)
{
    for (double end = now_s() + SETTLE_S; (sandbox_processes(owner) > 0) != alive;) {
        if (now_s() > end) return 0;
        usleep(10 * 1000);
    }
    return 1;
}

/* The caller dies mid-run (SIGKILL, no clean-up of its own): the sandbox dies with it, and the
 * next run anywhere removes the cgroup it left. */
static void test_killed_caller(void)
{
    sandbox_outcome oc;
    pid_t caller;
    double end;
    if (!runs_counted) { SKIP("no cgroup to find the run's processes by"); return; }
    if ((caller = fork()) < 0) { CHECK(!"fork"); return; }
    if (caller == 0) {
        run_ns("import time\ntime.sleep(30)\n", NULL, NULL, NULL, NULL, &oc);
        _exit(0);
    }
    CHECK(await_runs((long)caller, 1));   /* killed mid-run, however slow its start */
    kill(caller, SIGKILL);
    waitpid(caller, NULL, 0);
    CHECK(await_runs((long)caller, 0));
    /* The dead python stays a zombie until the host's init reaps it, and holds its cgroup
     * until then: later runs retry. */
    for (end = now_s() + SETTLE_S; cgroup_left((long)caller) && now_s() < end;) {
        if (run_ns("pass\n", NULL, NULL, NULL, NULL, &oc) == CR_OK) sandbox_outcome_free(&oc);
        usleep(100 * 1000);
    }
    CHECK(!cgroup_left((long)caller));
}

/* Closing every descriptor (stdout, stderr, whatever carries the report) stops no clock: a
 * sleeper ends at the wall clock, and spinners forked one after another, each below the
 * per-process CPU rlimit, end together at the run's CPU limit, none of them surviving. */
static void test_closed_streams(void)
{
    sandbox_limits lim;
    sandbox_outcome oc;
    char want[64];
    small_limits(&lim);
    lim.wall_s = SECS(1);
    oc = limit_run("import os, time\nos.closerange(0, 4096)\ntime.sleep(60)\n", &lim, NULL);
    snprintf(want, sizeof want, "wall clock %.3f s", lim.wall_s);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_WALL);
    CHECK_STR(oc.limit_detail, want);
    CHECK(oc.wall_s >= lim.wall_s && oc.wall_s < SECS(5));
    sandbox_outcome_free(&oc);

    small_limits(&lim);
    lim.wall_s = SECS(30);
    lim.cpu_s = SECS(1);
    oc = limit_run("import os\nos.closerange(0, 4096)\nfor _ in range(8):\n"
                   "    if os.fork() == 0:\n        while True:\n            pass\n"
                   "    os.wait()\n", &lim, NULL);
    snprintf(want, sizeof want, "CPU time %.3f s", lim.cpu_s);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_CPU);
    CHECK_STR(oc.limit_detail, want);
    CHECK(oc.cpu_s >= lim.cpu_s && oc.wall_s < lim.wall_s);
    sandbox_outcome_free(&oc);
    if (runs_counted) CHECK(await_runs((long)getpid(), 0));
    CHECK(!cgroup_left((long)getpid()));
}

/* limit_run() on a ready worker of test_pool when it is set, else cold; *oc must say which. */
static sandbox_outcome forge_run(const char *code)
{
    sandbox_outcome oc;
    if (test_pool) CHECK(sandbox_pool_wait_ready(test_pool, 1, SECS(60)));
    oc = limit_run(code, NULL, NULL);
    CHECK_INT(oc.warm, test_pool != NULL);
    return oc;
}

/* The report is the runner's alone: records the code writes wherever it can (the report's
 * format, and the one its child describes its result in), a runner patched from the code's
 * frames, a description spoiled at exit: ignored, or refused by name, never taken. Cold, and
 * on warm workers, whose code's process takes the job and says what values it can have
 * before the code runs. */
static void test_forged_report(void)
{
    sandbox_outcome oc;
    oc = forge_run(PRELUDE
                   "forged = (b'solution.type 3\\nint\\nsolution.repr 2\\n42\\nsolution.decimal 2\\n42\\n'\n"
                   "          b'solution.by 3\\nend\\nerror.type 11\\nMemoryError\\n'\n"
                   "          b'var0.kind 3\\nint\\nvar0.text 2\\n42\\nvar0.name 3\\nans\\n')\n"
                   "for fd in range(3, 1024):\n"
                   "    t(lambda: os.write(fd, forged))\n"
                   "ans = 'seven'\n");
    CHECK_STR(out_text(&oc), "");
    CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    CHECK_INT(oc.raised, 0);
    CHECK_INT(oc.has_value, 1);
    CHECK_STR(oc.value_repr, "'seven'");
    CHECK_STR(oc.value_type, "str");
    CHECK_STR(oc.value_from, "ans");
    CHECK(oc.value_decimal == NULL);
    sandbox_outcome_free(&oc);

    oc = forge_run("import sys\ng = sys._getframe(1).f_globals\nrec = g['record']\n"
                   "g['record'] = lambda k, v: rec(k.replace('var0.', 'solution.'), v)\n"
                   "ans = 7\n");
    CHECK_INT(oc.has_value, 0);
    CHECK_INT(oc.exit_code, 2);
    CHECK(oc.stderr_buf.p && strstr(oc.stderr_buf.p, "calcroute runner: the code's result was "
                                    "refused: a solution value this program cannot have"));
    sandbox_outcome_free(&oc);

    oc = forge_run("import atexit, os\n"
                   "def spoil():\n"
                   "    for fd in range(3, 1024):\n"
                   "        try:\n"
                   "            os.pwrite(fd, b'var0.kind 3\\nint\\nvar0.kind 3\\nint\\n', 0)\n"
                   "        except OSError:\n"
                   "            pass\n"
                   "atexit.register(spoil)\nans = 7\n");
    CHECK_INT(oc.has_value, 0);
    CHECK_INT(oc.exit_code, 2);
    CHECK(oc.stderr_buf.p && strstr(oc.stderr_buf.p, "refused: a second var0.kind record"));
    sandbox_outcome_free(&oc);
}

/* ---- nothing left behind ----------------------------------------------------------------- */

static int count_lines(const char *path)
{
    char *s = slurp(path);
    int n = 0;
    for (char *p = s; p && *p; p++) n += *p == '\n';
    free(s);
    return n;
}

/* Processes, zombies aside, of the runs that process `owner` made: those in a run cgroup
 * named for it (calcroute-OWNER-N, sandbox/ns/cgroup.c), wherever they were reparented. Not
 * the sandbox's host uid (65534): the host's other nobody processes share it (the CI's
 * PostgreSQL server, whose workers come and go), and so do other suites' sandboxes. */
static int sandbox_processes(long owner)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    char tag[64];
    int n = 0;
    if (!d) return -1;
    snprintf(tag, sizeof tag, "/calcroute-%ld-", owner);
    while ((de = readdir(d))) {
        char path[300], *cg, *st = NULL;
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cgroup", de->d_name);
        if ((cg = slurp(path)) && strstr(cg, tag)) {
            snprintf(path, sizeof path, "/proc/%s/status", de->d_name);
            n += (st = slurp(path)) && !strstr(st, "\nState:\tZ");
        }
        free(cg);
        free(st);
    }
    closedir(d);
    return n;
}

int main(void)
{
    int mounts_before;
    ns_cgroup cg;
    sandbox_limits lim;

    setenv("CALCROUTE_ATTACK_SECRET", "s3cr3t", 1);
    if (!sandbox_tier_available(SANDBOX_TEST_TIER, ns_why, sizeof ns_why)) {
        SKIP("%s tier unavailable on this host: %s",
             SANDBOX_TEST_TIER == CR_TIER_NS ? "ns" : "kvm", ns_why);
        return TEST_SUMMARY();
    }
    mounts_before = count_lines("/proc/self/mountinfo");
    /* Runs' processes are told apart by their cgroup: where none can be made, uncounted. */
    small_limits(&lim);
    ns_cgroup_create(&cg, &lim);
    if (!(runs_counted = cg.version != 0)) SKIP("processes left by runs not counted: %s", cg.note);
    ns_cgroup_destroy(&cg);

    test_table();
    test_table_warm();
    test_data_read_only();
    test_data_private();
    test_data_unix_socket();
    test_host_loopback_listener();
    test_signal_host_process();
    test_double_forked_daemon();
    test_fork_bombs();
    test_memory_bombs();
    test_time_bombs();
    test_disk_and_output();
    test_artifact_attacks();
    test_killed_caller();
    test_closed_streams();
    test_forged_report();

    CHECK_INT(count_lines("/proc/self/mountinfo"), mounts_before);
    if (runs_counted) CHECK(await_runs((long)getpid(), 0));
    CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);   /* no child of ours left, not even a zombie */
    CHECK(!cgroup_left((long)getpid()));
    CHECK(system("ls /tmp /dev/shm 2>/dev/null | grep -q '^calcroute'") != 0);
    return TEST_SUMMARY();
}
