"""unittest suite of the Python binding. CALCROUTE_LIB names the library under test."""
import collections
import decimal
import fractions
import os
import signal
import subprocess
import sys
import tempfile
import asyncio
import pydoc
import threading
import time
import unittest

import calcroute
from fractions import Fraction


class TestRun(unittest.TestCase):
    def test_exact_division(self):
        r = calcroute.run("(5829 - 5735) / 5735")
        self.assertEqual(r.route, "inprocess")
        self.assertEqual(r.status, "ok")
        self.assertEqual(r.value, Fraction(94, 5735))
        self.assertTrue(r.exact)
        self.assertEqual(r.type, "float")

    def test_float_noise_gone(self):
        r = calcroute.run("ans = 0.1 + 0.2")
        self.assertEqual(r.repr, "0.3")
        self.assertEqual(r.decimal, decimal.Decimal("0.3"))
        self.assertEqual(r.fraction, Fraction(3, 10))

    def test_vars_exact(self):
        r = calcroute.run("ans = x * 3", vars={"x": 0.1})
        self.assertEqual(r.value, Fraction(3, 10))
        r = calcroute.run("ans = x + y", vars={"x": decimal.Decimal("0.12345678901234567890123"),
                                              "y": 1})
        self.assertEqual(r.value, Fraction("1.12345678901234567890123"))

    def test_vars_big_numbers(self):
        # past 64 bits, and past CPython's 4300-digit str() limit
        r = calcroute.run("ans = x + 1", vars={"x": 2 ** 70})
        self.assertEqual(r.value, 2 ** 70 + 1)
        r = calcroute.run("ans = x % 1000003", vars={"x": 7 ** 9000})
        self.assertEqual(r.value, pow(7, 9000, 1000003))
        self.assertEqual(calcroute._int_text(-(10 ** 9000) - 5), "-1" + "0" * 8999 + "5")

    def test_vars_containers(self):
        r = calcroute.run("ans = sum(xs) + d['a']", vars={"xs": [1, 2.5], "d": {"a": 10}})
        self.assertEqual(r.repr, "13.5")

    def test_vars_exact_types_only(self):
        # A subclass writes its own text (its __repr__ could be any JSON): refused, as is a
        # name that is not a str or holds a NUL.
        class Float(float):
            def __repr__(self):
                return '1, "y": 2'

        class Int(int):
            def __str__(self):
                return "7"
        only = ("only int, float, bool, str, Decimal, Fraction, None, and lists, tuples and "
                "dicts of them (not their subclasses)")
        for v, name in ((Float(0.5), "Float"), (Int(3), "Int"),
                        (collections.OrderedDict(a=1), "OrderedDict")):
            with self.assertRaises(calcroute.CalcrouteError) as cm:
                calcroute.run("ans = x", vars={"x": v})
            self.assertEqual(str(cm.exception), f"variables: cannot pass a {name}: {only}")
        for vars, msg in (({1: 2}, "variables: a name must be a str, not int"),
                          ({"a\0b": 1}, "variables: the name 'a\\x00b' holds a NUL character")):
            with self.assertRaises(calcroute.CalcrouteError) as cm:
                calcroute.run("ans = 1", vars=vars)
            self.assertEqual(str(cm.exception), msg)

    def test_options_with_nul_refused(self):
        # The library reads an option's text up to a NUL: cut there it would be another value.
        for kw, msg in (({"answer_vars": "ans\0x"}, "answer_vars: 'ans\\x00x' holds a NUL character"),
                        ({"answer_vars": ["a", "b\0"]}, "answer_vars: 'a,b\\x00' holds a NUL character"),
                        ({"rounding": "half-up\0"}, "rounding: 'half-up\\x00' holds a NUL character"),
                        ({"precision": [5]}, "precision: want a str or a number, not list"),
                        ({"answer_vars": ["a", 5]}, "answer_vars: want names as str"),
                        ({"precision": {"p": 5}}, "precision: want a str or a number, not dict")):
            with self.assertRaises(calcroute.CalcrouteError) as cm:
                calcroute.run("ans = 1 / 3", **kw)
            self.assertEqual(str(cm.exception), msg)

    def test_stdout(self):
        r = calcroute.run("print(round(2.675, 2))")
        self.assertEqual(r.stdout, "2.68\n")

    def test_stdout_cut_whole_characters(self):
        # The 1 MiB output cap falls inside a 3-byte character: stdout keeps whole ones.
        r = calcroute.run("print('\u20ac' * 600000)", check=False)
        self.assertEqual(r.status, "limit")
        self.assertEqual((r.stdout_truncated, r.stdout_replaced), (True, False))
        self.assertEqual(r.stdout, "\u20ac" * 349525)
        self.assertEqual(r.stdout_bytes, r.stdout.encode())

    def _ns(self, code, **kw):
        r = calcroute.run(code, tier="ns", check=False, **kw)
        if r.route != "ns" or r.status == "sandbox_error":
            self.skipTest(f"the ns tier does not run here: {r.error}")
        return r

    def test_sandbox_raw_bytes(self):
        r = self._ns("import sys\nsys.stdout.buffer.write(b'ok\\xff\\xfe\\n')\n"
                     "sys.stderr.buffer.write(b'\\xe2\\x82')\n")
        self.assertEqual(r.status, "ok")
        self.assertEqual((r.stdout, r.stdout_replaced), ("ok\ufffd\ufffd\n", True))
        self.assertEqual(r.stdout_bytes, b"ok\xff\xfe\n")
        self.assertEqual((r.stderr, r.stderr_replaced, r.stderr_bytes), ("\ufffd", True, b"\xe2\x82"))

    def test_sandbox_artifact_name_not_utf8(self):
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o755)
            r = self._ns("open(b'/out/r\\xe9sum\\xe9.txt', 'wb').write(b'abc')\n", out=d)
            self.assertEqual(r.status, "ok")
            self.assertEqual([(a["name"], a["name_bytes"], a["size"]) for a in r.artifacts],
                             [("r\ufffdsum\ufffd.txt", b"r\xe9sum\xe9.txt", 3)])
            with open(os.path.join(os.fsencode(d), r.artifacts[0]["name_bytes"]), "rb") as f:
                self.assertEqual(f.read(), b"abc")

    def test_interpreter_venv(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o755)
            venv = os.path.realpath(os.path.join(d, "venv"))
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip",
                            "--system-site-packages", venv], check=True)
            site = subprocess.run([venv + "/bin/python", "-c",
                                   "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip()
            os.mkdir(site + "/tinypkg")
            with open(site + "/tinypkg/__init__.py", "w") as f:
                f.write("VALUE = 41\n")
            for root, dirs, files in os.walk(venv):
                for n in dirs + files:
                    if not os.path.islink(os.path.join(root, n)):
                        os.chmod(os.path.join(root, n), 0o755)
            r = self._ns("import tinypkg\nans = tinypkg.VALUE + 1\n",
                         interpreter=venv + "/bin/python", allow_dir=venv)
            self.assertEqual((r.status, r.value), ("ok", 42))
            with self.assertRaises(calcroute.CalcrouteError) as cm:
                calcroute.run("import os\nans = 1\n", tier="ns", interpreter=venv + "/bin/python")
            self.assertIn("not under /usr or an allowed directory", str(cm.exception))

    def test_seed(self):
        code = "import random\nans = random.randint(1, 10 ** 9)\n"
        a, b = self._ns(code, seed=3), self._ns(code, seed=3)
        self.assertEqual((a.seed, a.value), (3, b.value))
        self.assertNotEqual(self._ns(code, seed=4).value, a.value)
        with self.assertRaises(calcroute.CalcrouteError):
            calcroute.run(code, tier="ns", seed=-1)

    def test_sandbox_files_where_written(self):
        r = self._ns("open('a.txt', 'w').write('x')\nopen('/tmp/b', 'w')\n")
        self.assertEqual([a["name"] for a in r.artifacts], ["a.txt"])
        self.assertEqual(r.dropped, {"count": 1, "names": ["/tmp/b"]})

    def test_code_error_has_position(self):
        with self.assertRaises(calcroute.CodeError) as cm:
            calcroute.run("x = 1\ny = x / 0\n")
        e = cm.exception
        self.assertEqual(e.type, "ZeroDivisionError")
        self.assertEqual(e.message, "division by zero")
        self.assertEqual((e.line, e.col), (2, 5))

    def test_sandboxed_code_error_has_position(self):
        # CPython's line and column, which the in-process run of the same lines gives too.
        r = self._ns("import os\nx = 1\ny = x / 0\n")
        with self.assertRaises(calcroute.CodeError) as cm:
            calcroute.run("import os\nx = 1\ny = x / 0\n", tier="ns")
        e = cm.exception
        self.assertEqual((e.line, e.col, str(e)),
                         (3, 5, "ZeroDivisionError: division by zero (line 3, col 5)"))
        self.assertEqual((r.error["line"], r.error["col"]), (3, 5))
        with self.assertRaises(calcroute.CodeError) as cm:
            calcroute.run("import math\nx = 1\ny = x / 0\n")
        self.assertEqual(str(cm.exception), str(e))

    def test_check_false_returns_result(self):
        r = calcroute.run("1/0", check=False)
        self.assertEqual(r.status, "raised")
        self.assertEqual(r.error["type"], "ZeroDivisionError")

    def test_rejected_reasons(self):
        with self.assertRaises(calcroute.Rejected) as cm:
            calcroute.run("import pandas as pd\nans = pd.Series([2])\n", tier="none")
        self.assertEqual(cm.exception.reasons[0][:3], ("import:pandas", 1, 1))

    def test_syntax_error(self):
        with self.assertRaises(calcroute.Rejected):
            calcroute.run("ans = (1 +\n")

    def test_limit(self):
        with self.assertRaises(calcroute.LimitError):
            calcroute.run("ans = 10 ** 10 ** 10")

    def test_max_steps(self):
        # The loop below is 202 evaluation steps (calc-route --json's "ops"): it runs within
        # max_steps=202 and is ended at 201; well short of it, in the loop's body, named.
        code = "total = 0\nfor i in range(100):\n    total += i\nans = total"
        with calcroute.Engine(tier="none", max_steps=202) as eng:
            self.assertEqual(eng.run(code).value, 4950)
        for steps, where in ((201, None), (100, (3, 5))):
            with calcroute.Engine(tier="none", max_steps=steps) as eng:
                with self.assertRaises(calcroute.LimitError) as cm:
                    eng.run(code)
            r = cm.exception.result
            self.assertEqual(str(cm.exception), f"operation limit ({steps} steps)")
            self.assertEqual((r.status, r.value, r.limit["name"], r.limit["message"]),
                             ("limit", None, "evaluator", f"operation limit ({steps} steps)"))
            if where:
                self.assertEqual((r.limit["line"], r.limit["col"]), where)
        with self.assertRaises(calcroute.CalcrouteError) as cm:
            calcroute.Engine(max_steps=0)
        self.assertEqual(str(cm.exception),
                         "max_steps: want a whole number from 1 to 4611686018427387904, got '0'")

    def test_dsl_with_table(self):
        table = [["", "2019", "2018"], ["net sales", "$ 5,829", "$ 5,735"]]
        r = calcroute.run("table_sum(net sales, none)", table=table)
        self.assertEqual(r.value, Fraction(11564))
        r = calcroute.run("subtract(5829, 5735), divide(#0, 5735)", lang="dsl")
        self.assertEqual(r.value, Fraction(94, 5735))

    def test_precision_option(self):
        r = calcroute.run("import math\nans = math.sqrt(2)", precision=10)
        self.assertEqual(r.repr, "1.414213562")
        self.assertFalse(r.exact)

    def test_limits_refused_as_the_cli_refuses_them(self):
        for kw, msg in ((dict(timeout=-1), "timeout: want seconds above 0 (at most 86400), got '-1'"),
                        (dict(timeout=0), "timeout: want seconds above 0 (at most 86400), got '0'"),
                        (dict(timeout=float("nan")),
                         "timeout: want seconds above 0 (at most 86400), got 'nan'"),
                        (dict(memory=0), "memory: want MiB from 16 to 1048576, got '0'"),
                        (dict(memory=1.5), "memory: want MiB from 16 to 1048576, got '1.5'")):
            with self.assertRaises(calcroute.CalcrouteError) as cm:
                calcroute.Engine(**kw)
            self.assertEqual(str(cm.exception), msg)

    def test_bad_option(self):
        with self.assertRaises(calcroute.CalcrouteError):
            calcroute.run("1", rounding="up")

    def test_kvm_dir(self):
        # The engine checks the directory when it opens (the field reached it), and a run in
        # it looks there: what the host lacks first, else the files.
        msg = "kvm_dir: want a directory, got '/nonexistent-kvm'"
        with self.assertRaises(calcroute.CalcrouteError) as cm:
            calcroute.Engine(kvm_dir="/nonexistent-kvm")
        self.assertEqual(str(cm.exception), msg)
        with self.assertRaises(calcroute.CalcrouteError) as cm:
            calcroute.run("import os", tier="kvm", kvm_dir="/nonexistent-kvm")
        self.assertEqual(str(cm.exception), msg)
        with tempfile.TemporaryDirectory() as d:
            r = calcroute.run("import os", tier="kvm", kvm_dir=d, check=False)
            self.assertEqual((r.route, r.status), ("kvm", "sandbox_error"))
            got = r.error["message"]
            if os.path.isdir("/sys/module/kvm_pvm"):
                self.assertEqual(got, "kvm: /dev/kvm is kvm_pvm, a software hypervisor that "
                                 "cannot run a Linux guest; try --tier ns")
            elif not os.path.exists("/dev/kvm"):
                self.assertRegex(got, r"^kvm: no /dev/kvm on this host.*; try --tier ns$")
            else:
                self.assertEqual(got, f"kvm: no vmlinuz and initrd.cpio in {d} (the kvm "
                                 "directory configured): make install-kvm installs them, "
                                 "--kvm-dir names another directory; try --tier ns")
            self.assertEqual(calcroute.run("ans = 1 + 1", kvm_dir=d).value, 2)

    def test_audit(self):
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "ledger.db")
            r1 = calcroute.run("ans = 1 + 1", audit=db)
            r2 = calcroute.run("ans = 2 + 2", audit=db)
            self.assertEqual(r2.audit_seq, r1.audit_seq + 1)
            self.assertEqual(len(r1.audit_hash), 64)

    def test_threads(self):
        out = []

        def work(i):
            out.append(calcroute.run(f"ans = {i} / 4").value)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(sorted(out), [Fraction(i, 4) for i in range(16)])


class TestNative(unittest.TestCase):
    def test_values(self):
        r = calcroute.run("ans = [2 ** 100, True, None, 'caf\u00e9', 0.1 + 0.2, (1,), {'k': {3}}]")
        self.assertEqual(r.value, [2 ** 100, True, None, "caf\u00e9", Fraction(3, 10), (1,),
                                   {"k": {3}}])
        self.assertEqual([type(x) for x in r.value[:5]], [int, bool, type(None), str, Fraction])
        self.assertEqual(r.repr, "[1267650600228229401496703205376, True, None, 'caf\u00e9', 0.3, "
                                 "(1,), {'k': {3}}]")
        self.assertIsNone(r.native_why)

    def test_scalars(self):
        self.assertIs(calcroute.run("ans = 3 > 2").value, True)
        self.assertEqual(type(calcroute.run("ans = 7 * 6").value), int)
        self.assertEqual(calcroute.run("ans = 'a' + 'b'").value, "ab")
        self.assertEqual(calcroute.run("import decimal\nans = decimal.Decimal('1.10')").value,
                         decimal.Decimal("1.10"))
        self.assertEqual(str(calcroute.run("ans = float('-inf')").value), "-inf")

    def test_decimal_exact_at_any_size(self):
        r = calcroute.run("ans = 2 ** 100")
        self.assertEqual(r.decimal, decimal.Decimal("1267650600228229401496703205376"))
        self.assertEqual(r.float, 1.2676506002282294e+30)
        r = calcroute.run("ans = 2 ** 100 / 2 ** 20 + 0.000001")
        self.assertEqual(str(r.decimal), "1208925819614629174706176.000001")
        self.assertEqual(calcroute.run("ans = 7 ** 4000").value, 7 ** 4000)
        # a fraction's terms past CPython's 4300-digit int() limit
        self.assertEqual(calcroute._fraction("-1" + "0" * 5000 + "/3"), Fraction(-10 ** 5000, 3))
        self.assertEqual(calcroute.run("ans = 1 / 3").decimal, decimal.Decimal(1) / 3)

    def test_not_native(self):
        r = calcroute.run("ans = range(3)")
        self.assertEqual((r.repr, r.native_why), ("range(0, 3)", "a range has no native form"))
        with self.assertRaises(calcroute.NotNative) as cm:
            r.value
        self.assertEqual(str(cm.exception), "Result.value: a range has no native form; "
                                            "Result.repr has its text: range(0, 3)")
        r = calcroute.run("x = [1]\nx.append(x)\nans = x")
        self.assertEqual(r.native_why, "nested more than 200 deep, or holding itself")

    def test_sandboxed(self):
        r = calcroute.run("import os\nans = 2 ** 70", tier="ns", check=False)
        if r.route != "ns" or r.status != "ok":
            self.skipTest(f"the ns tier does not run here: {r.error}")
        self.assertEqual(r.value, 2 ** 70)
        r = calcroute.run("import os\nans = 0.1 + 0.2", tier="ns")
        self.assertEqual((r.value, r.exact), (Fraction("0.30000000000000004"), False))
        # containers come back as themselves, as in-process ones do
        code = ("import os, decimal, fractions\nans = [1, 2.0, 0.1, 'caf\\xe9', (None, True), "
                "{'k': {3}}, decimal.Decimal('1.10'), fractions.Fraction(1, 3), 2 ** 70]")
        r = calcroute.run(code, tier="ns")
        self.assertEqual(r.value, [1, Fraction(2), Fraction(1, 10), "caf\xe9", (None, True),
                                   {"k": {3}}, decimal.Decimal("1.10"), Fraction(1, 3), 2 ** 70])
        self.assertEqual([type(x).__name__ for x in r.value],
                         ["int", "Fraction", "Fraction", "str", "tuple", "dict", "Decimal",
                          "Fraction", "int"])
        self.assertEqual(r.repr, "[1, 2.0, 0.1, 'caf\xe9', (None, True), {'k': {3}}, "
                                 "Decimal('1.10'), Fraction(1, 3), 1180591620717411303424]")
        why = ("a part of the sandbox's list has no native form (or it is deeper than 200 or of "
               "more than a million parts); its repr is the text")
        r = calcroute.run("import os\nans = [range(3)]", tier="ns")
        self.assertEqual((r.native_why, r.repr), (why, "[range(0, 3)]"))
        r = calcroute.run("import os\nx = [1]\nx.append(x)\nans = x", tier="ns")
        self.assertEqual((r.native_why, r.repr), (why, "[1, [...]]"))
        text = "caf\xe9\n\t'\"\\\x00\u2028\U0001F600\x7f"
        r = calcroute.run("import os\nans = " + ascii(text), tier="ns")
        self.assertEqual((r.value, r.repr), (text, repr(text)))
        r = calcroute.run("import os\nans = '\\ud800'", tier="ns")
        self.assertEqual(r.native_why, "the sandbox's str repr is no UTF-8 text (a lone surrogate?)")


class TestFences(unittest.TestCase):
    REPLY = ("Sure. First the inputs:\n\n```python\nx = 0.1 + 0.2\n```\n\nA shell aside:\n"
             "```bash\nans = 99\n```\nThen:\n```py\nans = x * 10\n```\nThat is 3.\n")

    def test_strip(self):
        self.assertEqual(calcroute.run(self.REPLY, strip_fences=True).value, 3)
        with self.assertRaises(calcroute.Rejected):
            calcroute.run(self.REPLY)
        # no fence: the text runs as it is; a reply cut short inside its block still runs
        self.assertEqual(calcroute.run("ans = 2", strip_fences=True).value, 2)
        self.assertEqual(calcroute.run("Here:\n~~~~\nans = 5\n", strip_fences=True).value, 5)

    def test_error_lines_count_in_the_code(self):
        with self.assertRaises(calcroute.CodeError) as cm:
            calcroute.run("Text\n```python\nx = 1\ny = x / 0\n```\n", strip_fences=True)
        self.assertEqual((cm.exception.line, cm.exception.col), (2, 5))


class TestPackage(unittest.TestCase):
    def test_help_documents_every_parameter(self):
        import inspect
        for fn in (calcroute.run, calcroute.Engine.run, calcroute.Engine.arun, calcroute.Engine):
            doc = pydoc.plain(pydoc.render_doc(fn))
            target = fn.__init__ if isinstance(fn, type) else fn
            for name in inspect.signature(target).parameters:
                if name != "self":
                    self.assertRegex(doc, rf"(?m)^[ |]+{name}: \S", f"{fn.__qualname__}: {name}")
        doc = pydoc.plain(pydoc.render_doc(calcroute.Result))
        for name in ("value", "native_why", "repr", "fraction", "decimal", "float", "exact",
                     "route", "status", "reasons", "error", "limit", "timings", "audit"):
            self.assertRegex(doc, rf"(?m)^[ |]+{name}[:,]", name)
        for exc in (calcroute.CalcrouteError, calcroute.CodeError, calcroute.LimitError,
                    calcroute.Rejected, calcroute.NotNative, calcroute.LibraryNotFound):
            self.assertGreater(len(exc.__doc__), 40, exc.__name__)

    def test_readme_examples(self):
        import doctest
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                              "README.md")
        got = doctest.testfile(readme, module_relative=False, optionflags=doctest.ELLIPSIS,
                               verbose=False)
        self.assertEqual(got.failed, 0)
        self.assertGreater(got.attempted, 10)

    def test_missing_library(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path),
                   CALCROUTE_LIB="/nonexistent/libcalcroute.so.0")
        out = subprocess.run([sys.executable, "-c", "import calcroute\ntry:\n"
                              "    calcroute.run('1')\nexcept calcroute.LibraryNotFound as e:\n"
                              "    print(isinstance(e, OSError), e)"],
                             env=env, capture_output=True, text=True).stdout
        self.assertEqual(out, "True libcalcroute.so.0 cannot be loaded ($CALCROUTE_LIB: "
                              "/nonexistent/libcalcroute.so.0: cannot open shared object file: "
                              "No such file or directory). Install calcroute (`pip install .` or "
                              "`make install` in its source tree; the library needs Debian's "
                              "libtree-sitter0, libsqlite3-0, libseccomp2, libsodium23, "
                              "libjansson4, libmpfr6, libgmp10 and libunistring2), or set "
                              "CALCROUTE_LIB to the library's path.\n")


