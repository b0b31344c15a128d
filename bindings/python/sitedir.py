"""Prints where `make install` puts the calcroute package for PREFIX (argv[1]): the first of
these directories this python searches, else lib/pythonX.Y/site-packages (then add it to
PYTHONPATH). Debian's python3 searches lib/python3/dist-packages under /usr only and
lib/python3.X/dist-packages under /usr/local."""
import sys

prefix = sys.argv[1].rstrip("/") or ""
ver = "python%d.%d" % sys.version_info[:2]
candidates = [f"{prefix}/lib/python3/dist-packages", f"{prefix}/lib/{ver}/dist-packages",
              f"{prefix}/lib/{ver}/site-packages"]
print(next((c for c in candidates if c in sys.path), candidates[-1]))
