/* audit/audit.h: the audit ledger: one chained, durable record per request in SQLite.
 *
 * The router fills an audit_record and calls audit_append(); the call returns only after the
 * record committed durably (WAL, synchronous=FULL, BEGIN IMMEDIATE, busy timeout), so a result
 * handed to a caller always has its record on disk. Concurrent appends of one handle share a
 * commit; appends from several processes serialize.
 *
 * Chain: hash(n) = SHA-256(AUDIT_TAG_RECORD || hash(n-1) || audit_encode(record n)), with
 * hash(0) = 32 zero bytes. The encoding (audit_encode) is length-prefixed fields in the fixed
 * order of audit_record below, never JSON as some printer happened to lay it out. Format 1,
 * all integers big-endian:
 *   u32 format (1) | u64 seq | u32 field count (21) | the 21 fields in struct order, each
 *   0x00 (absent string) | 0x01 u64 length, bytes (string) | 0x02 i64 (integer field)
 * The tag is hashed without its NUL. Changing any of this needs a new format number.
 */
#ifndef CR_AUDIT_H
#define CR_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/common.h"

#define AUDIT_HASH_LEN 32
#define AUDIT_FORMAT_VERSION 1      /* of the canonical encoding; stored in every row */
#define AUDIT_SCHEMA_VERSION 1      /* of the SQLite schema; stored in table schema_version */
/* SQLite's application_id of a ledger ("CRLG"): a file tagged by another program is refused
 * before its schema is read. Ledgers made before the tag carry 0 and are known by schema. */
#define AUDIT_APPLICATION_ID 0x43524C47
/* Domain tags keep a record hash from ever being confused with a checkpoint message. */
#define AUDIT_TAG_RECORD "calcroute/audit/record/v1"
#define AUDIT_TAG_CHECKPOINT "calcroute/audit/checkpoint/v1"

/* One record, flat. Every string is (pointer, byte length): bytes are taken as they are (no
 * NUL needed, NULs allowed). A NULL pointer means "absent" and is encoded differently from an
 * empty string (non-NULL pointer, length 0); the record is only borrowed by audit_append().
 * Set a C string with AUDIT_SET(rec, field, s).
 *
 * What the fields hold (replay, router/replay.c, relies on the marked ones):
 *   request_id       caller's or generated id, free text
 *   time_us          microseconds since the Unix epoch, UTC; 0: audit_append() uses now
 *   engine_version   CR_VERSION_STRING
 *   grammar_version  the tree-sitter-python version from grammars/…/VERSION
 *   lang           * "python" or "dsl"
 *   code           * the full code as submitted
 *   bindings       * JSON object that cr_request_set_vars_json() accepts and that rebuilds the
 *                    same variables (numbers as their exact decimal text); NULL: none
 *   tables         * JSON that cr_request_set_table_json() accepts; NULL: none
 *   policy         * JSON object; replay reads "precision" (integer), "rounding"
 *                    ("half-even" | "half-up"), "answer_vars" ("a,b,c" or a list) and
 *                    "seed" (integer: what a sandboxed run drew from); the rest is for
 *                    readers
 *   route          * cr_route_name(): "inprocess", "ns", "kvm", "rejected"
 *   reasons          JSON list of {code, line, col, snippet}
 *   status         * cr_code of the result (CR_OK, CR_EPY_*, CR_ELIMIT, ...)
 *   value_*        * final value: fraction "p/q" or "p", repr, type name, exact flag
 *                    (value_exact: 1 exact, 0 rounded, -1 no value); NULL strings: no value
 *   out, err_out   * stdout and stderr bytes
 *   error          * JSON object {type, message, line, col}, for CR_ELIMIT the limit
 *                    {name, message, line, col}, or NULL when status is CR_OK
 *   artifacts        JSON list of {name, size, sha256, path, name_base64}
 *   timings          JSON object of phase -> microseconds (not compared by replay)
 */
