# calcroute sandbox runner: runs one piece of code as __main__ and reports its final value or
# its exception on a separate file descriptor, so that nothing the code prints can be mistaken
# for the answer. Embedded in libcalcroute (sandbox/runner_embed.c) and run as
#     python3 -I -S -c <this file> JOB_FD REPORT_FD
# Both the job and the report are records "<key> <length>\n<bytes>\n" (sandbox/sandbox.h).
# The code never holds the report descriptor: it runs in a child of the runner, which closes
# it first and describes its result to the runner in the same records; the runner, which the
# child can neither signal, trace nor read (it is not dumpable), checks that description and
# writes the report itself, so a record the code forges is refused or never reaches the host.
# Only built-in modules are imported on the common path (posix, not os; _ast, not ast.py; no
# json) to keep the start-up cost of every sandboxed run low. -S skips site, whose .pth hooks and
# sitecustomize are the host's business and cost more than the rest of start-up; the
# package directories it would add are added here instead (add_site_dirs).
import sys

FILENAME = "<code>"
EXPR_HOOK = "__calcroute_expr__"
SOLUTION_HOOK = "__calcroute_solution__"


RESULT_MAX = 15 << 20      # bytes of the child's description read (the host keeps 16 MiB)
NUMPY_INTS = frozenset("int8 int16 int32 int64 uint8 uint16 uint32 uint64 longlong ulonglong"
                       .split())
NUMPY_FLOATS = frozenset("float16 float32 float64 float128 longdouble".split())
# Type names the report gives only to values the runner checked itself.
RESERVED = frozenset(("int", "bool", "float", "Decimal", "Fraction")) | NUMPY_INTS | NUMPY_FLOATS
VALUE_KEYS = ("value.kind", "value.text", "value.type", "value.source")
ERROR_KEYS = ("error.type", "error.message", "error.line", "error.col", "error.errno",
              "error.filename")


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


def value_records(got, sources):
    """The report's value records for the child's description `got` ({key: bytes}); ValueError
    names what does not hold. repr and decimal text are made here from one checked number, so
    they cannot disagree, and the source must be one the final-value rule can give."""
    for k in ("value.kind", "value.text", "value.source"):
        if k not in got:
            raise ValueError("no %s record" % k)
    kind = got["value.kind"].decode("ascii")
    source = got["value.source"].decode("utf-8")
    tname = got["value.type"].decode("utf-8") if "value.type" in got else None
    if source not in sources:
        raise ValueError("source %r is not one this program can give" % source)
    if kind == "other":
        if not tname or tname in RESERVED or len(tname) > 256:
            raise ValueError("type %r for a value the runner did not check" % tname)
        return [record("value.type", tname), record("value.source", source),
                record("value.repr", got["value.text"])]
    text = got["value.text"].decode("ascii")
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
    recs = [record("value.type", tname or kind), record("value.source", source),
            record("value.repr", rep)]
    if dec is not None:
        recs.append(record("value.decimal", dec))
    return recs


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


def checked_result(data, sources):
    """The report records for what the child described: one value, or one exception, or
    nothing; anything else (an unknown or repeated record, a value and an exception at once,
    a number that does not read back as itself) is a ValueError."""
    if len(data) > RESULT_MAX:
        raise ValueError("over %d bytes" % RESULT_MAX)
    got = {}
    for key, val in read_records(data):
        if key not in VALUE_KEYS and key not in ERROR_KEYS:
            raise ValueError("unknown record %r" % key)
        if key in got:
            raise ValueError("a second %s record" % key)
        got[key] = val
    values = [k for k in got if k.startswith("value.")]
    if values and len(values) < len(got):
        raise ValueError("both a value and an exception")
    if values:
        return value_records(got, sources)
    return error_records(got) if got else []


