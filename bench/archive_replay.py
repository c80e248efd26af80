#!/usr/bin/env python3
"""Rerun archived runs with this checkout and compare their tidy data byte for byte.

    .venv/bin/python bench/archive_replay.py data/paper [--per-paper 1 | --replay-set | --run EXP/POINT/repK ...]
                                             [--kernel build/kernel/linux]
                                             [--out bench/results/archive-replay-<date>]

A results archive's entries are current when their run key and modules key match this
checkout's (bbrlab/data/archive.py); neither key sees the testbed's own code (the guest
driver, the socket sizing, the samplers) nor the testbed kernel. On the virtual clock a run
is a function of its spec, seed, kernel and that code, so rerunning an archived run must give
its archived tidy data exactly (the columns the archive keeps). Run this after any change to
the host or guest side: a difference means the archive's runs no longer stand for what this
checkout would run, though their keys say they do. Picks, per paper, the archived valid runs
with the fewest experiment seconds (or the runs named with --run), reruns each with `bbrlab
run --profile <its profile> --point --rep`, and compares every archived tidy CSV column. Writes
<out>.md (atomically) and prints it; exits 1 when a run differs.
"""
import argparse
import csv
import datetime
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.data import archive  # noqa: E402
from bbrlab.experiment import experiments  # noqa: E402
from bbrlab.host import digests  # noqa: E402


def pick(rows: dict, per_paper: int) -> list:
    """The archived valid runs with the fewest experiment seconds, `per_paper` per paper."""
    exps = experiments.load(REPO)[0]
    by_paper = {}
    for row in rows.values():
        if row["valid"] == "true" and row["experiment"] in exps:
            by_paper.setdefault(exps[row["experiment"]].paper, []).append(row)
    out = []
    for paper in sorted(by_paper):
        out += sorted(by_paper[paper], key=lambda r: (float(r["experiment_s"]), r["experiment"], r["point"]))[:per_paper]
    return out


_JOBS, _MODULE_KEYS = {}, {}


def current(rows: dict, row: dict, exps: dict) -> bool:
    """Whether the archive holds this row's run with this checkout's keys (a stale run would
    rerun as another run: its spec or module changed since)."""
    from bbrlab.experiment import repetitions
    key = (row["experiment"], row["profile"])
    if key not in _JOBS:
        _JOBS[key] = {(j["point"], j["repetition"]): j
                      for j in repetitions.runs(REPO / exps[row["experiment"]].spec, profile=row["profile"])}
    job = _JOBS[key].get((row["point"], int(row["repetition"])))
    return job is not None and archive.held_row(rows, job, _MODULE_KEYS) is row


def replay_set(rows: dict, build: str | None = None) -> list:
    """The runs the test suite replays (tests/test_archive_replay.py): for each paper, and for each
    variant module an archived run loaded, the valid run with the fewest experiment seconds (then
    wall seconds) among those held with this checkout's keys whose kernel build the manifest records (kernel_sha256: archived
    since the testbed's builds are reproducible; older entries came from builds no one can
    rebuild); with `build` (a kernel's sha256), among those from that build only, so that while
    the archive is being rerun on a new build the set holds the rerun ones. Each run once, in
    manifest order."""
    exps = experiments.load(REPO)[0]
    eligible = [r for r in rows.values()
                if r["valid"] == "true" and r.get("kernel_sha256") and r["experiment"] in exps and current(rows, r, exps)
                and (build is None or r["kernel_sha256"] == build)]
    cost = lambda r: (float(r["experiment_s"]), float(r["wall_s"] or 0), r["experiment"], r["point"])  # noqa: E731
    groups = {}
    for r in eligible:
        groups.setdefault(("paper", exps[r["experiment"]].paper), []).append(r)
        for item in filter(None, r.get("modules_sha256", "").split(";")):
            groups.setdefault(("module", item.partition("=")[0]), []).append(r)
    chosen = {id(min(group, key=cost)): min(group, key=cost) for group in groups.values()}
    order = {key: k for k, key in enumerate(rows)}
    return sorted(chosen.values(), key=lambda r: order[(r["experiment"], r["point"], int(r["repetition"]))])


