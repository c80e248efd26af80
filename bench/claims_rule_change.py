"""Verdicts of the paper profile's claims before and after a change of the verdict rule or
of the claims files, on the runs of the archive the repository ships (data/paper).

Unpacks the archived runs of the claims' experiments once (bbrlab.data.archive.restore,
into --work), evaluates each paper's claims with analysis/claims.R of two git revisions
(their analysis/ trees; the claims files of --claims-rev, or each revision's own), and
writes bench/results/claims-rule-change-<date>[-<tag>].{md,csv}: per paper the verdict
counts before and after, and every row whose verdict moved, with its value and band.
No testbed: R only. On the shared two-core host one side of all five papers takes about
six minutes (Ma et al.'s and Utsumi & Hasegawa's trees are the largest).

    .venv/bin/python bench/claims_rule_change.py --before-rev main --after-rev HEAD \
        --claims-rev main --tag rule

With --before-archive-rev REV the two sides read other runs instead: the before side the
archive as it was at git revision REV (data/paper of that commit), the after side the archive
of the working tree; with the same --before-rev and --after-rev this is what a rerun of the
archive moved (e.g. the rerun on the reproducible kernel build):

    .venv/bin/python bench/claims_rule_change.py --before-rev HEAD --after-rev HEAD \
        --before-archive-rev 5f6f9cf --tag rerun
"""

from __future__ import annotations

import argparse
import csv
import datetime
import pathlib
import shutil
import subprocess
import sys
import io
import tarfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.data import archive as bbrarchive  # noqa: E402

PAPERS = ("kim2019", "ma2019", "tang", "utsumi2022", "yang2019")
VERDICTS = ("reproduced", "qualitatively reproduced", "not reproduced", "not run")