class Analysis:
    """What the final-value rule needs from the module's syntax tree."""

    def __init__(self, tree, ast):
        self.solution = False      # a zero-argument solution() defined at module level
        self.solution_used = False  # ... and the name solution read anywhere
        self.assigned = []         # module-level assignment targets, in source order
        body = tree.body
        for st in body:
            if (type(st) is ast.FunctionDef and st.name == "solution"
                    and not st.args.posonlyargs
                    and len(st.args.args) == len(st.args.defaults)
                    and all(d is not None for d in st.args.kw_defaults)):
                self.solution = True
        self._walk(tree, ast)
        self._module_assigns(body, ast)

    def _walk(self, tree, ast):
        todo = [tree]
        seen = 0
        while todo and seen < 10_000_000:
            node = todo.pop()
            seen += 1
            if type(node) is ast.Name and node.id == "solution" and type(node.ctx) is ast.Load:
                self.solution_used = True
            for name in node._fields:
                child = getattr(node, name, None)
                if isinstance(child, list):
                    todo.extend(c for c in child if isinstance(c, ast.AST))
                elif isinstance(child, ast.AST):
                    todo.append(child)

    def _targets(self, t, ast, out):
        if type(t) is ast.Name:
            out.append(t.id)
        elif type(t) in (ast.Tuple, ast.List):
            for e in t.elts:
                self._targets(e, ast, out)

    def _module_assigns(self, body, ast):
        # Statements of the module, including those nested in if/for/while/with/try at module
        # level, but not in function or class bodies.
        for st in body:
            tp = type(st)
            if tp is ast.Assign:
                for t in st.targets:
                    self._targets(t, ast, self.assigned)
            elif tp is ast.AugAssign or (tp is ast.AnnAssign and st.value is not None):
                self._targets(st.target, ast, self.assigned)
            elif tp in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                continue
            else:
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(st, field, None)
                    if isinstance(sub, list):
                        self._module_assigns(sub, ast)
                for h in getattr(st, "handlers", ()) or ():
                    self._module_assigns(h.body, ast)


def hook_expressions(tree, ast):
    """Turns each module-level expression statement `e` into `__calcroute_expr__(e, line)`;
    returns how many there are."""
    hooked = 0
    for i, st in enumerate(tree.body):
        if type(st) is not ast.Expr:
            continue
        if i == 0 and type(st.value) is ast.Constant and isinstance(st.value.value, str):
            continue  # the docstring stays a docstring
        v = st.value
        loc = dict(lineno=v.lineno, col_offset=v.col_offset,
                   end_lineno=v.end_lineno, end_col_offset=v.end_col_offset)
        st.value = ast.Call(func=ast.Name(id=EXPR_HOOK, ctx=ast.Load(), **loc),
                            args=[v, ast.Constant(value=v.lineno, **loc)], keywords=[], **loc)
        hooked += 1
    return hooked


def hook_solution_calls(tree, ast):
    """Turns each call `solution(...)` made by module-level code into
    `__calcroute_solution__(solution(...))`, so that the final-value rule can take what the
    program's own last such call returned (`print(solution())`), as the in-process evaluator
    does. Bodies of def, lambda and class are left alone: a call from inside another function
    is not the program's answer. The hook wraps the value, not the call, so a raising
    solution() keeps its traceback free of runner frames."""
    todo = [tree]
    seen = 0
    while todo and seen < 10_000_000:
        node = todo.pop()
        seen += 1
        for name in node._fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                for i, c in enumerate(child):
                    if isinstance(c, ast.AST):
                        child[i] = _wrap_solution_call(c, ast, todo)
            elif isinstance(child, ast.AST):
                setattr(node, name, _wrap_solution_call(child, ast, todo))


def _wrap_solution_call(node, ast, todo):
    if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
        return node
    todo.append(node)
    if (type(node) is ast.Call and type(node.func) is ast.Name
            and node.func.id == "solution"):
        loc = dict(lineno=node.lineno, col_offset=node.col_offset,
                   end_lineno=node.end_lineno, end_col_offset=node.end_col_offset)
        return ast.Call(func=ast.Name(id=SOLUTION_HOOK, ctx=ast.Load(), **loc),
                        args=[node], keywords=[], **loc)
    return node


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


def error_line(e):
    if isinstance(e, SyntaxError) and e.filename == FILENAME:
        return e.lineno or 0
    line = 0
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def add_site_dirs():
    """The directories site.py would put on sys.path (Debian's and the upstream layout),
    without running any .pth file."""
    import posix
    v = "%d.%d" % sys.version_info[:2]
    for d in ("/usr/local/lib/python%s/dist-packages" % v, "/usr/lib/python3/dist-packages",
              "/usr/lib/python%s/dist-packages" % v,
              "%s/lib/python%s/site-packages" % (sys.prefix, v)):
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


