/* calc-route: answer one piece of code (Python or FinQA DSL) safely, from a file or stdin.
 * A thin front end over libcalcroute: argument parsing and output only. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "calcroute.h"
#include "common/defaults.h"
#include "common/json.h"
#include "cli/line.h"
#include "cli/mcp.h"
#include "cli/serve.h"

/* Exit statuses (documented in --help and the man page); interrupted by a signal, 128 + its
 * number after the report (130 for SIGINT, as shells expect). */
enum { EX_OK = 0, EX_RAISED = 1, EX_USAGE = 2, EX_LIMIT = 3, EX_REJECTED = 4, EX_INTERNAL = 5,
       EX_SIGNAL = 128, EX_DONE = -1 /* --help, --version: nothing more to do */ };

#define MAX_INPUT (64u << 20)   /* the library bounds code far lower; this bounds our read */

static const char usage[] =
    "usage: calc-route [options] [FILE|-]\n"
    "       calc-route [options] mcp   (a Model Context Protocol server on stdin/stdout)\n"
    "       calc-route [options] serve (an HTTP JSON service: POST /v1/run, /v1/explain,\n"
    "                                   /v1/batch, /mcp; GET /livez, /readyz, /metrics,\n"
    "                                   /openapi.json)\n"
    "Answer code a language model wrote for a finance question: whitelisted arithmetic runs\n"
    "in-process on exact decimals; anything else is listed with its reasons.\n"
    "\n"
    "  --lang auto|python|dsl  input language (default auto)\n"
    "  --var NAME=VALUE        bind a variable; a number is exact (0.1 is 1/10), else a string\n"
    "  --vars FILE.json        bind variables from a JSON object\n"
    "  --table FILE.json       a FinQA table (list of rows, first cell the row name)\n"
    "  --json                  print one JSON object with route, status, value, stdout, ...\n"
    "  --proof KEY             with --json and --audit: sign a checkpoint that covers the\n"
    "                          answer's record with KEY (calc-audit keygen) and add its C2SP\n"
    "                          tlog-proof bundle as \"proof\" (calc-audit verify-proof)\n"
    "  --explain               print the routing decision and its reasons; run nothing\n"
    "  --precision N           significant digits of inexact results (default "
    CR_DEFAULT_TEXT(CR_DEFAULT_PRECISION) ")\n"
    "  --rounding MODE         half-even (Python's, default) or half-up\n"
    "  --strip-fences          the input is a model's reply: run the code of its ```python\n"
    "                          fences (every such block, in order); without one, all of it\n"
    "  --seed N                seeds random and numpy.random in the sandbox (0..4294967295;\n"
    "                          default derived from the code and variables)\n"
    "  --tier auto|ns|kvm|none where code outside the subset goes (none: reject it)\n"
    "  --timeout SECONDS       sandbox wall clock, in-process CPU time (decimals allowed)\n"
    "  --memory MIB            sandbox memory\n"
    "  --data DIR              read-only data directory for the sandbox\n"
    "  --out DIR               where sandbox artifacts are copied\n"
    "  --interpreter PATH      the sandbox's python (default " CR_DEFAULT_INTERPRETER "): under /usr or\n"
    "                          --allow-dir, e.g. a virtual environment's bin/python\n"
    "  --allow-dir DIR         a directory the sandbox sees read-only at the same path (its\n"
    "                          canonical path), e.g. the virtual environment\n"
    "  --kvm-dir DIR           the kvm tier's kernel and initramfs (vmlinuz, initrd.cpio);\n"
    "                          default $CALCROUTE_KVM_DIR, else the installed ones (make\n"
    "                          install-kvm), else build/kvm of a checkout\n"
    "  --audit DB              append a record of the request to this audit ledger (a SQLite\n"
    "                          file, or a postgresql:// URI)\n"
    "  --batch                 JSON lines in (one request object a line: code, lang, vars,\n"
    "                          table, precision, rounding, answer_vars, seed, strip_fences, id),\n"
    "                          one result line out per input line, in order; a bad line gives\n"
    "                          an error line. The request options above apply to every line;\n"
    "                          a line's own key wins\n"
    "  --jobs N                --batch: run up to N lines at once over the one engine (1..64,\n"
    "                          default 1); the results still come out in input order, each\n"
    "                          as soon as those before it have. With --pool, N warm sandboxes\n"
    "                          keep N lines warm\n"
    "  --pool N|auto           keep N sandboxes (ns tier, 0..64) warm before requests arrive,\n"
    "                          each used once. Default for serve, mcp and --batch: auto (2 a\n"
    "                          CPU, fewer where memory is short); one-shot runs: 0. A request\n"
    "                          finding none ready waits its turn for one being made, and\n"
    "                          starts cold only where the pool cannot make one (--json's\n"
    "                          timings.sandbox_start says which)\n"
    "  --queue N               requests that may wait for a warm sandbox at once (1..4096,\n"
    "                          default " CR_DEFAULT_TEXT(CR_DEFAULT_POOL_QUEUE) "); past them a request fails at once as\n"
    "                          overloaded (serve: 429 queue_full)\n"
    "  --preload MODULES|auto  comma-separated modules the warm sandboxes import first\n"
    "                          (default with a pool: auto, numpy and pandas where installed)\n"
    "  --wait-ready SECONDS    --batch: wait up to SECONDS for the warm pool to fill (and the\n"
    "                          ledger to answer) before the first line\n"
    "  --no-refill             do not replace warm sandboxes once used\n"
    "  --warmup FILE           Python the warm sandboxes' zygote runs once after the imports\n"
    "                          (e.g. a small groupby): what it initialises, every one starts\n"
    "                          with; its output is discarded, its errors ignored\n"
    "  --config KEY=VALUE      any engine option by its library name (libcalcroute(3)), e.g.\n"
    "                          the evaluator's limits: max_steps, max_eval_memory, max_depth,\n"
    "                          max_recursion, max_int_bits, max_str_len, max_source, max_stdout\n"
    "  --listen HOST:PORT      serve: the address (default 127.0.0.1:8080; port 0: any free\n"
    "                          one, printed); only loopback unless --listen-public\n"
    "  --listen-public         serve: allow a non-loopback --listen address\n"
    "  --token-file FILE       serve: every request but the probes (/livez, /readyz,\n"
    "                          /healthz) and /openapi.json must carry 'Authorization: Bearer\n"
    "                          TOKEN'; a line of FILE is a TOKEN and its quotas: TOKEN\n"
    "                          [rate=N] [burst=N] [concurrent=N] (requests a second, at once\n"
    "                          from rest, under way at once; past them 429)\n"
    "  --connections N         serve: connections at once (default 256); more get 503, but\n"
    "                          for 16 kept for the probes\n"
    "  --per-address N         serve: connections at once from one address (default 128)\n"
    "  --header-timeout S      serve: seconds a connection has for a request's headers and\n"
    "                          body, from its start or its last answer (default 10)\n"
    "  --max-body BYTES        serve: a request body's size at most (default 1048576)\n"
    "  --drain-timeout S       serve: seconds from SIGTERM until the runs under way are\n"
    "                          interrupted (default 25)\n"
    "  --drain-delay S         serve: seconds from SIGTERM during which /readyz fails while\n"
    "                          requests are still served (default 2; 0: none)\n"
    "  --checkpoint-key FILE   serve: sign the --audit ledger's head with this key (calc-audit\n"
    "                          keygen) when serve starts and when it stops, and while\n"
    "                          records arrive every --checkpoint-every seconds\n"
    "  --checkpoint-every S    serve: seconds between those checkpoints (default 1; 0: only\n"
    "                          at the start and the stop)\n"
    "  --tiles DIR             serve: keep the ledger's tree as C2SP tlog-tiles in DIR and\n"
    "                          publish it: GET /checkpoint (signed with --checkpoint-key,\n"
    "                          brought up to the ledger's head), GET /tile/...\n"
    "  --witnesses POLICY      serve --tiles: ask the witnesses POLICY names with a URL\n"
    "                          (C2SP tlog-witness) to cosign each checkpoint published\n"
    "  -h, --help              this text\n"
    "  --version               the version\n"
    "\n"
    "Exit status: 0 ok, 1 the code raised an exception, 2 usage (also: --audit names a\n"
    "file that is not a ledger; --interpreter is not an executable file under /usr or\n"
    "--allow-dir), 3 a limit was hit,\n"
    "4 rejected (syntax error, or outside the subset with no sandbox), 5 internal failure,\n"
    "130 (143) interrupted by SIGINT (SIGTERM): the run under way ends at once and is\n"
    "reported (--batch: its line is the last; with --jobs, the lines under way are), then\n"
    "calc-route exits. serve: SIGTERM or SIGINT makes /readyz fail, then (--drain-delay)\n"
    "stops it accepting; a batch's lines not yet run are answered shutting_down, the\n"
    "requests under way are answered (past --drain-timeout, or at a second signal, their\n"
    "runs are interrupted), the head is signed (--checkpoint-key), then it exits 0.\n";