def compare(archived: pathlib.Path, rerun: pathlib.Path) -> list:
    """The differences between two runs' tidy data, over the archived files' columns ([] if none)."""
    problems = []
    for path in sorted((archived / "tidy").glob("*.csv")):
        other = rerun / "tidy" / path.name
        if not other.is_file():
            problems.append(f"{path.name}: missing in the rerun")
            continue
        a = list(csv.DictReader(path.open(newline="")))
        b = list(csv.DictReader(other.open(newline="")))
        if len(a) != len(b):
            problems.append(f"{path.name}: {len(a)} rows archived, {len(b)} rerun")
            continue
        cols = sorted({c for x, y in zip(a, b) for c in x if x[c] != y.get(c)})
        if cols:
            problems.append(f"{path.name}: differs in {', '.join(cols)}")
    return problems


def replay(archive_dir: pathlib.Path, row: dict, kernel: str, work: pathlib.Path) -> list:
    exps = experiments.load(REPO)[0]
    name = f"{row['experiment']}/{row['point']}/rep{row['repetition']}"
    kept = work / "archived" / name
    archive.restore(archive_dir, row, kept)
    out = work / "rerun"
    cmd = [sys.executable, "-m", "bbrlab", "run", str(REPO / exps[row["experiment"]].spec),
           "--profile", row["profile"], "--out", str(out), "--point", row["point"],
           "--rep", str(row["repetition"]), "--kernel", kernel]
    done = subprocess.run(cmd, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO / "mininet")),
                          capture_output=True, text=True)
    if done.returncode != 0:
        return [f"the rerun failed: {done.stderr.strip().splitlines()[-1:]}"]
    return compare(kept, out / row["experiment"] / row["point"] / f"rep{row['repetition']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("archive", type=pathlib.Path)
    ap.add_argument("--per-paper", type=int, default=1)
    ap.add_argument("--run", action="append", default=[], help="EXPERIMENT/POINT/repK (repeatable)")
    ap.add_argument("--replay-set", action="store_true",
                    help="the runs the test suite replays: one per paper and per variant module (replay_set)")
    ap.add_argument("--kernel", default=str(REPO / "build" / "kernel" / "linux"))
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    rows = archive.read_manifest(args.archive)
    if args.run:
        chosen = []
        for item in args.run:
            exp, point, rep = item.rsplit("/", 2)
            key = next((k for k in rows if k[0] == exp and k[1] == point and str(k[2]) == rep.removeprefix("rep")), None)
            if key is None:
                raise SystemExit(f"archive_replay: {item}: not in {args.archive}/manifest.csv")
            chosen.append(rows[key])
    elif args.replay_set:
        chosen = replay_set(rows, build=digests.sha256_file(pathlib.Path(args.kernel)))
    else:
        chosen = pick(rows, args.per_paper)
    lines = [f"# Archived runs rerun with this checkout ({datetime.date.today()})", "",
             f"Archive `{args.archive}`, kernel `{args.kernel}`, checkout "
             f"{subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=REPO, capture_output=True, text=True).stdout.strip()}.",
             "", "| run | archived at revision | result |", "|---|---|---|"]
    failed = 0
    for row in chosen:
        with tempfile.TemporaryDirectory() as tmp:
            problems = replay(args.archive, row, args.kernel, pathlib.Path(tmp))
        failed += bool(problems)
        lines.append(f"| {row['experiment']}/{row['point']}/rep{row['repetition']} | {row['git_revision'][:10]} | "
                     + ("identical" if not problems else "; ".join(problems)) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + f"\n\n{len(chosen) - failed} of {len(chosen)} identical.\n"
    if args.out:
        tmp = args.out.with_name(f".{args.out.name}.md.tmp")
        tmp.write_text(text)
        os.replace(tmp, args.out.with_suffix(".md"))
    print(text, end="")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
