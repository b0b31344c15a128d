/* calc-audit: inspect, verify, sign and replay a calcroute audit ledger. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calcroute.h"
#include "cli/mhd.h"
#include "common/json.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 5 };

static const char usage_text[] =
    "usage: calc-audit COMMAND [OPTIONS]\n"
    "\n"
    "DB is a ledger: a SQLite file, or a PostgreSQL URI (postgresql://USER@HOST/DATABASE...).\n"
    "\n"
    "  init DB                     create the ledger's tables if there are none (the role\n"
    "                              that owns them; writers then need only SELECT, INSERT)\n"
    "  verify DB [--pubkey FILE]   recompute the hash chain and check the checkpoints; with\n"
    "                              --pubkey only checkpoints by that key count, and at least\n"
    "                              one must exist (detects a rewritten or truncated chain)\n"
    "  replay DB [--from N] [--to N] [--rerun-sandbox [--data DIR]] [--trust-limits]\n"
    "                              re-run in-process records and demand identical results;\n"
    "                              each runs under the limits, precision, rounding and seed\n"
    "                              it was recorded with, a limit above its default lowered\n"
    "                              to the default unless --trust-limits (then a result that\n"
    "                              differs names that limit); --rerun-sandbox also re-runs\n"
    "                              sandboxed ones (differences there are reported, not\n"
    "                              failed; another interpreter or package version is named\n"
    "                              instead of the fields), with DIR as their data directory:\n"
    "                              a file added, missing or changed against the record's\n"
    "                              manifest fails, named, and that record is not run\n"
    "  show DB N                   record N as JSON\n"
    "  export DB [--from N] [--to N]\n"
    "                              records as JSON lines\n"
    "  head DB                     the last seq and its hash, for anchoring elsewhere\n"
    "  checkpoint DB --key FILE [--origin NAME]\n"
    "                              sign the head with the Ed25519 key in FILE and store it in\n"
    "                              DB; print the Merkle tree's checkpoint as a signed note\n"
    "                              (C2SP tlog-checkpoint; NAME: its origin and key name)\n"
    "  prove DB SEQ [--size N]     an inclusion proof of record SEQ in the tree of N records\n"
    "                              (default: all), with the record\n"
    "  prove DB --consistency OLD NEW\n"
    "                              a proof that the tree of OLD records is a prefix of NEW's\n"
    "  prove DB SEQ --format tlog-proof (--checkpoint NOTE | --key FILE [--origin NAME]\n"
    "        [--size N])           record SEQ's C2SP tlog-proof bundle: against the checkpoint\n"
    "                              NOTE (kept verbatim, cosignatures and all), or one signed\n"
    "                              now with FILE; its extra data names the seq and leaf hash\n"
    "  verify-proof PROOF --checkpoint NOTE --pubkey FILE [--old-checkpoint NOTE]\n"
    "                              check a proof offline against a signed checkpoint (and, for\n"
    "                              a consistency proof, the older one)\n"
    "  verify-proof BUNDLE --policy POLICY [--entry FILE]\n"
    "                              check a tlog-proof bundle offline against a C2SP\n"
    "                              tlog-policy (log keys, witness keys, quorum); FILE: the\n"
    "                              entry's bytes, instead of the leaf hash the bundle names\n"
    "  vkey FILE.pub [--origin NAME] [--witness]\n"
    "                              the public key as a signed-note verifier key, for a\n"
    "                              policy's log line (or, --witness, its witness lines)\n"
    "  tiles DB --out DIR (--checkpoint NOTE | --key FILE [--origin NAME])\n"
    "                              write the tree as C2SP tlog-tiles under DIR (tile/L/N,\n"
    "                              tile/entries/N, then checkpoint), for a static server\n"
    "  witness --listen HOST:PORT --key FILE --origin NAME --policy POLICY --state FILE\n"
    "                              a C2SP tlog-witness: POST /add-checkpoint cosigns, as NAME\n"
    "                              with FILE's key, the checkpoints of the logs POLICY names\n"
    "                              that a consistency proof links to the last one it cosigned\n"
    "                              (kept in the state FILE); until SIGTERM or SIGINT\n"
    "  keygen FILE                 write a key pair: FILE (secret) and FILE.pub\n"
    "  --help, --version\n"
    "\n"
    "exit status: 0 ok; 1 verification, a proof or replay failed, a record or tree size the\n"
    "ledger does not hold, or DB is not a ledger (its schema, a row's types or size, or the\n"
    "work a query takes is not a ledger's); 2 usage; 5 the ledger, a key or a file could not\n"
    "be read or written (internal failure)\n";

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
    const char *pubkey, *key, *origin, *checkpoint, *old_checkpoint, *data, *format, *policy,
        *entry, *out, *listen, *state;
    uint64_t from, to, size;
    int rerun_sandbox, consistency, trust_limits, witness;
} options;

/* Options after the command; positional arguments are left in argv[optind..]. */
static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        { "pubkey", required_argument, NULL, 'p' }, { "key", required_argument, NULL, 'k' },
        { "from", required_argument, NULL, 'f' },   { "to", required_argument, NULL, 't' },
        { "rerun-sandbox", no_argument, NULL, 'r' }, { "origin", required_argument, NULL, 'o' },
        { "size", required_argument, NULL, 's' },   { "consistency", no_argument, NULL, 'c' },
        { "checkpoint", required_argument, NULL, 'C' },
        { "old-checkpoint", required_argument, NULL, 'O' },
        { "data", required_argument, NULL, 'd' }, { "format", required_argument, NULL, 'F' },
        { "policy", required_argument, NULL, 'P' }, { "entry", required_argument, NULL, 'e' },
        { "witness", no_argument, NULL, 'w' },      { "out", required_argument, NULL, 'D' },
        { "listen", required_argument, NULL, 'L' }, { "state", required_argument, NULL, 'S' },
        { "trust-limits", no_argument, NULL, 'T' }, { NULL, 0, NULL, 0 },
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'p': o->pubkey = optarg; break;
        case 'k': o->key = optarg; break;
        case 'r': o->rerun_sandbox = 1; break;
        case 'o': o->origin = optarg; break;
        case 'c': o->consistency = 1; break;
        case 'C': o->checkpoint = optarg; break;
        case 'O': o->old_checkpoint = optarg; break;
        case 'd': o->data = optarg; break;
        case 'T': o->trust_limits = 1; break;
        case 'F': o->format = optarg; break;
        case 'P': o->policy = optarg; break;
        case 'e': o->entry = optarg; break;
        case 'w': o->witness = 1; break;
        case 'D': o->out = optarg; break;
        case 'L': o->listen = optarg; break;
        case 'S': o->state = optarg; break;
        case 'f':
        case 't':
        case 's':
            if (!parse_seq(optarg, c == 'f' ? &o->from : c == 't' ? &o->to : &o->size))
                return usage("--%s wants a record number",
                             c == 'f' ? "from" : c == 't' ? "to" : "size");
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
    if (o->data && !o->rerun_sandbox)
        return usage("%s", "replay: --data is for --rerun-sandbox");
    int flags = (o->rerun_sandbox ? CR_REPLAY_SANDBOX : 0)
              | (o->trust_limits ? CR_REPLAY_TRUST_LIMITS : 0);
    if (cr_audit_replay_data(a, o->from, o->to, flags, o->data, print_diff, NULL, &rep, &err)
        != CR_OK)
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