/* SIGINT or SIGTERM: the run under way (with --jobs, every one) ends (cr_engine_interrupt() is
 * async-signal-safe) and is reported; no other request starts. A second signal while the first is being handled
 * changes nothing: the run is already ending. */
static cr_engine *volatile signal_engine;
static volatile sig_atomic_t got_signal;
static int signal_pipe[2] = { -1, -1 };   /* readable once a signal came: wakes --batch's wait */

static void on_signal(int sig)
{
    int saved = errno;
    if (!got_signal) got_signal = sig;
    cr_engine_interrupt(signal_engine);
    if (signal_pipe[1] >= 0) (void)!write(signal_pipe[1], "", 1);
    errno = saved;
}

static void catch_signals(cr_engine *engine)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    signal_engine = engine;
    if (signal_pipe[0] < 0 && pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        signal_pipe[0] = signal_pipe[1] = -1;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static int die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "calc-route: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'calc-route --help'.\n");
    return EX_USAGE;
}

/* Reads a whole file ("-" is stdin). NULL with errno set on failure; the caller frees. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= MAX_INPUT) {
                free(buf);
                buf = NULL;
                errno = EFBIG;
                break;
            }
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
        errno = 0;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                int why = errno ? errno : EIO;   /* a directory: EISDIR */
                free(buf);
                buf = NULL;
                errno = why;
            }
            break;
        }
    }
    if (f != stdin) fclose(f);
    if (buf) *len = n;
    return buf;
}

static int exit_for(cr_code status)
{
    switch (status) {
    case CR_OK: return EX_OK;
    case CR_ELIMIT: return EX_LIMIT;
    case CR_ESYNTAX:
    case CR_EUNSUPPORTED:
    case CR_EREJECTED: return EX_REJECTED;
    case CR_ESANDBOX: return EX_INTERNAL;
    case CR_EINTERRUPTED: return EX_SIGNAL + SIGINT;   /* main() says which signal */
    default: return status >= CR_EPY_BASE && status < CR_EPY_END ? EX_RAISED : EX_INTERNAL;
    }
}

/* The length of the UTF-8 character at s if it is well-formed and prints (no C1 control,
 * U+0080..U+009F), else 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t bad, k = cr_utf8_step((const char *)s, n, &bad);
    return k == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 0 : k;
}

enum show { SHOW_OUTPUT, SHOW_TEXT, SHOW_NAME };

/* Text the code chose, shown so that it cannot pass for a line of calc-route's own (the
 * "= value" answer, a "calc-route:" note) on a terminal or to a reader of lines: control
 * characters (which move a terminal's cursor or hide text) and bytes that are not UTF-8 become
 * \xNN. Program output (SHOW_OUTPUT) keeps its newlines and tabs, a line of it that starts
 * with '=' or "calc-route:" gets a leading backslash, and it ends with a newline. Text inside
 * a line of ours (SHOW_TEXT: an exception's type and message, a snippet, a value) stays on
 * it: \n and \t; an artifact name (SHOW_NAME) also doubles backslashes, so that it reads back
 * as the one name it is. */
