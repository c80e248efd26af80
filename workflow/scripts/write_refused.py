"""Rule ns3_refused: the runs ns-3 refuses as CSV (experiment, point, repetition, reason),
written to a temporary file and renamed."""
import csv
import os

out = snakemake.output[0]  # noqa: F821 (set by Snakemake)
tmp = f"{out}.tmp"
with open(tmp, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["experiment", "point", "repetition", "reason"])
    w.writerows(snakemake.params.rows)  # noqa: F821
os.replace(tmp, out)
