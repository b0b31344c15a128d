/* sandbox/job/job.h: what every sandbox tier shares, below the tiers: the job, its limits
 * and outcome, the tier interface each tier implements (sandbox_tier), the in-sandbox runner
 * and its job and report encodings, and the artifacts' collection. A tier includes this and
 * its own headers, never sandbox/sandbox.h, whose dispatch sits above the tiers. */
#ifndef CR_SANDBOX_JOB_H
#define CR_SANDBOX_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "calcroute.h"
#include "common/common.h"
#include "common/defaults.h"

#define SANDBOX_DEFAULT_INTERPRETER CR_DEFAULT_INTERPRETER
/* Where the sandbox's libraries keep their caches (XDG_CACHE_HOME, MPLCONFIGDIR): under /tmp,
 * and left out of the files reported as dropped. */
#define SANDBOX_CACHE_DIR "/tmp/.cache"

/* ---- limits ---------------------------------------------------------------------------
 * Every figure is a hard bound on the whole run (all processes the code starts), enforced by
 * the tier: the parent's clock for wall and CPU, a cgroup (or rlimits, when the host offers
 * no cgroup) for memory and processes, size-capped filesystems for /tmp and /out, and the
 * parent's reader for stdout/stderr. 0 in a field means "the default" (common/defaults.h:
 * CR_DEFAULT_TIMEOUT_S, CR_DEFAULT_MEMORY_MIB, CR_DEFAULT_SANDBOX_*). */
typedef struct {
    double wall_s;            /* wall clock from start to the last process gone */
    double cpu_s;             /* CPU seconds, user + system, all processes (= wall_s) */
    uint64_t memory_bytes;    /* resident memory incl. /tmp and /out contents */
    uint32_t max_procs;       /* processes and threads at once */
    size_t max_stdout;        /* bytes of stdout kept; more ends the run */
    size_t max_stderr;        /* bytes of stderr kept; more is dropped, run goes on */
    uint64_t tmp_bytes;       /* size of the /tmp filesystem */
    uint64_t artifact_bytes;  /* size of the /out filesystem: all artifacts together */
    uint32_t max_artifacts;   /* files kept from /out */
} sandbox_limits;

/* Which limit ended or marred the run. Reported by name with sandbox_limit_name():
 * "none", "wall", "cpu", "memory", "procs", "output", "disk", "artifacts". */
typedef enum {
    SANDBOX_LIMIT_NONE = 0,
    SANDBOX_LIMIT_WALL,       /* killed by the parent at wall_s */
    SANDBOX_LIMIT_CPU,        /* killed at cpu_s (parent's clock or RLIMIT_CPU) */
    SANDBOX_LIMIT_MEMORY,     /* OOM-killed in its cgroup, or the code got MemoryError */
    SANDBOX_LIMIT_PROCS,      /* a fork/thread was refused by the process limit */
    SANDBOX_LIMIT_OUTPUT,     /* stdout passed max_stdout: killed, stdout truncated */
    SANDBOX_LIMIT_DISK,       /* /tmp full (the code got ENOSPC/EFBIG) */
    SANDBOX_LIMIT_ARTIFACTS   /* /out full or more than max_artifacts files: some dropped */
} sandbox_limit;

const char *sandbox_limit_name(sandbox_limit limit);   /* static string, never NULL */

/* ---- job ---------------------------------------------------------------------------------
 * Everything is borrowed for the duration of sandbox_run() only. */
typedef struct {
    cr_tier tier;             /* CR_TIER_AUTO (KVM when usable, else NS), CR_TIER_NS,
                                 CR_TIER_KVM; CR_TIER_NONE is a usage error */
    const char *code;         /* Python source, run as __main__ (need not be NUL-ended) */
    size_t code_len;
    const char *interpreter;  /* NULL: SANDBOX_DEFAULT_INTERPRETER; under /usr or allow_dir
                                 (sandbox_interpreter_check) */
    const char *allow_dir;    /* NULL, or a host directory (its canonical path) bound
                                 read-only at the same path: a virtual environment whose
                                 bin/python is the interpreter */
    const char *data_dir;     /* host directory mounted read-only at /data; NULL: none.
                                 Opened as the caller; the code reads what the caller's
                                 own ids may (ns tier run as root: where the filesystem
                                 can be idmapped, else world-readable files only) */
    const char *out_dir;      /* host directory (must exist) that receives a copy of each
                                 artifact; NULL: artifacts are listed and hashed only */
    const char *const *answer_vars; /* final-value names tried in order, NULL-terminated,
                                       the first CR_ANSWER_VARS_MAX used;
                                       NULL: "ans", "result", "answer" */
    const char *globals_json; /* NULL, or a JSON object {"name": value} whose entries are
                                 module globals before the code runs (numbers with a '.' or
                                 exponent become float, others int) */
    int64_t seed;             /* seeds random and numpy.random (0..SANDBOX_SEED_MAX); -1
                                 (sandbox_job_init's): derived from the code and globals */
    sandbox_limits limits;
    int interrupt_fd;         /* a descriptor whose becoming readable ends the run at once
                                 (outcome.interrupted; the engine's eventfd); -1: none */
    const char *kvm_dir;      /* the kvm tier's kernel and initramfs; NULL: found as
                                 sandbox/kvm/vmm.h's kvm_dir_resolve() says */
    int lean;                 /* a warm pool's hint: the code imports the standard library
                                 alone, so a worker without the preload list serves it at
                                 less CPU (0: it may need the list; either runs alike) */
} sandbox_job;