typedef struct {
    const char *request_id;      size_t request_id_len;
    int64_t time_us;
    const char *engine_version;  size_t engine_version_len;
    const char *grammar_version; size_t grammar_version_len;
    const char *lang;            size_t lang_len;
    const char *code;            size_t code_len;
    const char *bindings;        size_t bindings_len;
    const char *tables;          size_t tables_len;
    const char *policy;          size_t policy_len;
    const char *route;           size_t route_len;
    const char *reasons;         size_t reasons_len;
    int64_t status;
    const char *value_fraction;  size_t value_fraction_len;
    const char *value_repr;      size_t value_repr_len;
    const char *value_type;      size_t value_type_len;
    int64_t value_exact;
    const char *out;             size_t out_len;         /* stdout */
    const char *err_out;         size_t err_out_len;     /* stderr */
    const char *error;           size_t error_len;
    const char *artifacts;       size_t artifacts_len;
    const char *timings;         size_t timings_len;
} audit_record;

/* Points a field at a C string (or NULL for absent); the string is borrowed. */
#define AUDIT_SET(rec, field, s) \
    ((rec)->field = (s), (rec)->field##_len = (rec)->field ? strlen((rec)->field) : 0)

/* A stored row: the record plus its place in the chain. Strings point into SQLite's row
 * buffers: valid until the next audit_iter_next() or audit_iter_close(). */
typedef struct {
    uint64_t seq;
    int64_t format;
    audit_record rec;
    uint8_t prev_hash[AUDIT_HASH_LEN];
    uint8_t hash[AUDIT_HASH_LEN];
    size_t prev_hash_len, hash_len;   /* as stored: a tampered row may hold other lengths */
    char bad[96];                     /* "" or the first column of the wrong storage class */
} audit_entry;

typedef struct audit_db audit_db;
typedef struct audit_iter audit_iter;

enum {
    AUDIT_OPEN_CREATE = 1,    /* create the file and the schema when missing */
    AUDIT_OPEN_READONLY = 2,  /* verify, show, export: never write */
};

/* Opens (and with AUDIT_OPEN_CREATE sets up) a ledger. On CR_OK *out is the caller's, to
 * close with audit_close(); on failure *out is NULL and err names the step (CR_EAUDIT). */
cr_code audit_open(const char *path, int flags, audit_db **out, cr_error *err);
void audit_close(audit_db *db);                        /* NULL is a no-op */

/* Appends one record; returns after the commit that holds it is durable. Thread-safe: the
 * appends of many threads on one handle share commits (group commit: whichever thread finds
 * no commit under way writes every queued record, up to AUDIT_GROUP_MAX, in one transaction,
 * one fsync, while the others wait for it). On CR_OK, *seq (when non-NULL) and hash (when
 * non-NULL) receive the new record's seq and hash. On failure nothing of this record was
 * appended. `rec` is only borrowed. The handle's other functions are for one thread at a
 * time. */
cr_code audit_append(audit_db *db, const audit_record *rec, uint64_t *seq,
                     uint8_t hash[AUDIT_HASH_LEN], cr_error *err);
/* Appends n records in one transaction (all or none); *first_seq receives the first seq and
 * last_hash the hash of the last record. */
cr_code audit_append_batch(audit_db *db, const audit_record *recs, size_t n,
                           uint64_t *first_seq, uint8_t last_hash[AUDIT_HASH_LEN],
                           cr_error *err);

/* The last record: seq 0 and 32 zero bytes when the ledger is empty. */
cr_code audit_head(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN], cr_error *err);

/* Canonical encoding of `rec` as record `seq` (appended to `out`), and the chain hash. */
cr_code audit_encode(const audit_record *rec, uint64_t seq, cr_buf *out);
void audit_chain_hash(const uint8_t prev[AUDIT_HASH_LEN], const void *enc, size_t len,
                      uint8_t out[AUDIT_HASH_LEN]);

/* Rows with from <= seq <= to (to 0: to the end), in seq order. On CR_OK *out is the
 * caller's: audit_iter_close(). audit_iter_next() returns 1 with *e filled, 0 at the end, or
 * -1 with err filled. */
cr_code audit_iter_open(audit_db *db, uint64_t from, uint64_t to, audit_iter **out,
                        cr_error *err);
int audit_iter_next(audit_iter *it, audit_entry *e, cr_error *err);
void audit_iter_close(audit_iter *it);                 /* NULL is a no-op */

/* The one way in for readers above the ledger (router/replay.c): the records from..to (to 0:
 * to the end) of the ledger behind a public handle, handed to each() in seq order (the entry
 * as audit_iter_next() gives it, valid during the call; a code other than CR_OK stops the
 * walk and is returned). A range reaching past the last record is refused before any record
 * is read: CR_ELEDGER, "WHAT: no record with seq N (the ledger ends at M)". */
