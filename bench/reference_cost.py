"""What the reference evaluation of the paper archive costs outside the paper profile, by part.

Measures, on this checkout and the archive data/paper:

  restore   per experiment, the CPU seconds of unpacking its archived runs (checksum, xz, the
            columnar decoding, writing the CSVs), in this process, into a scratch tree
  claims    per paper, the CPU seconds (user + system) of `Rscript analysis/claims.R` on the
            restored tree with the paper profile's warm-up, and its peak memory

and writes bench/results/reference-cost-<date>.md. CPU seconds, not wall: the shared host's wall
time drifts with its load. Run by hand, from the repository root (no testbed is booted):

    nice .venv/bin/python bench/reference_cost.py [--tree DIR] [--papers ma2019 kim2019 ...]

--tree reuses a tree restored before (e.g. results/quick/reference/paper/runs) instead of
unpacking into a scratch directory (then only the claims are timed).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "mininet"))
from bbrlab.data import archive  # noqa: E402
from bbrlab.experiment import experiments  # noqa: E402


def restore_all(tree: pathlib.Path) -> list:
    """[(experiment, runs, archive bytes, CPU s)] of unpacking every entry of data/paper into tree."""
    rows = archive.read_manifest(ROOT / "data" / "paper")
    out = []
    for name in sorted({k[0] for k in rows}):
        entries = [(k, r) for k, r in rows.items() if k[0] == name]
        t0 = time.process_time()
        for (e, point, rep), row in entries:
            archive.restore(ROOT / "data" / "paper", row, tree / e / point / f"rep{rep}")
        out.append((name, len(entries), sum(int(r["bytes"]) for _k, r in entries), time.process_time() - t0))
    return out


def claims_cost(tree: pathlib.Path, paper, claims_file, warmup_s) -> tuple:
    """(CPU s, peak KB) of claims.R for one paper on the tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run(["Rscript", "analysis/claims.R", claims_file, str(tree), f"{tmp}/claims_{paper}.tex",
                              str(warmup_s)], cwd=ROOT, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"claims.R failed for {paper}:\n{res.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), after.ru_maxrss


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=pathlib.Path, help="a restored tree to reuse (no restore timed)")
    ap.add_argument("--papers", nargs="*", help="papers of paper/papers.csv (default: all)")
    args = ap.parse_args(argv)
    _exps, papers = experiments.load(ROOT)
    import yaml
    warmup_s = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["warmup_s"]
    lines = [f"# Reference evaluation cost, {datetime.date.today()}", "",
             "CPU seconds (user + system) measured by `bench/reference_cost.py`.", ""]
    with tempfile.TemporaryDirectory() as scratch:
        tree = args.tree or pathlib.Path(scratch) / "runs"
        if args.tree is None:
            restored = restore_all(tree)
            lines += ["## Restore (per experiment)", "", "| experiment | runs | archive MB | CPU s |", "|---|---|---|---|"]
            lines += [f"| {e} | {n} | {b / 1e6:.2f} | {s:.2f} |" for e, n, b, s in restored]
            lines += [f"| all | {sum(r[1] for r in restored)} | {sum(r[2] for r in restored) / 1e6:.1f} |"
                      f" {sum(r[3] for r in restored):.1f} |", ""]
        lines += ["## claims.R per paper", "", "| paper | CPU s | largest child peak so far, MB |", "|---|---|---|"]
        for key in args.papers or list(papers):
            cpu, peak = claims_cost(tree, key, papers[key].claims, warmup_s)
            lines.append(f"| {key} | {cpu:.1f} | {peak / 1024:.0f} |")
    out = ROOT / "bench" / "results" / f"reference-cost-{datetime.date.today()}.md"
    out.write_text("\n".join(lines) + "\n")
    print(out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