static void put_shown(FILE *f, const char *text, size_t n, enum show how)
{
    static const char own[] = "calc-route:";
    const unsigned char *s = (const unsigned char *)text;
    int lines = how == SHOW_OUTPUT, line_start = lines;
    for (size_t i = 0; i < n;) {
        size_t k;
        if (line_start && (s[i] == '=' || (n - i >= sizeof own - 1 &&
                                           !memcmp(s + i, own, sizeof own - 1))))
            fputc('\\', f);
        line_start = s[i] == '\n' && lines;
        if ((!lines && (s[i] == '\n' || s[i] == '\t')) || (how == SHOW_NAME && s[i] == '\\'))
            fprintf(f, "\\%c", s[i] == '\n' ? 'n' : s[i] == '\t' ? 't' : '\\');
        else if (s[i] == '\n' || s[i] == '\t' || (s[i] >= 0x20 && s[i] < 0x7f))
            fputc(s[i], f);
        else if (s[i] >= 0x80 && (k = utf8_len(s + i, n - i))) {
            fwrite(s + i, 1, k, f);
            i += k;
            continue;
        } else
            fprintf(f, "\\x%02x", s[i]);
        i++;
    }
    if (lines && n && s[n - 1] != '\n') fputc('\n', f);
}

static void put_text(FILE *f, const char *text)
{
    put_shown(f, text, strlen(text), SHOW_TEXT);
}

static void print_reasons(const cr_result *res, FILE *f)
{
    size_t n = cr_result_reason_count(res);
    for (size_t i = 0; i < n; i++) {
        int line, col;
        const char *snippet;
        const char *code = cr_result_reason(res, i, &line, &col, &snippet);
        fprintf(f, "  %s at %d:%d: ", code, line, col);
        put_text(f, snippet);
        fputc('\n', f);
    }
}

/* "calc-route: WHAT: MESSAGE[ (line L[, col C])]" on stderr, the two texts shown as such
 * (0: unknown, columns count from 1). */
static void print_error(const char *what, const char *message, int line, int col)
{
    fputs("calc-route: ", stderr);
    put_text(stderr, what);
    fputs(": ", stderr);
    put_text(stderr, message);
    if (line && col) fprintf(stderr, " (line %d, col %d)", line, col);
    else if (line) fprintf(stderr, " (line %d)", line);
    fputc('\n', stderr);
}

/* Files the sandboxed code left outside /out, which nobody keeps: said, never lost quietly.
 * Read from the result's JSON, the one place the library gives them. */
static void print_dropped(const cr_result *res)
{
    const char *text = cr_result_json(res);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL, *d = json_object_get(o, "dropped");
    json_int_t count = json_integer_value(json_object_get(d, "count"));
    json_t *names = json_object_get(d, "names"), *name;
    size_t i;
    if (count > 0) {
        fprintf(stderr, "calc-route: %lld file%s written outside /out dropped (write under the "
                "working directory, /out, to keep one):", (long long)count, count > 1 ? "s" : "");
        json_array_foreach(names, i, name) {
            fputc(' ', stderr);
            put_shown(stderr, json_string_value(name), json_string_length(name), SHOW_NAME);
        }
        if ((size_t)count > json_array_size(names)) fputs(" ...", stderr);
        fputc('\n', stderr);
    }
    json_decref(o);
}

static void print_text(const cr_result *res)
{
    size_t len;
    const char *out = cr_result_stdout(res, &len);
    put_shown(stdout, out, len, SHOW_OUTPUT);
    const char *err = cr_result_stderr(res, &len);
    put_shown(stderr, err, len, SHOW_OUTPUT);
    cr_code st = cr_result_status(res);
    const cr_error *e = cr_result_error(res);
    for (size_t i = 0; i < cr_result_artifact_count(res); i++) {
        uint64_t size;
        const char *sha;
        const char *name = cr_result_artifact(res, i, &size, &sha);
        fputs("calc-route: artifact /out/", stderr);
        put_shown(stderr, name, strlen(name), SHOW_NAME);
        fprintf(stderr, ": %llu bytes, sha256 %s\n", (unsigned long long)size, sha);
    }
    print_dropped(res);
    if (st == CR_OK) {
        const char *v = cr_result_value_repr(res);
        if (v) {
            fputs("= ", stdout);
            put_text(stdout, v);   /* a sandboxed value's repr is the code's own text */
            puts(cr_result_value_exact(res) ? "" : "  (inexact)");
        } else {
            /* said, so that a missing answer is not mistaken for output lost */
            fputs("calc-route: no final value (no solution(), answer variable, expression "
                  "statement or module-level assignment gave one)\n", stderr);
        }
        return;
    }
    if (st == CR_EUNSUPPORTED || st == CR_EREJECTED) {
        print_error("rejected", e->message, cr_result_reason_count(res) == 0 ? e->line : 0,
                    e->col);
        print_reasons(res, stderr);
        return;
    }
    print_error(e->type[0] ? e->type : cr_strerror(st), e->message, e->line, e->col);
}

static void print_explain(const cr_result *res)
{
    printf("route: %s\n", cr_route_name(cr_result_route(res)));
    cr_code st = cr_result_status(res);
    const cr_error *e = cr_result_error(res);
    if (st == CR_ESYNTAX || st == CR_ELIMIT) {
        printf("why: %s at %d:%d: ", cr_strerror(st), e->line, e->col);
        put_text(stdout, e->message);
        putchar('\n');
    } else if (cr_result_reason_count(res) == 0)
        printf("why: every construct is inside the in-process subset\n");
    else {
        printf("why: %zu construct%s outside the in-process subset:\n",
               cr_result_reason_count(res), cr_result_reason_count(res) == 1 ? "" : "s");
        print_reasons(res, stdout);
    }
    /* Why that sandbox tier, from the result's JSON, the one place the library gives it. */
    const char *text = cr_result_json(res);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    const char *tier_why = json_string_value(json_object_get(o, "tier_why"));
    if (tier_why) {
        fputs("tier: ", stdout);
        put_text(stdout, tier_why);
        putchar('\n');
    }
    json_decref(o);
}

#define MAX_LINE (16u << 20)

/* --batch's input, read with read(2) after a poll() that the signal pipe also wakes: a
 * signal that comes just before the read cannot leave it waiting for a line that never
 * comes (as a check of got_signal followed by a blocking read could). */
typedef struct {
    int fd;
    size_t pos, len;
    unsigned char buf[65536];
} reader;

