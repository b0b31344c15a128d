# calcroute sandbox runner: runs one piece of code as __main__ and reports the candidates of
# its final value (the host chooses among them with the evaluator's rule) or its exception on
# a separate file descriptor, so that nothing the code prints can be mistaken for the answer. Embedded in libcalcroute (sandbox/runner_embed.c) and run as
#     python3 -s -S -c SANDBOX_RUNNER_BOOTSTRAP JOB_FD REPORT_FD [PRELOAD [zygote]]
# where the bootstrap (sandbox/sandbox.h) executes this file's text, read from a descriptor;
# in an environment the tier sets whole (PYTHONSAFEPATH, PYTHONHASHSEED=0: see sandbox/ns/ns.c);
# PRELOAD: warm mode, see main().
# Both the job and the report are records "<key> <length>\n<bytes>\n" (sandbox/sandbox.h).
# The code never holds the report descriptor: it runs in a child of the runner, which closes
# it first and describes its result to the runner in the same records; the runner, which the
# child can neither signal, trace nor read (it is not dumpable), checks that description and
# writes the report itself, so a record the code forges is refused or never reaches the host.
# In warm mode the child says it is done (its exit status, streams closed) on a pipe before it
# exits, so the report need not wait for its exit (ChildWait).
# Only built-in modules are imported on the common path (posix, not os; _ast, not ast.py; no
# json) to keep the start-up cost of every sandboxed run low. -S skips site, whose .pth hooks and
# sitecustomize are the host's business and cost more than the rest of start-up; the
# package directories it would add are added here instead (add_site_dirs).
import sys

FILENAME = "<code>"
EXPR_HOOK = "__calcroute_expr__"
SOLUTION_HOOK = "__calcroute_solution__"      # a return of solution(): its value
SOLUTION_ENTER = "__calcroute_solution_in__"  # a call of solution() begins


# What rehearse() runs: no import, so the job finds sys.modules as a cold run would.
REHEARSAL = (b"def solution():\n    total = sum(x * 1.5 for x in range(10))\n"
             b"    return round(total ** 0.5, 2)\nrows = [{'a': 1, 'b': 'x'}]\n"
             b"ans = f'{solution():.2f}' + str(len(rows))\nans\n")
RESULT_MAX = 15 << 20      # bytes of the child's description read (the host keeps 16 MiB)
NUMPY_INTS = frozenset("int8 int16 int32 int64 uint8 uint16 uint32 uint64 longlong ulonglong"
                       .split())
NUMPY_FLOATS = frozenset("float16 float32 float64 float128 longdouble".split())
# Type names the report gives only to values the runner checked itself.
RESERVED = frozenset(("int", "bool", "float", "Decimal", "Fraction")) | NUMPY_INTS | NUMPY_FLOATS
# The final-value rule's candidates (common.c cr_final_choose() picks one on the host): the
# value of solution()'s last call, each answer variable set, the last expression statement's
# value, the last variable assigned. Each is a group of records "<group>.<field>".
ANSWER_VARS_MAX = 3     # CR_ANSWER_VARS_MAX
GROUPS = ("solution",) + tuple("var%d" % i for i in range(ANSWER_VARS_MAX)) + ("expr", "assigned")
VALUE_FIELDS = ("kind", "text", "type", "name", "by", "native")
CONTAINERS = ("list", "tuple", "set", "dict")
NATIVE_DEPTH = 200          # as the in-process evaluator's native form (DESIGN.md)
NATIVE_PARTS = 10 ** 6
ERROR_KEYS = ("error.type", "error.message", "error.line", "error.col", "error.errno",
              "error.filename")
IMPORTS_MAX = 512           # packages named in the "imports" record
VERSION_MAX = 128           # characters of one package's version


def read_records(data):
    """The records of data, in order; ValueError unless data is records and nothing else."""
    recs = []
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i, i + 80)
        key, sp, n = data[i:nl].partition(b" ") if nl >= 0 else (b"", b"", b"")
        if not key or not sp or not n.isdigit() or len(n) > 9:
            raise ValueError("a malformed record at byte %d" % i)
        end = nl + 1 + int(n)
        if data[end:end + 1] != b"\n":
            raise ValueError("record %r runs past its length" % key.decode("ascii", "replace"))
        recs.append((key.decode("ascii"), data[nl + 1:end]))
        i = end + 1
    return recs


def record(key, value):
    if isinstance(value, str):
        value = value.encode("utf-8", "backslashreplace")
    return key.encode() + b" " + str(len(value)).encode() + b"\n" + value + b"\n"


def plain_decimal(text):
    """The decimal a float repr denotes, without exponent: '1e-05' -> '0.00001'."""
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mant, _, exp = text.partition("e")
    exp = int(exp) if exp else 0
    whole, _, frac = mant.partition(".")
    digits = whole + frac
    point = len(whole) + exp
    if point <= 0:
        out = "0." + "0" * -point + digits
    elif point >= len(digits):
        out = digits + "0" * (point - len(digits)) + ".0"
    else:
        out = digits[:point] + "." + digits[point:]
    int_part, _, frac_part = out.partition(".")
    int_part = int_part.lstrip("0") or "0"
    frac_part = frac_part.rstrip("0") or "0"
    return sign + int_part + "." + frac_part


def fraction_decimal(num, den):
    """Exact decimal text of num/den when it terminates, else None."""
    d, twos, fives = den, 0, 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:
        return None
    k = max(twos, fives)
    scaled = abs(num) * 10 ** k // den
    s = str(scaled).rjust(k + 1, "0")
    text = s[:len(s) - k] + ("." + s[len(s) - k:] if k else "")
    return ("-" if num < 0 else "") + text


def fraction_text(num, den):
    return "%d/%d" % (num, den) if den != 1 else "%d" % num


def native_of(v):
    """The native form of a container (DESIGN.md, "The value's native form") as JSON text,
    or None when a part has none (a range, a date, a str that is not Unicode text), it nests
    deeper than NATIVE_DEPTH or has more than NATIVE_PARTS parts."""
    parts = [0]

    def walk(x, depth):
        parts[0] += 1
        if depth > NATIVE_DEPTH or parts[0] > NATIVE_PARTS:
            raise ValueError
        t = type(x)
        if x is None or t is bool:
            return x
        if t is int:
            return {"int": int.__repr__(x)}
        if t is float:
            r = float.__repr__(x)
            if r in ("inf", "-inf", "nan"):
                return {"float": r}
            import fractions            # the exact value the float prints
            f = fractions.Fraction(r)
            return {"float": fraction_text(f.numerator, f.denominator)}
        if t is str:
            x.encode("utf-8")           # UnicodeEncodeError (a ValueError) on a lone surrogate
            return {"str": x}
        if t in (list, tuple, set):
            return {t.__name__: [walk(y, depth + 1) for y in x]}
        if t is dict:
            return {"dict": [[walk(k, depth + 1), walk(y, depth + 1)] for k, y in x.items()]}
        kind, text, _ = describe(x)
        if kind in ("Decimal", "Fraction"):
            return {kind: text}
        raise ValueError

    try:
        import json
        return json.dumps(walk(v, 0), separators=(",", ":"))
    except Exception:       # also what the code did to json, or to the values' classes
        return None


def native_checked(text, tname):
    """The child's native form of a `tname` as the report gives it, checked part by part
    (ValueError names what does not hold): ASCII JSON, each part a tag the form has with
    contents of its shape, numbers canonical, within the form's depth and size."""
    import json
    import decimal
    import math
    parts = [0]

    def number(s, whole_as):
        """p/q in lowest terms, q > 0; a whole number as p alone (a float's, as the
        in-process form writes it) or as p/1 (a Fraction's, as describe() does)."""
        n, slash, q = s.partition("/")
        if not canonical_int(n):
            return False
        if not slash:
            return whole_as == "p"
        if not canonical_int(q) or q[0] in "-0":
            return False
        if q == "1":
            return whole_as == "p/1"
        return math.gcd(int(n), int(q)) == 1

    def check(x, depth):
        parts[0] += 1
        if depth > NATIVE_DEPTH or parts[0] > NATIVE_PARTS:
            raise ValueError("a native form deeper or larger than the form allows")
        if x is None or type(x) is bool:
            return
        if type(x) is not dict or len(x) != 1:
            raise ValueError("a native part that is not one tag")
        (tag, c), = x.items()
        if tag in CONTAINERS:
            if type(c) is not list:
                raise ValueError("native %s contents" % tag)
            for y in c:
                if tag == "dict":
                    if type(y) is not list or len(y) != 2:
                        raise ValueError("a native dict item that is not a pair")
                    check(y[0], depth + 1)
                    check(y[1], depth + 1)
                else:
                    check(y, depth + 1)
            return
        ok = type(c) is str and (
            tag == "str" or
            tag == "int" and canonical_int(c) or
            tag == "float" and (c in ("inf", "-inf", "nan") or number(c, "p")) or
            tag == "Fraction" and number(c, "p/1") or
            tag == "Decimal" and str(decimal.Decimal(c)) == c)
        if not ok:
            raise ValueError("native %s %r" % (tag, str(c)[:40]))

    tree = json.loads(text.decode("ascii"))
    check(tree, 0)
    if type(tree) is not dict or list(tree) != [tname]:
        raise ValueError("a native form that is not the value's %s" % tname)
    return text


