"""The Python peer of bench_dsl: evaluates FinQA DSL programs with Python's decimal module.

Usage: bench_dsl.py [--values] ROUNDS FILE.jsonl...
Each line of each FILE is {"program": "...", "table": [[...], ...] or absent} (the FinQA
corpus files have that shape). Every
round parses and evaluates every program afresh (table cells included) and renders its
value as text, as the C side does, and times the round;
the script prints one line "python-decimal: N programs, median S s per round, R programs/s"
and, with --values, each program's result instead.

The semantics follow FinQA's evaluator with exact decimals: N% is N/100, const_m1 is -1,
#k the result of step k, table cells lose '$' and ',' and everything from '(' on (a cell that
is wholly "( 12 )" is -12), the last row of a name wins, greater gives "yes"/"no", exp is a
power. Decimal precision 34 digits, as the C evaluator's default.
"""
import decimal
import json
import re
import statistics
import sys
import time

D = decimal.Decimal
CTX = decimal.Context(prec=34)
STEP = re.compile(r"\s*(\w+)\s*\(\s*(.*?)\s*,\s*([^,()]*?)\s*\)\s*(?:,|$)")


def number(text):
    t = text.replace(",", "")
    if t.startswith("const_"):
        t = "-1" if t == "const_m1" else t[6:]
    if t.endswith("%"):
        return CTX.divide(D(t[:-1]), D(100))
    return D(t)


def cell(text):
    t = text.replace("$", "").strip()
    if t.startswith("(") and t.endswith(")"):
        t = "-" + t[1:-1].strip()
    t = t.split("(")[0].strip().replace(",", "")
    if t.endswith("%"):
        return CTX.divide(D(t[:-1].strip()), D(100))
    return D(t)


def run(program, table):
    rows = {}
    for row in table or ():
        rows[row[0]] = row[1:]
    res = []
    pos = 0
    while pos < len(program):
        m = STEP.match(program, pos)
        if not m:
            raise ValueError("cannot parse at %d: %r" % (pos, program[pos:pos + 20]))
        pos = m.end()
        op, a, b = m.group(1), m.group(2), m.group(3)
        if op.startswith("table_"):
            vals = [cell(c) for c in rows[a]]
            if op == "table_max":
                v = max(vals)
            elif op == "table_min":
                v = min(vals)
            else:
                v = CTX.add(D(0), sum(vals, D(0)))
                if op == "table_average":
                    v = CTX.divide(v, D(len(vals)))
            res.append(v)
            continue
        x = res[int(a[1:])] if a.startswith("#") else number(a)
        y = res[int(b[1:])] if b.startswith("#") else number(b)
        if op == "add":
            res.append(CTX.add(x, y))
        elif op == "subtract":
            res.append(CTX.subtract(x, y))
        elif op == "multiply":
            res.append(CTX.multiply(x, y))
        elif op == "divide":
            res.append(CTX.divide(x, y))
        elif op == "exp":
            res.append(CTX.power(x, y))
        elif op == "greater":
            res.append("yes" if x > y else "no")
        else:
            raise ValueError("unknown op " + op)
    return res[-1]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = int(args[0])
    items = []
    for path in args[1:]:
        with open(path, encoding="utf-8") as f:
            items.extend(json.loads(line) for line in f)
    if "--values" in sys.argv:
        for it in items:
            try:
                print(run(it["program"], it.get("table")))
            except Exception as e:  # one line per program, whatever happens
                print("error: %s" % e)
        return
    times = []
    failed = 0
    for it in items:   # warm-up, untimed, as the C side does: regex and decimal caches
        try:
            str(run(it["program"], it.get("table")))
        except Exception:
            pass
    for _ in range(rounds):
        t0 = time.perf_counter()
        failed = 0
        for it in items:
            try:
                str(run(it["program"], it.get("table")))   # the C side renders its value too
            except Exception:
                failed += 1
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print("python-decimal: %d programs (%d failed), median %.6f s per round, %.0f programs/s"
          % (len(items), failed, med, len(items) / med))


if __name__ == "__main__":
    main()