cr_code audit_walk(cr_audit *a, const char *what, uint64_t from, uint64_t to,
                   cr_code (*each)(const audit_entry *e, void *arg), void *arg, cr_error *err);

/* One row as a JSON object (appended to `out`): fields by name, JSON fields embedded as JSON
 * when they parse, hashes as hex, time as ISO 8601 too. */
cr_code audit_entry_json(const audit_entry *e, cr_buf *out, cr_error *err);

/* Recomputes the chain from seq 1 and checks the checkpoints (see cr_audit_verify() in
 * calcroute.h). pubkey: 32 bytes, or NULL to check every checkpoint against its own key.
 * CR_OK when the check ran; rep->ok says whether the ledger passed. */
cr_code audit_verify(audit_db *db, const uint8_t *pubkey, cr_audit_report *rep, cr_error *err);

/* Signs the head (Ed25519 over AUDIT_TAG_CHECKPOINT, seq, head hash, time) with the 64-byte
 * libsodium secret key and stores the checkpoint. */
cr_code audit_checkpoint(audit_db *db, const uint8_t sk[64], uint64_t *seq,
                         uint8_t head[AUDIT_HASH_LEN], cr_error *err);
/* Writes key_path (secret key, hex, 0600) and key_path.pub (public key, hex); never
 * overwrites. */
cr_code audit_keygen(const char *key_path, cr_error *err);
/* Reads an n-byte key written by audit_keygen(). */
cr_code audit_key_read(const char *path, uint8_t *key, size_t n, cr_error *err);

/* ---- the transparency-log view (audit/merkle.c) ----------------------------------------
 * The records are the leaves of an RFC 6962 Merkle tree: leaf i is record seq i + 1, its data
 * the record's canonical encoding. Checkpoints are C2SP tlog-checkpoint signed notes (origin,
 * tree size, base64 root; Ed25519 signature line with the signed-note key ID); proofs are
 * text: a header line, sizes, (inclusion) the record's encoding in base64, then one base64
 * hash per line. */

typedef struct {
    char origin[256], key_name[256];
    uint64_t size;
    uint8_t root[AUDIT_HASH_LEN];
} audit_tree;

enum { AUDIT_PROOF_INCLUSION = 1, AUDIT_PROOF_CONSISTENCY = 2 };
typedef struct {
    int kind;                       /* AUDIT_PROOF_* */
    uint64_t seq, size, old_size;   /* seq: the proven record (inclusion) */
    uint8_t leaf[AUDIT_HASH_LEN];   /* its leaf hash (inclusion) */
} audit_proof_result;

void audit_leaf_hash(const void *data, size_t len, uint8_t out[AUDIT_HASH_LEN]);
/* MTH of n leaf hashes; PATH(index) and PROOF(m) of RFC 6962 into out (at most 64 hashes),
 * their length returned. */
void audit_tree_root(const uint8_t (*leaves)[AUDIT_HASH_LEN], uint64_t n,
                     uint8_t out[AUDIT_HASH_LEN]);
size_t audit_inclusion_path(const uint8_t (*leaves)[AUDIT_HASH_LEN], uint64_t n,
                            uint64_t index, uint8_t (*out)[AUDIT_HASH_LEN]);
size_t audit_consistency_path(const uint8_t (*leaves)[AUDIT_HASH_LEN], uint64_t n, uint64_t m,
                              uint8_t (*out)[AUDIT_HASH_LEN]);
/* RFC 9162's checks (2.1.3.2, 2.1.4.2): 1 when the proof holds. */
int audit_inclusion_check(uint64_t index, uint64_t size, const uint8_t leaf[AUDIT_HASH_LEN],
                          const uint8_t (*path)[AUDIT_HASH_LEN], size_t np,
                          const uint8_t root[AUDIT_HASH_LEN]);
int audit_consistency_check(uint64_t first, uint64_t second,
                            const uint8_t first_root[AUDIT_HASH_LEN],
                            const uint8_t second_root[AUDIT_HASH_LEN],
                            const uint8_t (*path)[AUDIT_HASH_LEN], size_t np);

/* The leaf hashes of records 1..*size (*size 0: every record; then *size is set), in one
 * allocation the caller frees. CR_ELEDGER when the ledger holds fewer records or a row is
 * out of place (verify says more). */