def describe(v):
    """(kind, text, type name or None): the final value as the child tells the runner, which
    rebuilds every number from its text and checks it (value_records)."""
    t = type(v)
    if t is bool:
        return "bool", "True" if v else "False", None
    if t is int:
        return "int", int.__repr__(v), None
    if t is float:
        return "float", float.__repr__(v), None
    mod, name = getattr(t, "__module__", ""), getattr(t, "__name__", "?")
    if mod in ("decimal", "_decimal") and name == "Decimal":
        return "Decimal", str(v), None
    if mod == "fractions" and name == "Fraction":
        return "Fraction", "%d/%d" % (v.numerator, v.denominator), None
    if mod == "numpy" and hasattr(v, "dtype"):
        if name in NUMPY_INTS:
            return "int", int.__repr__(int(v)), name
        if name in NUMPY_FLOATS:
            return "float", float.__repr__(float(v)), name
    if name in RESERVED:   # a class of the code's own that borrows a number's name
        name = "%s.%s" % (mod, getattr(t, "__qualname__", name))
    return "other", repr(v), name


def canonical_int(s):
    d = s[1:] if s[:1] == "-" else s
    return d.isascii() and d.isdigit() and (d[0] != "0" or s == "0")


def value_records(group, got, allowed):
    """The report's records for the candidate `group` the child described (`got`: {field:
    bytes}); ValueError names what does not hold. repr and decimal text are made here from one
    checked number, so they cannot disagree, and the candidate must be one this program can
    have: `allowed` maps each group to the name it must carry (None: none)."""
    for k in ("kind", "text"):
        if k not in got:
            raise ValueError("no %s.%s record" % (group, k))
    if group not in allowed:
        raise ValueError("a %s value this program cannot have" % group)
    name = allowed[group]
    if name is not None and got.get("name", b"").decode("utf-8") not in name:
        raise ValueError("%s name %r is not one this program can give"
                         % (group, got.get("name", b"")[:40].decode("utf-8", "replace")))
    if name is None and "name" in got:
        raise ValueError("a name on the %s value" % group)
    by = got.get("by")
    if by not in ((b"program", b"end") if group == "solution" else (None,)):
        raise ValueError("%s caller %r" % (group, by))
    kind = got["kind"].decode("ascii")
    tname = got["type"].decode("utf-8") if "type" in got else None
    tail = [record(group + "." + k, got[k]) for k in ("name", "by") if k in got]
    if kind == "other":
        if not tname or tname in RESERVED or len(tname) > 256:
            raise ValueError("type %r for a value the runner did not check" % tname)
        recs = [record(group + ".type", tname), record(group + ".repr", got["text"])]
        if "native" in got:
            if tname not in CONTAINERS:
                raise ValueError("a native form on a %s" % tname[:40])
            # The form is optional: one that fails its check (the code's own doing, say a
            # json module it replaced) leaves the repr alone, as a part without one does.
            try:
                recs.append(record(group + ".native", native_checked(got["native"], tname)))
            except (ValueError, RecursionError):
                pass
        return recs + tail
    text = got["text"].decode("ascii")
    dec = None
    if kind == "int" and canonical_int(text) and tname in (None,) + tuple(NUMPY_INTS):
        rep = dec = text
    elif kind == "bool" and text in ("True", "False") and tname is None:
        rep, dec = text, "1" if text == "True" else "0"
    elif (kind == "float" and tname in (None,) + tuple(NUMPY_FLOATS) and len(text) <= 32
          and float.__repr__(float(text)) == text):
        rep = text
        dec = plain_decimal(text) if text not in ("inf", "-inf", "nan") else None
    elif kind == "Decimal" and tname is None:
        import decimal
        d = decimal.Decimal(text)
        if str(d) != text:
            raise ValueError("Decimal text %r is not canonical" % text[:40])
        rep = "Decimal('%s')" % text
        # format() writes every zero of the exponent: a bound, as on every other number.
        if d.is_finite() and -10**6 <= d.as_tuple().exponent <= 10**6:
            dec = format(d, "f")
    elif kind == "Fraction" and tname is None:
        import math
        n, _, q = text.partition("/")
        if not (canonical_int(n) and canonical_int(q) and q[0] not in "-0"):
            raise ValueError("Fraction text %r" % text[:40])
        num, den = int(n), int(q)
        if math.gcd(num, den) != 1:
            raise ValueError("Fraction %r is not in lowest terms" % text[:40])
        rep = "Fraction(%s, %s)" % (n, q)
        dec = fraction_decimal(num, den)
    else:
        raise ValueError("value kind %r with text %r" % (kind, text[:40]))
    recs = [record(group + ".type", tname or kind), record(group + ".repr", rep)]
    if dec is not None:
        recs.append(record(group + ".decimal", dec))
    return recs + tail


def error_records(got):
    """The report's error records for the child's description; ValueError as above."""
    tname = got.get("error.type", b"").decode("utf-8")
    if not tname.isidentifier() or len(tname) > 256:
        raise ValueError("exception type %r" % tname[:40])
    recs = [record("error.type", tname), record("error.message", got.get("error.message", b""))]
    for k in ("error.line", "error.col", "error.errno"):
        if k in got:
            v = got[k].decode("ascii")
            if not (canonical_int(v) and len(v) <= 9 and v[0] != "-"):
                raise ValueError("%s %r" % (k, v[:40]))
            recs.append(record(k, v))
    if "error.filename" in got:
        recs.append(record("error.filename", got["error.filename"]))
    return recs


def checked_result(data, allowed):
    """The report records for what the child described: candidate values, or one exception, or
    nothing; anything else (an unknown or repeated record, a value and an exception at once,
    a number that does not read back as itself) is a ValueError. allowed: allowed_of()'s
    map."""
    if len(data) > RESULT_MAX:
        raise ValueError("over %d bytes" % RESULT_MAX)
    got = {}
    values = {}
    imports = []
    for key, val in read_records(data):
        group, _, field = key.partition(".")
        if key == "imports":
            if imports:
                raise ValueError("a second imports record")
            imports.append(imports_record(val))
            continue
        if key in ERROR_KEYS:
            pass
        elif group not in GROUPS or field not in VALUE_FIELDS:
            raise ValueError("unknown record %r" % key)
        if key in got:
            raise ValueError("a second %s record" % key)
        got[key] = val
        if key not in ERROR_KEYS:
            values.setdefault(group, {})[field] = val
    if values and len(got) > sum(len(g) for g in values.values()):
        raise ValueError("both a value and an exception")
    if values:
        return [r for group in GROUPS if group in values
                for r in value_records(group, values[group], allowed)] + imports
    return (error_records(got) if got else []) + imports


def allowed_of(info, answer_vars):
    """The candidates a program can have (its Analysis), with the names each must carry."""
    allowed = {"var%d" % i: {name} for i, name in enumerate(answer_vars[:ANSWER_VARS_MAX])}
    if info.assigned:
        allowed["assigned"] = set(info.assigned)
    if info.solution_defs:
        allowed["solution"] = None
    if info.exprs:
        allowed["expr"] = None
    return allowed


def allowed_records(allowed):
    """allowed_of()'s map as records: "names.<group>" with its names one a line, or
    "any.<group>" for a group that carries none."""
    return b"".join(record("any." + g, b"") if names is None else
                    record("names." + g, "\n".join(sorted(names)))
                    for g, names in sorted(allowed.items()))


def allowed_read(data):
    """allowed_records()' map; {} (no value allowed) for anything else: a code's process that
    died before it wrote them all, or one whose job did not compile."""
    allowed = {}
    try:
        for key, val in read_records(data):
            kind, _, group = key.partition(".")
            if group not in GROUPS or group in allowed or kind not in ("any", "names"):
                return {}
            allowed[group] = None if kind == "any" else set(val.decode("utf-8").split("\n"))
    except ValueError:
        return {}
    return allowed


def read_file(fd, most=None):
    """What a memfd holds, read by its size (up to `most` bytes): a buffer of the largest
    result for every run cost more than a small run."""
    import posix
    size = posix.fstat(fd).st_size
    if most is not None:
        size = min(size, most)
    data = b""
    while len(data) < size:
        chunk = posix.pread(fd, size - len(data), len(data))
        if not chunk:
            break
        data += chunk
    return data


def module_level(body, ast):
    """The statements that run at module level, in source order: those nested in if, for,
    while, with, try and match too, but not function or class bodies."""
    for st in body:
        yield st
        if type(st) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(st, field, None)
            if isinstance(sub, list):
                yield from module_level(sub, ast)
        for h in list(getattr(st, "handlers", ()) or ()) + list(getattr(st, "cases", ()) or ()):
            yield from module_level(h.body, ast)