/* The chain's checkpoint is stored; the tree's, at the same seq, is printed as a note (so
 * `calc-audit checkpoint DB --key K > head.note` keeps it). */
static int cmd_checkpoint(cr_audit *a, const options *o)
{
    uint64_t seq;
    char hex[65], *note = NULL;
    cr_error err = {0};
    if (cr_audit_checkpoint(a, o->key, &seq, hex, &err) != CR_OK ||
        cr_audit_note(a, o->key, o->origin, seq, &note, &err) != CR_OK)
        return fail(&err);
    fputs(note, stdout);
    fprintf(stderr, "checkpoint: seq %" PRIu64 " %s\n", seq, hex);
    free(note);
    return EXIT_OK;
}

static int cmd_prove(cr_audit *a, char **pos, const options *o)
{
    uint64_t x, y = 0;
    char *proof = NULL;
    cr_error err = {0};
    if (!parse_seq(pos[1], &x) || (o->consistency && !parse_seq(pos[2], &y)))
        return usage("prove: not a record number: %s", !parse_seq(pos[1], &x) ? pos[1] : pos[2]);
    if (o->consistency && o->size) return usage("%s", "prove: --size is for inclusion proofs");
    if (o->format && strcmp(o->format, "tlog-proof") != 0)
        return usage("prove: unknown --format %s (tlog-proof is the one)", o->format);
    if (o->format && (o->consistency || !o->checkpoint == !o->key))
        return usage("%s", "prove --format tlog-proof: one record, and --checkpoint NOTE or "
                     "--key FILE");
    if (o->format && o->checkpoint && (o->size || o->origin))
        return usage("%s", "prove: the checkpoint NOTE sets the tree; --size and --origin are "
                     "for --key");
    cr_code rc = o->format ? cr_audit_prove_bundle(a, x, o->checkpoint, o->key, o->origin,
                                                   o->size, &proof, &err)
               : o->consistency ? cr_audit_prove_consistency(a, x, y, &proof, &err)
                                : cr_audit_prove(a, x, o->size, &proof, &err);
    if (rc != CR_OK) return fail(&err);
    fputs(proof, stdout);
    free(proof);
    return EXIT_OK;
}