/* The next byte, or EOF at the end of input, on an error or once a signal came. */
static int next_byte(reader *r)
{
    while (r->pos == r->len) {
        struct pollfd p[2] = { { r->fd, POLLIN, 0 }, { signal_pipe[0], POLLIN, 0 } };
        ssize_t n;
        if (got_signal) return EOF;
        if (poll(p, signal_pipe[0] >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) return EOF;
        if (got_signal) return EOF;
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if ((n = read(r->fd, r->buf, sizeof r->buf)) < 0 && errno == EINTR) continue;
        if (n <= 0) return EOF;
        r->pos = 0;
        r->len = (size_t)n;
    }
    return r->buf[r->pos++];
}

/* Reads one line into *buf without its newline, keeping at most MAX_LINE bytes (the rest of
 * a longer line is read and dropped, *too_long set). -1 at the end of input. */
static ssize_t read_line(reader *in, char **buf, size_t *cap, int *too_long)
{
    size_t n = 0;
    int c, any = 0;
    *too_long = 0;
    while ((c = next_byte(in)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (n >= MAX_LINE) {
            *too_long = 1;
            continue;
        }
        if (n + 2 > *cap) {
            size_t nc = *cap ? *cap * 2 : 4096;
            char *b = realloc(*buf, nc);
            if (!b) {
                *too_long = 1;
                continue;
            }
            *buf = b;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
    }
    if (!any) return -1;
    if (!*buf && !(*buf = malloc(1))) return -1;
    (*buf)[n] = '\0';
    return (ssize_t)n;
}

/* The command line's request options, in their order, which --batch applies to every line
 * before the line's own keys (a key of the line wins, as a later --var does). */
typedef struct {
    int opt;
    const char *arg;    /* optarg; for --var, "NAME\0VALUE" */
    char *text;         /* --vars, --table: the file's text, read once */
    size_t len;
} line_opt;

static line_opt *line_opts;
static size_t nline_opts;

static cr_code apply_line_opts(cr_request *req, cr_error *e);

/* The result line (without its newline) of one --batch input line (cli/line.h). NULL on
 * ENOMEM. *engine_failed set when the engine failed (exit status 5). Thread-safe: --jobs runs
 * it on several threads over one engine. */
static char *batch_result(cr_engine *engine, const char *line, size_t n, int too_long,
                          int *engine_failed)
{
    char why[64];
    cr_line_info info;
    snprintf(why, sizeof why, "request line longer than %u bytes", MAX_LINE);
    char *out = cr_line_result(engine, line, n, too_long ? why : NULL, 0, apply_line_opts,
                               &info);
    if (info.outcome == CR_LINE_ENGINE) *engine_failed = 1;
    return out;
}

/* --jobs: lines run on up to JOBS_MAX threads over the one engine. Line i goes to slot
 * i % jobs once that slot's previous line is printed; a writer thread prints the slots in
 * input order as each finishes, so the output is the same as one at a time, and a result
 * goes out as soon as those before it have (a caller may wait for it before it writes the
 * next line). One lock for all: each holds it for microseconds a request. */
#define JOBS_MAX 64
enum { SLOT_FREE, SLOT_GIVEN, SLOT_DONE, SLOT_QUIT };
typedef struct {
    pthread_t thread;
    int state;
    char *line;                  /* GIVEN: the input line */
    size_t len;
    int too_long;
    char *out;                   /* DONE: the result line, NULL on ENOMEM */
} batch_slot;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    batch_slot *slots;
    unsigned jobs;               /* slots with a thread */
    cr_engine *engine;
    unsigned long long given, printed;
    int input_ended;
    int rc;                      /* EX_INTERNAL once the engine failed */
} lines = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, NULL, 0, 0, 0, 0 };

/* Prints one result line; *rc becomes EX_INTERNAL when there is none (ENOMEM). */
static void print_result(char *out, int *rc)
{
    printf("%s\n", out ? out : "{\"status\":\"engine_error\"}");
    if (!out) *rc = EX_INTERNAL;
    fflush(stdout);
    free(out);
}

static void *batch_worker(void *arg)
{
    batch_slot *s = arg;
    pthread_mutex_lock(&lines.lock);
    for (;;) {
        while (s->state != SLOT_GIVEN && s->state != SLOT_QUIT)
            pthread_cond_wait(&lines.changed, &lines.lock);
        if (s->state == SLOT_QUIT) break;
        pthread_mutex_unlock(&lines.lock);
        int failed = 0;
        char *out = batch_result(lines.engine, s->line, s->len, s->too_long, &failed);
        pthread_mutex_lock(&lines.lock);
        free(s->line);
        s->line = NULL;
        s->out = out;
        if (failed) lines.rc = EX_INTERNAL;
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&lines.changed);
    }
    pthread_mutex_unlock(&lines.lock);
    return NULL;
}

static void *batch_writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lines.lock);
    for (;;) {
        batch_slot *s = &lines.slots[lines.printed % lines.jobs];
        if (lines.printed < lines.given && s->state == SLOT_DONE) {
            char *out = s->out;
            int rc = EX_OK;
            s->out = NULL;
            s->state = SLOT_FREE;
            lines.printed++;
            pthread_cond_broadcast(&lines.changed);
            pthread_mutex_unlock(&lines.lock);
            print_result(out, &rc);
            pthread_mutex_lock(&lines.lock);
            if (rc != EX_OK) lines.rc = rc;
            continue;
        }
        if (lines.input_ended && lines.printed == lines.given) break;
        pthread_cond_wait(&lines.changed, &lines.lock);
    }
    pthread_mutex_unlock(&lines.lock);
    return NULL;
}

/* Starts the writer and up to `jobs` workers (signals blocked: the handler runs on the
 * calling thread alone, which reads signal_engine); the number of workers, 0 when either
 * could not start. */
