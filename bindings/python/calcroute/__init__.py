"""calcroute for Python pipelines: a ctypes binding over libcalcroute.

    >>> import calcroute
    >>> r = calcroute.run("(5829 - 5735) / 5735")
    >>> r.route, r.fraction, r.exact
    ('inprocess', Fraction(94, 5735), True)
    >>> calcroute.run("x * 1.1", vars={"x": 0.1}).value
    Fraction(11, 100)

`run()` returns a Result when the code ran to the end; it raises CodeError when the code
raised (with the Python exception's type, message, line and column), LimitError when a limit
was hit, Rejected when the code could not run (a syntax error, or outside the subset with
sandboxes off), and CalcrouteError for anything else. Pass check=False to get the Result in
every case instead. Ctrl-C during run() on the main thread ends the run at once (a sandbox is
killed, the in-process evaluator stops) and raises KeyboardInterrupt; a run interrupted
otherwise has status "interrupted" (CalcrouteError).

Text that is not UTF-8 (stdout, stderr, names of files the sandboxed code wrote) reaches
Python with U+FFFD for each ill-formed sequence, as bytes.decode(errors="replace") gives it;
`stdout_replaced` and `stderr_replaced` say when that happened, `stdout_bytes` and
`stderr_bytes` are the exact bytes, and each artifact's "name_bytes" its exact name.

`run()` keeps one engine per set of engine options for the life of the process. An Engine
is one you hold and close yourself, and the one that can keep sandboxes warm:

    >>> with calcroute.Engine(tier="ns", pool=2, preload=["numpy", "pandas"]) as eng:
    ...     eng.run("import pandas as pd\nans = int(pd.Series([1, 2]).sum())").value
    Fraction(3, 1)

(pool=N: N ns sandboxes made before requests arrive, the preload modules imported in each,
each taking one request and then replaced; a request that finds none ready starts cold, and
Result.timings["sandbox_start"] says which. warmup="...": Python run once where they are
forked from, after the imports, so that what it initialises each one starts with.)

The library is found through $CALCROUTE_LIB, else the system's loader (libcalcroute.so.0).
"""
import base64
import ctypes
import ctypes.util
import decimal
import fractions
import json
import os
import signal
import threading

__all__ = ["run", "Engine", "Result", "CalcrouteError", "CodeError", "LimitError", "Rejected", "version"]


class _CrError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_int), ("col", ctypes.c_int),
                ("type", ctypes.c_char * 32), ("message", ctypes.c_char * 256)]


class _CrConfig(ctypes.Structure):
    _fields_ = [("audit_path", ctypes.c_char_p), ("tier", ctypes.c_int),
                ("precision", ctypes.c_int), ("round_half_up", ctypes.c_int),
                ("timeout_s", ctypes.c_double), ("memory_mib", ctypes.c_uint),
                ("interpreter", ctypes.c_char_p), ("data_dir", ctypes.c_char_p),
                ("out_dir", ctypes.c_char_p), ("allow_dir", ctypes.c_char_p),
                ("pool_size", ctypes.c_uint), ("pool_preload", ctypes.c_char_p),
                ("pool_refill", ctypes.c_int), ("pool_warmup", ctypes.c_char_p)]