class TestEngine(unittest.TestCase):
    def test_eight_threads_share_one_engine(self):
        out, errors = {}, []
        with calcroute.Engine(tier="none") as eng:
            def work(i):
                try:
                    for k in range(20):
                        out[i, k] = eng.run(f"ans = x / {k + 1}", vars={"x": i}).value
                except Exception as e:      # noqa: BLE001 - reported below
                    errors.append(e)
            ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual(errors, [])
        self.assertEqual(out, {(i, k): Fraction(i, k + 1) for i in range(8) for k in range(20)})
        with self.assertRaises(calcroute.CalcrouteError):
            eng.run("1")

    def test_warm_pool_warmup(self):
        probe = calcroute.run("import os\nans = 1", tier="ns", check=False)
        if probe.route != "ns" or probe.status != "ok":
            self.skipTest(f"the ns tier does not run here: {probe.error}")
        code = "import json\nans = getattr(json, 'warmed', 0)"
        # Waited for (wait_ready), the pool gives the first run a warm sandbox, with the
        # warm-up's state; a cold start would have none.
        with calcroute.Engine(tier="ns", pool=1, preload=["json"], wait_ready=True,
                              warmup="import json\nprint('noise')\njson.warmed = 5") as eng:
            r = eng.run(code)
            self.assertEqual((r.timings["sandbox_start"], r.value, r.stdout), ("warm", 5, ""))
        with self.assertRaises(calcroute.CalcrouteError):
            calcroute.Engine(tier="ns", pool=1, warmup="x = '\0'")

    def test_warm_by_default_and_ready(self):
        probe = calcroute.run("import os\nans = 1", tier="ns", check=False)
        if probe.route != "ns" or probe.status != "ok":
            self.skipTest(f"the ns tier does not run here: {probe.error}")
        # The default pool (auto) preloads the finance stack; ready means its first request
        # is warm.
        with calcroute.Engine(tier="ns", wait_ready=True) as eng:
            self.assertTrue(eng.ready())
            r = eng.run("import numpy\nprint(numpy.__name__)")
            self.assertEqual((r.timings["sandbox_start"], r.stdout), ("warm", "numpy\n"))
        # No pool: nothing to wait for.
        with calcroute.Engine(tier="none") as eng:
            self.assertTrue(eng.ready(0))

    def test_asyncio(self):
        async def main(eng):
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1
            t = asyncio.create_task(ticker())
            # a slow run does not block the loop; many runs go at once
            slow = eng.arun("x = 0\nfor i in range(3000000):\n    x += i\nans = x")
            many = [eng.arun(f"ans = {i} / 8") for i in range(16)]
            got = await asyncio.gather(slow, *many)
            t.cancel()
            return got, ticks
        with calcroute.Engine(tier="none") as eng:
            got, ticks = asyncio.run(main(eng))
        self.assertEqual([r.value for r in got],
                         [sum(range(3000000))] + [Fraction(i, 8) for i in range(16)])
        self.assertGreater(ticks, 3)

    def test_arun_cancelled_ends_the_run(self):
        async def main(eng):
            task = asyncio.create_task(eng.arun("x = 0\nwhile True:\n    x += 1"))
            await asyncio.sleep(0.3)
            t0 = time.monotonic()
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            r = await eng.arun("ans = 6 * 7")     # the engine runs again
            return r.value, time.monotonic() - t0
        with calcroute.Engine(tier="none", timeout=60) as eng:
            value, took = asyncio.run(main(eng))
        self.assertEqual(value, 42)
        self.assertLess(took, 5)


