"""Writes tests/data/arity_cpython.tsv: what CPython raises for a call of each FUNC row of
ir/subset.def with one positional argument too many (hi + 1) and, when lo > 0, one
too few (lo - 1). Run from the repository's top with the interpreter to compare with:

    /usr/bin/python3 tests/tools/arity_cpython.py > tests/data/arity_cpython.tsv

Every argument is the int 1. Each line: module, name, count, then "Type: message", "ok"
when the call raised nothing, or "!reason" when the module cannot be imported here."""
import importlib
import re
import sys

ROW = re.compile(r'^(?:FUNC\((\w+), "(\w+)", \w+, \w+, (\d+), (\w+), \w+,\s*"[^"]*"\)'
                 r'|EXC\((\w+), "(\w+)", \w+, "[^"]*"\))', re.M)
MODS = {}
for m in re.finditer(r'^MODULE\((\w+), "([\w.]+)"\)', open("ir/subset.def").read(), re.M):
    MODS[m.group(1)] = m.group(2)

print(f"# {sys.executable} {sys.version.split()[0]}: tests/tools/arity_cpython.py")
for m in ROW.finditer(open("ir/subset.def").read()):
    if m.group(5):
        continue   # an exception class: any count
    mod, name, lo, hi = MODS[m.group(1)], m.group(2), int(m.group(3)), m.group(4)
    counts = ([] if hi == "AR_MANY" else [int(hi) + 1]) + ([lo - 1] if lo > 0 else [])
    for k in counts:
        try:
            f = getattr(importlib.import_module(mod), name)
        except ImportError as e:
            print(f"{mod}\t{name}\t{k}\t!{e}")
            continue
        try:
            f(*[1] * k)
            got = "ok"
        except Exception as e:
            got = f"{type(e).__name__}: {e}"
        print(f"{mod}\t{name}\t{k}\t{got}")