def set_dumpable(flag):
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be traced nor its memory
    (/proc/PID/mem) opened by another of the same user. Through _ctypes, not ctypes: a third
    of the import cost."""
    import _ctypes
    prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")
    if _ctypes.call_function(prctl, (4, flag, 0, 0, 0)) != 0:
        raise OSError("prctl(PR_SET_DUMPABLE) failed")


def run_code(compiled, info, mod, answer_vars, text):
    """The child: runs the code and describes its result (exit status, records)."""
    import builtins
    exprs = []

    def on_expr(value, line):
        if value is not None:
            exprs.append((value, line))
            del exprs[:-1]
        return value

    solution_returned = []

    def on_solution(value):
        solution_returned[:] = [value]
        return value

    setattr(builtins, EXPR_HOOK, on_expr)
    setattr(builtins, SOLUTION_HOOK, on_solution)
    sys.modules["__main__"] = mod
    try:
        exec(compiled, mod.__dict__)
        g = mod.__dict__
        found = None
        if info.solution and not info.solution_used and callable(g.get("solution")):
            found = (g["solution"](), "solution()")
        if found is None:
            for name in answer_vars:
                if name in g:
                    found = (g[name], name)
                    break
        if found is None and solution_returned:
            found = (solution_returned[0], "solution()")
        if found is None and exprs:
            found = (exprs[-1][0], "last expression")
        if found is None:
            for name in reversed(info.assigned):
                if name in g:
                    found = (g[name], name)
                    break
        if found is None:
            return 0, []
        kind, vtext, tname = describe(found[0])
        recs = [record("value.kind", kind), record("value.text", vtext),
                record("value.source", found[1])]
        if tname is not None:
            recs.append(record("value.type", tname))
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
    recs = [record("error.type", type(e).__name__),
            record("error.message", e.msg if isinstance(e, SyntaxError) else str(e)),
            record("error.line", str(error_line(e)))]
    if isinstance(e, SyntaxError) and e.offset:
        recs.append(record("error.col", str(e.offset)))
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


def main():
    import posix
    add_site_dirs()
    import _ast as ast
    import builtins

    job_fd, rep_fd = int(sys.argv[1]), int(sys.argv[2])
    posix.set_inheritable(rep_fd, False)
    with open(job_fd, "rb") as f:
        job = read_records(f.read())
    code = b""
    answer_vars = []
    globals_json = None
    served = {}
    for key, val in job:
        if key == "code":
            code = val
        elif key == "var":
            answer_vars.append(val.decode())
        elif key == "globals":
            globals_json = val.decode()
        elif key == "module":
            name, _, src = val.partition(b"\n")
            served[name.decode()] = src
    if served:
        sys.meta_path.append(ServedModules(served))
    if not answer_vars:
        answer_vars = ["ans", "result", "answer"]
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    text = code.decode("utf-8", "replace")
    sys.argv = [""]

    mod = type(sys)("__main__")
    mod.__dict__["__builtins__"] = builtins
    try:
        if globals_json is not None:
            import json
            for name, value in json.loads(globals_json).items():
                mod.__dict__[str(name)] = value
        tree = compile(code, FILENAME, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        info = Analysis(tree, ast)
        exprs = hook_expressions(tree, ast)
        hook_solution_calls(tree, ast)
        compiled = compile(tree, FILENAME, "exec", dont_inherit=True)
    except BaseException as e:
        write_all(rep_fd, b"".join(exception_records(e, text)))
        return 1
    sources = set(answer_vars) | set(info.assigned)
    if info.solution or info.solution_used:
        sources.add("solution()")
    if exprs:
        sources.add("last expression")

    # The child's description goes to a file, not a pipe: a pipe would need reading while the
    # child runs, and a process the code leaves behind could hold it open after the child.
    res_fd = posix.memfd_create("calcroute-result", posix.MFD_CLOEXEC)
    set_dumpable(0)
    import _signal
    # SIGINT is the only signal python catches; as pid 1 we ignore the rest already.
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    sys.stdout.flush()
    sys.stderr.flush()
    import gc
    gc.freeze()     # the child's collector then leaves our objects, and their pages, alone
    pid = posix.fork()
    if pid == 0:
        posix.close(rep_fd)
        set_dumpable(1)
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        status, recs = run_code(compiled, info, mod, answer_vars, text)
        try:
            sys.stdout.flush()
        except BaseException:
            pass
        # Whatever the code itself wrote there goes first.
        posix.ftruncate(res_fd, 0)
        data, off = b"".join(recs), 0
        while off < len(data):
            off += posix.pwrite(res_fd, data[off:], off)
        return status
    st = posix.waitpid(pid, 0)[1]
    data = b""
    while len(data) <= RESULT_MAX:
        chunk = posix.pread(res_fd, RESULT_MAX + 1 - len(data), len(data))
        if not chunk:
            break
        data += chunk
    try:
        report = checked_result(data, sources)
    except Exception as e:
        sys.stderr.write("calcroute runner: the code's result was refused: %s\n" % e)
        return 2
    if posix.WIFSIGNALED(st):
        report.append(record("exit.signal", str(posix.WTERMSIG(st))))
    write_all(rep_fd, b"".join(report))
    posix.close(rep_fd)
    # Nothing of ours is left to flush, and tearing the interpreter down would cost more
    # than the run it reported.
    posix._exit(posix.WEXITSTATUS(st) if posix.WIFEXITED(st) else 0)


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException as e:  # the runner itself failed: say so on stderr, exit 2
        sys.stderr.write("calcroute runner: %s: %s\n" % (type(e).__name__, e))
        rc = 2
    raise SystemExit(rc)
