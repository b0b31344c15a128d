"""Peers of bench_eval, timed on the same programs in the same run:

* CPython compile()+exec() of each program (a fresh namespace, solution() called when the
  program defines it and the corpus convention applies);
* a safe evaluator the way simpleeval-style tools work: ast.parse + a tree walker over
  decimal.Decimal (exact-ish decimals, no float error), with a whitelist;
* whole-process time of one formula: calc-route against /usr/bin/python3 -I.

usage: python3 bench_eval_peer.py PROGRAMS.jsonl CALC_ROUTE [REPEAT]
"""
import ast
import decimal
import io
import json
import math
import statistics
import subprocess
import sys
import time
import contextlib

D = decimal.Decimal
decimal.getcontext().prec = 34


class Unsupported(Exception):
    pass


class Return(Exception):
    def __init__(self, value):
        self.value = value


SAFE_CALLS = {
    "round": lambda x, n=None: round(x) if n is None else round(x, int(n)),
    "abs": abs, "min": min, "max": max, "sum": sum, "len": len, "int": int, "float": D,
    "range": lambda *a: range(*map(int, a)), "pow": pow, "print": lambda *a, **k: None,
}
MATH = {"sqrt": lambda x: D(x).sqrt(), "exp": lambda x: D(x).exp(), "log": lambda x, b=None:
        D(x).ln() if b is None else D(x).ln() / D(b).ln(), "log10": lambda x: D(x).log10(),
        "pow": lambda x, y: D(x) ** D(y), "pi": D("3.141592653589793238462643383279503"),
        "e": D(1).exp(), "floor": math.floor, "ceil": math.ceil, "fabs": abs}
BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
       ast.Div: lambda a, b: D(a) / D(b), ast.FloorDiv: lambda a, b: a // b,
       ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: D(a) ** D(b) if isinstance(a, D)
       or isinstance(b, D) else a ** b}
CMP = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
       ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


class Walker:
    def __init__(self):
        self.scopes = [{}]
        self.funcs = {}
        self.steps = 0

    def lookup(self, name):
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        if name in SAFE_CALLS:
            return SAFE_CALLS[name]
        raise Unsupported("name " + name)

    def run(self, tree):
        self.block(tree.body)
        if "solution" in self.funcs:
            return self.call_user(self.funcs["solution"], [])
        return self.scopes[0].get("ans")

    def block(self, stmts):
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        self.steps += 1
        if self.steps > 1_000_000:
            raise Unsupported("steps")
        t = type(s)
        if t is ast.Assign:
            v = self.expr(s.value)
            for tg in s.targets:
                self.assign(tg, v)
        elif t is ast.AugAssign:
            cur = self.expr(s.target)
            self.assign(s.target, BIN[type(s.op)](cur, self.expr(s.value)))
        elif t is ast.Expr:
            self.expr(s.value)
        elif t is ast.FunctionDef:
            self.funcs[s.name] = s
            self.scopes[-1][s.name] = s
        elif t is ast.Return:
            raise Return(self.expr(s.value) if s.value else None)
        elif t is ast.If:
            self.block(s.body if self.expr(s.test) else s.orelse)
        elif t is ast.For:
            for item in self.expr(s.iter):
                self.assign(s.target, item)
                self.block(s.body)
        elif t is ast.Import and all(a.name == "math" for a in s.names):
            self.scopes[-1]["math"] = MATH
        elif t is ast.Pass:
            pass
        else:
            raise Unsupported(t.__name__)

    def assign(self, tg, v):
        if type(tg) is ast.Name:
            self.scopes[-1][tg.id] = v
        elif type(tg) in (ast.Tuple, ast.List):
            for a, b in zip(tg.elts, v):
                self.assign(a, b)
        else:
            raise Unsupported("target")

    def call_user(self, fn, args):
        scope = {}
        for a, v in zip(fn.args.args, args):
            scope[a.arg] = v
        self.scopes.append(scope)
        try:
            self.block(fn.body)
        except Return as r:
            return r.value
        finally:
            self.scopes.pop()
        return None

    def expr(self, e):
        t = type(e)
        if t is ast.Constant:
            v = e.value
            if isinstance(v, float):
                return D(repr(v))
            return v
        if t is ast.Name:
            return self.lookup(e.id)
        if t is ast.BinOp:
            return BIN[type(e.op)](self.expr(e.left), self.expr(e.right))
        if t is ast.UnaryOp:
            v = self.expr(e.operand)
            if type(e.op) is ast.USub:
                return -v
            if type(e.op) is ast.Not:
                return not v
            return v
        if t is ast.Compare:
            left = self.expr(e.left)
            for op, c in zip(e.ops, e.comparators):
                right = self.expr(c)
                if not CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if t is ast.BoolOp:
            vals = [self.expr(v) for v in e.values]
            return all(vals) if type(e.op) is ast.And else any(vals)
        if t is ast.IfExp:
            return self.expr(e.body) if self.expr(e.test) else self.expr(e.orelse)
        if t in (ast.List, ast.Tuple):
            return [self.expr(x) for x in e.elts]
        if t is ast.Subscript:
            return self.expr(e.value)[int(self.expr(e.slice))]
        if t is ast.Attribute and type(e.value) is ast.Name and e.value.id == "math":
            return MATH[e.attr]
        if t is ast.JoinedStr:
            out = []
            for part in e.values:
                if type(part) is ast.Constant:
                    out.append(part.value)
                else:
                    spec = self.expr(part.format_spec) if part.format_spec else ""
                    out.append(format(self.expr(part.value), spec))
            return "".join(out)
        if t is ast.Call:
            fn = self.expr(e.func)
            args = [self.expr(a) for a in e.args]
            kw = {k.arg: self.expr(k.value) for k in e.keywords}
            if isinstance(fn, ast.FunctionDef):
                return self.call_user(fn, args)
            if callable(fn):
                return fn(*args, **kw)
        raise Unsupported(t.__name__)