static unsigned batch_threads(batch_slot *slots, unsigned jobs, pthread_t *writer)
{
    sigset_t all, old;
    unsigned n = 0;
    lines.slots = slots;
    lines.jobs = jobs;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (n < jobs && pthread_create(&slots[n].thread, NULL, batch_worker, &slots[n]) == 0) n++;
    lines.jobs = n;
    if (n && pthread_create(writer, NULL, batch_writer, NULL) != 0) {
        pthread_mutex_lock(&lines.lock);
        for (unsigned i = 0; i < n; i++) slots[i].state = SLOT_QUIT;
        pthread_cond_broadcast(&lines.changed);
        pthread_mutex_unlock(&lines.lock);
        for (unsigned i = 0; i < n; i++) pthread_join(slots[i].thread, NULL);
        n = 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return n;
}

/* One JSON result line for each input line, in order; a bad line yields an error object
 * and the stream goes on. Exit status: 0 when every line ran (whatever the code did),
 * 5 when the engine failed. With jobs > 1, up to that many lines run at once. */
static int run_batch(cr_engine *engine, FILE *f, unsigned jobs)
{
    reader *in = malloc(sizeof *in);
    batch_slot *slots = jobs > 1 ? calloc(jobs, sizeof *slots) : NULL;
    pthread_t writer;
    if (!in || (jobs > 1 && !slots)) {
        fprintf(stderr, "calc-route: out of memory\n");
        free(in);
        free(slots);
        return EX_INTERNAL;
    }
    in->fd = fileno(f);
    in->pos = in->len = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = EX_OK;
    int too_long;
    lines.engine = engine;
    if (slots && !batch_threads(slots, jobs, &writer)) {
        fprintf(stderr, "calc-route: --jobs: no thread could start\n");
        free(slots);
        free(in);
        return EX_INTERNAL;
    }
    while ((n = read_line(in, &line, &cap, &too_long)) >= 0 && !got_signal) {
        while (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
        if (!slots) {
            int failed = 0;
            print_result(batch_result(engine, line, (size_t)n, too_long, &failed), &rc);
            if (failed) rc = EX_INTERNAL;
            continue;
        }
        pthread_mutex_lock(&lines.lock);
        batch_slot *s = &slots[lines.given % lines.jobs];
        while (s->state != SLOT_FREE) pthread_cond_wait(&lines.changed, &lines.lock);
        if ((s->line = malloc((size_t)n + 1))) {
            memcpy(s->line, line, (size_t)n + 1);
            s->len = (size_t)n;
            s->too_long = too_long;
            s->state = SLOT_GIVEN;
        } else {
            s->out = NULL;      /* its line says engine_error; the exit status 5 */
            s->state = SLOT_DONE;
        }
        lines.given++;
        pthread_cond_broadcast(&lines.changed);
        pthread_mutex_unlock(&lines.lock);
    }
    if (slots) {
        unsigned workers = lines.jobs;
        pthread_mutex_lock(&lines.lock);
        lines.input_ended = 1;
        pthread_cond_broadcast(&lines.changed);
        pthread_mutex_unlock(&lines.lock);
        pthread_join(writer, NULL);
        pthread_mutex_lock(&lines.lock);
        for (unsigned i = 0; i < workers; i++) slots[i].state = SLOT_QUIT;
        pthread_cond_broadcast(&lines.changed);
        pthread_mutex_unlock(&lines.lock);
        for (unsigned i = 0; i < workers; i++) pthread_join(slots[i].thread, NULL);
        if (lines.rc != EX_OK) rc = lines.rc;
        free(slots);
    }
    free(line);
    free(in);
    return rc;
}

/* Sets an engine option; on a refusal, the library's message ("KEY: want ...") as the flag
 * named like the option says it, or after --config's name. */
static int pool_given, preload_given;   /* by a flag or --config: not the front end's default */

static int set_config_as(cr_config *cfg, int via_config, const char *key, const char *value)
{
    cr_error e = {0};
    pool_given |= strcmp(key, "pool") == 0;
    preload_given |= strcmp(key, "preload") == 0;
    if (cr_config_set(cfg, key, value, &e) == CR_OK) return EX_OK;
    if (via_config) return die_usage("--config: %s", e.message);
    /* the library names the option ("kvm_dir: ..."), the user typed its flag (--kvm-dir) */
    size_t n = strlen(key);
    if (strncmp(e.message, key, n) != 0) return die_usage("--%s", e.message);
    char msg[sizeof e.message];
    snprintf(msg, sizeof msg, "%s", e.message);
    for (size_t i = 0; i < n; i++)
        if (msg[i] == '_') msg[i] = '-';
    return die_usage("--%s", msg);
}

static int set_config(cr_config *cfg, const char *key, const char *value)
{
    return set_config_as(cfg, 0, key, value);
}

/* The engine, or NULL with the reason printed and *rc set to the exit status. */
static cr_engine *open_engine(const cr_config *cfg, int *rc)
{
    cr_error e = {0};
    cr_engine *engine = cr_engine_open(cfg, &e);
    if (!engine) {
        fprintf(stderr, "calc-route: %s\n", e.message);
        /* --audit naming a file that is not a ledger is a bad argument. */
        *rc = e.code == CR_EUSAGE || e.code == CR_ELEDGER ? EX_USAGE : EX_INTERNAL;
    }
    return engine;
}

/* Reads and applies --vars or --table; the text is kept in *keep for --batch's lines. */
static int load_json_file(const char *path, const char *what, cr_request *req,
                          cr_code (*set)(cr_request *, const char *, size_t, cr_error *),
                          line_opt *keep)
{
    size_t len;
    char *text = read_all(path, &len);
    if (!text) {
        fprintf(stderr, "calc-route: %s %s: %s\n", what, path, strerror(errno));
        return EX_USAGE;
    }
    cr_error e = {0};
    cr_code rc = set(req, text, len, &e);
    keep->text = text;
    keep->len = len;
    if (rc != CR_OK) {
        fprintf(stderr, "calc-route: %s %s:%d:%d: %s\n", what, path, e.line, e.col, e.message);
        return rc == CR_ENOMEM ? EX_INTERNAL : EX_USAGE;
    }
    return EX_OK;
}

static line_opt *record(int opt, const char *arg, const char *value)
{
    line_opt *o = &line_opts[nline_opts++];    /* at most one a command-line word */
    o->opt = opt;
    o->arg = arg;
    o->text = (char *)value;
    return o;
}

static cr_code apply_line_opts(cr_request *req, cr_error *e)
{
    cr_code rc = CR_OK;
    for (size_t i = 0; i < nline_opts && rc == CR_OK; i++) {
        const line_opt *o = &line_opts[i];
        switch (o->opt) {
        case 'L': rc = cr_request_set_lang(req, (cr_lang)(o->arg[0] - '0')); break;
        case 'V': rc = cr_request_set_var(req, o->arg, o->arg + strlen(o->arg) + 1, e); break;
        case 'J': rc = cr_request_set_vars_json(req, o->text, o->len, e); break;
        case 'T': rc = cr_request_set_table_json(req, o->text, o->len, e); break;
        case 'E': rc = cr_request_set_explain(req, 1); break;
        default: rc = cr_request_set_option(req, o->arg, o->text, e); break;
        }
    }
    return rc;
}

/* The command line, parsed: the request and the engine's options as the flags set them, and
 * what to do with them. */
typedef struct {
    cr_config *cfg;
    cr_request *req;
    int json, explain, batch;
    const char *proof_key;  /* --proof */
    unsigned jobs;          /* --jobs */
    double wait_ready;      /* --wait-ready: seconds */
    const char *path;       /* the input: a file, "-" for stdin, "mcp" or "serve" */
    cr_serve_opts serve;    /* --listen, --token-file, ...: serve's own */
    int serve_opt;          /* one of those was given */
} cli_opts;

/* Fills *o from the command line (o->cfg and o->req made by the caller): EX_OK, EX_DONE for
 * --help and --version (printed), or the exit status of a usage error (reported). */
static int parse_args(int argc, char **argv, cli_opts *o)
{
    enum { O_LANG = 256, O_VAR, O_VARS, O_TABLE, O_JSON, O_EXPLAIN, O_PRECISION, O_ROUNDING,
           O_TIER, O_TIMEOUT, O_MEMORY, O_DATA, O_OUT, O_AUDIT, O_VERSION, O_BATCH,
           O_INTERPRETER, O_ALLOW_DIR, O_SEED, O_POOL, O_PRELOAD, O_NO_REFILL, O_WARMUP,
           O_STRIP_FENCES, O_CONFIG, O_KVM_DIR, O_JOBS, O_SERVE, O_QUEUE, O_PROOF,
           O_WAIT_READY };
    static const struct option opts[] = {
        {"lang", required_argument, 0, O_LANG},       {"var", required_argument, 0, O_VAR},
        {"vars", required_argument, 0, O_VARS},       {"table", required_argument, 0, O_TABLE},
        {"json", no_argument, 0, O_JSON},             {"proof", required_argument, 0, O_PROOF},             {"explain", no_argument, 0, O_EXPLAIN},
        {"precision", required_argument, 0, O_PRECISION},
        {"rounding", required_argument, 0, O_ROUNDING},
        {"tier", required_argument, 0, O_TIER},       {"timeout", required_argument, 0, O_TIMEOUT},
        {"memory", required_argument, 0, O_MEMORY},   {"data", required_argument, 0, O_DATA},
        {"out", required_argument, 0, O_OUT},         {"audit", required_argument, 0, O_AUDIT},
        {"batch", no_argument, 0, O_BATCH},           {"jobs", required_argument, 0, O_JOBS},
        {"interpreter", required_argument, 0, O_INTERPRETER},
        {"allow-dir", required_argument, 0, O_ALLOW_DIR},
        {"kvm-dir", required_argument, 0, O_KVM_DIR},
        {"seed", required_argument, 0, O_SEED},
        {"pool", required_argument, 0, O_POOL},       {"preload", required_argument, 0, O_PRELOAD},
        {"no-refill", no_argument, 0, O_NO_REFILL},   {"warmup", required_argument, 0, O_WARMUP},
        {"strip-fences", no_argument, 0, O_STRIP_FENCES},
        {"config", required_argument, 0, O_CONFIG},
        {"help", no_argument, 0, 'h'},                {"version", no_argument, 0, O_VERSION},
        {"listen", required_argument, 0, O_SERVE},    {"listen-public", no_argument, 0, O_SERVE},
        {"token-file", required_argument, 0, O_SERVE},
        {"tiles", required_argument, 0, O_SERVE},
        {"witnesses", required_argument, 0, O_SERVE},
        {"connections", required_argument, 0, O_SERVE},
        {"max-body", required_argument, 0, O_SERVE},
        {"per-address", required_argument, 0, O_SERVE},
        {"header-timeout", required_argument, 0, O_SERVE},
        {"drain-timeout", required_argument, 0, O_SERVE},
        {"drain-delay", required_argument, 0, O_SERVE},
        {"checkpoint-key", required_argument, 0, O_SERVE},
        {"checkpoint-every", required_argument, 0, O_SERVE},
        {"queue", required_argument, 0, O_QUEUE},
        {"wait-ready", required_argument, 0, O_WAIT_READY},
        {0, 0, 0, 0},
    };
    cr_config *cfg = o->cfg;
    cr_request *req = o->req;
    int rc = EX_OK, c;
    cr_error e = {0};
    int opt_index;
    while (rc == EX_OK && (c = getopt_long(argc, argv, "h", opts, &opt_index)) != -1) {
        switch (c) {
        case 'h': fputs(usage, stdout); rc = EX_DONE; break;
        case O_VERSION: printf("calc-route %s\n", CR_VERSION_STRING); rc = EX_DONE; break;
        case O_LANG:
            if (strcmp(optarg, "auto") == 0) cr_request_set_lang(req, CR_LANG_AUTO);
            else if (strcmp(optarg, "python") == 0) cr_request_set_lang(req, CR_LANG_PYTHON);
            else if (strcmp(optarg, "dsl") == 0) cr_request_set_lang(req, CR_LANG_DSL);
            else rc = die_usage("--lang: want auto, python or dsl, got '%s'", optarg);
            record('L', strcmp(optarg, "python") == 0 ? "1" : strcmp(optarg, "dsl") == 0 ? "2" : "0",
                   NULL);
            break;
        case O_VAR: {
            char *eq = strchr(optarg, '=');
            if (!eq) {
                rc = die_usage("--var: want NAME=VALUE, got '%s'", optarg);
                break;
            }
            *eq = '\0';
            if (cr_request_set_var(req, optarg, eq + 1, &e) != CR_OK)
                rc = die_usage("%s", e.message);
            record('V', optarg, NULL);
            break;
        }
        case O_VARS:
            rc = load_json_file(optarg, "--vars", req, cr_request_set_vars_json,
                                record('J', NULL, NULL));
            break;
        case O_TABLE:
            rc = load_json_file(optarg, "--table", req, cr_request_set_table_json,
                                record('T', NULL, NULL));
            break;
        case O_JSON: o->json = 1; break;
        case O_EXPLAIN: o->explain = 1; cr_request_set_explain(req, 1); record('E', NULL, NULL); break;
        case O_PRECISION:
        case O_SEED:
        case O_ROUNDING:
        case O_STRIP_FENCES: {
            const char *key = c == O_PRECISION ? "precision" : c == O_SEED ? "seed"
                            : c == O_ROUNDING ? "rounding" : "strip_fences";
            const char *value = c == O_STRIP_FENCES ? "1" : optarg;
            if (cr_request_set_option(req, key, value, &e) != CR_OK)
                rc = die_usage("--%s", e.message);
            record('O', key, value);
            break;
        }
        /* Engine options: checked by the library, which names what it wants. */
        case O_TIER: rc = set_config(cfg, "tier", optarg); break;
        case O_TIMEOUT: rc = set_config(cfg, "timeout", optarg); break;
        case O_MEMORY: rc = set_config(cfg, "memory", optarg); break;
        case O_DATA: rc = set_config(cfg, "data", optarg); break;
        case O_OUT:
            /* Where the artifacts go is made when missing (its parent must exist): the
             * library takes only a directory that is there. */
            if (mkdir(optarg, 0777) < 0 && errno != EEXIST) {
                char why[1100];
                snprintf(why, sizeof why, "%.1000s: %s", optarg, strerror(errno));
                rc = die_usage("--out %s (it is made when missing, in a directory that is there)",
                               why);
            } else {
                rc = set_config(cfg, "out", optarg);
            }
            break;
        case O_AUDIT: rc = set_config(cfg, "audit", optarg); break;
        /* Checked by the engine when it opens (exit 2 with its reason). */
        case O_INTERPRETER: rc = set_config(cfg, "interpreter", optarg); break;
        case O_ALLOW_DIR: rc = set_config(cfg, "allow_dir", optarg); break;
        case O_KVM_DIR: rc = set_config(cfg, "kvm_dir", optarg); break;
        case O_BATCH: o->batch = 1; break;
        case O_PROOF: o->proof_key = optarg; break;
        case O_SERVE: {   /* serve's own options: cli/serve.c reads them */
            char why[128];
            if (cr_serve_option(&o->serve, opts[opt_index].name, optarg, why, sizeof why) < 0)
                rc = die_usage("%s", why);
            o->serve_opt = 1;
            break;
        }
        case O_JOBS: {
            char *end;
            unsigned long n = strtoul(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || n < 1 || n > JOBS_MAX)
                rc = die_usage("--jobs: want 1 to 64 lines at once, got '%s'", optarg);
            o->jobs = (unsigned)n;
            break;
        }
        case O_POOL: rc = set_config(cfg, "pool", optarg); break;
        case O_QUEUE: rc = set_config(cfg, "queue", optarg); break;
        case O_WAIT_READY: {
            char *end;
            double d = strtod(optarg, &end);
            if (*optarg == '\0' || *end || !(d > 0) || d > 86400)
                rc = die_usage("--wait-ready: want seconds above 0 (at most 86400), got '%s'",
                               optarg);
            o->wait_ready = d;
            break;
        }
        case O_PRELOAD: rc = set_config(cfg, "preload", optarg); break;
        case O_NO_REFILL: rc = set_config(cfg, "refill", "0"); break;
        case O_CONFIG: {
            char *eq = strchr(optarg, '=');
            if (!eq) {
                rc = die_usage("--config: want KEY=VALUE, got '%s'", optarg);
                break;
            }
            *eq = '\0';
            rc = set_config_as(cfg, 1, optarg, eq + 1);
            break;
        }
        case O_WARMUP: {
            size_t len;
            char *text = read_all(optarg, &len), *z = text ? realloc(text, len + 1) : NULL;
            if (!z) {
                fprintf(stderr, "calc-route: --warmup %s: %s\n", optarg, strerror(errno));
                free(text);
                rc = EX_USAGE;
                break;
            }
            z[len] = 0;
            if (memchr(z, 0, len)) rc = die_usage("--warmup %s: a NUL byte in the program", optarg);
            else rc = set_config(cfg, "warmup", z);
            free(z);
            break;
        }
        default: rc = EX_USAGE; fputs("Try 'calc-route --help'.\n", stderr); break;
        }
    }
    if (rc != EX_OK) return rc;
    if (o->jobs > 1 && !o->batch) return die_usage("--jobs: only with --batch%s", "");
    if (argc - optind > 1) return die_usage("one input at most, got '%s' and more", argv[optind + 1]);
    o->path = optind < argc ? argv[optind] : "-";
    if (o->serve_opt && (o->batch || strcmp(o->path, "serve") != 0))
        return die_usage("--listen, --token-file, ...: only with serve%s", "");
    if (o->proof_key && (!o->json || o->batch || !strcmp(o->path, "serve") ||
                         !strcmp(o->path, "mcp") || !cr_config_get(o->cfg, "audit")))
        return die_usage("--proof: with --json and --audit, for one program%s", "");
    if (o->wait_ready > 0 && !o->batch)
        return die_usage("--wait-ready: only with --batch%s", " (serve says it on /readyz)");
    /* An engine that lives long keeps sandboxes warm unless told not to; a one-shot run would
     * only pay for making them. */
    if (o->batch || strcmp(o->path, "serve") == 0 || strcmp(o->path, "mcp") == 0) {
        int rc = pool_given ? EX_OK : set_config(o->cfg, "pool", "auto");
        if (rc == EX_OK && !preload_given) rc = set_config(o->cfg, "preload", "auto");
        if (rc != EX_OK) return rc;
    }
    return EX_OK;
}

/* The HTTP service over one engine. A signal drains it: the runs under way are not ended,
 * and once drained nothing was lost, so the exit is a clean one. */
static int serve_http(cli_opts *o)
{
    int rc = cr_serve_check(&o->serve);
    if (rc != EX_OK) return rc;
    cr_engine *engine = open_engine(o->cfg, &rc);
    if (engine) {
        catch_signals(NULL);
        rc = cr_serve(engine, &o->serve, signal_pipe[0], apply_line_opts);
        got_signal = 0;
    }
    cr_engine_close(engine);
    return rc;
}

/* --batch, or the MCP server: many requests over one engine. */
static int serve_lines(const cli_opts *o)
{
    const char *path = o->path;
    int rc = EX_OK;
    FILE *in = strcmp(path, "-") == 0 || !o->batch ? stdin : fopen(path, "r");
    if (!in) {
        fprintf(stderr, "calc-route: %s: %s\n", path, strerror(errno));
        return EX_USAGE;
    }
    cr_engine *engine = open_engine(o->cfg, &rc);
    if (engine) {
        catch_signals(engine);
        if (o->wait_ready > 0) {
            cr_error e = {0};
            if (cr_engine_ready(engine, NULL, o->wait_ready, &e) != CR_OK)
                fprintf(stderr, "calc-route: --wait-ready: not ready after %g s (%s); the lines "
                        "wait their turn for a warm sandbox\n", o->wait_ready, e.message);
        }
        rc = o->batch ? run_batch(engine, in, o->jobs)
                      : cr_mcp_serve(engine, 0, 1, signal_pipe[0], apply_line_opts);
    }
    signal_engine = NULL;   /* the handler runs on this thread: it sees NULL or engine */
    cr_engine_close(engine);
    if (in != stdin) fclose(in);
    return rc;
}

/* One request: the input's code, run and printed as the flags ask. */
/* --proof: the answer's JSON with "proof", the tlog-proof bundle of its record against a
 * checkpoint signed now (so it covers the record); NULL having said why. */
static char *with_proof(const cr_config *cfg, const char *key, const char *js, uint64_t seq)
{
    cr_error e = {0};
    char *bundle = NULL, *out = NULL;
    uint64_t at;
    char hash[65];
    cr_audit *a = cr_audit_open(cr_config_get(cfg, "audit"), 1, &e);
    /* the chain's checkpoint is stored too, as `calc-audit checkpoint` does */
    int ok = a && cr_audit_checkpoint(a, key, &at, hash, &e) == CR_OK &&
             cr_audit_prove_bundle(a, seq, NULL, key, NULL, at, &bundle, &e) == CR_OK;
    cr_audit_close(a);
    json_t *o = ok ? json_loads(js, 0, NULL) : NULL;
    if (o && json_object_set_new(o, "proof", json_string(bundle)) == 0)
        out = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(6));
    json_decref(o);
    free(bundle);
    if (!ok) fprintf(stderr, "calc-route: --proof: %s\n", e.message);
    else if (!out) fprintf(stderr, "calc-route: out of memory building the JSON result\n");
    return out;
}

static int run_one(const cli_opts *o)
{
    const char *path = o->path;
    int rc = EX_OK;
    cr_error e = {0};
    size_t len;
    char *code = read_all(path, &len);
    if (!code) {
        fprintf(stderr, "calc-route: %s: %s\n", path, strerror(errno));
        return EX_USAGE;
    }
    cr_code set = cr_request_set_code(o->req, code, len);
    free(code);
    if (set != CR_OK) {
        fprintf(stderr, "calc-route: out of memory\n");
        return EX_INTERNAL;
    }
    cr_engine *engine = open_engine(o->cfg, &rc);
    if (!engine) return rc;
    catch_signals(engine);
    cr_result *res = NULL;
    if (cr_run(engine, o->req, &res, &e) != CR_OK) {
        fprintf(stderr, "calc-route: internal failure: %s: %s\n", cr_strerror(e.code), e.message);
        rc = EX_INTERNAL;
    } else {
        const char *js = o->json ? cr_result_json(res) : NULL;
        char *with = NULL;
        if (js && o->proof_key && cr_result_audit_seq(res) &&
            !(js = with = with_proof(cr_engine_config(engine), o->proof_key, js,
                                     cr_result_audit_seq(res))))
            rc = EX_INTERNAL;
        if (o->json) {
            if (js) printf("%s\n", js);
        } else if (o->explain) {
            print_explain(res);
        } else {
            print_text(res);
        }
        rc = o->explain && cr_result_status(res) == CR_EUNSUPPORTED ? EX_OK
                                                                    : exit_for(cr_result_status(res));
        if (o->json && !js) {
            if (!with && !o->proof_key)
                fprintf(stderr, "calc-route: out of memory building the JSON result\n");
            rc = EX_INTERNAL;
        }
        free(with);
    }
    cr_result_free(res);
    signal_engine = NULL;
    cr_engine_close(engine);
    return rc;
}

int main(int argc, char **argv)
{
    cli_opts o = { .cfg = cr_config_new(), .req = cr_request_new(), .jobs = 1 };
    int rc;
    if (!o.req || !o.cfg) {
        cr_config_free(o.cfg);
        fprintf(stderr, "calc-route: out of memory\n");
        return EX_INTERNAL;
    }
    if (!(line_opts = calloc((size_t)argc, sizeof *line_opts))) {
        fprintf(stderr, "calc-route: out of memory\n");
        cr_request_free(o.req);
        cr_config_free(o.cfg);
        return EX_INTERNAL;
    }
    rc = parse_args(argc, argv, &o);
    /* A file named mcp or serve: ./mcp, ./serve */
    if (rc == EX_OK)
        rc = strcmp(o.path, "serve") == 0 && !o.batch ? serve_http(&o)
           : strcmp(o.path, "mcp") == 0 || o.batch   ? serve_lines(&o)
           : run_one(&o);
    cr_request_free(o.req);
    for (size_t i = 0; i < nline_opts; i++)
        if (line_opts[i].opt == 'J' || line_opts[i].opt == 'T') free(line_opts[i].text);
    free(line_opts);
    cr_config_free(o.cfg);
    if (rc == EX_DONE) rc = EX_OK;
    return got_signal ? EX_SIGNAL + got_signal : rc;
}
