r"""calcroute for Python pipelines: a ctypes binding over libcalcroute.

    >>> import calcroute
    >>> r = calcroute.run("(5829 - 5735) / 5735")
    >>> r.route, r.value, r.exact
    ('inprocess', Fraction(94, 5735), True)
    >>> calcroute.run("x * 1.1", vars={"x": 0.1}).value
    Fraction(11, 100)
    >>> calcroute.run("ans = [2 ** 100, 'ok', 0.1 + 0.2, None]").value
    [1267650600228229401496703205376, 'ok', Fraction(3, 10), None]

Result.value is the value as a Python object: int, bool, str, None, and lists, tuples,
dicts and sets of those as themselves; a float of the code is a fractions.Fraction (exact),
a decimal.Decimal a Decimal. Result.repr keeps the text. A value with no such form (a
range, a date, a list a sandbox reported) makes .value raise NotNative, which says why.

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
    3

(pool=N: N ns sandboxes made before requests arrive, the preload modules imported in each,
each taking one request and then replaced; the default, "auto", sizes it from the machine.
A request that finds none ready waits its turn for one being made, and
Result.timings["sandbox_start"] says whether it ran warm. warmup="...": Python run once where
they are forked from, after the imports, so that what it initialises each one starts with.)

The library is $CALCROUTE_LIB when set, else the libcalcroute.so.0 installed next to this
module (by `pip install .` or `make install`), else the system loader's (libcalcroute.so.0);
LibraryNotFound says what to install or set when none loads.
"""
from __future__ import annotations

import asyncio
import base64
import ctypes
import ctypes.util
import decimal
import fractions
import json
import os
import signal
import re
import sys
import threading
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

__all__ = ["run", "Engine", "Result", "CalcrouteError", "CodeError", "LimitError", "Rejected",
           "LibraryNotFound", "NotNative", "library_version", "version", "__version__"]


class _CrError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_int), ("col", ctypes.c_int),
                ("type", ctypes.c_char * 32), ("message", ctypes.c_char * 256)]


_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_library():
    """The library's CDLL: $CALCROUTE_LIB, else the libcalcroute.so.0 next to this module
    (pip's copy, or make install's link to the installed one), else the system loader's."""
    tried = []
    env = os.environ.get("CALCROUTE_LIB")
    for path, what in ((env, "$CALCROUTE_LIB"),
                       (os.path.join(_HERE, "libcalcroute.so.0"), "next to the module"),
                       ("libcalcroute.so.0", "the system loader")):
        if not path or (what == "next to the module" and not os.path.lexists(path)):
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{what}: {e}")
            if what == "$CALCROUTE_LIB":
                break       # what the caller named, or nothing
    raise LibraryNotFound(
        "libcalcroute.so.0 cannot be loaded (" + "; ".join(tried) + "). Install calcroute "
        "(`pip install .` or `make install` in its source tree; the library needs Debian's "
        "libtree-sitter0, libsqlite3-0, libseccomp2, libsodium23, libjansson4, libmpfr6, "
        "libgmp10 and libunistring2), or set CALCROUTE_LIB to the library's path.")