def safe_eval(code):
    return Walker().run(ast.parse(code))


def cpython_run(code):
    g = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<program>", "exec"), g)
        if callable(g.get("solution")):
            g["solution"]()


def best(fn, code, repeat):
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn(code)
        t = min(t, time.perf_counter_ns() - t0)
    return t / 1e3


def main():
    records = [json.loads(l) for l in open(sys.argv[1])]
    programs = [r["program"] for r in records]
    calc = sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    if len(sys.argv) > 4:
        # For callgrind: each program once through the safe evaluator ("safe") or not at
        # all ("none"); instructions per program = (I(safe) - I(none)) / programs.
        if sys.argv[4] == "safe":
            for code in programs:
                try:
                    safe_eval(code)
                except Exception:
                    pass
        print(f"{len(programs)} programs")
        return
    cp, se, ours, ratios, unsupported = [], [], [], [], 0
    for rec, code in zip(records, programs):
        try:
            cp.append(best(cpython_run, code, repeat))
        except Exception:
            pass
        try:
            safe_eval(code)
            t = best(safe_eval, code, repeat)
        except Exception:
            unsupported += 1
            continue
        se.append(t)
        if "cr_run_us" in rec:
            ours.append(rec["cr_run_us"])
            ratios.append(t / rec["cr_run_us"])
    print(f"{'CPython compile()+exec()':46s} {statistics.median(cp):10.2f} "
          f"{statistics.mean(cp):10.2f} {len(cp):8d}")
    print(f"{'safe evaluator (ast + Decimal walker)':46s} {statistics.median(se):10.2f} "
          f"{statistics.mean(se):10.2f} {len(se):8d}   ({unsupported} beyond it)")
    if ours:
        print(f"{'calcroute cr_run on those same programs':46s} {statistics.median(ours):10.2f} "
              f"{statistics.mean(ours):10.2f} {len(ours):8d}")
        print(f"{'safe evaluator / cr_run: ratio of medians':46s} "
              f"{statistics.median(se) / statistics.median(ours):9.1f}x")
        print(f"{'  median of per-program ratios':46s} {statistics.median(ratios):9.1f}x")

    formula = "print((5829 - 5735) / 5735)\n"
    runs = 40

    def whole(cmd, stdin):
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, check=False)
            ts.append((time.perf_counter_ns() - t0) / 1e6)
        return statistics.median(ts)

    # /bin/true is the floor: what starting any process costs here (fork, exec, wait from
    # Python), so that each tool's own start-up and work can be read off beside it.
    floor = whole(["/bin/true"], b"")
    ours = whole([calc, "-"], formula.encode())
    peer = whole(["/usr/bin/python3", "-I", "-c", formula], b"")
    print(f"\nwhole process, one formula, median of {runs} (ms):")
    print(f"{'/bin/true (starting a process, the floor)':44s} {floor:10.2f}")
    print(f"{'calc-route -':44s} {ours:10.2f}   (+{ours - floor:.2f} over the floor)")
    print(f"{'/usr/bin/python3 -I -c':44s} {peer:10.2f}   (+{peer - floor:.2f} over the floor)")
    print(f"{'ratio python3 / calc-route':44s} {peer / ours:10.1f}x")


if __name__ == "__main__":
    main()
