#!/usr/bin/env python3
"""Which rerun archive entries kept their data: the tidy files of each run rerun between two
revisions of the paper archive, byte for byte.

    .venv/bin/python bench/rerun_identity.py BEFORE_REV [AFTER_REV] [--tag TAG]

For every entry of data/paper whose checksum differs between BEFORE_REV and AFTER_REV (default:
the working tree), both tarballs are read (`git show` for a revision) and every member but
run.json (the testbed's build, the timings, the revision) is compared byte for byte. Writes
bench/results/rerun-identity-<TAG>.md (TAG: today's date by default): per experiment, how many
reruns kept every member and how many did not, each side's kernel builds, and the congestion
controls of the runs whose data moved. Host only, a few seconds per hundred entries.
"""
import argparse
import collections
import csv
import datetime
import io
import pathlib
import subprocess
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_io import write_text_atomic  # noqa: E402

ARCHIVE = "data/paper"


def read(rev, path: str) -> bytes:
    """A file of the repository at `rev` (None: the working tree)."""
    if rev is None:
        return (ROOT / path).read_bytes()
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, check=True).stdout


def manifest(rev) -> dict:
    rows = csv.DictReader(io.StringIO(read(rev, f"{ARCHIVE}/manifest.csv").decode()))
    return {(r["experiment"], r["point"], r["repetition"]): r for r in rows}


def members(data: bytes) -> dict:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:xz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def moved_members(before: dict, after: dict) -> list:
    """Members other than run.json that are missing on one side or differ."""
    names = set(before) | set(after)
    return sorted(n for n in names if pathlib.PurePath(n).name != "run.json" and before.get(n) != after.get(n))


def compare(before_rev, after_rev) -> list:
    """[(key, before row, after row, moved members)] of the entries whose checksum changed."""
    old, new = manifest(before_rev), manifest(after_rev)
    out = []
    for key, row in sorted(new.items()):
        prior = old.get(key)
        if prior is None or prior["sha256"] == row["sha256"]:
            continue
        path = f"{ARCHIVE}/runs/{key[0]}/{key[1]}/rep{key[2]}.tar.xz"
        out.append((key, prior, row, moved_members(members(read(before_rev, path)), members(read(after_rev, path)))))
    return out


def report(results: list, before_rev: str, after_rev) -> str:
    by_exp = collections.defaultdict(lambda: [0, 0, set(), set(), set()])
    for (experiment, point, _rep), prior, row, moved in results:
        entry = by_exp[experiment]
        entry[1 if moved else 0] += 1
        entry[2].add(prior["kernel_sha256"][:12] or "(not recorded)")
        entry[3].add(row["kernel_sha256"][:12] or "(not recorded)")
        if moved:
            entry[4].add(point)
    kept = sum(e[0] for e in by_exp.values())
    lines = [f"# Rerun archive entries: data kept or moved ({datetime.date.today().isoformat()})", "",
             f"`bench/rerun_identity.py {before_rev}{' ' + after_rev if after_rev else ''}`: every entry of "
             f"`{ARCHIVE}` whose checksum differs between `{before_rev}` and "
             f"{'`' + after_rev + '`' if after_rev else 'the working tree'}, each member but `run.json` compared "
             "byte for byte.", "",
             f"**{kept} of {len(results)} rerun entries kept every tidy file byte for byte.**", "",
             "| experiment | kept | moved | kernel before | kernel after | points that moved |",
             "|---|---|---|---|---|---|"]
    for experiment, (same, moved, k_before, k_after, points) in sorted(by_exp.items()):
        lines.append(f"| {experiment} | {same} | {moved} | {', '.join(sorted(k_before))} | "
                     f"{', '.join(sorted(k_after))} | {'; '.join(sorted(points)) or '-'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before_rev")
    ap.add_argument("after_rev", nargs="?")
    ap.add_argument("--tag", default=datetime.date.today().isoformat())
    args = ap.parse_args(argv)
    text = report(compare(args.before_rev, args.after_rev), args.before_rev, args.after_rev)
    out = ROOT / "bench" / "results" / f"rerun-identity-{args.tag}.md"
    write_text_atomic(out, text)
    print(text)
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