static int cmd_tiles(cr_audit *a, const options *o)
{
    cr_audit_tiles_report rep;
    cr_error err = {0};
    if (cr_audit_tiles(a, o->out, o->checkpoint, o->key, o->origin, &rep, &err) != CR_OK)
        return fail(&err);
    printf("ok: the tree of %" PRIu64 " records as %" PRIu64 " tiles and %" PRIu64
           " entry bundles in %s (%d files written)\n", rep.size, rep.tiles, rep.bundles,
           o->out, rep.files);
    if (rep.bundles_skipped)
        printf("%" PRIu64 " entry bundles left out, the last %s\n", rep.bundles_skipped,
               rep.skipped);
    return EXIT_OK;
}

static int cmd_verify_bundle(const char *bundle, const options *o)
{
    cr_audit_bundle_report rep;
    cr_error err = {0};
    if (o->checkpoint || o->pubkey || o->old_checkpoint)
        return usage("%s", "verify-proof --policy: the bundle carries its checkpoint, the "
                     "policy its keys");
    cr_code rc = cr_audit_verify_bundle(bundle, o->policy, o->entry, &rep, &err);
    if (rc == CR_ELEDGER) {
        printf("FAIL: %s\n", err.message);
        return EXIT_FAILED;
    }
    if (rc != CR_OK) return fail(&err);
    printf("ok: entry %" PRIu64 " (", rep.index);
    if (rep.seq) printf("record seq %" PRIu64 ", ", rep.seq);
    printf("leaf hash %s) is in the tree of %" PRIu64 " entries of %s; %s%s (quorum %s)\n",
           rep.leaf_hash, rep.size, rep.origin, rep.nwitnesses ? "cosigned by " : "",
           rep.nwitnesses ? rep.witnesses : "no witness cosigned", rep.quorum);
    return EXIT_OK;
}