def own_nodes(body, ast):
    """The nodes of a function body that belong to that function: nested def, lambda and
    class bodies left out."""
    todo = list(body)
    seen = 0
    while todo and seen < 10_000_000:
        node = todo.pop()
        seen += 1
        yield node
        for name in node._fields:
            child = getattr(node, name, None)
            for c in child if isinstance(child, list) else (child,):
                if isinstance(c, ast.AST) and type(c) not in (
                        ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
                    todo.append(c)


class Analysis:
    """What the final-value rule needs from the module's syntax tree."""

    def __init__(self, tree, ast):
        self.solution_defs = []    # module-level `def solution` callable with no argument
        self.solution_lines = set()  # their code objects' first lines
        self.assigned = []         # module-level assignment targets, in source order
        self.exprs = []            # module-level expression statements but the docstring
        body = tree.body
        for st in module_level(body, ast):
            tp = type(st)
            if tp is ast.Assign:
                for t in st.targets:
                    self._targets(t, ast, self.assigned)
            elif tp is ast.AugAssign or (tp is ast.AnnAssign and st.value is not None):
                self._targets(st.target, ast, self.assigned)
            elif tp is ast.Expr and not (st is body[0] and type(st.value) is ast.Constant
                                         and isinstance(st.value.value, str)):
                self.exprs.append(st)
            elif tp is ast.FunctionDef and st.name == "solution" and self._no_argument(st.args):
                # A generator's call returns a generator, never a value of its own.
                if not any(type(n) in (ast.Yield, ast.YieldFrom) for n in own_nodes(st.body, ast)):
                    self.solution_defs.append(st)
                    self.solution_lines.add(min([st.lineno] + [d.lineno for d in st.decorator_list]))

    @staticmethod
    def _no_argument(a):
        return (len(a.posonlyargs) + len(a.args) == len(a.defaults)
                and all(d is not None for d in a.kw_defaults))

    def _targets(self, t, ast, out):
        if type(t) is ast.Name:
            out.append(t.id)
        elif type(t) in (ast.Tuple, ast.List):
            for e in t.elts:
                self._targets(e, ast, out)


def hook_expressions(info, ast):
    """Turns each module-level expression statement `e` into `__calcroute_expr__(e)`."""
    for st in info.exprs:
        v = st.value
        loc = dict(lineno=v.lineno, col_offset=v.col_offset,
                   end_lineno=v.end_lineno, end_col_offset=v.end_col_offset)
        st.value = ast.Call(func=ast.Name(id=EXPR_HOOK, ctx=ast.Load(), **loc),
                            args=[v], keywords=[], **loc)


def hook_solution(info, ast):
    """Makes each solution() of the rule say when it is called and what it returns, whoever
    calls it: a call of __calcroute_solution_in__() first in its body, and each `return e` a
    `return __calcroute_solution__(e)` (falling off the end too). Wrapping the value, not the
    call, keeps a raising solution()'s traceback free of runner frames."""
    for d in info.solution_defs:
        def hook(name, args, at):
            loc = dict(lineno=at.lineno, col_offset=at.col_offset,
                       end_lineno=at.end_lineno, end_col_offset=at.end_col_offset)
            return ast.Call(func=ast.Name(id=name, ctx=ast.Load(), **loc),
                            args=[a(loc) for a in args], keywords=[], **loc)
        for node in list(own_nodes(d.body, ast)):
            if type(node) is ast.Return:
                v = node.value
                node.value = hook(SOLUTION_HOOK, [lambda loc: v if v is not None
                                                  else ast.Constant(value=None, **loc)], node)
        last, first = d.body[-1], d.body[0]
        d.body.append(ast.Return(value=hook(SOLUTION_HOOK,
                                            [lambda loc: ast.Constant(value=None, **loc)], last),
                                 lineno=last.end_lineno, col_offset=0,
                                 end_lineno=last.end_lineno, end_col_offset=0))
        doc = type(first) is ast.Expr and type(first.value) is ast.Constant and \
            isinstance(first.value.value, str)
        d.body.insert(1 if doc else 0, ast.Expr(value=hook(SOLUTION_ENTER, [], first),
                                                lineno=first.lineno, col_offset=first.col_offset,
                                                end_lineno=first.lineno,
                                                end_col_offset=first.col_offset))


def user_frames(tb):
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next
    return tb


def print_exception(e, text):
    import linecache
    import traceback
    lines = text.splitlines(True)
    linecache.cache[FILENAME] = (len(text), None, lines, FILENAME)
    tb = user_frames(e.__traceback__)
    traceback.print_exception(type(e), e, tb)


def error_position(e):
    """(line, col) where e arose in the code, 0 for what is unknown: a SyntaxError of the
    code's text where the compiler put it, else the innermost frame of the code at the
    instruction that raised, col 1-based as the in-process evaluator counts (CPython's
    col_offset, in bytes, + 1)."""
    if isinstance(e, SyntaxError) and e.filename == FILENAME:
        return e.lineno or 0, e.offset or 0
    inner = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == FILENAME:
            inner = tb
        tb = tb.tb_next
    if inner is None:
        return 0, 0
    col = None
    if inner.tb_lasti >= 0:
        import itertools
        # One entry per 2-byte code unit: (line, end line, col, end col), None when unknown.
        pos = next(itertools.islice(inner.tb_frame.f_code.co_positions(),
                                    inner.tb_lasti // 2, None), None)
        col = pos[2] if pos else None
    return inner.tb_lineno or 0, col + 1 if col is not None else 0


def venv_config():
    """(directory, its pyvenv.cfg's text) of the virtual environment the interpreter belongs
    to, found as site.venv() finds it (beside the executable or one level up), or None.
    site.py, which -S skips, is what makes it sys.prefix."""
    exe_dir = sys.executable.rpartition("/")[0]
    for d in (exe_dir, exe_dir.rpartition("/")[0]):
        try:
            with open(d + "/pyvenv.cfg", encoding="utf-8") as f:
                return d, f.read(65536)
        except OSError:
            pass
    return None


def add_site_dirs():
    """The directories site.py would put on sys.path (Debian's and the upstream layout, a
    virtual environment's site-packages first), without running any .pth file."""
    import posix
    v = "%d.%d" % sys.version_info[:2]
    dirs = ["/usr/local/lib/python%s/dist-packages" % v, "/usr/lib/python3/dist-packages",
            "/usr/lib/python%s/dist-packages" % v, "%s/lib/python%s/site-packages" % (sys.prefix, v)]
    venv = venv_config()
    if venv:
        d, cfg = venv
        system = any(k.strip().lower() == "include-system-site-packages" and
                     val.strip().lower() == "true"
                     for k, _, val in (line.partition("=") for line in cfg.splitlines()))
        sys.prefix = sys.exec_prefix = d
        dirs = ["%s/lib/python%s/site-packages" % (d, v)] + (dirs if system else [])
    for d in dirs:
        try:
            is_dir = posix.stat(d).st_mode & 0o170000 == 0o040000
        except OSError:
            is_dir = False
        if is_dir and d not in sys.path:
            sys.path.append(d)


class ServedModules:
    """Modules the job carries (our numpy_financial), for an import that finds no installed
    one: this finder is last on sys.meta_path."""

    def __init__(self, sources):
        self.sources = sources

    def find_spec(self, name, path=None, target=None):
        if name not in self.sources:
            return None
        import _frozen_importlib
        return _frozen_importlib.ModuleSpec(name, self, origin="<calcroute>")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = compile(self.sources[module.__name__], "<%s>" % module.__name__, "exec",
                       dont_inherit=True)
        exec(code, module.__dict__)


class SeededImports:
    """First on sys.meta_path: lets `random` and `numpy.random` import as usual, then seeds
    them from the job's seed, so a program that never imports them pays nothing."""

    def __init__(self, seed):
        self.seed = seed

    def find_spec(self, name, path=None, target=None):
        if name not in SEEDERS:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = None if finder is self or find is None else find(name, path, target)
            if spec is not None:
                spec.loader = SeedingLoader(spec.loader, SEEDERS[name], self.seed)
                return spec
        return None


class SeedingLoader:
    def __init__(self, loader, seeder, seed):
        self.loader, self.seeder, self.seed = loader, seeder, seed

    def __getattr__(self, name):     # get_resource_reader, is_package, ...: the real loader's
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.seeder(module, self.seed)


def seed_random(mod, seed):
    mod.seed(seed)


def seed_numpy_random(mod, seed):
    """The legacy global RandomState (np.random.rand, np.random.seed's state) from the seed;
    default_rng() without a seed draws from a SeedSequence of it instead of the OS's entropy,
    each call a fresh child, so two generators still differ from each other."""
    mod.seed(seed)
    root = mod.SeedSequence(seed)
    made = mod.default_rng

    def default_rng(seed=None):
        return made(root.spawn(1)[0] if seed is None else seed)

    default_rng.__doc__, default_rng.__wrapped__ = made.__doc__, made
    mod.default_rng = default_rng


SEEDERS = {"random": seed_random, "numpy.random": seed_numpy_random}


def seed_rngs(seed):
    """Seeds what is imported already (a worker that imported numpy before its job came) and
    whatever imports later."""
    for name, seeder in SEEDERS.items():
        if name in sys.modules:
            seeder(sys.modules[name], seed)
    sys.meta_path.insert(0, SeededImports(seed))


DROPPED_NAMES_MAX = 16     # SANDBOX_DROPPED_NAMES_MAX: names reported; the count is whole
DROPPED_WALK_MAX = 4096    # directory entries looked at (/tmp has as many inodes)
DROPPED_DEPTH_MAX = 8


def dropped_files():
    """(count, names) of the files the code left in /tmp, which nobody collects: the code's
    working directory is /out, so a file it meant to keep went there. The libraries' caches
    (XDG_CACHE_HOME) and directories mounted from elsewhere (an allowed directory) are not
    its files."""
    import posix
    cache = posix.environ.get(b"XDG_CACHE_HOME", b"")
    try:
        dev = posix.lstat(b"/tmp").st_dev
    except OSError:
        return 0, []
    count, names, seen = 0, [], 0
    todo = [(b"/tmp", 0)]
    while todo and seen < DROPPED_WALK_MAX:
        d, depth = todo.pop()
        try:
            entries = sorted(posix.listdir(d))
        except OSError:
            continue
        for e in entries[:DROPPED_WALK_MAX - seen]:
            seen += 1
            path = d + b"/" + e
            try:
                st = posix.lstat(path)
            except OSError:
                continue
            if st.st_mode & 0o170000 == 0o040000:
                if path != cache and st.st_dev == dev and depth < DROPPED_DEPTH_MAX:
                    todo.append((path, depth + 1))
                continue
            count += 1
            if len(names) < DROPPED_NAMES_MAX:
                names.append(path)
    return count, sorted(names)


def set_dumpable(flag):
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be traced nor its memory
    (/proc/PID/mem) opened by another of the same user. Through _ctypes, not ctypes: a third
    of the import cost."""
    import _ctypes
    if PRCTL[0] is None:    # found once, by the runner: the code's process inherits it
        PRCTL[0] = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")
    if _ctypes.call_function(PRCTL[0], (4, flag, 0, 0, 0)) != 0:
        raise OSError("prctl(PR_SET_DUMPABLE) failed")


PRCTL = [None]


def is_code(v):
    """A function, module or class: `def answer(): ...` names code, not an answer."""
    return isinstance(v, (type(is_code), type(len), type(sys), type))


def ours(f, info):
    """Whether f (or what it wraps) is one of the defs hook_solution() changed."""
    f = f if type(f) is type(is_code) else getattr(f, "__wrapped__", None)
    c = getattr(f, "__code__", None)
    return (type(f) is type(is_code) and c is not None and c.co_filename == FILENAME
            and c.co_name == "solution" and c.co_firstlineno in info.solution_lines)


def run_code(compiled, info, mod, answer_vars, text):
    """The child: runs the code and describes its result (exit status, records): every
    candidate of the final-value rule, which the host chooses from."""
    import builtins
    exprs = []

    def on_expr(value):
        if value is not None:
            exprs[:] = [value]
        return value

    solution = {}

    def on_solution_in():
        solution["called"] = True

    def on_solution(value):
        solution["value"] = value
        return value

    setattr(builtins, EXPR_HOOK, on_expr)
    setattr(builtins, SOLUTION_ENTER, on_solution_in)
    setattr(builtins, SOLUTION_HOOK, on_solution)
    sys.modules["__main__"] = mod
    try:
        exec(compiled, mod.__dict__)
        g = mod.__dict__
        found = []      # (group, value, name, caller)
        if ours(g.get("solution"), info):
            by = "program" if "called" in solution else "end"
            if by == "end":
                g["solution"]()
            if "value" in solution:
                found.append(("solution", solution["value"], None, by))
        for i, name in enumerate(answer_vars[:ANSWER_VARS_MAX]):
            if name in g and not is_code(g[name]):
                found.append(("var%d" % i, g[name], name, None))
        if exprs:
            found.append(("expr", exprs[0], None, None))
        for name in reversed(info.assigned):
            if name in g:
                found.append(("assigned", g[name], name, None))
                break
        recs = []
        for group, v, name, by in found:
            kind, vtext, tname = describe(v)
            native = native_of(v) if kind == "other" and tname in CONTAINERS else None
            recs += [record(group + ".kind", kind), record(group + ".text", vtext)]
            recs += [record(group + "." + k, x) for k, x in (("type", tname), ("name", name),
                                                             ("by", by), ("native", native))
                     if x is not None]
        return 0, recs
    except SystemExit as e:
        c = e.code
        if c is None:
            return 0, []
        if isinstance(c, int):
            return c & 0xFF, []
        print(c, file=sys.stderr)
        return 1, []
    except BaseException as e:
        return 1, exception_records(e, text)


def exception_records(e, text):
    line, col = error_position(e)
    recs = [record("error.type", type(e).__name__),
            record("error.message", e.msg if isinstance(e, SyntaxError) else str(e)),
            record("error.line", str(line))]
    if col:
        recs.append(record("error.col", str(col)))
    if isinstance(e, OSError):
        if e.errno is not None:
            recs.append(record("error.errno", str(e.errno)))
        if e.filename is not None:
            recs.append(record("error.filename", str(e.filename)))
    try:
        print_exception(e, text)
    except BaseException:
        pass
    return recs


def write_all(fd, data):
    import posix
    while data:
        n = posix.write(fd, data)
        data = data[n:]


def read_job(data):
    """The job's records: the code, its answer variables, its globals, the modules it serves,
    its seed."""
    import builtins
    code = b""
    answer_vars = []
    globals_json = None
    served = {}
    seed = None
    for key, val in read_records(data):
        if key == "code":
            code = val
        elif key == "var":
            answer_vars.append(val.decode())
        elif key == "globals":
            globals_json = val.decode()
        elif key == "seed":
            seed = int(val.decode("ascii"))
        elif key == "module":
            name, _, src = val.partition(b"\n")
            served[name.decode()] = src
    if served:
        sys.meta_path.append(ServedModules(served))
    mod = type(sys)("__main__")
    mod.__dict__["__builtins__"] = builtins
    return code, answer_vars or ["ans", "result", "answer"], globals_json, mod, seed


def apply_globals(globals_json, mod):
    if globals_json is not None:
        import json
        for name, value in json.loads(globals_json).items():
            mod.__dict__[str(name)] = value


def compile_job(code, globals_json, mod):
    """The code compiled with its hooks, and its analysis; raises what the code's text does."""
    import _ast as ast
    apply_globals(globals_json, mod)
    tree = compile(code, FILENAME, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    info = Analysis(tree, ast)
    hook_expressions(info, ast)
    hook_solution(info, ast)
    return compile(tree, FILENAME, "exec", dont_inherit=True), info


def read_all(fd):
    import posix
    chunks = []
    while True:
        chunk = posix.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def preload(names):
    """Warm mode: the modules a job is expected to import, imported before any job is known.
    One that fails is left for the job to import (and fail) itself."""
    for name in names.split(","):
        if name:
            try:
                __import__(name)
            except Exception:
                pass


def child_main(job, res_fd, done_fd):
    """The code's process: runs the job (what compile_job() made of it) and leaves the
    description of its result in res_fd; done_fd (warm mode; None when cold): see leave()."""
    import _signal
    compiled, info, mod, answer_vars, text, seed = job
    set_dumpable(1)
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    if seed is not None:
        seed_rngs(seed)
    if done_fd is not None:
        packages_settled()
    status, recs = run_code(compiled, info, mod, answer_vars, text)
    try:
        sys.stdout.flush()
    except BaseException:
        pass
    try:
        recs.append(record("imports", imported_packages()))
    except BaseException:
        pass
    child_end(status, recs, mod, res_fd, done_fd)


def child_end(status, recs, mod, res_fd, done_fd):
    """The code's process: its result's description into res_fd, then leave()."""
    import posix
    # Whatever the code itself wrote there goes first.
    posix.ftruncate(res_fd, 0)
    write_file(res_fd, b"".join(recs))
    leave(status, mod, done_fd)


def write_file(fd, data):
    """data into the memfd fd from its start."""
    import posix
    off = 0
    while off < len(data):
        off += posix.pwrite(fd, data[off:], off)


def imported_packages():
    """The packages loaded in the code's process when it ended, one line "name version" each in
    name order: every top-level module outside the standard library and the interpreter's
    built-ins, which is what the code imported and what those imported (in a warm worker, the
    preload list's too). The version is the module's __version__, else its distribution's by
    importlib.metadata (imported only then: it costs more than most runs), else empty. Said by
    the code's process, so the code can misstate it, as it can anything it imports.
    A warm worker's zygote (or, without one, its rehearsal) makes it once before the job
    (with pandas loaded, 2 ms of a forked worker's CPU, most of it copies of the pages of the
    module objects it touches): the job's end takes it as it is when the code imported
    nothing (no finder was asked for a module, sys.modules is as long: packages_settled()),
    else makes again only what changed since (PACKAGES)."""
    seen, snap = PACKAGES, PACKAGES["modules"]
    if seen["tops"] is not None and seen["len"] == len(sys.modules) and \
            seen["asked"] == STASHED.asked:
        snap = None
    elif snap is not None:
        # Each run has its own __main__, which is no package.
        snap.pop("__main__", None)
        if "__main__" in sys.modules:
            snap["__main__"] = sys.modules["__main__"]
    if snap is None and seen["tops"] is not None or snap is not None and snap == sys.modules:
        tops = seen["tops"]
    else:
        if seen["skip"] is None:
            seen["skip"] = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)
        skip = seen["skip"]
        tops = {}
        for name, m in list(sys.modules.items()):
            top = name.partition(".")[0]
            if top not in skip and top != "__main__" and not top.startswith("_") and m is not None:
                tops.setdefault(top, sys.modules.get(top))
        # Not packages: modules made at run time (Cython's cython_runtime, say) have no file
        # or path; ours has its own origin.
        tops = {k: m for k, m in tops.items()
                if hasattr(m, "__file__") or hasattr(m, "__path__") or
                getattr(getattr(m, "__spec__", None), "origin", None) == "<calcroute>"}
        seen["modules"], seen["tops"] = dict(sys.modules), tops
    lines = []
    for top in sorted(tops)[:IMPORTS_MAX]:
        m = tops[top]
        served = getattr(getattr(m, "__spec__", None), "origin", None) == "<calcroute>"
        v = "calcroute" if served else getattr(m, "__version__", None)   # ServedModules
        line = seen["lines"].get(top)
        if line is None or line[0] is not m or line[1] is not v:
            text = v
            if not isinstance(text, str):
                try:
                    import importlib.metadata
                    text = importlib.metadata.version(top)
                except BaseException:
                    text = ""
            text = "".join(c for c in text if c.isprintable())[:VERSION_MAX]
            line = seen["lines"][top] = (m, v, "%s %s\n" % (top, text))
        lines.append(line[2])
    return "".join(lines)


# imported_packages()'s last answer: sys.modules as it was then, the packages of it, and for
# each its module, its __version__ and its line; sys.modules' length and the finders' count
# of modules asked for when the code began (packages_settled()).
PACKAGES = {"skip": None, "modules": None, "tops": None, "lines": {}, "len": -1, "asked": -1}


def packages_settled():
    """Warm mode, before the code runs: the packages loaded are those imported_packages() last
    made (the zygote's, or the rehearsal's); an import from here on asks a finder
    (StashedModules, first on sys.meta_path), and one the code makes into sys.modules itself
    changes its length. A code that changes an entry in place or reorders the finders can
    misstate its packages, as it can anything it imports."""
    PACKAGES["len"], PACKAGES["asked"] = len(sys.modules), STASHED.asked


def imports_record(text):
    """The child's "imports" record, checked: lines "name version", names identifiers in
    order, at most IMPORTS_MAX; ValueError names what does not hold."""
    lines = text.decode("utf-8").split("\n")
    if lines.pop() != "":
        raise ValueError("an imports record whose last line is not whole")
    if len(lines) > IMPORTS_MAX:
        raise ValueError("an imports record of %d lines" % len(lines))
    names = []
    for line in lines:
        name, sp, version = line.partition(" ")
        if not sp or not name.isidentifier() or len(version) > VERSION_MAX or \
                not version.isprintable() or (names and name <= names[-1]):
            raise ValueError("imports line %r" % line[:40])
        names.append(name)
    return record("imports", text)


def leave(status, mod, done_fd):
    """Exits as the interpreter would for the code (its threads joined, atexit handlers run,
    its objects freed, its files flushed) without tearing down every module: with numpy and
    pandas imported that teardown cost 220 ms of a 250 ms run. In warm mode it then closes its
    streams and tells the runner its exit status on done_fd, so the report does not wait for
    the kernel to take this process's memory apart (a third of a warm run's time)."""
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        (ATEXIT[0] or own_module("atexit"))._run_exitfuncs()
        mod.__dict__.clear()
        import gc
        import _io
        gc.collect()
        # What the code made since the runner froze its own objects: a file it left open
        # elsewhere than in __main__ is flushed as finalization would.
        for gen in (0, 1, 2):
            for o in gc.get_objects(gen):
                # The C base of every file object: io.IOBase, an ABC, costs a walk of
                # its subclasses for each type it has not seen.
                if isinstance(o, _io._IOBase) and not o.closed:
                    try:
                        o.flush()
                    except BaseException:
                        pass
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    import posix
    if done_fd is None:
        posix._exit(status)
    for fd in (1, 2):
        try:
            posix.close(fd)
        except OSError:
            pass
    try:
        # Unless the code put a file of its own at that number.
        if posix.fstat(done_fd).st_ino == DONE_INODE[0]:
            posix.write(done_fd, b"%d\n" % status)
        # Nobody waits for the exit now: freeing our memory should not slow the runner
        # and the caller, which have the result to pass on. The yield gives the runner,
        # woken by the write, this CPU at once: a change of policy does not reschedule, and
        # it waited behind our exit (a warm print(1)'s p50 1.3 -> 0.8 ms in the sandbox).
        posix.sched_setscheduler(0, posix.SCHED_IDLE, posix.sched_param(0))
        posix.sched_yield()
    except (AttributeError, OSError):
        pass
    posix._exit(status)


def finish(rep_fd, records, status, warm):
    """Writes the report, the exit status its last record, and exits with that status. The
    host ends a warm run once the report and the output streams are closed, before this
    process is gone (the teardown of its namespaces is not the run's), so they are closed
    here, and the exit, which nobody waits for then, goes at idle priority: freeing this
    process's memory (milliseconds of CPU with pandas loaded) should not slow the caller,
    which gets the result meanwhile, on a machine with few cores."""
    import posix
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    for fd in (1, 2):
        try:
            posix.close(fd)
        except OSError:
            pass
    # The interpreter as the runner knows it: the code's process cannot change what we say.
    records = records + [record("interpreter.path", sys.executable or ""),
                         record("interpreter.version", sys.version)]
    write_all(rep_fd, b"".join(records) + record("exit.status", str(status)))
    posix.close(rep_fd)
    if warm:
        try:
            posix.sched_setscheduler(0, posix.SCHED_IDLE, posix.sched_param(0))
            posix.sched_yield()     # the host, woken by the report, before our exit
        except (AttributeError, OSError):
            pass
    posix._exit(status)


def child_done_fd(done_r, done_w, rep_fd):
    """In the code's process, just forked: its end of the pipe on which it says it is done
    (leave()), put where the report's descriptor was, which it must not hold; so warm and
    cold runs show the code the same descriptors."""
    import posix
    posix.close(done_r)
    posix.dup2(done_w, rep_fd, inheritable=False)
    posix.close(done_w)
    DONE_INODE[0] = posix.fstat(rep_fd).st_ino
    return rep_fd


DONE_INODE = [None]     # the code's process's: its done pipe's


class ChildWait:
    """Warm mode: the wait status of the code's process, as it says it on done_r once its
    streams are closed and its files flushed (leave()), before its exit, or from waitpid()
    when it ended without saying so (killed, or the code exited itself). What it says is the
    code's to forge, as its exit status is anyway; a process the code left behind may hold
    done_r's other end, so the child's own end is watched too (pidfd). Made as soon as the
    child is forked, before the job's clock starts."""

    def __init__(self, pid, done_r):
        import posix
        import select
        self.pid, self.done_r, self.poll = pid, done_r, None
        try:
            self.pidfd = posix.pidfd_open(pid)
        except (AttributeError, OSError):
            return
        self.poll = select.poll()
        self.poll.register(done_r, select.POLLIN)
        self.poll.register(self.pidfd, select.POLLIN)

    def status(self):
        import posix
        if self.poll is None:
            return posix.waitpid(self.pid, 0)[1]
        said = b""
        while True:
            ready = dict(self.poll.poll())
            if self.pidfd in ready:
                break
            chunk = posix.read(self.done_r, 16)
            if not chunk:
                self.poll.unregister(self.done_r)
                continue
            said += chunk
            if said.endswith(b"\n") or len(said) > 8:
                text = said[:-1].decode("ascii", "replace")
                if text.isdigit() and len(text) <= 3 and int(text) <= 255:
                    return int(text) << 8      # as waitpid() gives an exit status
                self.poll.unregister(self.done_r)
        return posix.waitpid(self.pid, 0)[1]


def rehearse_runner():
    """Warm mode: the runner's own part of a job (reading its copy, compiling it, checking a
    result, looking for dropped files) once before the job, for the pages it writes (copies
    of the zygote's, for a forked worker)."""
    checked_result(record("expr.kind", "float") + record("expr.text", "3.5"),
                   allowed_read(record("any.expr", b"")))
    dropped_files()


ATEXIT = [None]     # the atexit module, for leave(): imported before a warm job


def forget_module(name):
    """name out of sys.modules, and out of its package's attributes: a later import finds it
    as one that never happened would."""
    m = sys.modules.pop(name, None)
    parent, _, attr = name.rpartition(".")
    if parent in sys.modules and getattr(sys.modules[parent], attr, None) is m:
        try:
            delattr(sys.modules[parent], attr)
        except BaseException:
            pass


def own_module(name):
    """A built-in module for the runner's use, left out of sys.modules unless it was there:
    the code finds sys.modules as a cold run would."""
    had = name in sys.modules
    mod = __import__(name)
    if not had:
        del sys.modules[name]
    return mod


def rehearse():
    """Warm mode: the code's process runs a program of its own through the job's path before
    the job comes. Its pages are the runner's until written, copy-on-write; a first run
    copies those it touches (reference counts, caches, the compiler's and the evaluator's
    state) while the run's clock is not going yet. It prints nothing: output before the job
    must not reach it."""
    import posix
    try:
        code, answer_vars, globals_json, mod, _ = read_job(record("code", REHEARSAL))
        compiled, info = compile_job(code, globals_json, mod)
        allowed = allowed_records(allowed_of(info, answer_vars))
        recs = run_code(compiled, info, mod, answer_vars, "")[1]
        res_fd = posix.memfd_create("calcroute-rehearsal", posix.MFD_CLOEXEC)
        write_file(res_fd, allowed + b"".join(recs))
        read_file(res_fd)
        posix.close(res_fd)
        mod.__dict__.clear()
    except BaseException:
        pass
    # Importing it when the job is done took a tenth of a print(1)'s run (a zygote's worker
    # has the zygote's).
    if ATEXIT[0] is None:
        ATEXIT[0] = own_module("atexit")
    # The pool's warm-up again, here: the pages a like job will write are copied now.
    if WARMUP[0]:
        warm_up(WARMUP[0])
    # Last: what the job's end reports of the packages loaded now is made once, here, unless
    # the zygote made it and the warm-up imported nothing since; what that imports
    # (importlib.metadata, for a package without __version__) is not the code's.
    if PACKAGES["tops"] is None or WARMUP[0]:
        before = set(sys.modules)
        try:
            imported_packages()
        except BaseException:
            pass
        for name in set(sys.modules) - before:
            forget_module(name)


def warm_child(data, res_fd, done_fd, allowed_fd):
    """Warm mode: the code's process compiles the job's code itself, leaves the candidates it
    can have in allowed_fd for the runner (no code has run yet: they are the job's) and runs
    it. Code that does not compile is reported as a cold runner reports it: its exception
    alone, status 1."""
    import posix
    code, answer_vars, globals_json, mod, seed = read_job(data)
    text = code.decode("utf-8", "replace")
    try:
        compiled, info = compile_job(code, globals_json, mod)
    except BaseException as e:
        posix.close(allowed_fd)
        child_end(1, exception_records(e, text), mod, res_fd, done_fd)
    write_file(allowed_fd, allowed_records(allowed_of(info, answer_vars)))
    posix.close(allowed_fd)
    return child_main((compiled, info, mod, answer_vars, text, seed), res_fd, done_fd)


# The zygote of a warm pool (sandbox/ns/pool.c): a warm runner that never takes a job. It
# imports the preload list once and then clones one worker per message of the host into
# namespaces of its own (user, mount with new /tmp and /out, pid, net, ipc, uts, cgroup),
# which becomes a warm runner there, so its imports are the zygote's pages, shared
# copy-on-write, instead of a start of its own.
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID = 0x10000000, 0x00020000, 0x20000000
CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS = 0x40000000, 0x08000000, 0x04000000
CLONE_NEWCGROUP = 0x02000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND = 1, 2, 4, 8, 4096
# struct ns_msg of sandbox/ns/ns.c: kind, step, errno, status.
MSG_SETUP_FAILED, MSG_OUT_DIR, MSG_HELLO, MSG_EXIT = 1, 3, 4, 5
# Set-up steps, named on the host (enum ns_step).
STEP_SYNC, STEP_TMP, STEP_OUT, STEP_PROC, STEP_HOSTNAME, STEP_LOOPBACK = 1, 10, 11, 13, 16, 17
STEP_SEND_OUT, STEP_CAPS, STEP_NNP, STEP_SECCOMP, STEP_FDS, STEP_RLIMIT = 18, 19, 20, 21, 22, 23
STEP_FORKED = 26
RLIMITS = {"cpu": 0, "fsize": 1, "data": 2, "core": 4, "nproc": 6, "nofile": 7, "memlock": 8,
           "msgqueue": 12, "sigpending": 11}


ZYGOTE_BASE = set()     # the modules before the zygote imported its own, which the code's are not
WARMUP = [None]         # the pool's warm-up program, once the zygote has it
# What the zygote imports for itself, and standard modules code often imports beside them:
# each worker has them at hand for the code's import (StashedModules), which then runs none
# of their code (a sandboxed `import os` cost 2 ms of the code's process, most of a print(1)).
ZYGOTE_IMPORTS = ("ctypes", "fcntl", "socket", "array", "_struct", "select", "os", "re", "json",
                  "datetime", "decimal", "fractions", "statistics", "math", "collections",
                  "functools", "itertools", "string", "csv", "calendar", "copy", "operator")
# For each module the zygote imported: what its import put in sys.modules besides (LOADED),
# and the modules its import statements named that were there already (NAMED); STASH_DEPS
# joins both, transitively: what a cold import of the module leaves in sys.modules.
LOADED, NAMED, STASH_DEPS = {}, {}, {}
STASH_NAMES = []        # how many the zygote's others are, and its modules not in ZYGOTE_BASE,
                        # once it serves


class SetupError(Exception):
    pass


def zygote_spec(chan_fd):
    """The host's first message: the worker's mount options, its rlimits, its filter, the
    parts of /proc it masks, the pool's warm-up program."""
    import posix
    data = posix.read(chan_fd, 1 << 20)     # one message: the channel is a seqpacket socket
    spec = {"rlimit": [], "mask": []}
    for key, val in read_records(data):
        if key == "rlimit":
            name, cur, top = val.decode("ascii").split()
            spec["rlimit"].append((RLIMITS[name], int(cur), int(top)))
        elif key == "mask":
            kind, path = val.split(b" ", 1)
            spec["mask"].append((kind == b"dir", path))
        else:
            spec[key] = val
    return spec


def warm_up(code):
    """The pool's warm-up program, run once in the zygote after the imports (what it
    initialises, every worker inherits), in a module of its own, its output discarded and
    its errors ignored: it is the operator's, not a job. It runs as a job does, its final
    value described too: a DataFrame's first repr in a worker cost more than its groupby."""
    import posix
    null = posix.open("/dev/null", posix.O_WRONLY)
    saved = [posix.dup(1), posix.dup(2)]
    posix.dup2(null, 1)
    posix.dup2(null, 2)
    main, mod = sys.modules.get("__main__"), None
    try:
        _, answer_vars, globals_json, mod, _ = read_job(b"")
        compiled, info = compile_job(code, globals_json, mod)
        run_code(compiled, info, mod, answer_vars, "")
    except BaseException:
        pass
    if main is not None:
        sys.modules["__main__"] = main
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    for fd, to in ((saved[0], 1), (saved[1], 2), (null, None)):
        if to is not None:
            posix.dup2(fd, to)
        posix.close(fd)
    if mod is not None:
        mod.__dict__.clear()


def zygote(chan_fd, rep_fd):
    """Serves the host's requests for workers until it closes the channel. Returns only in a
    worker's runner, ready to go on as a warm runner does."""
    import posix
    import _signal
    spec = zygote_spec(chan_fd)
    WARMUP[0] = spec.get("warmup")
    if WARMUP[0]:
        warm_up(WARMUP[0])
    # A fork copies the calling thread alone: beside another (a preloaded module's, the
    # warm-up's), a worker could inherit a lock that nobody will ever release. The pool then
    # starts python for each worker instead.
    threads = len(posix.listdir("/proc/self/task"))
    if threads > 1:
        sys.stderr.write("calcroute runner: the zygote runs %d threads after its imports and "
                         "warm-up: it cannot fork workers\n" % threads)
        posix._exit(2)
    # What we import for ourselves from here on is taken out of the workers' sys.modules.
    ZYGOTE_BASE.update(sys.modules)
    # What every worker's code process would make before its job (rehearse()), made once:
    # the packages report (what that imports is not the workers': they keep ZYGOTE_BASE) and
    # atexit, which leave() needs.
    try:
        imported_packages()
    except BaseException:
        pass
    PACKAGES["modules"] = {name: sys.modules[name] for name in ZYGOTE_BASE if name in sys.modules}
    ATEXIT[0] = own_module("atexit")
    import_traced(ZYGOTE_IMPORTS)
    import ctypes
    import fcntl
    import select
    import socket
    import _struct
    chan = socket.socket(fileno=chan_fd)
    libc = ctypes.CDLL(None, use_errno=True)
    # Each child (a worker's pid 1, or where clone() fails the process that forks it) is
    # ours to reap: a cloned pid 1's wait status goes to the host, as the forked worker sends
    # its runner's.
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    children = {}       # its pidfd: its pid, and our copy of its control socket (cloned)
    clone_worker = clone_maker() or (lambda: -1)
    spec["structs"] = worker_structs(spec)
    # What we imported for ourselves, which each worker's runner takes out of sys.modules.
    STASH_NAMES.extend(name for name in sys.modules if name not in ZYGOTE_BASE)
    STASH_NAMES.insert(0, len(sys.modules) - len(STASH_NAMES))
    poller = select.poll()
    poller.register(chan_fd, select.POLLIN)
    import gc
    gc.collect()
    gc.freeze()     # the workers' collectors leave our objects, and their pages, alone
    write_all(rep_fd, b"R")
    while True:
        for fd, _ in poller.poll():
            if fd != chan_fd:
                pid, ctl = children.pop(fd)
                poller.unregister(fd)
                posix.close(fd)
                status = posix.waitpid(pid, 0)[1]
                if ctl is not None:
                    try:
                        posix.write(ctl, ns_msg(MSG_EXIT, status=status))
                    except OSError:
                        pass
                    posix.close(ctl)
                continue
            msg, fds, _, _ = socket.recv_fds(chan, 16, 5)
            if not msg:
                posix._exit(0)
            if len(fds) == 5:
                pid = clone_worker()
                cloned = pid >= 0
                if pid < 0:
                    pid = posix.fork()
                if pid == 0:
                    chan.detach()
                    # Nothing of another worker's: its control socket could say how it ended.
                    for fd in [chan_fd, rep_fd] + [x for k, v in children.items()
                                                   for x in (k, v[1]) if x is not None]:
                        posix.close(fd)
                    return (cloned_worker if cloned else forked_worker)(fds, spec, libc)
                ctl = posix.dup(fds[0]) if cloned else None
                pidfd = posix.pidfd_open(pid)
                children[pidfd] = (pid, ctl)
                poller.register(pidfd, select.POLLIN)
            for fd in fds:
                posix.close(fd)


def ns_msg(kind, step=0, err=0, status=0):
    import _struct
    return _struct.pack("iiii", kind, step, err, status)


def check(rc, step):
    import ctypes
    if rc != 0:
        raise SetupError(step, ctypes.get_errno())


def setup_failed(ctl, e, step):
    """Tells the host which step failed, and why."""
    import posix
    if isinstance(e, SetupError):
        step, err = e.args
    else:
        err = getattr(e, "errno", None) or 5    # EIO: not a system call's failure
    try:
        ctl.send(ns_msg(MSG_SETUP_FAILED, step, err))
    except OSError:
        pass
    posix._exit(127)


# clone()'s number where we know it: a worker's pid 1 made by the zygote in one step.
CLONE_SYSCALL = {"x86_64": 56, "aarch64": 220}
SIGCHLD_NUMBER = 17
CLONE_FLAGS = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS


def clone_maker():
    """The zygote's clone_worker(): a function that makes a child in namespaces of its own
    (user, mount, pid, net, ipc, uts), pid 1 of its pid namespace, by clone() as fork() would
    make it (its pid here, 0 in it, -1 where it refuses), or None where this machine's
    clone() is not known. A fork and an unshare() make the same in two processes, each a copy
    of our address space (with pandas loaded, 2.5 ms of the kernel's each), the first staying
    to report the second's end (forked_worker()). The interpreter's own fork hooks run around
    it as around os.fork(); glibc's, which only correct its record of the thread's id, do
    not: pid 1 runs the runner, never the code."""
    import ctypes
    import posix
    nr = CLONE_SYSCALL.get(posix.uname().machine)
    if nr is None:
        return None
    api = ctypes.pythonapi
    raw = ctypes.PyDLL(None, use_errno=True).syscall     # the GIL held, as os.fork() holds it
    raw.restype, raw.argtypes = ctypes.c_long, [ctypes.c_long] * 6
    before, parent, child = api.PyOS_BeforeFork, api.PyOS_AfterFork_Parent, api.PyOS_AfterFork_Child
    for hook in (before, parent, child):
        hook.restype, hook.argtypes = None, []
    flags = CLONE_FLAGS | SIGCHLD_NUMBER

    def clone_worker():
        before()
        pid = raw(nr, flags, 0, 0, 0, 0)
        (child if pid == 0 else parent)()
        return int(pid)
    return clone_worker


def worker_start(fds, libc):
    """The first steps of a worker the zygote made: its streams on /dev/null, then its pid
    told to the host, which moves it into its cgroup and says go. Our /proc files stay ours
    only while we are dumpable, which the zygote is not."""
    import posix
    import _signal
    import socket
    ctl = socket.socket(fileno=fds[0])
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    null = posix.open("/dev/null", posix.O_RDWR)
    for fd in (0, 1, 2):
        posix.dup2(null, fd)
    try:
        ctl.send(ns_msg(MSG_HELLO))     # the host reads our pid off the message
        if ctl.recv(1) != b"g":
            posix._exit(127)
        check(libc.prctl(4, 1, 0, 0, 0), STEP_FORKED)
    except BaseException as e:
        setup_failed(ctl, e, STEP_SYNC)
    return ctl, null


def cloned_worker(fds, spec, libc):
    """A worker's pid 1, which the zygote cloned into namespaces of its own: set up as a
    forked worker's runner is, and its runner; the zygote tells the host how it ended."""
    ctl, null = worker_start(fds, libc)
    try:
        worker_namespaces(ctl, spec, libc, cloned=True)
        return worker_runner(ctl, null, *fds[1:], spec, libc)
    except BaseException as e:
        setup_failed(ctl, e, STEP_FDS)


def forked_worker(fds, spec, libc):
    """A worker the zygote forked where it cannot clone one (clone_worker()): enters
    namespaces of its own and forks their pid 1, the worker's runner, which returns from here.
    This process stays behind, outside the runner's pid namespace, to tell the host how the
    runner ended."""
    import posix
    ctl_fd, out_w, err_w, job_fd, rep_fd = fds
    ctl, null = worker_start(fds, libc)
    worker_namespaces(ctl, spec, libc, cloned=False)
    pid = posix.fork()
    if pid == 0:
        try:
            return worker_runner(ctl, null, out_w, err_w, job_fd, rep_fd, spec, libc)
        except BaseException as e:
            setup_failed(ctl, e, STEP_FDS)
    for fd in (out_w, err_w, job_fd, rep_fd):
        posix.close(fd)
    while True:
        try:
            st = posix.waitpid(pid, 0)[1]
            break
        except InterruptedError:
            continue
    try:
        ctl.send(ns_msg(MSG_EXIT, status=st))
    except OSError:
        pass
    posix._exit(0)


def worker_namespaces(ctl, spec, libc, cloned):
    """The worker's user namespace mapped (made already when cloned), its other namespaces
    (cgroup's last: the host has moved us into ours), its /tmp and /out, host name and
    loopback, and /out passed to the host."""
    import posix
    import socket
    step = STEP_FORKED
    try:
        if not cloned:
            check(libc.unshare(CLONE_NEWUSER), STEP_FORKED)
        for name, text in (("uid_map", b"0 0 1\n"), ("setgroups", b"deny"), ("gid_map", b"0 0 1\n")):
            fd = posix.open("/proc/self/" + name, posix.O_WRONLY)
            posix.write(fd, text)
            posix.close(fd)
        check(libc.unshare((0 if cloned else CLONE_FLAGS & ~CLONE_NEWUSER) | CLONE_NEWCGROUP),
              STEP_FORKED)
        fl = MS_NOSUID | MS_NODEV | MS_NOEXEC
        check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", fl, spec["tmp"]), STEP_TMP)
        check(libc.mount(b"tmpfs", b"/out", b"tmpfs", fl, spec["out"]), STEP_OUT)
        step = STEP_HOSTNAME
        socket.sethostname("calcroute")
        step = STEP_LOOPBACK
        import fcntl
        import _struct
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        ifr = bytearray(fcntl.ioctl(s, 0x8913, _struct.pack("16sh22x", b"lo", 0)))    # SIOCGIFFLAGS
        flags = _struct.unpack_from("h", ifr, 16)[0] | 0x1 | 0x40    # IFF_UP, IFF_RUNNING
        fcntl.ioctl(s, 0x8914, _struct.pack("16sh22x", b"lo", flags))                  # SIOCSIFFLAGS
        s.close()
        step = STEP_SEND_OUT
        out = posix.open("/out", posix.O_RDONLY | posix.O_DIRECTORY)
        socket.send_fds(ctl, [ns_msg(MSG_OUT_DIR)], [out])
        posix.close(out)
    except BaseException as e:
        setup_failed(ctl, e, step)


def worker_structs(spec):
    """The zygote: the C structures each worker's runner hands the kernel (the tier's filter,
    its rlimits), made once."""
    import ctypes

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    class Rlimit(ctypes.Structure):
        _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]
    flt = spec["filter"]
    return (Fprog(len(flt) // 8, flt),
            [(res, Rlimit(cur, top)) for res, cur, top in spec["rlimit"]],
            (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)())


def worker_runner(ctl, null, out_w, err_w, job_fd, rep_fd, spec, libc):
    """pid 1 of the worker's namespaces: its /proc, the privileges of a cold run's runner (no
    capability, the tier's filter over the zygote's, its rlimits), its descriptors."""
    import ctypes
    import posix
    # Dies with its parent, as a cold run's pid 1 dies with the host's thread: the forked
    # worker the host watches (and may kill), or, cloned, the zygote.
    check(libc.prctl(1, 9, 0, 0, 0), STEP_FDS)            # PR_SET_PDEATHSIG, SIGKILL
    check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
          STEP_PROC)
    # What a cold run's /proc hides (sandbox/ns/ns.c, ns_proc_masked); a path this kernel lacks
    # stays absent.
    for is_dir, path in spec["mask"]:
        rc = (libc.mount(b"tmpfs", path, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                         spec["mask_tmpfs"]) if is_dir
              else libc.mount(b"/dev/null", path, None, MS_BIND, None))
        if rc != 0 and ctypes.get_errno() != 2:     # ENOENT
            check(rc, STEP_PROC)
    posix.setsid()
    for cap in range(64):
        if libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:   # PR_CAPBSET_DROP
            check(-1, STEP_CAPS)
    check(libc.prctl(47, 4, 0, 0, 0), STEP_CAPS)          # PR_CAP_AMBIENT_CLEAR_ALL
    prog, rlimits, hdr, caps = spec["structs"]          # hdr: _LINUX_CAPABILITY_VERSION_3
    check(libc.syscall(126, hdr, caps), STEP_CAPS)        # SYS_capset
    check(libc.prctl(38, 1, 0, 0, 0), STEP_NNP)           # PR_SET_NO_NEW_PRIVS
    check(libc.prctl(22, 2, ctypes.byref(prog), 0, 0), STEP_SECCOMP)     # SECCOMP_MODE_FILTER
    for res, limit in rlimits:
        check(libc.setrlimit(res, ctypes.byref(limit)), STEP_RLIMIT)
    import fcntl
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (null, out_w, err_w, job_fd, rep_fd)]
    for i, fd in enumerate(high):
        posix.dup2(fd, i)
    ctl.send(ns_msg(MSG_HELLO))     # the host watches us, the worker's init, by this pid
    ctl.detach()
    posix.closerange(5, 1 << 16)
    posix.chdir("/out")
    # What the zygote imported for itself is not the code's: sys.modules is a cold run's, and
    # an import finds the module as a cold one would leave it, its code not run again.
    for name in STASH_NAMES[1:]:
        if name in sys.modules:
            STASHED.modules[name] = sys.modules.pop(name)
    # One the zygote imported once it served (a function's own import) is found the long way.
    if len(sys.modules) != STASH_NAMES[0]:
        for name in set(sys.modules) - ZYGOTE_BASE:
            STASHED.modules[name] = sys.modules.pop(name)
    return 3, 4


def import_traced(names):
    """The zygote: imports names (one that fails is skipped), noting for each module loaded
    meanwhile LOADED and NAMED, then STASH_DEPS."""
    import builtins
    import _frozen_importlib as bootstrap
    real = builtins.__import__
    loading = [None]    # the modules whose import is under way, innermost last

    def traced(name, globals=None, locals=None, fromlist=(), level=0):
        target = None
        try:
            target = (bootstrap._resolve_name(name, bootstrap._calc___package__(globals), level)
                      if level else name)
        except Exception:
            pass
        before = set(sys.modules) if target and target not in sys.modules else None
        if before is not None:
            loading.append(target)
        try:
            module = real(name, globals, locals, fromlist, level)
        finally:
            if before is not None:
                loading.pop()
        if target:
            if before is not None:
                LOADED.setdefault(target, set()).update(set(sys.modules) - before - {target})
            parts = target.split(".")
            named = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
            named |= {"%s.%s" % (target, x) for x in fromlist or () if x != "*"}
            named = {n for n in named if n in sys.modules}
            # An extension module's imports (_decimal's of collections.abc) come with no
            # globals of its own: they are the module's under way.
            for who in {globals.get("__name__") if globals else None, loading[-1]}:
                NAMED.setdefault(who, set()).update(named)
        return module

    builtins.__import__ = traced
    try:
        for name in names:
            try:
                __import__(name)
            except Exception:
                pass
    finally:
        builtins.__import__ = real
    for name in set(sys.modules) - ZYGOTE_BASE:
        STASH_DEPS[name] = stash_deps(name)


def stash_deps(name):
    """STASH_DEPS[name]: LOADED and NAMED, followed from name, and the aliases a package of
    them set for a module of them (collections.abc, os.path), which neither shows when the
    package was loaded as a submodule's parent."""
    deps, todo = set(), [name]
    while todo:
        at = todo.pop()
        for dep in LOADED.get(at, set()) | NAMED.get(at, set()):
            if dep != name and dep not in deps:
                deps.add(dep)
                todo.append(dep)
    made = {id(sys.modules[n]) for n in deps | {name} if n in sys.modules}
    for alias, module in list(sys.modules.items()):
        if alias.rpartition(".")[0] in deps | {name} and id(module) in made and alias != name:
            deps.add(alias)
    return frozenset(deps)


class StashedModules:
    """First on sys.meta_path (STASHED) in every run, so that the code sees the same finders
    cold and warm; in a worker the zygote forked, it holds the modules the zygote imported
    (ZYGOTE_IMPORTS and theirs), out of sys.modules, and serves them to an import as made
    already. With each goes what its cold import would leave in sys.modules (STASH_DEPS), and
    each goes once: an import after the code took it out of sys.modules runs it afresh, as a
    cold one would. A module whose import imports one the job's seed applies to (random) is
    not served: that import runs, and the seeder with it (SeededImports)."""

    def __init__(self, modules):
        self.modules, self.specs = modules, {}
        self.asked = 0      # imports that came to the finders (packages_settled())

    def find_spec(self, name, path=None, target=None):
        self.asked += 1
        module = self.modules.get(name)
        spec = getattr(module, "__spec__", None)
        deps = STASH_DEPS.get(name)
        if spec is None or deps is None or name in SEEDERS or not deps.isdisjoint(SEEDERS):
            return None
        import _frozen_importlib
        self.specs[name] = spec
        return _frozen_importlib.ModuleSpec(name, self, origin=spec.origin,
                                            is_package=spec.submodule_search_locations is not None)

    def create_module(self, spec):
        return self.modules.pop(spec.name)

    def exec_module(self, module):
        name = module.__spec__.name
        module.__spec__ = self.specs.pop(name)     # its own, as the import that made it left it
        for dep in STASH_DEPS[name]:
            if dep not in sys.modules and dep in self.modules:
                sys.modules[dep] = self.modules.pop(dep)


STASHED = StashedModules({})


def main():
    import posix
    if sys.path[:1] == [""]:    # an interpreter older than PYTHONSAFEPATH: not the cwd
        del sys.path[0]
    sys.meta_path.insert(0, STASHED)
    add_site_dirs()

    job_fd, rep_fd = int(sys.argv[1]), int(sys.argv[2])
    # A third argument is the warm mode of a pool's worker (sandbox/ns/pool.c): the runner
    # imports those modules and forks the code's process before its job exists, so that the
    # job, when the host writes it into JOB_FD (a socket), finds both done. A fourth,
    # "zygote", makes it the pool's zygote, which forks such runners (zygote()).
    warm = len(sys.argv) > 3
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    if warm:
        preload(sys.argv[3])
        # The first compile to a syntax tree makes the interpreter's AST types: 5 ms, paid
        # here once for the runner and the child it forks.
        compile_job(b"def solution():\n    return 1\nx = 1\nx\n", None, type(sys)("warmup"))
        if sys.argv[4:5] == ["zygote"]:
            sys.argv = [""]
            set_dumpable(0)
            job_fd, rep_fd = zygote(job_fd, rep_fd)
    posix.set_inheritable(rep_fd, False)
    sys.argv = [""]
    # The child's description goes to a file, not a pipe: a pipe would need reading while the
    # child runs, and a process the code leaves behind could hold it open after the child.
    res_fd = posix.memfd_create("calcroute-result", posix.MFD_CLOEXEC)
    set_dumpable(0)
    import _signal
    # SIGINT is the only signal python catches; as pid 1 we ignore the rest already.
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)

    if warm:
        # The job goes from the host straight to the code's process, which compiles and runs
        # it; before the code runs, it leaves here what the runner needs to check a value it
        # describes (allowed_of()), made of the job alone, so the runner parses nothing.
        allowed_fd = posix.memfd_create("calcroute-allowed", posix.MFD_CLOEXEC)
        done_r, done_w = posix.pipe()   # from it: rehearsed; then its exit status (leave())
        sys.stdout.flush()
        sys.stderr.flush()
        import gc
        gc.freeze()
        pid = posix.fork()
        if pid == 0:
            done_fd = child_done_fd(done_r, done_w, rep_fd)
            rehearse()
            # What the rehearsal left is not the code's: leave() looks at the code's alone.
            gc.freeze()
            write_all(done_fd, b"r")
            data = read_all(job_fd)
            posix.close(job_fd)
            # No job: the worker was never used.
            return warm_child(data, res_fd, done_fd, allowed_fd) if data else 0
        posix.close(job_fd)
        posix.close(done_w)
        child = ChildWait(pid, done_r)
        rehearse_runner()
        # Ready once the code's process has rehearsed too: a job that came sooner would
        # share the CPU with the rehearsal (on a small machine, wait for it).
        posix.read(done_r, 1)
        write_all(rep_fd, b"R")         # ready: the host may hand a job over
        st = child.status()
        allowed = allowed_read(read_file(allowed_fd))
    else:
        with open(job_fd, "rb") as f:
            data = f.read()
        code, answer_vars, globals_json, mod, seed = read_job(data)
        text = code.decode("utf-8", "replace")
        try:
            compiled, info = compile_job(code, globals_json, mod)
        except BaseException as e:
            finish(rep_fd, exception_records(e, text), 1, warm)
        allowed = allowed_of(info, answer_vars)
        done_r, done_w = posix.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        import gc
        gc.freeze()     # the child's collector then leaves our objects, and their pages, alone
        pid = posix.fork()
        if pid == 0:
            # The warm child's descriptors, though nobody reads this pipe.
            child_done_fd(done_r, done_w, rep_fd)
            return child_main((compiled, info, mod, answer_vars, text, seed), res_fd, None)
        posix.close(done_w)
        # A cold run's host waits for pid 1's exit anyway, and its rusage counts the child's
        # CPU only once we reap it (where no cgroup counts it): the done pipe stays open,
        # unread.
        st = posix.waitpid(pid, 0)[1]
    data = read_file(res_fd, RESULT_MAX + 1)
    try:
        report = checked_result(data, allowed)
    except Exception as e:
        sys.stderr.write("calcroute runner: the code's result was refused: %s\n" % e)
        return 2
    if posix.WIFSIGNALED(st):
        report.append(record("exit.signal", str(posix.WTERMSIG(st))))
    count, names = dropped_files()
    if count:
        report += [record("dropped.count", str(count)), record("dropped.names", b"\0".join(names))]
    # Nothing of ours is left to flush, and tearing the interpreter down would cost more
    # than the run it reported.
    finish(rep_fd, report, posix.WEXITSTATUS(st) if posix.WIFEXITED(st) else 0, warm)


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException as e:  # the runner itself failed: say so on stderr, exit 2
        sys.stderr.write("calcroute runner: %s: %s\n" % (type(e).__name__, e))
        rc = 2
    raise SystemExit(rc)
