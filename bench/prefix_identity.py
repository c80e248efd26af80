#!/usr/bin/env python3
"""Is a T-s run the first T s of the longer run with the same seed? Row by row, on the tidy data.

    .venv/bin/python bench/prefix_identity.py SHORT_RUN LONG_RUN [SHORT_RUN LONG_RUN ...]
                                              [--out bench/results/prefix-identity-<date>]

The shortened-transfer rule (docs/specs.md, "Transfer length") stands the first T s of a
full-length control run in for a T-s run with the same seed. Each pair is two run directories
(run.json + tidy/, e.g. restored from data/paper and data/paper-controls with `archive.restore`).
For goodput.csv, tcp.csv and queue.csv, rows are keyed by (flow, t_s) and compared on the columns
both runs keep (an archived run lacks archive.DROPPED's): per table, the short run's rows, how
many differ from the long run's row with the same key or have none, and the first time at which
one does; rows after the short run's duration_s (its teardown) are counted apart. Writes <out>.md
(atomically) when --out is given, and prints it.
"""
import argparse
import csv
import io
import json
import pathlib

from bench_io import write_text_atomic

TABLES = ("goodput.csv", "tcp.csv", "queue.csv")


def rows(path: pathlib.Path, columns: list) -> dict:
    """{(flow, t_s): tuple of `columns`} of a tidy CSV."""
    with path.open(newline="") as f:
        return {(r.get("flow", ""), float(r["t_s"])): tuple(r[c] for c in columns) for r in csv.DictReader(f)}


def compare(short: pathlib.Path, long: pathlib.Path) -> list:
    """[(table, rows, differing within duration, first differing t, differing after duration)]."""
    end = float(json.loads((short / "run.json").read_text())["spec"]["duration_s"])
    out = []
    for name in TABLES:
        heads = [set(next(csv.reader(io.StringIO((d / "tidy" / name).read_text()))) or []) for d in (short, long)]
        columns = sorted(heads[0] & heads[1])
        a, b = rows(short / "tidy" / name, columns), rows(long / "tidy" / name, columns)
        differ = sorted(k[1] for k in a if b.get(k) != a[k])
        inside = [t for t in differ if t <= end]
        out.append((name, len(a), len(inside), inside[0] if inside else None, len(differ) - len(inside)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=pathlib.Path, help="SHORT_RUN LONG_RUN pairs")
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    if len(args.runs) % 2:
        ap.error("runs come in pairs: SHORT_RUN LONG_RUN")
    lines = ["# A T-s run against the first T s of the longer run with the same seed", "",
             "`bench/prefix_identity.py` (rows keyed by flow and t_s, on the columns both runs keep).", "",
             "| short run | long run | table | rows | differ within T | first at (s) | differ after T |",
             "|---|---|---|---|---|---|---|"]
    for short, long in zip(args.runs[::2], args.runs[1::2]):
        for name, n, inside, first, after in compare(short, long):
            lines.append(f"| {short} | {long} | {name} | {n} | {inside} | {'' if first is None else first} | {after} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        write_text_atomic(args.out.with_suffix(".md"), text)


if __name__ == "__main__":
    main()