# A child python that runs code through calcroute.run() and says how it ended; then a run on
# the same engine, which must not stay interrupted.
CHILD = '''
import sys, calcroute
print("go", flush=True)
try:
    calcroute.run(sys.argv[1], tier=sys.argv[2], timeout=60)
    print("returned")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
print(calcroute.run("ans = 6 * 7", tier=sys.argv[2], timeout=60).repr)
'''


def descendants(pid):
    kids = {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    todo, seen = [pid], []
    while todo:
        for k in kids.get(todo.pop(), []):
            seen.append(k)
            todo.append(k)
    return seen


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class TestInterrupt(unittest.TestCase):
    """Ctrl-C (SIGINT) during calcroute.run(): the run ends at once, far from its 60 s
    timeout, KeyboardInterrupt reaches the caller, nothing of the run is left running, and
    the engine runs the next request."""

    def interrupt(self, code, tier, sandboxed):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        child = subprocess.Popen([sys.executable, "-c", CHILD, code, tier], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline(), "go\n")
            deadline, kids = time.monotonic() + 20, []
            while time.monotonic() < deadline and (sandboxed and not kids):
                time.sleep(0.1)
                kids = descendants(child.pid)
            time.sleep(1)
            kids = descendants(child.pid)
            self.assertEqual(bool(kids), sandboxed)
            t0 = time.monotonic()
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=30)
            self.assertLess(time.monotonic() - t0, 10)
        finally:
            child.kill()
            child.wait()
        self.assertEqual((out, child.returncode), ("KeyboardInterrupt\n42\n", 0), err)
        self.assertEqual([k for k in kids if alive(k)], [])

    def ns_or_skip(self):
        r = calcroute.run("import os\nans = 1", tier="ns", check=False)
        if r.status != "ok":
            self.skipTest(f"no ns tier here: {r.error}")

    def test_sandboxed_sleep(self):
        self.ns_or_skip()
        self.interrupt("import time\ntime.sleep(100)", "ns", True)

    def test_sandboxed_busy_loop(self):
        self.ns_or_skip()
        self.interrupt("import os\nwhile True:\n    pass", "ns", True)

    def test_in_process_loop(self):
        self.interrupt("x = 0\nwhile True:\n    x += 1", "none", False)

    def test_run_from_another_thread(self):
        # Python's signal handlers run on the main thread only: a run elsewhere is plain.
        out = []
        t = threading.Thread(target=lambda: out.append(calcroute.run("ans = 2 ** 10").repr))
        t.start()
        t.join()
        self.assertEqual(out, ["1024"])
        self.assertEqual(signal.set_wakeup_fd(-1), -1)


if __name__ == "__main__":
    unittest.main()
