"""Writes tests/data/kwargs_cpython.tsv: how CPython binds arguments to each FUNC row of
ir/subset.def, by position and by keyword. Run from the repository's top with the
interpreter to compare with:

    /usr/bin/python3 tests/tools/kwargs_cpython.py > tests/data/kwargs_cpython.tsv

Lines:
  sig <TAB> module <TAB> name <TAB> CPython's parameters as inspect.signature gives them,
      without defaults ("(x, /)"), or "!reason" when it has none
  call <TAB> module <TAB> expression <TAB> repr of its value, "ok" for None, or
      "Type: message"
The calls come from the row's sig (the parameter names the registry claims) and a sample
value for each parameter (SAMPLES below): every parameter given by position, each tail of
them by keyword (in order and reversed), each one both ways, an unknown keyword, the
required ones missing, and too many keywords. What CPython answers, the evaluator must."""
import contextlib
import importlib
import inspect
import io
import re
import sys

# Positional samples for a row's parameters in order; a dict gives keyword-only ones.
# Results are exact (the evaluator's repr of an inexact value has more digits).
SAMPLES = {
    "builtins.abs": ["-2"], "builtins.all": ["[1, 0]"], "builtins.any": ["[1, 0]"],
    "builtins.bool": ["3"], "builtins.dict": ["[(1, 2)]"], "builtins.divmod": ["7", "2"],
    "builtins.enumerate": ["'ab'", "5"], "builtins.filter": ["None", "[0, 1]"],
    "builtins.float": ["'1.5'"], "builtins.format": ["2.5", "'.2f'"],
    "builtins.int": ["'ff'", "16"], "builtins.isinstance": ["1", "int"],
    "builtins.len": ["[1, 2]"], "builtins.list": ["'ab'"], "builtins.map": ["abs", "[-1]"],
    "builtins.max": ["[3, 1, 2]", {"key": "abs", "default": "0"}],
    "builtins.min": ["[3, 1, 2]", {"key": "abs", "default": "0"}],
    "builtins.pow": ["3", "4", "5"], "builtins.print": ["1", {"sep": "'-'", "end": "''"}],
    "builtins.range": ["1", "9", "3"], "builtins.repr": ["'a'"],
    "builtins.reversed": ["[1, 2]"], "builtins.round": ["2.5", "0"],
    "builtins.set": ["[1, 1]"],
    "builtins.sorted": ["[3, 1, 2]", {"key": "abs", "reverse": "True"}],
    "builtins.str": ["12"], "builtins.sum": ["[1, 2]", "10"], "builtins.tuple": ["'ab'"],
    "builtins.zip": ["[1]", {"strict": "True"}],
    "math.log": ["8", "2"], "math.pow": ["2", "3"], "math.comb": ["5", "2"],
    "math.perm": ["5", "2"], "math.factorial": ["5"], "math.fsum": ["[0.5, 0.25]"],
    "math.isclose": ["1", "1.5", {"rel_tol": "0.5", "abs_tol": "0.0"}],
    "math.prod": ["[2, 3]", {"start": "2"}],
    "math.exp": ["0"], "math.log10": ["100"], "math.log2": ["8"], "math.erf": ["0"],
    "math.erfc": ["0"], "math.sin": ["0"], "math.cos": ["0"], "math.tan": ["0"],
    "math.atan": ["0"], "math.sqrt": ["4"], "math.asin": ["0"], "math.acos": ["1"],
    "math.sinh": ["0"], "math.cosh": ["0"], "math.tanh": ["0"], "math.asinh": ["0"],
    "math.acosh": ["1"], "math.atanh": ["0"], "math.log1p": ["0"], "math.expm1": ["0"],
    "math.cbrt": ["8"], "math.exp2": ["3"], "math.gamma": ["5"], "math.lgamma": ["1"],
    "math.degrees": ["0"], "math.radians": ["0"], "math.atan2": ["0", "1"],
    "statistics.mean": ["[1, 2, 4, 5]"], "statistics.fmean": ["[1, 2]", "[1, 3]"],
    "statistics.geometric_mean": ["[1, 1]"], "statistics.harmonic_mean": ["[1, 4]", "[1, 1]"],
    "statistics.median": ["[1, 3, 2]"], "statistics.median_low": ["[1, 3, 2, 4]"],
    "statistics.median_high": ["[1, 3, 2, 4]"], "statistics.mode": ["[1, 2, 2]"],
    "statistics.multimode": ["[1, 2, 2]"],
    "statistics.quantiles": ["[1, 2, 3, 4]", {"n": "2", "method": "'inclusive'"}],
    "statistics.variance": ["[1, 2, 4]", "2"], "statistics.pvariance": ["[1, 3]", "2"],
    "statistics.stdev": ["[1, 3, 5]", "3"], "statistics.pstdev": ["[1, 3]", "2"],
    "statistics.covariance": ["[1, 2, 3]", "[1, 2, 4]"],
    "statistics.correlation": ["[1, 2, 3]", "[2, 4, 6]"],
    "statistics.linear_regression": ["[1, 2, 3]", "[2, 4, 6]", {"proportional": "True"}],
    "decimal.getcontext": [], "decimal.localcontext": ["None"],
    "decimal.setcontext": ["decimal.Context(prec=5)"],
    "numpy.round": ["2.5", "0"], "numpy.around": ["2.5", "0"], "numpy.power": ["2", "3"],
    "numpy.var": ["[1, 3]", {"ddof": "1"}], "numpy.std": ["[1, 3]"],
    "numpy.exp": ["0"], "numpy.log": ["1"], "numpy.log10": ["100"], "numpy.sqrt": ["4"],
    "numpy.abs": ["-2"], "numpy.absolute": ["-2"], "numpy.floor": ["2.5"], "numpy.ceil": ["2.5"],
}
DEFAULT = {"numpy": ["[1, 3]"], "math": ["1.5"], "builtins": ["1"]}
LAZY = {"enumerate", "zip", "map", "filter", "reversed"}   # listed to compare their items
SKIP = {"numpy_financial"}   # not installed beside /usr/bin/python3

