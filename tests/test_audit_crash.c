/* tests/test_audit_crash.c: several processes append to one ledger while the test kills
 * them with SIGKILL at random moments. Afterwards the chain must verify and every append that
 * a child reported as committed (on a pipe, right after audit_append returned) must be there.
 * The run is a number of kills, each after an append reported since the last one, so that a
 * slow machine does the same work, only slower. CR_TEST_SEED fixes the random schedule; the
 * seed used is printed, and again on every failure line. With an argument, the ledger is that
 * one (a fresh PostgreSQL ledger's URI: tests/test_audit_pg.sh) instead of a new SQLite file. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "tests/testlib.h"

#define NPROC 4
#define KILLS 60
#define STALL_MS 60000   /* no append reported for this long: the ledger is stuck */
#define MAX_REPORTS 100000

typedef struct {
    uint64_t seq;
    char id[32];
} report;   /* 40 bytes: one write() below PIPE_BUF, so never torn */

static report reports[MAX_REPORTS];
static size_t nreports;

static _Noreturn void child(const char *path, int fd, int batch)
{
    audit_db *db = NULL;
    cr_error err = {0};
    if (audit_open(path, 0, &db, &err) != CR_OK) {
        fprintf(stderr, "child %d: %s%s\n", (int)getpid(), err.message, t_note);
        _exit(3);
    }
    audit_record recs[3];
    report r[3];
    memset(recs, 0, sizeof recs);
    memset(r, 0, sizeof r);
    for (unsigned i = 0;; i++) {
        for (int k = 0; k < batch; k++) {
            snprintf(r[k].id, sizeof r[k].id, "%d:%u:%d", (int)getpid(), i, k);
            AUDIT_SET(&recs[k], request_id, r[k].id);
            AUDIT_SET(&recs[k], code, "ans = 1 + 1");
            AUDIT_SET(&recs[k], route, "inprocess");
            AUDIT_SET(&recs[k], value_repr, "2");
        }
        uint64_t first = 0;
        if (audit_append_batch(db, recs, (size_t)batch, &first, NULL, &err) != CR_OK) {
            fprintf(stderr, "child %d: %s%s\n", (int)getpid(), err.message, t_note);
            _exit(4);
        }
        for (int k = 0; k < batch; k++) {
            r[k].seq = first + (uint64_t)k;
            if (write(fd, &r[k], sizeof r[k]) != (ssize_t)sizeof r[k]) _exit(5);
        }
    }
}

static pid_t spawn(const char *path, int fds[2], int batch)
{
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(path, fds[1], batch);
    }
    return pid;
}

static void drain(int fd)
{
    report r;
    ssize_t n;
    while ((n = read(fd, &r, sizeof r)) == (ssize_t)sizeof r)
        if (nreports < MAX_REPORTS) reports[nreports++] = r;
    CHECK(n == -1 ? errno == EAGAIN : n == 0);
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Reads reports until there are more than `had`: 0 when none came for STALL_MS. */
static int await_report(int fd, size_t had)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (drain(fd); nreports == had && nreports < MAX_REPORTS; drain(fd)) {
        long left = STALL_MS - ms_since(&t0);
        struct pollfd p = { fd, POLLIN, 0 };
        if (left <= 0) return 0;
        poll(&p, 1, (int)left);
    }
    return 1;
}

int main(int argc, char **argv)
{
    char dir[256], file[300];
    snprintf(dir, sizeof dir, "%s/cr-test-audit-crash-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    snprintf(file, sizeof file, "%s/ledger.db", dir);
    const char *path = argc > 1 ? argv[1] : file;
    unsigned seed = getenv("CR_TEST_SEED") ? (unsigned)strtoul(getenv("CR_TEST_SEED"), NULL, 10)
                                           : (unsigned)time(NULL) ^ (unsigned)getpid();
    fprintf(stderr, "seed %u\n", seed);
    snprintf(t_note, sizeof t_note, " (CR_TEST_SEED=%u)", seed);
    srand(seed);

    audit_db *db = NULL;
    cr_error err = {0};
    CHECK_INT(audit_open(path, AUDIT_OPEN_CREATE, &db, &err), CR_OK);
    audit_close(db);

    int fds[2];
    if (pipe(fds) != 0) return perror("pipe"), 1;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    pid_t pids[NPROC];
    for (int i = 0; i < NPROC; i++) pids[i] = spawn(path, fds, i % 2 ? 3 : 1);

    int kills = 0, bad_exits = 0, stalled = 0;
    /* every read of the pipe ends cleanly: one check, however many reads the timing makes */
    SWEEP_BEGIN(reads);
    while (kills < KILLS) {
        struct timespec nap = { 0, (long)(1 + rand() % 40) * 1000000L };
        size_t had = nreports;
        nanosleep(&nap, NULL);
        if (!await_report(fds[0], had)) {
            stalled = 1;
            fprintf(stderr, "no append reported for %d s after %d kills%s\n", STALL_MS / 1000,
                    kills, t_note);
            break;
        }
        int i = rand() % NPROC, status = 0;
        kill(pids[i], SIGKILL);
        waitpid(pids[i], &status, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) bad_exits++;
        kills++;
        pids[i] = spawn(path, fds, i % 2 ? 3 : 1);
    }
    for (int i = 0; i < NPROC; i++) {
        int status = 0;
        kill(pids[i], SIGKILL);
        waitpid(pids[i], &status, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) bad_exits++;
    }
    close(fds[1]);
    drain(fds[0]);
    SWEEP_END(reads);
    close(fds[0]);
    CHECK_INT(bad_exits, 0);            /* no child failed an append on its own */
    CHECK_INT(stalled, 0);              /* a killed appender never blocks the others */
    fprintf(stderr, "%d kills, %zu appends reported\n", kills, nreports);

    cr_audit_report rep;
    db = NULL;
    CHECK_INT(audit_open(path, AUDIT_OPEN_READONLY, &db, &err), CR_OK);
    CHECK_INT(audit_verify(db, NULL, &rep, &err), CR_OK);
    CHECK_INT(rep.ok, 1);
    if (!rep.ok) fprintf(stderr, "seq %llu: %s%s\n", (unsigned long long)rep.bad_seq, rep.problem,
                         t_note);
    CHECK(rep.records >= nreports);

    /* Every reported append is in the ledger under the seq it was given. */
    size_t missing = 0;
    for (size_t k = 0; k < nreports; k++) {
        audit_iter *it = NULL;
        audit_entry e;
        int found = 0;
        if (audit_iter_open(db, reports[k].seq, reports[k].seq, &it, &err) == CR_OK
            && audit_iter_next(it, &e, &err) == 1)
            found = e.rec.request_id_len == strlen(reports[k].id)
                    && memcmp(e.rec.request_id, reports[k].id, e.rec.request_id_len) == 0;
        audit_iter_close(it);
        if (!found) {
            missing++;
            fprintf(stderr, "reported seq %llu (%s) is not in the ledger%s\n",
                    (unsigned long long)reports[k].seq, reports[k].id, t_note);
        }
    }
    CHECK_INT(missing, 0);
    audit_close(db);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