static int cmd_verify_proof(char **pos, int npos, const options *o)
{
    cr_audit_proof_report rep;
    cr_error err = {0};
    if (npos != 1) return usage("%s", "verify-proof wants one PROOF file");
    if (o->policy) return cmd_verify_bundle(pos[0], o);
    if (o->entry) return usage("%s", "verify-proof: --entry is for a bundle (--policy)");
    if (!o->checkpoint || !o->pubkey)
        return usage("%s", "verify-proof wants --checkpoint NOTE and --pubkey FILE");
    cr_code rc = cr_audit_verify_proof(pos[0], o->checkpoint, o->old_checkpoint, o->pubkey,
                                       &rep, &err);
    if (rc == CR_ELEDGER) {
        printf("FAIL: %s\n", err.message);
        return EXIT_FAILED;
    }
    if (rc != CR_OK) return fail(&err);
    if (rep.consistency)
        printf("ok: the tree of %" PRIu64 " records extends the tree of %" PRIu64
               " records (%s)\n", rep.size, rep.old_size, rep.origin);
    else
        printf("ok: record seq %" PRIu64 " (leaf hash %s) is in the tree of %" PRIu64
               " records (%s)\n", rep.seq, rep.leaf_hash, rep.size, rep.origin);
    return EXIT_OK;
}

/* ---- witness: add-checkpoint over HTTP ------------------------------------------------ */

#define WITNESS_BODY_MAX (128u << 10)   /* a note of 64 KiB and 63 proof lines, with room */

typedef struct {
    char *body;
    size_t len;
    int too_large;
} upload;

static enum MHD_Result witness_reply(struct MHD_Connection *c, unsigned code, char *text,
                                     const char *type)
{
    struct MHD_Response *r = text ? mhd.create_response_from_buffer(strlen(text), text,
                                                                    MHD_RESPMEM_MUST_FREE)
                                  : NULL;
    if (!r) {
        free(text);
        return MHD_NO;
    }
    mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ok = mhd.queue_response(c, code, r);
    mhd.destroy_response(r);
    return ok;
}

static enum MHD_Result witness_request(void *cls, struct MHD_Connection *c, const char *url,
                                       const char *method, const char *version,
                                       const char *data, size_t *data_size, void **state)
{
    upload *u = *state;
    (void)version;
    if (!u) {
        if (!(u = calloc(1, sizeof *u))) return MHD_NO;
        *state = u;
        return MHD_YES;
    }
    if (*data_size) {
        if (u->too_large || u->len + *data_size > WITNESS_BODY_MAX) {
            u->too_large = 1;
        } else {
            char *p = realloc(u->body, u->len + *data_size + 1);
            if (!p) return MHD_NO;
            memcpy(p + u->len, data, *data_size);
            u->body = p;
            u->len += *data_size;
        }
        *data_size = 0;
        return MHD_YES;
    }
    const char *plain = "text/plain; charset=utf-8";
    if (strcmp(url, "/add-checkpoint") != 0)
        return witness_reply(c, MHD_HTTP_NOT_FOUND, strdup("no such path: POST /add-checkpoint\n"),
                             plain);
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return witness_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("add-checkpoint takes POST\n"),
                             plain);
    if (u->too_large)
        return witness_reply(c, MHD_HTTP_CONTENT_TOO_LARGE, strdup("a request is at most 128 KiB\n"),
                             plain);
    char *answer = NULL;
    const char *type = plain;
    unsigned code = cr_witness_add(cls, u->body ? u->body : "", u->len, &answer, &type);
    return witness_reply(c, code, answer, type);
}

static void witness_done(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode why)
{
    upload *u = *state;
    (void)cls, (void)c, (void)why;
    if (u) free(u->body);
    free(u);
    *state = NULL;
}

