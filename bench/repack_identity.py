#!/usr/bin/env python3
"""Does repacking archive entries to the present resolution policy change anything computed from them?

    .venv/bin/python bench/repack_identity.py BEFORE AFTER --prefix utsumi2022_ --claims claims/utsumi2022.csv
                                              [--out bench/results/repack-identity-<date>]

BEFORE and AFTER are two copies of the repository's data/ (each with paper/ and paper-controls/),
e.g. a copy taken before `bbrlab archive repack` and data/ after it. For the experiments whose
names start with the prefix, every entry of both copies is restored (archive.restore, checksums
checked) into two trees, paper/runs and controls/runs each; then, on each tree, the analysis the
report runs on those experiments:

- per run, each tidy file of AFTER against BEFORE's without the columns the present policy drops
  of that experiment (archive.dropped_columns): equal, or the run is listed;
- claims.R on the paper's claims file (its CSV compared byte for byte);
- each experiment's figure script (config/experiments.csv; the PNG compared byte for byte);
- the transfer-length evidence and prefix tables (analysis/transfer_length.R and
  transfer_length_prefix.R with the workflow's arguments; CSVs compared byte for byte) when the
  claims file is Utsumi & Hasegawa's.

Writes <out>.md (atomically) when --out is given, and prints it. Exit status 1 when anything differs.
"""
import argparse
import csv
import datetime
import filecmp
import os
import pathlib
import subprocess
import sys
import tempfile

from bench_io import write_text_atomic

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.data import archive  # noqa: E402
from bbrlab.experiment import controls  # noqa: E402

TREES = {"paper": "paper", "controls": "paper-controls"}
CANDIDATES_S = ("600", "1200", "2000")


def restore_tree(data: pathlib.Path, prefix: str, root: pathlib.Path) -> dict:
    """Restore the prefix's entries of data/paper and data/paper-controls under root/<tree>/runs;
    {(tree, experiment, point, repetition): (run dir, manifest row)}."""
    out = {}
    for tree, name in TREES.items():
        arch = data / name
        for key, row in archive.read_manifest(arch).items():
            if key[0].startswith(prefix):
                dest = root / tree / "runs" / key[0] / key[1] / f"rep{key[2]}"
                dest.parent.mkdir(parents=True, exist_ok=True)
                out[(tree, *key)] = (archive.restore(arch, row, dest), row)
    return out


def tidy_differences(before: dict, after: dict) -> list:
    """Runs whose tidy files in AFTER are not BEFORE's without the present policy's dropped columns."""
    bad = []
    for key in sorted(set(before) | set(after)):
        if key not in before or key not in after:
            bad.append(f"{'/'.join(map(str, key))}: only in {'after' if key in after else 'before'}")
            continue
        old, new = before[key][0] / "tidy", after[key][0] / "tidy"
        if sorted(p.name for p in old.glob("*.csv")) != sorted(p.name for p in new.glob("*.csv")):
            bad.append(f"{'/'.join(map(str, key))}: other tidy files")
            continue
        for path in sorted(old.glob("*.csv")):
            if (new / path.name).read_text() != archive.kept(path.read_text(), path.name, key[1]):
                bad.append(f"{'/'.join(map(str, key))}: {path.name}")
    return bad


def rscript(*args) -> None:
    res = subprocess.run(["Rscript", *map(str, args)], cwd=REPO, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"Rscript {' '.join(map(str, args))} failed:\n{res.stderr[-3000:]}")


def analyse(root: pathlib.Path, prefix: str, claims: str, out: pathlib.Path) -> list:
    """Run the report's analysis of the prefix's experiments on one tree; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    rscript("analysis/claims.R", claims, root / "paper" / "runs", out / "claims.tex", "10")
    files.append(out / "claims.csv")
    with open(REPO / "config" / "experiments.csv", newline="") as f:
        exps = [r for r in csv.DictReader(f) if r["experiment"].startswith(prefix) and r["figure"]]
    for row in exps:
        runs = root / "paper" / "runs" / row["experiment"]
        if runs.is_dir():
            env = dict(os.environ, BBRLAB_EXPERIMENT=row["experiment"])
            res = subprocess.run(["Rscript", row["figure"], str(runs), str(out / f"{row['experiment']}.pdf"), "10"],
                                 cwd=REPO, env=env, capture_output=True, text=True)
            if res.returncode != 0:
                raise SystemExit(f"{row['figure']} failed:\n{res.stderr[-3000:]}")
            files.append(out / f"{row['experiment']}.png")
    if pathlib.Path(claims).name == "utsumi2022.csv":
        table = REPO / controls.TABLE
        rscript("analysis/transfer_length.R", claims, table, root / "controls" / "runs", out / "transfer_length.tex",
                str(controls.SEEDS), *CANDIDATES_S)
        rscript("analysis/transfer_length_prefix.R", claims, table, root / "controls" / "runs",
                root / "paper" / "runs", out / "transfer_length_prefix.tex")
        files += [out / "transfer_length.csv", out / "transfer_length_prefix.csv"]
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=pathlib.Path)
    ap.add_argument("after", type=pathlib.Path)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--claims", required=True)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="repack-identity-") as tmp:
        tmp = pathlib.Path(tmp)
        runs = {side: restore_tree(getattr(args, side), args.prefix, tmp / side) for side in ("before", "after")}
        sizes = {side: sum(int(row["bytes"]) for _d, row in runs[side].values()) for side in runs}
        policies = {side: sorted({archive.policy(row) for _d, row in runs[side].values()}) for side in runs}
        tidy_bad = tidy_differences(runs["before"], runs["after"])
        outputs = {side: analyse(tmp / side, args.prefix, args.claims, tmp / f"{side}-out") for side in runs}
        compared = [(a.name, a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False))
                    for a, b in zip(outputs["before"], outputs["after"])]
    lines = [f"# Repacked archive entries against the entries before ({datetime.date.today().isoformat()})", "",
             f"Command: `.venv/bin/python bench/repack_identity.py {args.before} {args.after} --prefix {args.prefix} "
             f"--claims {args.claims}`", "",
             f"Present policy: `{archive.RESOLUTION}`.", "",
             f"- Entries ({args.prefix}*, paper and controls archives): {len(runs['before'])} before "
             f"(policies {', '.join(policies['before'])}), {len(runs['after'])} after (policies "
             f"{', '.join(policies['after'])}).",
             f"- Archived bytes: {sizes['before'] / 1e6:.2f} MB before, {sizes['after'] / 1e6:.2f} MB after "
             f"({sizes['after'] / max(sizes['before'], 1):.2f} of before).",
             f"- Runs whose tidy files are not the earlier ones without the dropped columns: {len(tidy_bad)}"
             + (": " + "; ".join(tidy_bad) if tidy_bad else "."), "",
             "| output (computed from each copy) | byte-identical |", "|---|---|"]
    lines += [f"| {name} | {'yes' if same else '**no**'} |" for name, same in compared]
    ok = not tidy_bad and all(same for _n, same in compared)
    lines += ["", "Verdict: " + ("every output identical." if ok else "**outputs differ** (listed above).")]
    text = "\n".join(lines) + "\n"
    if args.out:
        write_text_atomic(pathlib.Path(args.out).with_suffix(".md"), text)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
