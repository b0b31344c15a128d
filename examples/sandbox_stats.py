# Outside the in-process subset (imports csv and statistics, reads a file): runs in the sandbox.
#     calc-route --data examples/data --out /tmp/artifacts examples/sandbox_stats.py
import csv
import statistics

with open("/data/quarterly.csv") as f:
    rows = list(csv.DictReader(f))
revenue = [float(r["revenue"]) for r in rows]
print("quarters:", len(revenue))
print("mean revenue:", statistics.mean(revenue))
with open("/out/summary.txt", "w") as out:
    out.write(f"stdev {statistics.stdev(revenue):.3f}\n")
ans = max(revenue) - min(revenue)