static int cmd_witness(const options *o)
{
    struct sockaddr_in addr = { .sin_family = AF_INET };
    char host[64];
    const char *colon = o->listen ? strrchr(o->listen, ':') : NULL;
    uint64_t port;
    if (!o->listen || !o->key || !o->origin || !o->policy || !o->state)
        return usage("%s", "witness wants --listen HOST:PORT, --key, --origin, --policy and "
                     "--state");
    if (!colon || (size_t)(colon - o->listen) >= sizeof host || !parse_seq(colon + 1, &port) ||
        port > 65535)
        return usage("witness: --listen %s: want an IPv4 HOST:PORT", o->listen);
    snprintf(host, sizeof host, "%.*s", (int)(colon - o->listen), o->listen);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
        return usage("witness: --listen %s: want an IPv4 HOST:PORT", o->listen);
    addr.sin_port = htons((uint16_t)port);
    cr_error err = {0};
    cr_witness *w = cr_witness_open(o->state, o->policy, o->key, o->origin, &err);
    if (!w) return fail(&err);
    if (cr_mhd_load("calc-audit: witness") < 0) {
        cr_witness_close(w);
        return EXIT_INTERNAL;
    }
    /* the stop signals are waited for, not delivered: every thread has them blocked */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    struct MHD_Daemon *d = mhd.start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ERROR_LOG, 0, NULL, NULL, witness_request, w,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, witness_done, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "calc-audit: witness: cannot listen on %s\n", o->listen);
        cr_witness_close(w);
        return EXIT_INTERNAL;
    }
    const union MHD_DaemonInfo *di = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("calc-audit: witness on http://%s:%u\n", host, di ? di->port : (unsigned)port);
    fflush(stdout);
    int sig;
    sigwait(&stop, &sig);
    mhd.stop_daemon(d);
    cr_witness_close(w);
    fprintf(stderr, "calc-audit: witness stopped\n");
    return EXIT_OK;
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
    if (!strcmp(cmd, "verify-proof")) return cmd_verify_proof(pos, npos, &o);
    if (!strcmp(cmd, "witness")) return npos ? usage("%s", "witness takes options only")
                                             : cmd_witness(&o);
    if (!strcmp(cmd, "vkey")) {
        char *vkey = NULL;
        if (npos != 1) return usage("%s", "vkey wants one public key FILE");
        if (cr_audit_vkey(pos[0], o.origin, o.witness, &vkey, &err) != CR_OK) return fail(&err);
        fputs(vkey, stdout);
        free(vkey);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_INTERNAL;
    }
    static const char *const cmds[] = { "verify", "replay", "show", "export", "head",
                                        "checkpoint", "prove", "init", "tiles", NULL };
    int known = 0;
    for (int i = 0; cmds[i]; i++) known |= !strcmp(cmd, cmds[i]);
    if (!known) return usage("unknown command %s", cmd);
    int want = !strcmp(cmd, "show") ? 2 : !strcmp(cmd, "prove") ? 2 + o.consistency : 1;
    if (npos != want) return usage("%s: wrong number of arguments", cmd);
    if (!strcmp(cmd, "checkpoint") && !o.key) return usage("%s", "checkpoint wants --key FILE");
    if (!strcmp(cmd, "tiles") && (!o.out || !o.checkpoint == !o.key))
        return usage("%s", "tiles wants --out DIR, and --checkpoint NOTE or --key FILE");

    cr_audit *a = cr_audit_open(pos[0], !strcmp(cmd, "init") ? CR_AUDIT_CREATE
                                        : !strcmp(cmd, "checkpoint"), &err);
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
    } else if (!strcmp(cmd, "init")) {
        if (cr_audit_head(a, &seq, hex, &err) != CR_OK) rc = fail(&err);
        else printf("ok: a ledger of %" PRIu64 " records\n", seq);
    } else if (!strcmp(cmd, "head")) {
        if (cr_audit_head(a, &seq, hex, &err) != CR_OK) rc = fail(&err);
        else printf("%" PRIu64 " %s\n", seq, hex);
    } else if (!strcmp(cmd, "prove")) {
        rc = cmd_prove(a, pos, &o);
    } else if (!strcmp(cmd, "tiles")) {
        rc = cmd_tiles(a, &o);
    } else {
        rc = cmd_checkpoint(a, &o);
    }
    cr_audit_close(a);
    if (fflush(stdout) != 0 && rc == EXIT_OK) rc = EXIT_INTERNAL;
    return rc;
}