#define SANDBOX_SEED_MAX 4294967295u   /* numpy's legacy seed is 32 bits */
/* The seed the job runs with: job->seed, or when it is -1 the first 32 bits of a SHA-256 of
 * the code and globals_json, so the same request draws the same numbers. */
uint32_t sandbox_job_seed(const sandbox_job *job);

/* CR_OK when `interpreter` (NULL: the default) can run in a sandbox that sees /usr and
 * `allow_dir` (NULL: none); else CR_EUSAGE naming what is wrong: a path that is not absolute,
 * an allowed directory that is not a canonical absolute directory or that would cover one of
 * the sandbox's own (/, /proc, /dev, /etc, /tmp's parent...), an interpreter that lies (as
 * written or once its symlinks are resolved) under neither, or that is not an executable
 * regular file. */
cr_code sandbox_interpreter_check(const char *interpreter, const char *allow_dir, cr_error *err);
/* 1 when the job names another interpreter or an allowed directory: only the ns tier runs
 * the host's (CR_TIER_AUTO then means ns; the kvm tier refuses it). */
int sandbox_job_host_python(const sandbox_job *job);
/* Zeroes the job and fills the defaults (tier AUTO, interpreter, every limit, no
 * interrupt_fd). */
void sandbox_job_init(sandbox_job *job);
/* Fills the defaults into every 0 field of *lim (used by the tiers; idempotent). */
void sandbox_limits_resolve(sandbox_limits *lim);

/* ---- outcome -------------------------------------------------------------------------------
 * Filled by sandbox_run(); every pointer in it is owned by the outcome: release them all with
 * sandbox_outcome_free(). */
typedef struct {
    char *name;               /* path under /out, '/'-separated, never absolute or ".." */
    uint64_t size;            /* bytes */
    char sha256[65];          /* lowercase hex (libsodium crypto_hash_sha256) */
    char *path;               /* the copy in job->out_dir; NULL when out_dir was NULL */
} sandbox_artifact;

typedef struct {
    cr_tier tier;             /* the tier that ran it: CR_TIER_NS or CR_TIER_KVM */
    char tier_note[256];      /* why AUTO chose this tier, and what the host lacked (e.g.
                                 "no memory cgroup: memory bounded by RLIMIT_DATA only") */

    int exited;               /* 1: the runner exited with exit_code; 0: killed by signal */
    int exit_code;            /* 0 ok, 1 the code raised, 2 runner failure; SystemExit(n): n */
    int term_signal;          /* the signal that ended it when !exited (SIGKILL at a limit) */
    sandbox_limit limit;      /* SANDBOX_LIMIT_NONE, or the limit hit */
    int interrupted;          /* 1: job->interrupt_fd ended the run (killed, as at a limit) */
    char limit_detail[128];   /* e.g. "wall clock 2.000 s", "memory 268435456 bytes" */

    cr_buf stdout_buf;        /* p (NUL-ended, may be NULL when empty), len, truncated */
    cr_buf stderr_buf;

    /* The final value (DESIGN.md, Value semantics): the candidate cr_final_choose() picks
     * from those on the runner's report channel. */
    int has_value;
    char *value_repr;         /* repr(value) (ints of any size) */
    char *value_type;         /* type(value).__name__: "int", "float", "str", ... */
    char *value_decimal;      /* int, bool, float, Decimal, Fraction with terminating
                                 decimal: the exact decimal text the repr denotes, no exponent
                                 ("1e-05" -> "0.00001", "True" -> "1"); NULL for others and
                                 for nan/inf */
    char *value_native;       /* a list, tuple, set or dict: its native form (DESIGN.md) as
                                 JSON text, which the runner checked part by part; NULL for
                                 others, or when a part has none */
    char *value_from;         /* how it was chosen, in the in-process evaluator's words:
                                 "solution()", "last expression", or the variable's name
                                 ("ans", "total") */

    /* The exception the code raised (raised = 1), from the report channel. */
    int raised;
    char *error_type;         /* "ZeroDivisionError", "SyntaxError", ... */
    char *error_message;      /* str(exception) */
    int error_line;           /* line in the code, 0 when unknown */
    int error_col;            /* 1-based column (CPython's byte offset + 1), 0 when unknown */

    sandbox_artifact *artifacts;
    size_t artifact_count;
    char artifact_note[256];  /* what was dropped and why (symlink, count, size), or "" */
    /* Files the code left outside /out (in /tmp, the libraries' caches aside): lost with the
     * sandbox, so named here. dropped_names: up to SANDBOX_DROPPED_NAMES_MAX absolute paths,
     * each NUL-ended, dropped_names_len bytes in all (NULL when none). */
    uint64_t dropped_count;
    char *dropped_names;
    size_t dropped_names_len;

    /* What the run depended on, from the report (NULL when it has none): "imports", lines
     * "name version" of the packages loaded in the code's process when it ended (runner.py,
     * imported_packages(): the code's own word); the interpreter's sys.executable and
     * sys.version, the runner's. */
    char *imports, *interpreter_path, *interpreter_version;

    int warm;                 /* 1: a pool's warm worker ran it (sandbox_pool_run): wall_s
                                 and cpu_s count from the handoff of the job; 0: a cold
                                 start */
    char start_note[128];     /* why a job given to a warm pool started cold, or "" */
    double wall_s;            /* wall clock of the whole run, setup included (kvm tier: of
                                 the run inside the VM, as the limits count it; the VM's
                                 start and stop are in tier_note) */
    double cpu_s;             /* user + system CPU of all processes in the sandbox */
    uint64_t peak_memory_bytes; /* high-water mark: cgroup's, else the largest RSS */
} sandbox_outcome;

