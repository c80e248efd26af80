"""A rule's rows (params.rows, under the header params.columns) as CSV, written to a temporary
file and renamed (rule archive_coverage)."""
import csv
import os

out = snakemake.output[0]  # noqa: F821 (set by Snakemake)
tmp = f"{out}.tmp"
with open(tmp, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(snakemake.params.columns)  # noqa: F821
    w.writerows(snakemake.params.rows)  # noqa: F821
os.replace(tmp, out)