def _load():
    path = os.environ.get("CALCROUTE_LIB") or ctypes.util.find_library("calcroute") \
        or "libcalcroute.so.0"
    lib = ctypes.CDLL(path)
    P, I, S, E = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(_CrError)
    C = ctypes.c_char_p
    sigs = {
        "cr_config_default": (None, [ctypes.POINTER(_CrConfig)]),
        "cr_engine_open": (P, [ctypes.POINTER(_CrConfig), E]),
        "cr_engine_close": (None, [P]),
        "cr_engine_interrupt": (None, [P]),
        "cr_engine_resume": (None, [P]),
        "cr_engine_interrupt_fd": (I, [P]),
        "cr_request_new": (P, []),
        "cr_request_free": (None, [P]),
        "cr_request_set_code": (I, [P, C, S]),
        "cr_request_set_lang": (I, [P, I]),
        "cr_request_set_vars_json": (I, [P, C, S, E]),
        "cr_request_set_table_json": (I, [P, C, S, E]),
        "cr_request_set_option": (I, [P, C, C, E]),
        "cr_run": (I, [P, P, ctypes.POINTER(P), E]),
        "cr_result_free": (None, [P]),
        "cr_result_json": (C, [P]),
        "cr_result_stdout": (P, [P, ctypes.POINTER(S)]),
        "cr_result_stderr": (P, [P, ctypes.POINTER(S)]),
        "cr_strerror": (C, [I]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_lib = None
_lock = threading.Lock()
_engines = {}
_LANGS = {"auto": 0, "python": 1, "dsl": 2}
_TIERS = {"auto": 0, "ns": 1, "kvm": 2, "none": 3}
version = "0.1.0"


class CalcrouteError(Exception):
    """calcroute could not answer (bad arguments, engine failure)."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class CodeError(CalcrouteError):
    """The code raised a Python exception: .type, .message, .line, .col."""

    def __init__(self, result):
        e = result.error
        self.type, self.message = e["type"], e["message"]
        self.line, self.col = e["line"], e["col"]
        super().__init__(f"{self.type}: {self.message} (line {self.line}, col {self.col})",
                         result)


class LimitError(CalcrouteError):
    """A resource limit ended the run."""


class Rejected(CalcrouteError):
    """The code could not run: .reasons lists (code, line, col, snippet)."""

    def __init__(self, message, result):
        super().__init__(message, result)
        self.reasons = result.reasons


def _num_text(v):
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)          # the shortest text of the double: 0.1 stays 1/10
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            raise CalcrouteError(f"non-finite number {v!r}")
        return format(v, "f")
    if isinstance(v, fractions.Fraction):
        raise CalcrouteError("pass a Fraction as a Decimal or str: JSON has no fractions")
    raise TypeError


def _to_json(v, depth=0):
    """JSON text with numbers written exactly (Decimal keeps every digit)."""
    if depth > 60:
        raise CalcrouteError("variables nested too deeply")
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + _to_json(x, depth + 1)
                              for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_to_json(x, depth + 1) for x in v) + "]"
    try:
        return _num_text(v)
    except TypeError:
        raise CalcrouteError(f"cannot pass a {type(v).__name__} as a variable") from None


class Result:
    """What came of one run. `value` is a fractions.Fraction for numbers (exact), the string,
    list or other value as its repr otherwise; `decimal` is a decimal.Decimal rendering."""

    def __init__(self, data, stdout_bytes=None, stderr_bytes=None):
        self.data = data
        try:
            self.route = data["route"]
            self.status = data["status"]
            self.reasons = [(r["code"], r["line"], r["col"], r["snippet"])
                            for r in data["reasons"]]
            self.stdout = data["stdout"]
            self.stdout_truncated = data["stdout_truncated"]
            self.stdout_replaced = data["stdout_replaced"]
            self.stderr = data["stderr"]
            self.stderr_replaced = data["stderr_replaced"]
            self.error = data["error"]
            self.limit = data["limit"]
            self.artifacts = data["artifacts"]
            for a in self.artifacts:
                raw = a["name_base64"]
                a["name_bytes"] = base64.b64decode(raw) if raw is not None else a["name"].encode()
            self.timings = data["timings"]
            self.audit = data["audit"]
            self.seed = data["seed"]
            self.dropped = data["dropped"]
            v = data["value"]
            self.repr = v["repr"] if v else None
            self.type = v["type"] if v else None
            self.exact = bool(v and v["exact"])
            self.fraction = fractions.Fraction(v["fraction"]) if v and v["fraction"] else None
        except (KeyError, TypeError) as e:
            # The library promises every member; a result without one is its bug, said so.
            raise CalcrouteError(f"result JSON without the member {e}: "
                                 f"{json.dumps(data)[:200]}") from None
        self.value = self.fraction if self.fraction is not None else self.repr
        self.stdout_bytes = stdout_bytes if stdout_bytes is not None else self.stdout.encode()
        self.stderr_bytes = stderr_bytes if stderr_bytes is not None else self.stderr.encode()

    @property
    def decimal(self):
        """The value as a Decimal: exact when it terminates, else the engine's rendering."""
        if self.fraction is None:
            return None
        if self.type == "float":
            return decimal.Decimal(self.repr)
        return decimal.Decimal(self.fraction.numerator) / decimal.Decimal(self.fraction.denominator)

    @property
    def audit_seq(self):
        return self.audit["seq"] if self.audit else None

    @property
    def audit_hash(self):
        return self.audit["hash"] if self.audit else None

    def __repr__(self):
        return f"<calcroute.Result {self.route} {self.status} {self.repr}>"


def _bytes_of(getter, res):
    n = ctypes.c_size_t()
    p = getter(res, ctypes.byref(n))
    return ctypes.string_at(p, n.value) if p and n.value else b""


def _engine(tier, timeout, memory, audit, data, out, interpreter=None, allow_dir=None):
    key = (tier, timeout, memory, audit, data, out, interpreter, allow_dir)
    with _lock:
        eng = _engines.get(key)
        if not eng:
            eng = _engines[key] = _open(tier, timeout, memory, audit, data, out, interpreter,
                                        allow_dir)
        return eng


def _run_interruptibly(eng, req, res, err):
    """cr_run(), so that Ctrl-C ends it at once. Python runs a signal's handler only between
    bytecodes, never during a foreign call; but its C-level handler writes a byte to the
    wakeup descriptor at once, and the engine's interrupt descriptor takes any byte as
    cr_engine_interrupt(). So on the main thread (the only one Python's handlers run on) the
    call is made with that descriptor as the wakeup one: SIGINT ends the run, which returns
    with status "interrupted", and KeyboardInterrupt is raised as it returns. Another signal
    with a Python handler (SIGTERM, say, when a server sets one) interrupts the run too."""
    if threading.current_thread() is not threading.main_thread():
        return _lib.cr_run(eng, req, ctypes.byref(res), ctypes.byref(err))
    old = signal.set_wakeup_fd(_lib.cr_engine_interrupt_fd(eng), warn_on_full_buffer=False)
    try:
        return _lib.cr_run(eng, req, ctypes.byref(res), ctypes.byref(err))
    finally:
        signal.set_wakeup_fd(old)
        _lib.cr_engine_resume(eng)      # what a signal left there must not stop the next run


def _open(tier, timeout, memory, audit, data, out, interpreter=None, allow_dir=None, pool=0,
          preload=None, refill=True, warmup=None):
    """A new engine (the caller closes it). Called with _lock held."""
    global _lib
    if _lib is None:
        _lib = _load()
    cfg = _CrConfig()
    _lib.cr_config_default(ctypes.byref(cfg))
    if tier not in _TIERS:
        raise CalcrouteError(f"tier: want one of {sorted(_TIERS)}, got {tier!r}")
    cfg.tier = _TIERS[tier]
    if timeout is not None:
        cfg.timeout_s = float(timeout)
    if memory is not None:
        cfg.memory_mib = int(memory)
    keep = [os.fsencode(s) if s else None for s in (audit, data, out, interpreter, allow_dir)]
    cfg.audit_path, cfg.data_dir, cfg.out_dir = keep[:3]
    if interpreter:
        cfg.interpreter = keep[3]
    cfg.allow_dir = keep[4]
    if not isinstance(pool, int) or isinstance(pool, bool) or pool < 0:
        raise CalcrouteError(f"pool: want a number of sandboxes, got {pool!r}")
    cfg.pool_size = pool
    if preload is not None:
        names = [preload] if isinstance(preload, str) else list(preload)
        cfg.pool_preload = ",".join(names).encode()
    cfg.pool_refill = 1 if refill else 0
    if warmup is not None:
        if not isinstance(warmup, str) or "\0" in warmup:
            raise CalcrouteError("warmup: want Python source text without NUL bytes")
        cfg.pool_warmup = warmup.encode()
    err = _CrError()
    eng = _lib.cr_engine_open(ctypes.byref(cfg), ctypes.byref(err))
    if not eng:
        raise CalcrouteError(err.message.decode(errors="replace"))
    return eng


class Engine:
    """An engine of your own: the engine options of run() fixed once, plus a warm pool
    (pool, preload, refill, warmup: see the module's documentation). close() it, or use
    `with`; it must not be closed while one of its runs is going on."""

    def __init__(self, *, tier="auto", timeout=None, memory=None, audit=None, data=None,
                 out=None, interpreter=None, allow_dir=None, pool=0, preload=None, refill=True,
                 warmup=None):
        with _lock:
            self._eng = _open(tier, timeout, memory, audit, data, out, interpreter, allow_dir,
                              pool, preload, refill, warmup)

    def run(self, code, vars=None, table=None, lang="auto", *, precision=None, rounding=None,
            answer_vars=None, seed=None, check=True):
        """As calcroute.run(), on this engine."""
        if not self._eng:
            raise CalcrouteError("the engine is closed")
        return _run(self._eng, code, vars, table, lang, precision, rounding, answer_vars, seed,
                    check)

    def close(self):
        """Ends the engine: its warm sandboxes are removed. Idempotent."""
        eng, self._eng = self._eng, None
        if eng:
            _lib.cr_engine_close(eng)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_eng", None) and _lib is not None:
            self.close()


def run(code, vars=None, table=None, lang="auto", *, precision=None, rounding=None,
        answer_vars=None, seed=None, tier="auto", timeout=None, memory=None, audit=None, data=None,
        out=None, interpreter=None, allow_dir=None, check=True):
    """Runs `code` and returns a Result (see the module's documentation). `interpreter` is
    the sandbox's python (default /usr/bin/python3), under /usr or `allow_dir`: a directory
    the sandbox sees read-only at the same path, such as a virtual environment. `seed` (0 to
    4294967295) seeds random and numpy.random in the sandbox; by default one derived from the
    code and vars (the Result's `seed`). The Result's `dropped` counts and names the files the
    sandboxed code left outside /out, its working directory."""
    eng = _engine(tier, timeout, memory, audit, data, out, interpreter, allow_dir)
    return _run(eng, code, vars, table, lang, precision, rounding, answer_vars, seed, check)


def _run(eng, code, vars, table, lang, precision, rounding, answer_vars, seed, check):
    if lang not in _LANGS:
        raise CalcrouteError(f"lang: want auto, python or dsl, got {lang!r}")
    req = _lib.cr_request_new()
    if not req:
        raise MemoryError
    res = ctypes.c_void_p()
    err = _CrError()
    try:
        src = code.encode() if isinstance(code, str) else bytes(code)
        _lib.cr_request_set_code(req, src, len(src))
        _lib.cr_request_set_lang(req, _LANGS[lang])
        for key, val in (("precision", precision), ("rounding", rounding),
                         ("answer_vars", answer_vars), ("seed", seed)):
            if val is None:
                continue
            if isinstance(val, (list, tuple)):
                val = ",".join(val)
            if _lib.cr_request_set_option(req, key.encode(), str(val).encode(), ctypes.byref(err)):
                raise CalcrouteError(err.message.decode(errors="replace"))
        for text, setter in ((vars, _lib.cr_request_set_vars_json),
                             (table, _lib.cr_request_set_table_json)):
            if text is None:
                continue
            js = _to_json(text).encode()
            if setter(req, js, len(js), ctypes.byref(err)):
                raise CalcrouteError(err.message.decode(errors="replace"))
        if _run_interruptibly(eng, req, res, err):
            raise CalcrouteError(f"{_lib.cr_strerror(err.code).decode()}: "
                                 f"{err.message.decode(errors='replace')}")
        text = _lib.cr_result_json(res)
        if text is None:
            raise MemoryError
        result = Result(json.loads(text), _bytes_of(_lib.cr_result_stdout, res),
                        _bytes_of(_lib.cr_result_stderr, res))
    finally:
        if res:
            _lib.cr_result_free(res)
        _lib.cr_request_free(req)
    if check:
        if result.status == "raised":
            raise CodeError(result)
        if result.status == "limit":
            raise LimitError(result.limit["message"], result)
        if result.status in ("rejected", "syntax_error"):
            e = result.error or {}
            raise Rejected(f"{e.get('message', 'rejected')} (line {e.get('line')}, "
                           f"col {e.get('col')})", result)
        if result.status != "ok":
            raise CalcrouteError((result.error or {}).get("message", result.status), result)
    return result
