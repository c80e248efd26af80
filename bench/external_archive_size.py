#!/usr/bin/env python3
"""How large the paper-profile runs not in the shipped archive would be once archived.

    PYTHONPATH=mininet .venv/bin/python bench/external_archive_size.py
        [--archive data/paper --archive data/paper-controls] [--specs SPEC ...]
        [--out bench/results/external-archive-size-<date>.md]

Lists, per spec (default: Utsumi & Hasegawa's), the runs of the paper profile that no
archive given holds (`archive.lookup_job`, as `bbrlab archive status` does) and estimates
their archived size from archived runs of the same experiment and the same experiment length
(manifest `bytes`: the tarball archive.add() wrote, at the resolution of its manifest row).
An experiment without such a run takes the mean over every archived run of that length in
the given specs; the record says which estimate each experiment got. Never boots a testbed.
"""
import argparse
import collections
import csv
import datetime
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "mininet"))
sys.path.insert(0, str(ROOT / "bench"))

from bbrlab.data import archive  # noqa: E402
from bbrlab.experiment import repetitions  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402


def archived_bytes(archives):
    """{(experiment, experiment_s): [bytes, ...]} and the resolutions seen, over the archives."""
    sizes, resolutions = collections.defaultdict(list), collections.Counter()
    for arc in archives:
        with open(pathlib.Path(arc) / "manifest.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                if row["bytes"]:
                    sizes[(row["experiment"], float(row["experiment_s"]))].append(int(row["bytes"]))
                    resolutions[row["resolution"].split(":")[0]] += 1
    return sizes, resolutions


def missing_runs(specs, archives):
    """{(experiment, experiment_s): count} of the paper profile's runs no archive holds."""
    out = collections.Counter()
    for path in specs:
        for job in repetitions.runs(path, profile="paper"):
            if not any(archive.lookup_job(arc, job)[0] for arc in archives):
                out[(job["name"], float(job["duration_s"]))] += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--archive", action="append", default=None)
    ap.add_argument("--specs", nargs="+", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    archives = args.archive or [str(ROOT / "data/paper"), str(ROOT / "data/paper-controls")]
    specs = args.specs or sorted(str(p) for p in (ROOT / "mininet/specs/utsumi2022").glob("*.yaml"))
    sizes, resolutions = archived_bytes(archives)
    missing = missing_runs(specs, archives)
    missing_experiments = {e for e, _ in missing}
    by_length = collections.defaultdict(list)
    for (exp, length), values in sizes.items():
        if exp in missing_experiments:
            by_length[length] += values
    day = datetime.date.today().isoformat()
    lines = [f"# The paper-profile runs not in the shipped archive: their size once archived ({day})", "",
             "`bench/external_archive_size.py` over " + ", ".join(f"`{pathlib.Path(a).relative_to(ROOT) if pathlib.Path(a).is_relative_to(ROOT) else a}`" for a in archives)
             + f" (resolutions of their rows: {dict(resolutions)}). Estimate per experiment: the mean archived "
             "tarball of that experiment and length, else the mean of every archived run of that length "
             "in these experiments.", "",
             "| experiment | length (s) | runs not archived | archived runs it is estimated from | mean MB per run | estimate MB |",
             "|---|---|---|---|---|---|"]
    total_runs, total_mb = 0, 0.0
    for (exp, length), n in sorted(missing.items()):
        own = sizes.get((exp, length), [])
        basis = own or by_length.get(length, [])
        if not basis:
            lines.append(f"| {exp} | {length:g} | {n} | none of this length | - | - |")
            total_runs += n
            continue
        mean_mb = statistics.mean(basis) / 1e6
        lines.append(f"| {exp} | {length:g} | {n} | {len(basis)} ({'its own' if own else 'same length, other experiments'}) "
                     f"| {mean_mb:.2f} | {n * mean_mb:.0f} |")
        total_runs += n
        total_mb += n * mean_mb
    lines += ["", f"In all: {total_runs} runs not archived, about **{total_mb:.0f} MB** once archived "
              "(experiments without a basis left out of the sum)."]
    text = "\n".join(lines) + "\n"
    out = pathlib.Path(args.out) if args.out else ROOT / f"bench/results/external-archive-size-{day}.md"
    write_text_atomic(out, text)
    print(text)


if __name__ == "__main__":
    main()
