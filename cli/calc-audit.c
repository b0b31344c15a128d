/* calc-audit: inspect, verify, sign and replay a calcroute audit ledger. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calcroute.h"
#include "common/json.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 5 };

static const char usage_text[] =
    "usage: calc-audit COMMAND [OPTIONS]\n"
    "\n"
    "  verify DB [--pubkey FILE]   recompute the hash chain and check the checkpoints; with\n"
    "                              --pubkey only checkpoints by that key count, and at least\n"
    "                              one must exist (detects a rewritten or truncated chain)\n"
    "  replay DB [--from N] [--to N] [--rerun-sandbox]\n"
    "                              re-run in-process records and demand identical results;\n"
    "                              --rerun-sandbox also re-runs sandboxed ones (differences\n"
    "                              there are reported, not failed)\n"
    "  show DB N                   record N as JSON\n"
    "  export DB [--from N] [--to N]\n"
    "                              records as JSON lines\n"
    "  head DB                     the last seq and its hash, for anchoring elsewhere\n"
    "  checkpoint DB --key FILE    sign the head with the Ed25519 key in FILE, store it in DB\n"
    "  keygen FILE                 write a key pair: FILE (secret) and FILE.pub\n"
    "  --help, --version\n"
    "\n"
    "exit status: 0 ok; 1 verification or replay failed, or DB is not a ledger (its schema,\n"
    "a row's types or size, or the work a query takes is not a ledger's); 2 usage; 5 the\n"
    "ledger or a key could not be read or written (internal failure)\n";

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "calc-audit: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return EXIT_USAGE;
}

static int fail(const cr_error *err)
{
    fprintf(stderr, "calc-audit: %s\n", err->message);
    return err->code == CR_EUSAGE ? EXIT_USAGE : err->code == CR_ELEDGER ? EXIT_FAILED
                                                                          : EXIT_INTERNAL;
}

static int parse_seq(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || *s < '0' || *s > '9') return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > INT64_MAX) return 0;
    *out = v;
    return 1;
}

typedef struct {
    const char *pubkey, *key;
    uint64_t from, to;
    int rerun_sandbox;
} options;

/* Options after the command; positional arguments are left in argv[optind..]. */
static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        { "pubkey", required_argument, NULL, 'p' }, { "key", required_argument, NULL, 'k' },
        { "from", required_argument, NULL, 'f' },   { "to", required_argument, NULL, 't' },
        { "rerun-sandbox", no_argument, NULL, 'r' }, { NULL, 0, NULL, 0 },
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'p': o->pubkey = optarg; break;
        case 'k': o->key = optarg; break;
        case 'r': o->rerun_sandbox = 1; break;
        case 'f':
        case 't':
            if (!parse_seq(optarg, c == 'f' ? &o->from : &o->to))
                return usage("--%s wants a record number", c == 'f' ? "from" : "to");
            break;
        default:
            return usage("unknown option %s", argv[optind - 1]);
        }
    }
    return EXIT_OK;
}

static int cmd_verify(cr_audit *a, const options *o)
{
    cr_audit_report rep;
    cr_error err = {0};
    if (cr_audit_verify(a, o->pubkey, &rep, &err) != CR_OK) return fail(&err);
    if (!rep.ok) {
        if (rep.bad_seq) printf("FAIL seq %" PRIu64 ": %s\n", rep.bad_seq, rep.problem);
        else printf("FAIL: %s\n", rep.problem);
        printf("%" PRIu64 " records verified before the failure\n", rep.records);
        return EXIT_FAILED;
    }
    printf("ok: %" PRIu64 " records, head seq %" PRIu64 " %s\n", rep.records, rep.head_seq,
           rep.head_hash);
    if (rep.checkpoints)
        printf("%" PRIu64 " checkpoints verified%s, last at seq %" PRIu64 "%s\n",
               rep.checkpoints, o->pubkey ? " with the given key" : " (each by its own key)",
               rep.checkpoint_seq,
               rep.checkpoint_seq < rep.head_seq ? "; later records are not signed yet" : "");
    else
        printf("no checkpoints: a consistent rewrite of the whole file would go unnoticed;"
               " sign with `calc-audit checkpoint`\n");
    if (rep.foreign_checkpoints)
        printf("%" PRIu64 " checkpoints by other keys ignored\n", rep.foreign_checkpoints);
    return EXIT_OK;
}

