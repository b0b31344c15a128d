"""Peer of bench_loop: CPython (the interpreter running this, /usr/bin/python3 from
bench/run.sh) on the same programs, in the same run, each compiled once and exec'd REPEAT
times in a fresh namespace; prints ns of thread CPU time per iteration (median, p99), as
bench_loop measures, and calcroute's ratio.

usage: python3 bench_loop_peer.py LOOPS.jsonl [REPEAT]
"""
import json
import math
import sys
import time


def rank(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def main():
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    print("%-28s %14s %14s %10s" % ("CPython " + sys.version.split()[0], "median ns/it",
                                    "p99 ns/it", "ratio"))
    for r in rows:
        code = compile(r["program"], "<bench>", "exec")
        t = []
        for _ in range(repeat):
            t0 = time.thread_time_ns()
            exec(code, {})
            t.append((time.thread_time_ns() - t0) / r["n"])
        med = rank(t, 0.5)
        print("%-28s %14.1f %14.1f %9.2fx" % (r["name"], med, rank(t, 0.99),
                                             r["median_ns"] / med))


main()
