"""Calls per second through the Python binding (calcroute.run, in-process, exact) beside
CPython's eval() of the same expressions (binary floats), in the same run.

usage: CALCROUTE_LIB=build/libcalcroute.so PYTHONPATH=bindings/python \
       /usr/bin/python3 bench/bench_binding.py [SECONDS]
"""
import statistics
import sys
import time

import calcroute

EXPRS = [
    "(5829 - 5735) / 5735",
    "round(1000 * (1 + 0.05 / 12) ** 360, 2)",
    "(1200 + 340.5 - 87.25) * 0.21",
    "max(0.12, 0.31, 0.07) - min(0.12, 0.31, 0.07)",
    "sum([1204.5, 1311.0, 1290.25, 1402.75]) / 4",
    "abs(-3929 + 6129) / 6129 * 100",
]


def rate(fn, seconds):
    """Median calls/s over 5 slices of the budget."""
    rates = []
    for _ in range(5):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds / 5:
            for e in EXPRS:
                fn(e)
            n += len(EXPRS)
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    calcroute.run("1")                     # load the library and make the engine once
    ours = rate(lambda e: calcroute.run(e), seconds)
    peer = rate(lambda e: eval(e), seconds)
    print(f"{'calcroute.run() through ctypes':40s} {ours:12,.0f} calls/s")
    print(f"{'CPython eval() (binary floats)':40s} {peer:12,.0f} calls/s")
    print(f"{'ratio eval / calcroute':40s} {peer / ours:12.1f}x")


if __name__ == "__main__":
    main()