cr_code audit_tree_leaves(audit_db *db, uint64_t *size, uint8_t (**out)[AUDIT_HASH_LEN],
                          cr_error *err);
/* The root of records 1..*size (*size 0: all of them, and *size is set). */
cr_code audit_tree_head(audit_db *db, uint64_t *size, uint8_t root[AUDIT_HASH_LEN],
                        cr_error *err);
/* "calcroute.audit/" and 16 hex digits of SHA-256(pk): the origin when none is given. */
void audit_default_origin(const uint8_t pk[32], char *out, size_t n);
/* The signed note of (origin, size, root), appended to out; the key name is the origin. */
cr_code audit_note_sign(const char *origin, uint64_t size, const uint8_t root[AUDIT_HASH_LEN],
                        const uint8_t sk[64], cr_buf *out, cr_error *err);
/* A note's parts: *text_end is just past the text's last newline (the blank line follows;
 * then the signature lines). CR_ELEDGER for a note no signed-note reader accepts. */
cr_code audit_note_split(const char *note, size_t len, const char **text_end, cr_error *err);
/* One signature line: its key name (in the note), key ID, and the len bytes after the ID
 * (sig holds the first of them: an Ed25519 signature, with a cosignature's timestamp). */
typedef struct {
    const char *name;
    size_t name_len, len;
    uint8_t id[4], sig[8 + 64];
} audit_note_sig;
/* The next signature line of [*p, end): 1 with s filled, 0 at the end, -1 with *why naming
 * what is malformed. */
int audit_note_sig_next(const char **p, const char *end, audit_note_sig *s, const char **why);
/* The checkpoint's three lines (origin, size, root) of a note's text; key_name left empty. */
cr_code audit_note_text(const char *note, const char *text_end, audit_tree *t, cr_error *err);
/* Signed-note signature types (the key ID's type byte). */
#define AUDIT_SIG_ED25519 0x01
#define AUDIT_SIG_COSIGNATURE 0x04   /* tlog-cosignature's timestamped Ed25519 */
void audit_key_id(const char *name, size_t len, uint8_t type, const uint8_t pk[32],
                  uint8_t id[4]);
/* Parses a note and checks the signature by pk (the first line whose name and key ID are
 * pk's decides). CR_ELEDGER naming what is wrong. */
cr_code audit_note_open(const char *note, size_t len, const uint8_t pk[32], audit_tree *t,
                        cr_error *err);
/* Proofs of record seq in the tree of `size` records (0: all), and of the tree of old_size
 * records being a prefix of the one of new_size (0: all), appended to out as text. */
cr_code audit_prove_inclusion(audit_db *db, uint64_t seq, uint64_t size, cr_buf *out,
                              cr_error *err);
cr_code audit_prove_consistency(audit_db *db, uint64_t old_size, uint64_t new_size, cr_buf *out,
                                cr_error *err);
/* Checks a proof's text against the verified checkpoint t (and for a consistency proof the
 * verified old one). CR_OK when it holds; CR_ELEDGER naming why not. */
cr_code audit_proof_check(const char *proof, size_t len, const audit_tree *t,
                          const audit_tree *old, audit_proof_result *res, cr_error *err);
/* ---- bundles to carry away (audit/tlog.c) ----------------------------------------------
 * C2SP tlog-proof bundles of one record, checked against a C2SP tlog-policy; keys as
 * signed-note verifier keys ("name+hex key ID+base64(type || public key)"). */
typedef struct {
    char name[256];
    size_t name_len;
    uint8_t type, id[4], pk[32];
} audit_vkey;
/* 1 when s is a vkey of a 32-byte key whose key ID is the one the spec computes. */
int audit_vkey_parse(const char *s, size_t len, audit_vkey *k);
/* The vkey of (name, type, pk) and a newline, appended to out. */
cr_code audit_vkey_format(const char *name, uint8_t type, const uint8_t pk[32], cr_buf *out,
                          cr_error *err);
typedef struct audit_policy audit_policy;
/* A policy's text: `log VKEY [URL]`, `witness NAME VKEY [URL]`, `group NAME all|any|K
 * MEMBER...`, `quorum NAME|none`, comments and blank lines. At least one log, exactly one
 * quorum; names defined before use. CR_EUSAGE naming the line and what is wrong. */
