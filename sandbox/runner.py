# calcroute sandbox runner: runs one piece of code as __main__ and reports its final value or
# its exception on a separate file descriptor, so that nothing the code prints can be mistaken
# for the answer. Embedded in libcalcroute (sandbox/runner_embed.c) and run as
#     python3 -I -S -c <this file> JOB_FD REPORT_FD
# Both the job and the report are records "<key> <length>\n<bytes>\n" (sandbox/sandbox.h).
# Only built-in modules are imported on the common path (posix, not os; _ast, not ast.py; no
# json) to keep the start-up cost of every sandboxed run low. -S skips site, whose .pth hooks and
# sitecustomize are the host's business and cost more than the rest of start-up; the
# package directories it would add are added here instead (add_site_dirs).
import sys

FILENAME = "<code>"
EXPR_HOOK = "__calcroute_expr__"
SOLUTION_HOOK = "__calcroute_solution__"


def read_records(data):
    recs = []
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i)
        if nl < 0:
            break
        key, _, n = data[i:nl].partition(b" ")
        n = int(n)
        recs.append((key.decode(), data[nl + 1:nl + 1 + n]))
        i = nl + 1 + n + 1
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


def decimal_text(v):
    t = type(v)
    if t is bool:
        return "1" if v else "0"
    if isinstance(v, int) and not isinstance(v, bool):
        return int.__repr__(v)
    if isinstance(v, float):
        r = float.__repr__(v)
        return plain_decimal(r) if r not in ("inf", "-inf", "nan") else None
    mod = getattr(t, "__module__", "")
    if mod in ("decimal", "_decimal") and t.__name__ == "Decimal":
        return format(v, "f") if v.is_finite() else None
    if mod == "fractions" and t.__name__ == "Fraction":
        return fraction_decimal(v.numerator, v.denominator)
    if mod == "numpy" and hasattr(v, "dtype"):
        kind = v.dtype.kind
        if kind in "iu":
            return str(int(v))
        if kind == "f":
            return decimal_text(float(v))
    return None


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
    """Turns each module-level expression statement `e` into `__calcroute_expr__(e, line)`."""
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
    for key, val in job:
        if key == "code":
            code = val
        elif key == "var":
            answer_vars.append(val.decode())
        elif key == "globals":
            globals_json = val.decode()
    if not answer_vars:
        answer_vars = ["ans", "result", "answer"]
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    text = code.decode("utf-8", "replace")
    sys.argv = [""]

    report = []
    status = 0
    mod = type(sys)("__main__")
    mod.__dict__["__builtins__"] = builtins
    try:
        if globals_json is not None:
            import json
            for name, value in json.loads(globals_json).items():
                mod.__dict__[str(name)] = value
        tree = compile(code, FILENAME, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        info = Analysis(tree, ast)
        hook_expressions(tree, ast)
        hook_solution_calls(tree, ast)
        compiled = compile(tree, FILENAME, "exec", dont_inherit=True)
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
        if found is not None:
            value, source = found
            report.append(record("value.type", type(value).__name__))
            report.append(record("value.source", source))
            report.append(record("value.repr", repr(value)))
            dec = decimal_text(value)
            if dec is not None:
                report.append(record("value.decimal", dec))
    except SystemExit as e:
        c = e.code
        if c is None:
            status = 0
        elif isinstance(c, int):
            status = c & 0xFF
        else:
            print(c, file=sys.stderr)
            status = 1
        report = []
    except BaseException as e:
        status = 1
        report = [record("error.type", type(e).__name__),
                  record("error.message", e.msg if isinstance(e, SyntaxError) else str(e)),
                  record("error.line", str(error_line(e)))]
        if isinstance(e, SyntaxError) and e.offset:
            report.append(record("error.col", str(e.offset)))
        if isinstance(e, OSError):
            if e.errno is not None:
                report.append(record("error.errno", str(e.errno)))
            if e.filename is not None:
                report.append(record("error.filename", str(e.filename)))
        try:
            print_exception(e, text)
        except BaseException:
            pass
    try:
        sys.stdout.flush()
    except BaseException:
        pass
    data = b"".join(report)
    while data:
        n = posix.write(rep_fd, data)
        data = data[n:]
    posix.close(rep_fd)
    return status


if __name__ == "__main__":
    try:
        rc = main()
    except BaseException as e:  # the runner itself failed: say so on stderr, exit 2
        sys.stderr.write("calcroute runner: %s: %s\n" % (type(e).__name__, e))
        rc = 2
    raise SystemExit(rc)