void sandbox_outcome_free(sandbox_outcome *out);        /* NULL is a no-op; zeroes it */
/* Appends a part to a note such as tier_note, "; " between parts, cut to cap bytes; an empty
 * part adds nothing. */
void sandbox_note_add(char *note, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the tier interface ----------------------------------------------------------------
 * One instance per tier, sandbox_tier_<ops> of sandbox/sandbox.h's SANDBOX_TIERS row, defined
 * in the tier's directory; sandbox_run() and the availability probes reach a tier only
 * through it. */
typedef struct {
    /* 1 when the tier can run on this host; else 0 with the reason in why. dir: the tier's
     * files (kvm: kernel and initramfs; NULL: the default places), ignored by a tier that has
     * none. Cheap enough to call per request (probes are cached). */
    int (*available)(const char *dir, char *why, size_t why_len);
    /* sandbox_run()'s contract; job->tier is ignored. */
    cr_code (*run)(const sandbox_job *job, sandbox_outcome *out, cr_error *err);
    /* Why auto takes this tier where it is available (after "<word>: ", in the result's
     * tier note); NULL for the first row, auto's fallback. */
    const char *chosen;
} sandbox_tier;

/* The CPUs and bytes of memory this process may use: its affinity and the machine's memory,
 * capped by its own cgroup's cpu.max and memory.max (cgroup v2) where a container sets them
 * (sandbox/ns/cgroup.c). */
void sandbox_host_share(double *cpus, double *memory);

/* ---- the in-sandbox runner (shared by both tiers) -----------------------------------------
 * A Python 3 script (sandbox/runner.py, embedded at build time). Invocation:
 *
 *     python3 -s -S -c SANDBOX_RUNNER_BOOTSTRAP JOB_FD REPORT_FD
 *
 * with the runner's source in descriptor SANDBOX_RUNNER_FD (a memfd: no file on the host, no
 * install path), which the bootstrap reads, closes and executes as __main__ before anything
 * else runs, so that what ps shows of a sandboxed process is one short line and sys.argv is
 * what the runner reads (argv[1] JOB_FD, ...).
 * (-S: the runner puts the package directories on sys.path itself, without running the
 * host's .pth files or sitecustomize.)
 * JOB_FD is readable and holds the job description made by sandbox_job_encode(); REPORT_FD
 * is writable and receives the report that sandbox_report_parse() reads. The code runs in a
 * child of the runner that holds neither descriptor and cannot trace or read the runner; the
 * runner checks what the child says its result is and writes the report itself. The code's
 * stdout and stderr are the process's own. Exit status: 0, 1 when the code raised, 2 when the
 * runner itself failed (bad job, or a result description it refused, named on stderr),
 * SystemExit's code when the code called sys.exit(). */
extern const char sandbox_runner_source[];
extern const size_t sandbox_runner_source_len;
/* The descriptor the runner's source comes in; the bootstrap's text names it too. */
#define SANDBOX_RUNNER_FD 5
#define SANDBOX_RUNNER_BOOTSTRAP \
    "import posix;r=posix.pread(5,posix.fstat(5).st_size,0);posix.close(5);exec(r)"
/* Our pure-Python numpy_financial (sandbox/numpy_financial.py): the job carries it as a
 * "module" record ("numpy_financial\n" and the source) when the code names it, and the runner
 * serves it to an import that finds no installed numpy_financial, so the sandbox computes
 * what the in-process subset does. */
extern const char sandbox_npf_source[];
extern const size_t sandbox_npf_source_len;

/* Encodes what the runner needs (code, answer vars, globals, seed) into *buf (records of the form
 * "<key> <length>\n<bytes>\n"). The buffer is the caller's (cr_buf_free). */
cr_code sandbox_job_encode(const sandbox_job *job, cr_buf *buf, cr_error *err);
/* Appends one record "<key> <length>\n<bytes>\n" to *b. */
cr_code sandbox_record_put(cr_buf *b, const char *key, const char *val, size_t len);
/* Parses the runner's report (same record format) into the value and error fields of *out,
 * which it owns afterwards. Keys: the final-value rule's candidates, each a group
 * "<group>.repr", ".type", ".decimal" (optional): "solution" (solution()'s value, with
 * "solution.by" "program" or "end": the call made after the module body because nobody
 * called it), "var0".."var2" (the job's answer variables, with ".name"), "expr" (the last
 * expression statement's value), "assigned" (the last variable assigned, with ".name");
 * "error.type", "error.message", "error.line", "error.col", "error.errno",
 * "error.filename"; "dropped.count" and "dropped.names" (NUL-separated, at most
 * SANDBOX_DROPPED_NAMES_MAX and count) for files left outside /out; "imports",
 * "interpreter.path" and "interpreter.version" (kept as they are, see the outcome); "exit.signal" when the
 * code's process died by that signal, which sets exited, exit_code and term_signal; and
 * "exit.status", what the runner exits with, which sets exited and exit_code.
 * cr_final_choose() picks the value among the candidates, as the evaluator does.
 * CR_ESANDBOX, with nothing kept, for a report the runner could not have written: a
 * malformed, unknown or repeated record, a value and an exception at once, a value without
 * its repr, type, name or caller or with a record its group does not have, a decimal that is
 * not the number the repr shows (int, bool, float, Decimal and any type whose repr is a
 * number), a count that is not one. A report cut short at its end keeps what was
 * whole. Also maps MemoryError to SANDBOX_LIMIT_MEMORY and ENOSPC/EFBIG to DISK or ARTIFACTS
 * when out->limit is still NONE. */
cr_code sandbox_report_parse(const char *buf, size_t len, sandbox_outcome *out, cr_error *err);
/* The status the runner's report ends with ("exit.status", written once the code's process
 * is done and the runner has nothing left to do but exit), or -1 when the report has none,
 * is cut short or is malformed. */
int sandbox_report_status(const char *buf, size_t len);

/* Collects the artifacts under the directory `dirfd` (the sandbox's /out, reached from the
 * host through a descriptor, never a path) into out->artifacts: regular files only, found
 * without following any symlink (symlinks, devices, fifos are skipped and named in
 * out->artifact_note), in name order, at most lim->max_artifacts files and lim->artifact_bytes
 * bytes in all (beyond either, the rest is dropped and out->limit set to ARTIFACTS when still
 * NONE). Each kept file is hashed (SHA-256) and, when out_dir is non-NULL, copied there under
 * the same relative name, never through a symlink already in out_dir. `dirfd` is borrowed. */
/* The code's ENOSPC/EFBIG came from /out, which its filesystem's figures show full: a DISK
 * limit becomes ARTIFACTS. Both tiers call it when /out has no block or inode left. */
void sandbox_out_full(sandbox_outcome *out, const sandbox_limits *lim);

#define SANDBOX_DROPPED_NAMES_MAX 16        /* names of dropped files reported (runner.py) */
#define SANDBOX_ARTIFACT_MAX_DEPTH 8        /* directories below /out entered */
#define SANDBOX_ARTIFACT_MAX_ENTRIES 4096   /* directory entries looked at in all */
#define SANDBOX_ARTIFACT_NAME_MAX 1024      /* bytes of a relative name, NUL included */
cr_code sandbox_artifacts_collect(int dirfd, const char *out_dir, const sandbox_limits *lim,
                                  sandbox_outcome *out, cr_error *err);

/* The walks of a directory tree the code wrote (this collector, the kvm guest's /out, the
 * kvm tier's /data archive) read each directory alike: its names without "." and "..",
 * sorted bytewise, into *names (*count of them; sandbox_names_free()). At most *budget names
 * are read, and *budget goes down by as many: one budget bounds a whole walk. 0, or -1 with
 * errno when the directory cannot be read or memory runs out (nothing to free then). */
int sandbox_dir_names(int dirfd, size_t *budget, char ***names, size_t *count);
void sandbox_names_free(char **names, size_t count);

#endif