cr_code audit_policy_parse(const char *text, size_t len, audit_policy **out, cr_error *err);
void audit_policy_free(audit_policy *p);
/* The policy's i-th witness (from 0): its name, and in *url its URL ("" when none); NULL past
 * the last. */
const char *audit_policy_witness(const audit_policy *p, int i, const char **url);
/* The bundle of record seq against the checkpoint note (verbatim, cosignatures and all):
 * the tree is the note's size, and its root must be this ledger's. */
cr_code audit_bundle_make(audit_db *db, uint64_t seq, const char *note, size_t note_len,
                          cr_buf *out, cr_error *err);
typedef struct {
    uint64_t index, size, seq;       /* seq: the record the extra data names, or 0 */
    uint8_t leaf[AUDIT_HASH_LEN];
    char origin[256], quorum[256];
    char witnesses[2048];            /* the names of the policy's witnesses that cosigned */
    int nwitnesses;
    int origin_unknown;              /* the checkpoint's origin is no log of the policy */
} audit_bundle_result;
/* A checkpoint note against the policy (t: its three lines): signed by the log its origin
 * names, every signature by a key the policy names valid (the log's Ed25519, the witnesses'
 * tlog-cosignatures), the quorum met. CR_ELEDGER naming the first thing that does not
 * hold. */
cr_code audit_checkpoint_check(const char *note, size_t len, const audit_policy *pol,
                               audit_tree *t, audit_bundle_result *res, cr_error *err);
/* The tlog-cosignature line (Ed25519, type 4) of the note text [text, text + tlen) by the
 * witness `name` at POSIX time `when`, newline-ended, appended to out. */
cr_code audit_cosign(const char *name, const uint8_t sk[64], uint64_t when, const char *text,
                     size_t tlen, cr_buf *out, cr_error *err);
/* Checks a bundle against the policy; entry_leaf: the leaf hash of the entry the verifier
 * holds, or NULL to take the one the extra data names. CR_ELEDGER naming the first thing
 * that does not hold. */
cr_code audit_bundle_check(const char *bundle, size_t len, const audit_policy *pol,
                           const uint8_t *entry_leaf, audit_bundle_result *res, cr_error *err);

/* ---- asking witnesses (audit/witness.c) ---------------------------------------------- */
/* The note with the cosignature lines of every witness of the policy that has a URL and
 * cosigned it (tlog-witness add-checkpoint, with the consistency proof from the size it
 * holds), appended to out; *got counts them, and why names each witness that did not. An
 * error only when the note or the ledger cannot be read. */
cr_code audit_cosigners_gather(cr_cosigners *c, audit_db *db, const char *note, cr_buf *out,
                               int *got, char *why, size_t why_len, cr_error *err);

/* ---- tiles (audit/tiles.c) ------------------------------------------------------------ */
typedef struct {
    uint64_t size, tiles, bundles, bundles_skipped;
    int files;                 /* files written: the rest were there already */
    char skipped[256];         /* the last entry bundle left out, and why */
} audit_tiles_report;
/* Writes the C2SP tlog-tiles of the tree the checkpoint note signs (its root must be this
 * ledger's) under dir: tile/L/N[.p/W], tile/entries/N[.p/W], and the note as `checkpoint`,
 * last. An entry bundle holding a record over 65535 bytes is left out (the format's u16
 * length), named in rep. */
cr_code audit_tiles_write(audit_db *db, const char *note, size_t note_len, const char *dir,
                          audit_tiles_report *rep, cr_error *err);
/* The tile's path: level -1 is the entry bundles; width 0 or 256 a full tile. 1 when it fit
 * in cap bytes. */
int audit_tile_path(char *out, size_t cap, int level, uint64_t n, unsigned width);

/* The whole of a regular file of at most max bytes (NUL-ended; the caller frees). */
cr_code audit_file_read(const char *path, size_t max, char **out, size_t *len, cr_error *err);
#define AUDIT_NOTE_MAX (64u << 10)
#define AUDIT_PROOF_MAX (512u << 20)   /* an inclusion proof carries its record in base64 */

/* Hex of a hash into a 65-byte buffer. */
void audit_hex(const uint8_t hash[AUDIT_HASH_LEN], char hex[2 * AUDIT_HASH_LEN + 1]);

#endif