/* A field value for a terminal: JSON-escaped, shortened on a character boundary. */
static void print_value(const char *s)
{
    if (!s) {
        fputs("(absent)", stdout);
        return;
    }
    size_t len = strlen(s);
    int replaced = 0;
    json_t *j = cr_json_text(s, len > 300 ? cr_utf8_cut(s, 300) : len, &replaced);
    char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(t ? t : "(out of memory)", stdout);
    if (len > 300) printf("… (%zu bytes)", len);
    if (replaced) fputs(" (not UTF-8: U+FFFD marks each ill-formed sequence)", stdout);
    free(t);
    json_decref(j);
}

static void print_diff(uint64_t seq, const char *field, const char *want, const char *got,
                       void *arg)
{
    (void)arg;
    printf("seq %" PRIu64 ": %s differs\n  recorded: ", seq, field);
    print_value(want);
    fputs("\n  replayed: ", stdout);
    print_value(got);
    fputc('\n', stdout);
}

static int cmd_replay(cr_audit *a, const options *o)
{
    cr_audit_replay_report rep;
    cr_error err = {0};
    if (cr_audit_replay(a, o->from, o->to, o->rerun_sandbox ? CR_REPLAY_SANDBOX : 0,
                        print_diff, NULL, &rep, &err) != CR_OK)
        return fail(&err);
    printf("%s: %" PRIu64 " replayed, %" PRIu64 " identical, %" PRIu64 " differ, %" PRIu64
           " sandboxed differ (not failures), %" PRIu64 " skipped\n",
           rep.differences ? "FAIL" : "ok", rep.replayed, rep.matched, rep.differences,
           rep.sandbox_differences, rep.skipped);
    return rep.differences ? EXIT_FAILED : EXIT_OK;
}

static int print_line(const char *json, size_t len, void *arg)
{
    (void)arg;
    return fwrite(json, 1, len, stdout) != len || putchar('\n') == EOF;
}

int main(int argc, char **argv)
{
    options o = {0};
    cr_error err = {0};
    if (argc < 2) return usage("%s", "no command");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("calc-audit %s\n", CR_VERSION_STRING);
        return EXIT_OK;
    }
    int rc = parse_options(argc - 1, argv + 1, &o);
    if (rc != EXIT_OK) return rc;
    char **pos = argv + 1 + optind;
    int npos = argc - 1 - optind;

    if (!strcmp(cmd, "keygen")) {
        if (npos != 1) return usage("%s", "keygen wants one FILE");
        if (cr_audit_keygen(pos[0], &err) != CR_OK) return fail(&err);
        printf("wrote %s (secret) and %s.pub\n", pos[0], pos[0]);
        return EXIT_OK;
    }
    static const char *const cmds[] = { "verify", "replay", "show", "export", "head",
                                        "checkpoint", NULL };
    int known = 0;
    for (int i = 0; cmds[i]; i++) known |= !strcmp(cmd, cmds[i]);
    if (!known) return usage("unknown command %s", cmd);
    if (npos != (!strcmp(cmd, "show") ? 2 : 1))
        return usage("%s: wrong number of arguments", cmd);
    if (!strcmp(cmd, "checkpoint") && !o.key) return usage("%s", "checkpoint wants --key FILE");

    cr_audit *a = cr_audit_open(pos[0], !strcmp(cmd, "checkpoint"), &err);
    if (!a) return fail(&err);
    uint64_t seq;
    char hex[65];
    if (!strcmp(cmd, "verify")) {
        rc = cmd_verify(a, &o);
    } else if (!strcmp(cmd, "replay")) {
        rc = cmd_replay(a, &o);
    } else if (!strcmp(cmd, "show")) {
        char *json = NULL;
        if (!parse_seq(pos[1], &seq)) rc = usage("show: not a record number: %s", pos[1]);
        else if (cr_audit_show(a, seq, &json, NULL, &err) != CR_OK) rc = fail(&err);
        else puts(json);
        free(json);
    } else if (!strcmp(cmd, "export")) {
        if (cr_audit_export(a, o.from, o.to, print_line, NULL, &err) != CR_OK) rc = fail(&err);
    } else if (!strcmp(cmd, "head")) {
        if (cr_audit_head(a, &seq, hex, &err) != CR_OK) rc = fail(&err);
        else printf("%" PRIu64 " %s\n", seq, hex);
    } else {
        if (cr_audit_checkpoint(a, o.key, &seq, hex, &err) != CR_OK) rc = fail(&err);
        else printf("checkpoint: seq %" PRIu64 " %s\n", seq, hex);
    }
    cr_audit_close(a);
    if (fflush(stdout) != 0 && rc == EXIT_OK) rc = EXIT_INTERNAL;
    return rc;
}
