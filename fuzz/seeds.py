"""Writes the seed corpus of every fuzz target into OUT/<target>/, one file per input.

Sources: the snippets the unit tests already use (every C string literal of the test files
that feed a target) and a deterministic sample of the external corpora (../shared/corpus by
default): Python programs, FinQA programs with their tables, table cells, format specs found
in the programs, and batch request lines built from both. Nothing here is committed: the
Makefile rebuilds it under build/ when a source changes.

usage: seeds.py --corpus DIR --out DIR [--max-programs N]
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import sys

# Which test files hold snippets for which targets.
TEST_SOURCES = {
    "python": ["tests/test_eval.c", "tests/test_parser.c", "tests/test_hardening.c",
               "tests/test_fastpath.c"],
    "dsl": ["tests/test_dsl.c"],
    "format": ["tests/test_num.c"],
}
MAX_SEED_BYTES = 8192        # libFuzzer's -max_len for the program targets (fuzz/run.sh)
FORMAT_INT, FORMAT_FLOAT = 1, 6   # FORMAT_VALUES in fuzz/fuzz_format.c: 7 and 1/3

C_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
C_ADJACENT = re.compile(r'"\s*"')
C_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, '"': 34, "'": 39, "a": 7, "b": 8,
             "f": 12, "v": 11, "?": 63}


def c_unescape(body):
    """The bytes of a C string literal's body."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        if e == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(int(m.group(0), 8) & 0xFF)
            i += 1 + len(m.group(0))
        else:
            out.append(C_ESCAPES.get(e, ord(e)))
            i += 2
    return bytes(out)


