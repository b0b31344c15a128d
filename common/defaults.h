/* common/defaults.h: every default of the engine and its tiers, in one place. The router's
 * option table (router/router.h) gives them to cr_config as text, cr_policy_default() and
 * sandbox_limits_resolve() as numbers, the command line's help as text: each figure is a
 * plain decimal literal so that CR_DEFAULT_TEXT() can spell it. The documents that state a
 * default (README.md, the man pages in docs/, include/calcroute.h, the Python binding's
 * docstrings) copy it from here, and tests/test_defaults.sh holds them to it. */
#ifndef CR_DEFAULTS_H
#define CR_DEFAULTS_H

#define CR_DEFAULT_TEXT(x) CR_DEFAULT_TEXT_(x)
#define CR_DEFAULT_TEXT_(x) #x

/* ---- the sandbox ---------------------------------------------------------------------- */
/* The python a sandbox runs (cr_config "interpreter"; sandbox_job.interpreter NULL). */
#define CR_DEFAULT_INTERPRETER "/usr/bin/python3"
/* Seconds: a sandbox's wall clock (its CPU time too, unless set apart) and the in-process
 * evaluator's CPU time (cr_config "timeout"). */
#define CR_DEFAULT_TIMEOUT_S 10
/* MiB a sandboxed run may hold, /tmp and /out included (cr_config "memory"). */
#define CR_DEFAULT_MEMORY_MIB 512
/* The rest of sandbox_limits: processes and threads at once, bytes of stdout kept (more ends
 * the run) and of stderr (more is dropped), the sizes of /tmp and /out, files kept from /out. */
#define CR_DEFAULT_SANDBOX_PROCS 64
#define CR_DEFAULT_SANDBOX_STDOUT 1048576
#define CR_DEFAULT_SANDBOX_STDERR 262144
#define CR_DEFAULT_SANDBOX_TMP_MIB 64
#define CR_DEFAULT_SANDBOX_OUT_MIB 64
#define CR_DEFAULT_SANDBOX_ARTIFACTS 64
/* Requests that may wait for a warm sandbox at once (cr_config "queue"); past them a request
 * is refused at once (CR_EBUSY, HTTP 429 queue_full) rather than queued without end. */
#define CR_DEFAULT_POOL_QUEUE 128
/* pool=auto: warm sandboxes a CPU (starting one is CPU-bound), and at most one for each
 * POOL_AUTO_MEMORY_SHARE-th of the machine's memory per sandbox memory limit, 1 to 64. */
#define CR_DEFAULT_POOL_PER_CPU 2
#define CR_DEFAULT_POOL_MEMORY_SHARE 4
/* preload=auto: the finance stack's modules that most sandboxed programs import; one that is
 * not installed is skipped by the runner. */
#define CR_DEFAULT_PRELOAD_AUTO "numpy,pandas"

/* ---- arithmetic and the in-process evaluator (cr_policy) -------------------------------- */
/* Significant digits of inexact results (cr_config "precision"). */
#define CR_DEFAULT_PRECISION 34
/* cr_config's evaluator limits: steps (a backstop behind the timeout: the cheapest step takes
 * about 0.7 ns, a loop iteration 20 to 100, so 10^11 steps take well over a minute), bytes of
 * memory, parser nesting (CPython's own parser stops near 200 too), call depth (CPython's
 * recursion limit), bits of an int (about 315 000 decimal digits), characters or elements of
 * a str or list, bytes of source (real programs are under 10 KiB), bytes of stdout. */
#define CR_DEFAULT_MAX_STEPS 100000000000
#define CR_DEFAULT_MAX_EVAL_MEMORY 268435456
#define CR_DEFAULT_MAX_DEPTH 200
#define CR_DEFAULT_MAX_RECURSION 1000
#define CR_DEFAULT_MAX_INT_BITS 1048576
#define CR_DEFAULT_MAX_STR_LEN 16777216
#define CR_DEFAULT_MAX_SOURCE 1048576
#define CR_DEFAULT_MAX_STDOUT 1048576

#endif
