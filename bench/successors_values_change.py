"""What a module or testbed change moved in the report's part on BBR's successors: its generated values
(the figure scripts' <experiment>_values.tex) from the paper archive as committed at a revision, against
the archive in the working tree, both read by the working tree's figure scripts.

Usage: .venv/bin/python bench/successors_values_change.py --before-archive-rev REV [--tag TAG] [--work DIR]

For each successors_* experiment of config/experiments.csv: restores its valid archived runs (data/paper,
the manifest and tarballs of REV via `git show`, then of the working tree) into WORK/<side>/runs/, runs its
figure script (analysis/figures/successors/<experiment>.R, warm-up of config/paper.yaml) into
WORK/<side>/out/, and reads the \\succv values it wrote. Writes bench/results/successors-values-<TAG>.md: one
row per value that differs (and a count of those that do not), with each side's builds (kernel, modules).
Host only (R); about a minute per side.
"""
import argparse
import csv
import datetime
import io
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "mininet"))
sys.path.insert(0, str(ROOT / "bench"))
from bbrlab.data import archive  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402

ARCHIVE = ROOT / "data" / "paper"
VALUE = re.compile(r"\\expandafter\\def\\csname succv@([a-z0-9-]+)\\endcsname\{(.*)\}\s*$")


def experiments() -> list:
    with (ROOT / "config" / "experiments.csv").open(newline="") as f:
        return [r["experiment"] for r in csv.DictReader(f) if r["experiment"].startswith("successors_")]


def archive_at(rev: str, dest: pathlib.Path) -> pathlib.Path:
    """data/paper as committed at rev, in dest (manifest and the tarballs of the successors runs)."""
    dest.mkdir(parents=True, exist_ok=True)
    rel = ARCHIVE.relative_to(ROOT)
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, str(rel)], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        if name.endswith("manifest.csv") or "/successors_" in name:
            out = dest / pathlib.Path(name).relative_to(rel)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(subprocess.run(["git", "show", f"{rev}:{name}"], cwd=ROOT, check=True,
                                           capture_output=True).stdout)
    return dest


def values(archive_dir: pathlib.Path, work: pathlib.Path, warmup: str) -> tuple:
    """({(experiment, key): value}, {kernel build digests}, {module builds}) of one side."""
    rows = archive.read_manifest(archive_dir)
    out, kernels, modules = {}, set(), set()
    for exp in experiments():
        chosen = [r for r in rows.values() if r["experiment"] == exp and r["valid"] == "true"]
        for r in chosen:
            archive.restore(archive_dir, r, work / "runs" / exp / r["point"] / f"rep{r['repetition']}")
            kernels.add(r.get("kernel_sha256", "")[:12] or "(not recorded)")
            modules.update(m.split("=")[0] + "=" + m.split("=")[1][:12] for m in r.get("modules_sha256", "").split(";") if m)
        pdf = work / "out" / f"{exp}.pdf"
        pdf.parent.mkdir(parents=True, exist_ok=True)
        script = ROOT / "analysis" / "figures" / "successors" / f"{exp}.R"
        done = subprocess.run(["Rscript", str(script), str(work / "runs" / exp), str(pdf), warmup], cwd=ROOT,
                              env=dict(os.environ, BBRLAB_EXPERIMENT=exp), capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{script.name} failed:\n{done.stderr[-2000:]}")
        for line in pdf.with_name(f"{exp}_values.tex").read_text().splitlines():
            m = VALUE.match(line)
            if m:
                out[(exp, m.group(1))] = m.group(2)
    return out, kernels, modules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-archive-rev", required=True)
    ap.add_argument("--tag", default=datetime.date.today().isoformat())
    ap.add_argument("--work", type=pathlib.Path)
    args = ap.parse_args()
    warmup = re.search(r"^warmup_s:\s*(\S+)", (ROOT / "config" / "paper.yaml").read_text(), re.M).group(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or pathlib.Path(tmp)
        before, kb, mb = values(archive_at(args.before_archive_rev, work / "before-archive"), work / "before", warmup)
        after, ka, ma = values(ARCHIVE, work / "after", warmup)
    keys = sorted(set(before) | set(after))
    moved = [k for k in keys if before.get(k) != after.get(k)]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    lines = [f"# The successors part's values before and after ({args.tag})", "",
             f"`bench/successors_values_change.py --before-archive-rev {args.before_archive_rev}` at {head}: the "
             "values the successors' figure scripts generate (`\\succv`), from the paper archive as committed at "
             f"{args.before_archive_rev} (before) and as in the working tree (after), both read by the same scripts.", "",
             f"- before: kernel builds {', '.join(sorted(kb))}; modules {', '.join(sorted(mb)) or 'none'}",
             f"- after: kernel builds {', '.join(sorted(ka))}; modules {', '.join(sorted(ma)) or 'none'}", "",
             f"{len(moved)} of {len(keys)} values differ; the others are the same.", "",
             "| experiment | value | before | after |", "|---|---|---|---|"]
    lines += [f"| {e} | {k} | {before.get((e, k), '–')} | {after.get((e, k), '–')} |" for e, k in moved]
    out = ROOT / "bench" / "results" / f"successors-values-{args.tag}.md"
    write_text_atomic(out, "\n".join(lines) + "\n")
    print(f"successors_values_change: {len(moved)} of {len(keys)} values differ; wrote {out}")


if __name__ == "__main__":
    main()