def _load():
    lib = _find_library()
    P, I, S, E = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(_CrError)
    C = ctypes.c_char_p
    sigs = {
        "cr_config_new": (P, []),
        "cr_config_free": (None, [P]),
        "cr_config_set": (I, [P, C, C, E]),
        "cr_engine_open": (P, [P, E]),
        "cr_engine_close": (None, [P]),
        "cr_engine_interrupt": (None, [P]),
        "cr_engine_resume": (None, [P]),
        "cr_engine_interrupt_fd": (I, [P]),
        "cr_engine_ready": (I, [P, C, ctypes.c_double, E]),
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
        "cr_version": (C, []),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_lib = None
_lock = threading.Lock()
_READY_WAIT_S = 120.0   # Engine(wait_ready=True): python's start and the finance stack's imports
_engines = {}
_LANGS = {"auto": 0, "python": 1, "dsl": 2}
__version__ = "0.1.0"
version = __version__


def library_version() -> str:
    """The loaded libcalcroute's version ("MAJOR.MINOR.PATCH"; __version__ is this module's).

    Raises:
        LibraryNotFound: the library could not be loaded.
    """
    global _lib
    with _lock:
        if _lib is None:
            _lib = _load()
    return _lib.cr_version().decode()


class CalcrouteError(Exception):
    """calcroute could not answer: a bad argument, an engine failure, a run that ended
    otherwise than the subclasses say. `result` is the Result when there is one, else None."""

    def __init__(self, message: str, result: Optional["Result"] = None):
        super().__init__(message)
        self.result = result


def _where(e: dict) -> str:
    """" (line L, col C)", " (line L)" when the column is unknown, or ""."""
    if not e.get("line"):
        return ""
    return f" (line {e['line']}, col {e['col']})" if e.get("col") else f" (line {e['line']})"


class CodeError(CalcrouteError):
    """The code raised a Python exception: `type` (its class name), `message`, `line` and
    `col` (1-based; None when unknown) where it was raised, in a sandbox as in-process;
    `result` the Result."""

    def __init__(self, result: "Result"):
        e = result.error
        self.type, self.message = e["type"], e["message"]
        self.line, self.col = e["line"], e["col"] or None
        super().__init__(f"{self.type}: {self.message}{_where(e)}", result)


class LibraryNotFound(CalcrouteError, OSError):
    """libcalcroute.so.0 could not be loaded; the message says where it looked, why each
    place failed (a missing file, a missing dependency) and what to install or set."""


class NotNative(CalcrouteError, ValueError):
    """Result.value asked of a value that cannot be rebuilt exactly as a Python object; the
    message says why (Result.native_why), and Result.repr still has its text."""


class LimitError(CalcrouteError):
    """A resource limit ended the run (time, memory, output, a number's size...): the
    message names it; `result.limit` has its name, message, line and col."""


class Rejected(CalcrouteError):
    """The code could not run (a syntax error, or code outside the in-process subset with
    sandboxes off): `reasons` lists (code, line, col, snippet) tuples."""

    def __init__(self, message: str, result: "Result"):
        super().__init__(message, result)
        self.reasons = result.reasons


def _decimal_text(text):
    """A Decimal's or Fraction's text as a number that is not an int (Decimal("5") and
    Fraction(5) are 5.0 to the code, and come back as Fractions)."""
    return text if "." in text else text + ".0"


def _num_text(v):
    """A number's JSON text, exact; the library checks it (NaN and the infinities go as
    JSON's NaN, Infinity, -Infinity, which it refuses as it refuses --var x=nan)."""
    t = type(v)
    if t is bool or v is None:
        return json.dumps(v)
    if t is int:
        return _int_text(v)
    if t in (float, decimal.Decimal) and not decimal.Decimal(v).is_finite():
        return "NaN" if decimal.Decimal(v).is_nan() else "-Infinity" if v < 0 else "Infinity"
    if t is float:
        return repr(v)          # the shortest text of the double: 0.1 stays 1/10
    if t is decimal.Decimal:
        return _decimal_text(format(v, "f"))
    if t is fractions.Fraction:
        # exact when the decimal expansion ends (the denominator is 2^a 5^b)
        d, k = v.denominator, 0
        while d % 10 == 0:
            d, k = d // 10, k + 1
        while d % 2 == 0 or d % 5 == 0:
            d, k = (d // 2 if d % 2 == 0 else d // 5), k + 1
        if d != 1:
            raise CalcrouteError(f"variables: {v!r} has no exact decimal text (JSON has no "
                                 "fractions): pass it as a str and convert it in the code")
        return _decimal_text(format(decimal.Decimal(v.numerator * 10 ** k // v.denominator)
                                    .scaleb(-k), "f"))
    raise TypeError


def _to_json(v, depth=0):
    """JSON text with numbers written exactly (Decimal keeps every digit)."""
    # Exact types only: a subclass's own __repr__, __str__, __format__ or items() would write
    # the text (and could write JSON of its choosing), not the value's.
    if depth > 60:
        raise CalcrouteError("variables nested too deeply")
    t = type(v)
    if t is str:
        return json.dumps(v)
    if t is dict:
        for k in v:
            if type(k) is not str:
                raise CalcrouteError(f"variables: a name must be a str, not {type(k).__name__}")
            if "\0" in k:
                raise CalcrouteError(f"variables: the name {k!r:.40} holds a NUL character")
        return "{" + ",".join(json.dumps(k) + ":" + _to_json(x, depth + 1)
                              for k, x in v.items()) + "}"
    if t in (list, tuple):
        return "[" + ",".join(_to_json(x, depth + 1) for x in v) + "]"
    try:
        return _num_text(v)
    except TypeError:
        raise CalcrouteError(f"variables: cannot pass a {t.__name__}: only int, float, bool, str, "
                             "Decimal, Fraction, None, and lists, tuples and dicts of them (not "
                             "their subclasses)") from None


_MAX_DIGITS = 4000     # below CPython's int/str conversion limit (4300 digits)


def _int(text: str) -> int:
    """int(text) at any length, where int() refuses more than 4300 digits."""
    if len(text) <= _MAX_DIGITS:
        return int(text)
    neg = text.startswith("-")
    digits = text[1:] if neg else text
    k = len(digits) // 2
    v = _int(digits[:-k]) * 10 ** k + _int(digits[-k:])
    return -v if neg else v


def _int_text(v: int) -> str:
    """str(v) at any size, where str() refuses more than 4300 digits."""
    if -10 ** _MAX_DIGITS < v < 10 ** _MAX_DIGITS:
        return str(v)
    if v < 0:
        return "-" + _int_text(-v)
    k = _MAX_DIGITS
    while 10 ** (2 * k) <= v:
        k *= 2
    hi, lo = divmod(v, 10 ** k)
    return _int_text(hi) + _int_text(lo).rjust(k, "0")


def _fraction(text: str) -> fractions.Fraction:
    num, _, den = text.partition("/")
    return fractions.Fraction(_int(num), _int(den) if den else 1)


def _native(tree: Any) -> Any:
    """The Python object of the library's tagged JSON (DESIGN.md, "The value's native
    form"): null, true and false are themselves, every other part {"tag": contents}."""
    if tree is None or isinstance(tree, bool):
        return tree
    (tag, x), = tree.items()
    if tag == "int":
        return _int(x)
    if tag == "float":
        return float(x) if x in ("inf", "-inf", "nan") else _fraction(x)
    if tag == "Fraction":
        return _fraction(x)
    if tag == "Decimal":
        return decimal.Decimal(x)
    if tag == "str":
        return x
    if tag == "list":
        return [_native(i) for i in x]
    if tag == "tuple":
        return tuple(_native(i) for i in x)
    if tag == "set":
        return {_native(i) for i in x}
    if tag == "dict":
        return {_native(k): _native(v) for k, v in x}
    raise NotNative(f"a part tagged {tag!r} this binding does not know")


_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


class Result:
    """What came of one run.

    Attributes:
        value: the final value as a Python object (int, bool, str, None, list, tuple, dict,
            set; a float of the code as a fractions.Fraction, exact; a decimal.Decimal as
            itself); raises NotNative, saying why, for a value with no such form, and is
            None when the run left no value (see `type`).
        native_why: None, or why `value` cannot be given.
        repr: the value's repr() text as the code would print it; None without a value.
        type: the value's Python type name ("int", "float", "list", ...); None without one.
        fraction: the exact value of a number as a Fraction (ints and bools too), else None.
        decimal: the number as a decimal.Decimal, exact when its decimal expansion ends (at
            any size), else rounded in the current decimal context; None for a non-number.
        float: the number as a float (rounded), a convenience; None for a non-number.
        exact: False when a rounded operation (math.sqrt, a CPython float in a sandbox) fed
            the value.
        route: "inprocess", "ns", "kvm" or "rejected".
        status: "ok", "raised", "limit", "syntax_error", "rejected", "sandbox_error",
            "interrupted" or "error".
        reasons: (code, line, col, snippet) tuples: why the code could not run in-process.
        stdout, stderr: the run's output as text (U+FFFD for bytes that are not UTF-8);
            stdout_bytes, stderr_bytes: the exact bytes; stdout_replaced, stderr_replaced:
            whether a replacement happened; stdout_truncated: the output cap was reached.
        error: {"type", "message", "line", "col"} when the run did not end "ok", else None.
        limit: {"name", "message", "line", "col"} when a limit ended it, else None.
        artifacts: files the sandboxed code left in /out: dicts with "name", "name_bytes",
            "size", "sha256".
        dropped: {"count", "names"} of files written outside /out, or None.
        timings: microseconds of parse, evaluation and total; sandbox wall and CPU seconds.
        audit: {"seq", "hash"} of the ledger record, or None (audit_seq, audit_hash).
        seed: the seed a sandboxed run used, or None.
        data: the library's whole JSON result as a dict.
    """

    def __init__(self, data: dict, stdout_bytes: Optional[bytes] = None,
                 stderr_bytes: Optional[bytes] = None):
        self.data = data
        try:
            self.route: str = data["route"]
            self.status: str = data["status"]
            self.reasons = [(r["code"], r["line"], r["col"], r["snippet"])
                            for r in data["reasons"]]
            self.stdout: str = data["stdout"]
            self.stdout_truncated: bool = data["stdout_truncated"]
            self.stdout_replaced: bool = data["stdout_replaced"]
            self.stderr: str = data["stderr"]
            self.stderr_replaced: bool = data["stderr_replaced"]
            self.error: Optional[dict] = data["error"]
            self.limit: Optional[dict] = data["limit"]
            self.artifacts: list = data["artifacts"]
            for a in self.artifacts:
                raw = a["name_base64"]
                a["name_bytes"] = base64.b64decode(raw) if raw is not None else a["name"].encode()
            self.timings: dict = data["timings"]
            self.audit: Optional[dict] = data["audit"]
            self.seed: Optional[int] = data["seed"]
            self.dropped: Optional[dict] = data["dropped"]
            v = data["value"]
            self.repr: Optional[str] = v["repr"] if v else None
            self.type: Optional[str] = v["type"] if v else None
            self.exact: bool = bool(v and v["exact"])
            self.fraction: Optional[fractions.Fraction] = \
                _fraction(v["fraction"]) if v and v["fraction"] else None
            self.native_why: Optional[str] = v["native_why"] if v else None
            self._native = _native(v["native"]) if v and not self.native_why else None
        except (KeyError, TypeError) as e:
            # The library promises every member; a result without one is its bug, said so.
            raise CalcrouteError(f"result JSON without the member {e}: "
                                 f"{json.dumps(data)[:200]}") from None
        self.stdout_bytes = stdout_bytes if stdout_bytes is not None else self.stdout.encode()
        self.stderr_bytes = stderr_bytes if stderr_bytes is not None else self.stderr.encode()

    @property
    def value(self) -> Any:
        """The value as a Python object (see the class's documentation)."""
        if self.native_why:
            raise NotNative(f"Result.value: {self.native_why}; Result.repr has its text: "
                            f"{self.repr[:80]}", self)
        return self._native

    @property
    def decimal(self) -> Optional[decimal.Decimal]:
        """The number as a Decimal: exact when its expansion ends, at any size; else the
        quotient in the current decimal context."""
        f = self.fraction
        if f is None:
            return None
        q, twos, fives = f.denominator, 0, 0
        while q % 2 == 0:
            q, twos = q // 2, twos + 1
        while q % 5 == 0:
            q, fives = q // 5, fives + 1
        if q != 1:
            return decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator)
        k = max(twos, fives)
        scaled = f.numerator * (10 ** k // f.denominator)
        return decimal.Decimal(scaled).scaleb(-k, _EXACT)

    @property
    def float(self) -> Optional[float]:
        """The number as a float, correctly rounded (OverflowError past a float's range)."""
        return float(self.fraction) if self.fraction is not None else None

    @property
    def audit_seq(self) -> Optional[int]:
        """The ledger record's sequence number, or None without an audit ledger."""
        return self.audit["seq"] if self.audit else None

    @property
    def audit_hash(self) -> Optional[str]:
        """The ledger record's hash (64 hex digits), or None without an audit ledger."""
        return self.audit["hash"] if self.audit else None

    def __repr__(self) -> str:
        return f"<calcroute.Result {self.route} {self.status} {self.repr}>"


def _bytes_of(getter, res):
    n = ctypes.c_size_t()
    p = getter(res, ctypes.byref(n))
    return ctypes.string_at(p, n.value) if p and n.value else b""


def _engine(**options):
    key = tuple(sorted((k, repr(v)) for k, v in options.items()))
    with _lock:
        eng = _engines.get(key)
        if not eng:
            eng = _engines[key] = _open(options)
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


def _config_text(key, v):
    """An option's value as the text cr_config_set() reads (the library checks it)."""
    if isinstance(v, (list, tuple)) and key == "preload":
        v = ",".join(v)
    if key == "refill" and isinstance(v, bool):
        v = int(v)
    if isinstance(v, float):
        v = repr(v)             # the shortest text of the double
    text = os.fsencode(v) if isinstance(v, (str, bytes, os.PathLike)) else str(v).encode()
    if b"\0" in text:
        raise CalcrouteError(f"{key}: want text without NUL bytes")
    return text


def _open(options):
    """A new engine (the caller closes it) with `options` (option name: value; None keeps
    the default). Called with _lock held."""
    global _lib
    if _lib is None:
        _lib = _load()
    cfg = _lib.cr_config_new()
    if not cfg:
        raise MemoryError
    err = _CrError()
    try:
        for key, v in options.items():
            if v is not None and _lib.cr_config_set(cfg, key.encode(), _config_text(key, v),
                                                    ctypes.byref(err)):
                raise CalcrouteError(err.message.decode(errors="replace"))
        eng = _lib.cr_engine_open(cfg, ctypes.byref(err))
    finally:
        _lib.cr_config_free(cfg)
    if not eng:
        raise CalcrouteError(err.message.decode(errors="replace"))
    return eng


Vars = Mapping[str, Any]
Table = Sequence[Sequence[Any]]

_RUN_PARAMS = """
        code: the program (str, or UTF-8 bytes): Python, or a FinQA DSL program.
        vars: variables bound before the code runs: a mapping of names to ints, floats
            (their shortest text: 0.1 is exactly 1/10), decimal.Decimal, fractions.Fraction
            whose decimal expansion ends, str, bool, None, and lists/tuples/dicts of those.
            NaN and the infinities are refused, as calc-route --var refuses them.
        table: a FinQA table (rows of cells) for the DSL's table_* operations.
        lang: "auto" (the default), "python" or "dsl".
        precision: significant digits of inexact results (1..1000).
        rounding: "half-even" (the default) or "half-up".
        answer_vars: the variable names tried in order for the final value (up to 3, a
            list or a comma-separated str; default "ans,result,answer").
        seed: 0..4294967295, what random and numpy.random start from in a sandbox; by
            default one derived from the code and vars (Result.seed).
        strip_fences: take the code inside Markdown fences (```python ... ```) of a model's
            reply: every block tagged python, py, python3 or nothing, in order; text without
            such a block runs as it is.
        check: True (the default) raises for a run that did not end "ok"; False returns the
            Result whatever happened.

    Returns: a Result.

    Raises:
        CodeError: the code raised a Python exception (check=True).
        LimitError: a limit ended the run (check=True).
        Rejected: a syntax error, or code outside the subset with sandboxes off (check=True).
        CalcrouteError: a bad argument, or any other failure.
        LibraryNotFound: libcalcroute.so.0 could not be loaded (says what to install or set).
        KeyboardInterrupt: Ctrl-C during a run on the main thread (the run is ended at once).
"""

_ENGINE_PARAMS = """        tier: where code outside the in-process subset runs: "auto" (the default: kvm where
            it works, else ns), "ns", "kvm", or "none" (reject it).
        timeout: seconds a run may take (a sandbox's wall clock, in-process CPU time):
            above 0, at most 86400 (default 10).
        memory: MiB a sandboxed run may use: 16 to 1048576 (default 512).
        audit: the ledger every request is appended to: a SQLite file's path, or a
            PostgreSQL URI (postgresql://...).
        data: a directory the sandbox sees read-only at /data.
        out: a directory where files the sandboxed code writes to /out are copied.
        interpreter: the sandbox's python (default /usr/bin/python3), under /usr or
            allow_dir.
        allow_dir: a directory the sandbox sees read-only at the same path (a virtual
            environment).
        kvm_dir: the directory of the kvm tier's kernel and initramfs (vmlinuz,
            initrd.cpio); by default $CALCROUTE_KVM_DIR, else those `make install-kvm`
            installed beside the library, else build/kvm of a checkout.
"""


class Engine:
    def __init__(self, *, tier: str = "auto", timeout: Optional[float] = None,
                 memory: Optional[int] = None, audit: Optional[str] = None,
                 data: Optional[str] = None, out: Optional[str] = None,
                 interpreter: Optional[str] = None, allow_dir: Optional[str] = None,
                 pool: Union[int, str] = "auto",
                 preload: Union[str, Iterable[str], None] = None,
                 refill: bool = True, warmup: Optional[str] = None,
                 kvm_dir: Optional[str] = None, wait_ready: Union[bool, float] = False,
                 **options: Any):
        self._eng = None
        self._cv = threading.Condition()
        self._running = 0          # runs under way
        self._cancelling = False   # an arun() cancelled: its run is being interrupted
        with _lock:
            self._eng = _open(dict(tier=tier, timeout=timeout, memory=memory, audit=audit,
                                   data=data, out=out, interpreter=interpreter,
                                   allow_dir=allow_dir, pool=pool,
                                   preload="auto" if preload is None else
                                   [preload] if isinstance(preload, str) else list(preload),
                                   refill=refill, warmup=warmup, kvm_dir=kvm_dir, **options))
        if wait_ready is not False:
            seconds = _READY_WAIT_S if wait_ready is True else float(wait_ready)
            why = self._ready(None, seconds)
            if why:
                self.close()
                raise CalcrouteError(f"not ready after {seconds:g} s: {why}")

    def _ready(self, what, seconds):
        """Why the engine is not ready (None: it is), after waiting up to `seconds`."""
        eng = self._enter()
        try:
            err = _CrError()
            if _lib.cr_engine_ready(eng, what, float(seconds), ctypes.byref(err)) == 0:
                return None
            return err.message.decode(errors="replace")
        finally:
            self._leave()

    def ready(self, timeout: float = 0) -> bool:
        """Whether the engine is ready for traffic, waiting up to `timeout` seconds: its warm
        pool has been full once and can still make sandboxes, and its audit ledger (if any)
        answers. Until then a run that needs a sandbox waits its turn for one being made."""
        return self._ready(None, timeout) is None

    def _enter(self):
        with self._cv:
            while self._cancelling:
                self._cv.wait()
            if not self._eng:
                raise CalcrouteError("the engine is closed")
            self._running += 1
            return self._eng

    def _leave(self):
        with self._cv:
            self._running -= 1
            if self._running == 0:
                if self._cancelling:
                    _lib.cr_engine_resume(self._eng)
                    self._cancelling = False
                self._cv.notify_all()

    def run(self, code: Union[str, bytes], vars: Optional[Vars] = None,
            table: Optional[Table] = None, lang: str = "auto", *,
            precision: Optional[int] = None, rounding: Optional[str] = None,
            answer_vars: Union[str, Sequence[str], None] = None, seed: Optional[int] = None,
            strip_fences: bool = False, check: bool = True) -> Result:
        eng = self._enter()
        try:
            return _run(eng, code, vars, table, lang, precision, rounding, answer_vars, seed,
                        strip_fences, check)
        finally:
            self._leave()

    run.__doc__ = "Runs `code` on this engine; safe from many threads at once.\n\n" \
        "    Parameters:" + _RUN_PARAMS

    async def arun(self, code: Union[str, bytes], vars: Optional[Vars] = None,
                   table: Optional[Table] = None, lang: str = "auto", *,
                   precision: Optional[int] = None, rounding: Optional[str] = None,
                   answer_vars: Union[str, Sequence[str], None] = None,
                   seed: Optional[int] = None, strip_fences: bool = False,
                   check: bool = True) -> Result:
        mine = threading.Event()      # set while this call's run is under way

        def work():
            eng = self._enter()
            mine.set()
            try:
                return _run(eng, code, vars, table, lang, precision, rounding, answer_vars,
                            seed, strip_fences, check)
            finally:
                with self._cv:
                    mine.clear()
                self._leave()

        fut = asyncio.get_running_loop().run_in_executor(None, work)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            fut.add_done_callback(lambda f: f.cancelled() or f.exception())
            with self._cv:
                # The C engine's interrupt ends all of its runs: used only when this one is
                # its only run under way; runs arriving meanwhile wait until it has ended.
                if mine.is_set() and self._running == 1:
                    self._cancelling = True
                    _lib.cr_engine_interrupt(self._eng)
            raise

    arun.__doc__ = "As run(), awaited: the run goes on a worker thread (the loop's default " \
        "executor),\n    so the loop keeps running. Cancelling the task ends the run at once " \
        "when it is the\n    engine's only run under way (the C engine's interrupt ends all of " \
        "its runs); else\n    the run goes on to its end in the background, its result " \
        "dropped.\n\n    Parameters:" + _RUN_PARAMS

    def close(self) -> None:
        """Ends the engine once its runs under way have ended: its warm sandboxes are
        removed. Idempotent; a run after it raises CalcrouteError."""
        with self._cv:
            eng, self._eng = self._eng, None
            while self._running:
                self._cv.wait()
        if eng:
            _lib.cr_engine_close(eng)

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_eng", None) and _lib is not None:
            self.close()


Engine.__doc__ = """An engine of your own: its options fixed once, an explicit lifetime (close(), or
    `with`), and the one that can keep sandboxes warm.

    Thread safety: run() may be called from any number of threads at once, and arun() from
    any number of asyncio tasks; they share the engine (and its warm pool). close() waits
    for the runs under way to end.

    Parameters:
""" + _ENGINE_PARAMS + """        pool: ns sandboxes made before requests arrive (0..64), each taking one request
            and then replaced (refill=True); "auto" (the default): two a CPU, fewer where
            memory is short, none where sandboxes do not run in the ns tier; 0: none. A
            request that finds none ready waits its turn for one being made, and starts
            cold only where the pool cannot make one (Result.timings["sandbox_start"]).
        preload: modules each warm sandbox imports first ("numpy" or ["numpy", "pandas"]);
            default "auto": numpy and pandas, each where installed; [] for none.
        wait_ready: True (up to 120 s) or seconds: return only once ready() is true, else
            raise CalcrouteError saying what is not ready.
        refill: False: a used warm sandbox is not replaced.
        warmup: Python run once where the warm sandboxes are forked from, after the
            imports (e.g. a small DataFrame groupby): what it initialises, each one starts
            with. Its output is discarded, its errors ignored; at most 64 KiB.
        options: any other engine option of libcalcroute(3), as a keyword: e.g. the
            in-process evaluator's limits max_steps, max_eval_memory, max_depth,
            max_recursion, max_int_bits, max_str_len, max_source, max_stdout, and
            precision and rounding (each request's default).

    Raises:
        CalcrouteError: a bad option (the message names it).
        LibraryNotFound: libcalcroute.so.0 could not be loaded.
    """


def run(code: Union[str, bytes], vars: Optional[Vars] = None, table: Optional[Table] = None,
        lang: str = "auto", *, precision: Optional[int] = None, rounding: Optional[str] = None,
        answer_vars: Union[str, Sequence[str], None] = None, seed: Optional[int] = None,
        tier: str = "auto", timeout: Optional[float] = None, memory: Optional[int] = None,
        audit: Optional[str] = None, data: Optional[str] = None, out: Optional[str] = None,
        interpreter: Optional[str] = None, allow_dir: Optional[str] = None,
        kvm_dir: Optional[str] = None, strip_fences: bool = False,
        check: bool = True) -> Result:
    eng = _engine(tier=tier, timeout=timeout, memory=memory, audit=audit, data=data, out=out,
                  interpreter=interpreter, allow_dir=allow_dir, kvm_dir=kvm_dir)
    return _run(eng, code, vars, table, lang, precision, rounding, answer_vars, seed,
                strip_fences, check)


run.__doc__ = """Runs `code` once and returns a Result. For one-off use: it keeps one engine
    per set of engine options for the life of the process (an Engine is one you hold and
    close). Thread-safe.

    Parameters:""" + _RUN_PARAMS.split("\n    Returns:")[0].rstrip() + "\n" + \
    _ENGINE_PARAMS + "\n    Returns:" + _RUN_PARAMS.split("\n    Returns:")[1]


def _option_text(key, val):
    """A request option's text as cr_request_set_option() reads it, which ends at a NUL: a
    value holding one is refused here rather than cut there."""
    if type(val) in (list, tuple) and key == "answer_vars":
        if any(type(x) is not str for x in val):
            raise CalcrouteError(f"{key}: want names as str")
        val = ",".join(val)
    elif type(val) not in (str, int, float, bool):
        raise CalcrouteError(f"{key}: want a str or a number, not {type(val).__name__}")
    # Exact types only, so that their own texts (not a subclass's __str__) reach the library,
    # which says what it wants of the value.
    text = repr(val) if type(val) is float else str(val)
    if "\0" in text:
        raise CalcrouteError(f"{key}: {text!r:.60} holds a NUL character")
    return text.encode()


def _run(eng, code, vars, table, lang, precision, rounding, answer_vars, seed, strip_fences,
         check):
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
                         ("answer_vars", answer_vars), ("seed", seed),
                         ("strip_fences", "1" if strip_fences else None)):
            if val is None:
                continue
            text = _option_text(key, val)
            if _lib.cr_request_set_option(req, key.encode(), text, ctypes.byref(err)):
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
            raise Rejected(f"{e.get('message', 'rejected')}{_where(e)}", result)
        if result.status != "ok":
            raise CalcrouteError((result.error or {}).get("message", result.status), result)
    return result