ROW = re.compile(r'^(?:FUNC\((\w+), "(\w+)", \w+, \w+, (\d+), (\w+), (\w+),\s*"([^"]*)"\)'
                 r'|EXC\((\w+), "(\w+)", \w+, "([^"]*)"\))', re.M)


def parse_sig(sig):
    """The registry's sig: (names, nposonly, npos, varargs, varkw)."""
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    names, nposonly, npos, varargs, varkw = [], 0, None, False, False
    for t in [t.strip() for t in inner.split(",") if t.strip()]:
        if t == "/":
            nposonly = len(names)
        elif t.startswith("**"):
            varkw = True
        elif t.startswith("*"):
            varargs = len(t) > 1
            npos = len(names)
        else:
            names.append(t.split(":")[0])
    return names, nposonly, len(names) if npos is None else npos, varargs, varkw


def cpython_params(f):
    try:
        s = inspect.signature(f)
    except (ValueError, TypeError) as e:
        return "!" + str(e)
    out, star = [], False
    kinds = [p.kind for p in s.parameters.values()]
    for i, p in enumerate(s.parameters.values()):
        if p.kind == p.KEYWORD_ONLY and not star:
            out.append("*")
            star = True
        if p.kind == p.VAR_POSITIONAL:
            out.append("*" + p.name)
            star = True
        elif p.kind == p.VAR_KEYWORD:
            out.append("**" + p.name)
        else:
            out.append(p.name)
        if p.kind == p.POSITIONAL_ONLY and (i + 1 == len(kinds) or kinds[i + 1] != p.POSITIONAL_ONLY):
            out.append("/")
    return "(" + ", ".join(out) + ")"