def tree_at(rev: str, paths: list[str], dest: pathlib.Path) -> pathlib.Path:
    """The files under `paths` at git revision `rev`, unpacked into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    blob = subprocess.run(["git", "archive", rev, *paths], cwd=REPO, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest)
    return dest


def sha(rev: str) -> str:
    return subprocess.run(["git", "rev-parse", "--short=12", rev], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout.strip()


def experiments_of(claims_csv: pathlib.Path) -> set[str]:
    with claims_csv.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {r["experiment"] for r in rows} | {r.get("ref_experiment") or r["experiment"] for r in rows}


def restore(archive: pathlib.Path, experiments: set[str], runs: pathlib.Path) -> int:
    n = 0
    for (e, p, r), row in sorted(bbrarchive.read_manifest(archive).items()):
        d = runs / e / p / f"rep{r}"
        if e in experiments and not d.exists():
            bbrarchive.restore(archive, row, d)
            n += 1
    return n


def evaluate(code: pathlib.Path, claims: pathlib.Path, runs: pathlib.Path, out: pathlib.Path,
             paper: str, warmup_s: str) -> dict[str, dict]:
    """claims.R of `code` on `claims` over `runs`; out is keyed by the two revisions, so a side
    already evaluated (the same code, claims, runs and warm-up) is read back, not run again."""
    done = out / f"claims_{paper}.csv"
    if done.exists():
        with done.open(newline="") as fh:
            return {r["id"]: r for r in csv.DictReader(fh)}
    tree = out / "trees" / paper
    tree.mkdir(parents=True, exist_ok=True)
    for e in experiments_of(claims):
        link = tree / e
        if not link.exists() and (runs / e).exists():
            link.symlink_to(runs / e)
    tex = out / f"claims_{paper}.tex"
    subprocess.run(["nice", "Rscript", str(code / "analysis" / "claims.R"), str(claims), str(tree),
                    str(tex), warmup_s], cwd=code, check=True, capture_output=True)
    with tex.with_suffix(".csv").open(newline="") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before-rev", required=True)
    ap.add_argument("--after-rev", default="HEAD")
    ap.add_argument("--claims-rev", help="claims files of this revision on both sides (default: each its own)")
    ap.add_argument("--archive", default=str(REPO / "data" / "paper"))
    ap.add_argument("--before-archive-rev", help="the before side reads the archive as committed at this revision")
    ap.add_argument("--work", default="/tmp/claims_rule_change")
    ap.add_argument("--papers", nargs="*", default=list(PAPERS))
    ap.add_argument("--warmup-s", default="10")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    sides = {}
    for side, rev in (("before", a.before_rev), ("after", a.after_rev)):
        key = f"{sha(rev)}-{sha(a.claims_rev or rev)}-w{a.warmup_s}"
        code = tree_at(rev, ["analysis"], work / key / "code")
        claims_dir = tree_at(a.claims_rev or rev, ["claims"], work / key / "claims_rev") / "claims"
        sides[side] = (code, claims_dir, work / key / "out")
    experiments = set().union(*(experiments_of(sides[s][1] / f"{p}.csv") for s in sides for p in a.papers))
    archive = pathlib.Path(a.archive)
    runs = {"before": work / "runs", "after": work / "runs"}
    outs = {s: sides[s][2] / s for s in sides}
    if a.before_archive_rev:      # other runs per side; the evaluations are cached per output directory
        outs = {"before": sides["before"][2] / f"before-archive-{sha(a.before_archive_rev)}",
                "after": sides["after"][2] / "after-worktree"}
        shutil.rmtree(outs["after"], ignore_errors=True)
        rel = archive.resolve().relative_to(REPO).as_posix()
        old = tree_at(a.before_archive_rev, [rel], work / f"archive-{sha(a.before_archive_rev)}") / rel
        runs = {"before": work / f"runs-{sha(a.before_archive_rev)}", "after": work / "runs-worktree"}
        shutil.rmtree(runs["after"], ignore_errors=True)      # the working tree's archive may have moved
        print(f"restored {restore(old, experiments, runs['before'])} runs of {rel} at {a.before_archive_rev}",
              file=sys.stderr)
    print(f"restored {restore(archive, experiments, runs['after'])} runs", file=sys.stderr)
    result = {}
    for p in a.papers:
        result[p] = {s: evaluate(sides[s][0], sides[s][1] / f"{p}.csv", runs[s], outs[s], p, a.warmup_s)
                     for s in sides}
        print(f"{p} evaluated", file=sys.stderr)
    date = datetime.date.today().isoformat()
    stem = REPO / "bench" / "results" / f"claims-rule-change-{date}{'-' + a.tag if a.tag else ''}"
    write(stem, result, a)


def counts(rows: dict[str, dict]) -> str:
    c = [sum(r["verdict"] == v for r in rows.values()) for v in VERDICTS]
    return f"{len(rows)}: " + " / ".join(map(str, c))


def cell(r: dict | None) -> str:
    if r is None:
        return "(no row)"
    band = f" [{float(r['accept_lo']):.4g}, {float(r['accept_hi']):.4g}]" if r.get("accept_lo") not in ("", "NA", None) else ""
    mean = f"{float(r['mean']):.4g}" if r["mean"] not in ("", "NA") else "--"
    return f"{r['verdict']} ({mean}{band})"


def write(stem: pathlib.Path, result: dict, a) -> None:
    lines = [f"# Claims verdicts before and after ({datetime.date.today().isoformat()})", "",
             f"Paper-profile runs of {a.archive}"
             + (f" as committed at `{a.before_archive_rev}` (before) and in the working tree (after)"
                if a.before_archive_rev else "") + f"; analysis of `{a.before_rev}` (before) and `{a.after_rev}` "
             f"(after); claims files of {('`' + a.claims_rev + '`') if a.claims_rev else 'each revision'}; "
             f"warm-up {a.warmup_s} s. Counts: rows: reproduced / qualitatively / not reproduced / not run.", "",
             "| paper | before | after | verdicts moved | strength moved (same verdict) |", "|---|---|---|---|---|"]
    moved, strength_moved = [], []
    for p, s in result.items():
        ids = list(dict.fromkeys([*s["before"], *s["after"]]))
        m = [i for i in ids if (s["before"].get(i) or {}).get("verdict") != (s["after"].get(i) or {}).get("verdict")]
        moved += [(p, i, s["before"].get(i), s["after"].get(i)) for i in m]
        st = [i for i in ids if i not in m and (s["before"].get(i) or {}).get("strength")
              != (s["after"].get(i) or {}).get("strength")]
        strength_moved += [(i, s["before"][i].get("strength"), s["after"][i].get("strength")) for i in st]
        lines.append(f"| {p} | {counts(s['before'])} | {counts(s['after'])} | {len(m)} | {len(st)} |")
    lines += ["", "| claim | before (mean [band]) | after (mean [band]) |", "|---|---|---|"]
    lines += [f"| `{i}` | {cell(b)} | {cell(x)} |" for _p, i, b, x in moved]
    if strength_moved:
        lines += ["", "Same verdict, other strength (robust: the verdict holds everywhere inside the intervals):", "",
                  "| claim | before | after |", "|---|---|---|"]
        lines += [f"| `{i}` | {b} | {x} |" for i, b, x in strength_moved]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    with stem.with_suffix(".csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["paper", "id", "verdict_before", "mean_before", "accept_lo_before", "accept_hi_before",
                    "verdict_after", "mean_after", "accept_lo_after", "accept_hi_after"])
        for p, i, b, x in moved:
            g = lambda r, k: (r or {}).get(k, "")  # noqa: E731
            w.writerow([p, i, g(b, "verdict"), g(b, "mean"), g(b, "accept_lo"), g(b, "accept_hi"),
                        g(x, "verdict"), g(x, "mean"), g(x, "accept_lo"), g(x, "accept_hi")])
    print(stem.with_suffix(".md"))


if __name__ == "__main__":
    main()