def c_literals(path):
    """Every string literal of a C file, adjacent literals joined as the compiler does."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return []
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"^\s*#\s*include[^\n]*", "", text, flags=re.M)
    text = C_ADJACENT.sub("", text)
    return [c_unescape(m.group(1)) for m in C_STRING.finditer(text) if m.group(1)]


def read_jsonl(path):
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    yield json.loads(line)
    except OSError:
        return


def sample(items, n):
    """n items chosen by content hash: the same sample on every machine, spread over sources."""
    uniq = {hashlib.sha1(x).hexdigest(): x for x in items}
    return [uniq[k] for k in sorted(uniq)[:n]]


FSTRING_SPEC = re.compile(r"\{[^{}:'\"]+:([^{}'\"]{1,20})\}")
FORMAT_CALL = re.compile(r"format\([^,()]+,\s*['\"]([^'\"]{0,20})['\"]\)")


def table_tsv(table):
    return "\n".join("\t".join(str(c) for c in row) for row in table).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-programs", type=int, default=400)
    a = ap.parse_args()

    seeds = {t: [] for t in ("fuzz_python", "fuzz_parser", "fuzz_fastpath", "fuzz_dsl",
                             "fuzz_dsl_eval", "fuzz_format", "fuzz_cell", "fuzz_request")}
    py_tests = [s for f in TEST_SOURCES["python"] for s in c_literals(f)]
    dsl_tests = [s for f in TEST_SOURCES["dsl"] for s in c_literals(f)]
    fmt_tests = [s for f in TEST_SOURCES["format"] for s in c_literals(f) if len(s) <= 24]
    seeds["fuzz_python"] += py_tests
    seeds["fuzz_parser"] += py_tests
    seeds["fuzz_fastpath"] += py_tests
    seeds["fuzz_dsl"] += dsl_tests
    seeds["fuzz_dsl_eval"] += dsl_tests
    seeds["fuzz_cell"] += [s for s in dsl_tests if len(s) <= 40]

    programs, specs = [], []
    pydir = os.path.join(a.corpus, "python")
    for name in sorted(os.listdir(pydir)) if os.path.isdir(pydir) else []:
        for rec in read_jsonl(os.path.join(pydir, name)):
            prog = rec.get("program")
            if isinstance(prog, str) and len(prog.encode()) <= MAX_SEED_BYTES:
                programs.append(prog.encode())
                specs += FSTRING_SPEC.findall(prog) + FORMAT_CALL.findall(prog)
    programs = sample(programs, a.max_programs)
    seeds["fuzz_python"] += programs
    seeds["fuzz_parser"] += programs
    seeds["fuzz_fastpath"] += programs
    for spec in set(s.encode() for s in specs) | set(fmt_tests):
        seeds["fuzz_format"] += [bytes([FORMAT_INT]) + spec, bytes([FORMAT_FLOAT]) + spec]

    finqa, cells = [], []
    fqdir = os.path.join(a.corpus, "finqa")
    for name in sorted(os.listdir(fqdir)) if os.path.isdir(fqdir) else []:
        for rec in read_jsonl(os.path.join(fqdir, name)):
            prog, table = rec.get("program"), rec.get("table")
            if not isinstance(prog, str):
                continue
            finqa.append((prog, table))
            seeds["fuzz_dsl"].append(prog.encode())
            seeds["fuzz_dsl_eval"].append(prog.encode() + (b"\0" + table_tsv(table)
                                                           if table else b""))
            for row in table or []:
                cells += [str(c).encode() for c in row[1:]]
    seeds["fuzz_cell"] += sample(cells, 2000)

    requests = [json.dumps({"code": p, "lang": "dsl", **({"table": t} if t else {})}).encode()
                for p, t in finqa if t]
    requests = sample(requests, 300)
    requests += sample([json.dumps({"code": p.decode(), "lang": "python"}).encode()
                        for p in programs], 300)
    requests += [
        b'{"code": "ans = x * 3", "vars": {"x": 0.1}}',
        b'{"code": "ans = r", "vars": {"r": [1, 2.5, "a", {"k": null}], "b": true}, "id": 7}',
        b'{"code": "ans = 2 ** 0.5", "precision": 50, "rounding": "half-up"}',
        b'{"code": "total = 1\\nres = total + 1", "answer_vars": "res,total"}',
        b'{"code": "divide(5, table_sum(a, none))", "lang": "auto", '
        b'"table": [["a", "$ 1", "( 2 )"]]}',
    ]
    seeds["fuzz_request"] += requests

    # fuzz_audit: edits of a genuine ledger, each row | column | kind | length | bytes
    # (fuzz/fuzz_audit.c): rows 0-3 stored records, 4 a new copied row, 5 a deletion;
    # columns in the records table's order; kinds NULL, integer, text, blob.
    def edit(row, col, kind, data=b""):
        return bytes([row, col, kind, len(data)]) + data
    seeds["fuzz_audit"] = [
        b"",
        edit(0, 7, 2, b"ans = 2"),                        # code
        edit(0, 7, 2, b"def solution():\n    return 1 / 3\n"),
        edit(1, 13, 1, (5).to_bytes(8, "little")),        # status
        edit(1, 8, 2, b'{"x": 1e999}'),                   # bindings
        edit(1, 9, 2, b'[["a", "(1)"], 7]'),              # tables
        edit(0, 10, 2, b'{"precision": 5000, "rounding": "up"}'),   # policy
        edit(3, 20, 2, b'{"type": 1}'),                   # error
        edit(0, 11, 2, b"ns"),                            # route
        edit(0, 23, 3, b"\x00" * 5),                      # prev_hash, short
        edit(2, 0, 1, (9).to_bytes(8, "little")),         # seq: a gap
        edit(4, 24, 3, b"\xff" * 32),                     # a new row with a forged hash
        edit(5, 0, 1) + edit(0, 1, 1, (2).to_bytes(8, "little")),   # delete, format 2
        edit(3, 14, 2, b"1/0") + edit(3, 17, 0),          # value_fraction, value_exact NULL
    ]

    # fuzz_mutate: bytes that fuzz/fuzz_mutate.c reads as a grammar (list, dict and set
    # sizes and items, then site, mutation and source triples): each site once with each
    # mutation, over a source that varies with both, on small non-empty containers.
    nsite, nmut, nsrc = 23, 23, 12   # SITES, MUTATIONS, SOURCES in fuzz/fuzz_mutate.c
    seeds["fuzz_mutate"] = [bytes([3, 2, 2, 3, 1, 2, 5, 6, site, mut, (site + mut) % nsrc])
                            for site in range(nsite) for mut in range(nmut)]

    # fuzz_doorbell: XOR masks over a well-formed result page (fuzz/fuzz_doorbell.c): the
    # empty mask is the good page; the others break its header, spans and flags.
    seeds["fuzz_doorbell"] = [b"", b"\x01", b"\x00" * 8 + b"\x10", b"\x00" * 44 + b"\x02",
                              b"\x00" * 56 + b"\xff\xff", b"\x00" * 60 + b"\x00\x10"]

    # fuzz_tlog: a selector byte (proof kind, which text is mutated) and an XOR mask over a
    # genuine note or proof (fuzz/fuzz_tlog.c): each selector with the empty mask verifies.
    seeds["fuzz_tlog"] = [bytes([sel]) for sel in range(6)] + [
        bytes([sel]) + b"\x00" * at + b"\x01" for sel in range(6) for at in (0, 17, 40, 60)]

    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    for target, items in seeds.items():
        d = os.path.join(a.out, target)
        os.makedirs(d)
        for s in set(items):
            with open(os.path.join(d, hashlib.sha1(s).hexdigest()), "wb") as f:
                f.write(s)
        print(f"{target}: {len(set(items))} seeds", file=sys.stderr)
    if not programs:
        print(f"seeds: no corpus under {a.corpus}: unit-test seeds only", file=sys.stderr)


if __name__ == "__main__":
    main()