def run(expr, env):
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            v = eval(expr, env)
        r = "ok" if v is None else repr(v)
        return "<object>" if " at 0x" in r else r   # an address: the test compares the kind
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def calls(fn, names, nposonly, npos, lo, samples):
    pos = [s for s in samples if isinstance(s, str)]
    kwo = next((s for s in samples if isinstance(s, dict)), {})
    k = min(len(pos), npos)
    named = names[:k]
    args = lambda p, kw: fn + "(" + ", ".join(p + [f"{n}={v}" for n, v in kw]) + ")"
    out = [args(pos[:k], [])]
    for j in range(max(nposonly, 0), k):   # a tail by keyword, in order and reversed
        tail = list(zip(named[j:], pos[j:k]))
        out.append(args(pos[:j], tail))
        if len(tail) > 1:
            out.append(args(pos[:j], tail[::-1]))
    for j in range(k):                      # one both ways
        out.append(args(pos[:k], [(named[j], pos[j])]))
    if kwo:
        out.append(args(pos[:lo], list(kwo.items())))
        out.append(args(pos[:lo], list(kwo.items())[::-1]))
    out.append(args(pos[:k], [("zzz", "1")]))
    out.append(args(pos[:lo], list(kwo.items()) + [("zzz", "1")]))
    if lo:                                  # the required ones missing, or given by keyword
        out.append(args([], list(zip(named[1:lo], pos[1:lo]))))
        out.append(args([], [("zzz", "1")]))
    every = list(zip(named, pos)) + list(kwo.items())
    out.append(args([], every + [("zzz", "1"), ("yyy", "2")]))
    out.append(args(pos[:k], every))
    return list(dict.fromkeys(out))


def main():
    src = open("ir/subset.def").read()
    mods = dict(re.findall(r'^MODULE\((\w+), "([\w.]+)"\)', src, re.M))
    print(f"# {sys.executable} {sys.version.split()[0]}: tests/tools/kwargs_cpython.py")
    for m in ROW.finditer(src):
        if m.group(7):
            mod, name, lo, sig = mods[m.group(7)], m.group(8), 0, m.group(9)
        else:
            mod, name, lo, sig = mods[m.group(1)], m.group(2), int(m.group(3)), m.group(6)
        if mod in SKIP:
            continue
        qual = "builtins" if mod == "builtins" else mod
        try:
            module = importlib.import_module(mod)
            f = getattr(module, name)
        except ImportError as e:
            print(f"sig\t{qual}\t{name}\t!{e}")
            continue
        env = {"math": importlib.import_module("math"),
               "statistics": importlib.import_module("statistics"),
               "decimal": importlib.import_module("decimal"), mod.split(".")[0]: module}
        fn = name if mod == "builtins" else f"{mod}.{name}"
        if m.group(7):   # an exception class: any positional arguments, its own keywords
            print(f"sig\t{qual}\t{name}\t!a class")
            kws = parse_sig(sig)[0] if sig else []
            for e in [f"{fn}('a', 1)", f"{fn}('a', x=1)"] + [f"{fn}('a', {k}='b')" for k in kws]:
                print(f"call\t{qual}\t{e}\t{run(e, env)}")
            continue
        print(f"sig\t{qual}\t{name}\t{cpython_params(f)}")
        names, nposonly, npos, varargs, varkw = parse_sig(sig)
        samples = SAMPLES.get(f"{mod}.{name}", DEFAULT.get(mod, ["1"]) * max(lo, 1))
        if varargs:   # the positional samples fill *args
            npos = 0
        for e in calls(fn, names, nposonly if not varargs else 0, npos, lo if not varargs else 0,
                       samples):
            if varargs:
                pos = ", ".join(s for s in samples if isinstance(s, str))
                e = e.replace(f"{fn}(", f"{fn}({pos}, ", 1).replace(", )", ")")
            if name in LAZY:
                e = f"list({e})"
            print(f"call\t{qual}\t{e}\t{run(e, env)}")


main()
