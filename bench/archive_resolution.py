#!/usr/bin/env python3
"""What the results archive's resolution policy costs and keeps, measured on finished runs.

    .venv/bin/python bench/archive_resolution.py RUNS_DIR [--profile paper] [--check]
                                                 [--out bench/results/archive-resolution-<date>]

RUNS_DIR holds finished runs (e.g. results/quick/runs; read only). Writes <out>.md and prints it:

- Candidates: the xz-compressed bytes of every run's run.json + tidy files under simple
  layouts (row CSVs as they are; column-major; column-major with numbers as differences
  from the previous row; the same without the columns archive.DROPPED names), and the
  policy as implemented (archive.pack(), the bytes a tarball takes in the archive), per
  experiment second (run.json timings.experiment_s).
- The target profile's archive size: every run of its specs (config/experiments.csv)
  gets the policy's measured tidy bytes per experiment second (the tarball's bytes less
  its run.json's, xz-compressed alone) of the same experiment and sweep point, else of
  the same experiment, else of all runs, times its duration, plus the mean compressed
  run.json of a measured run; per paper. Short runs compress their start-up, which is
  noisier than a steady state, so the estimates for long runs are on the high side.
- --check: every run archived with archive.add() and restored with archive.restore() into
  a temporary tree (the runs' own run.json, without the restore note), then every paper's
  claims (analysis/claims.R, warm-up 10 s) and every experiment's figure
  (analysis/figures/..., rendered to PNG at 72 dpi by pdftoppm) computed on the original
  and on the restored tree and compared: claims CSV and LaTeX byte for byte, figure PNGs
  pixel for pixel.
"""
import argparse
import collections
import csv
import datetime
import io
import json
import lzma
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.data import archive, columnar  # noqa: E402
from bbrlab.experiment import experiments, spec  # noqa: E402

PAPERS = ["ma2019", "kim2019", "yang2019", "tang", "utsumi2022"]


def xz(data: bytes) -> int:
    return len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


def column_major(text: str, delta: bool, drop=()) -> bytes:
    """A CSV's columns one after another (delta: as columnar.py codes them; else the cells verbatim)."""
    if delta:
        return columnar.encode(text, drop).encode()
    rows = list(csv.reader(io.StringIO(columnar.without_columns(text, drop))))
    return "\n".join("\n".join(r[i] for r in rows) for i in range(len(rows[0]))).encode()


def candidates(run_dir: pathlib.Path) -> dict:
    meta = (run_dir / "run.json").read_bytes()
    files = {p.name: p.read_bytes().decode() for p in sorted((run_dir / "tidy").glob("*.csv"))}

    def dropped(name, text):
        return [c for c in archive.DROPPED.get(name, ()) if c in text.splitlines()[0].split(",")]
    return {
        "rows, as written (xz)": xz(meta + b"".join(t.encode() for t in files.values())),
        "column-major": xz(meta + b"".join(column_major(t, False) for t in files.values())),
        "column-major, delta-coded": xz(meta + b"".join(column_major(t, True) for t in files.values())),
        "column-major, delta-coded, unread columns dropped":
            xz(meta + b"".join(column_major(t, True, dropped(n, t)) for n, t in files.items())),
        f"policy as archived ({archive.RESOLUTION.split(':')[0]}: archive.pack)": len(archive.pack(run_dir)),
    }


def paper_of(experiment: str) -> str:
    return experiment.split("_")[0]


def estimate(rate_point: dict, per_run: float, profile: str) -> dict:
    """{paper: [runs, experiment s, estimated bytes]} of the profile's runs."""
    by_exp = collections.defaultdict(list)
    for (exp, _), r in rate_point.items():
        by_exp[exp].append(r)
    overall = statistics.mean(rate_point.values())
    table = experiments.load(REPO)[0]
    out = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for e in experiments.of_profile(table, profile):
        for job in spec.expand(spec.load(REPO / table[e.name].spec, profile=profile)):
            rate = rate_point.get((e.name, job["point"])) or statistics.mean(by_exp.get(e.name) or [overall])
            row = out[paper_of(e.name)]
            row[0] += 1
            row[1] += job["duration_s"]
            row[2] += rate * job["duration_s"] + per_run
    return out


def run_r(args, env=None):
    return subprocess.run(["Rscript", *map(str, args)], cwd=REPO, capture_output=True, text=True, env=env)


def products(root: pathlib.Path, out: pathlib.Path, names) -> None:
    """Claims of every paper and every experiment's figure (as PNG pages) of a runs tree."""
    import os
    out.mkdir(parents=True)
    for paper in PAPERS:
        run_r(["analysis/claims.R", f"claims/{paper}.csv", root, out / f"claims_{paper}.tex", 10])
    table = experiments.load(REPO)[0]
    for name in names:
        pdf = out / f"{name}.pdf"
        run_r([table[name].figure, root / name, pdf, 10], env={**os.environ, "BBRLAB_EXPERIMENT": name})
        if pdf.is_file():
            subprocess.run(["pdftoppm", "-r", "72", "-png", str(pdf), str(out / name)], check=True)


def check(runs: list, runs_dir: pathlib.Path) -> list:
    """Lines: claims and figures of the original tree against those of the archived-and-restored one."""
    with tempfile.TemporaryDirectory(prefix="archive-check-") as tmp:
        tmp = pathlib.Path(tmp)
        archive.add(tmp / "archive", runs, progress=lambda *_: None)
        for key, row in archive.read_manifest(tmp / "archive").items():
            dest = archive.restore(tmp / "archive", row, tmp / "restored" / key[0] / key[1] / f"rep{key[2]}")
            meta = json.loads((dest / "run.json").read_text())
            meta.pop("restored_from_archive")
            (dest / "run.json").write_text(json.dumps(meta, indent=1))
        names = sorted({r.parts[-3] for r in runs})
        products(runs_dir, tmp / "a", names)
        products(tmp / "restored", tmp / "b", names)
        lines = ["| paper | claims | with a value | verdicts | claims CSV and table |", "|---|---|---|---|---|"]
        for paper in PAPERS:
            a, b = tmp / "a" / f"claims_{paper}.csv", tmp / "b" / f"claims_{paper}.csv"
            rows = list(csv.DictReader(a.open())) if a.is_file() else []
            same = a.is_file() and a.read_bytes() == b.read_bytes() and \
                (tmp / "a" / f"claims_{paper}.tex").read_bytes() == (tmp / "b" / f"claims_{paper}.tex").read_bytes()
            verdicts = collections.Counter(r["verdict"] for r in rows)
            lines.append(f"| {paper} | {len(rows)} | {sum(r['mean'] not in ('', 'NA') for r in rows)} | "
                         f"{', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))} | "
                         f"{'identical' if same else 'DIFFERENT'} |")
        pages_a = sorted(p.name for p in (tmp / "a").glob("*.png"))
        differ = [p for p in pages_a if not (tmp / "b" / p).is_file()
                  or (tmp / "a" / p).read_bytes() != (tmp / "b" / p).read_bytes()]
        missing = [n for n in names if not list((tmp / "a").glob(f"{n}*.png"))]
        lines += ["", f"Figures: {len(names) - len(missing)} of {len(names)} experiments drawn, {len(pages_a)} pages; "
                  f"pages whose PNG differs: {len(differ)} {differ[:10]}; not drawn: {missing}"]
        return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs_dir", type=pathlib.Path)
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--out", type=pathlib.Path,
                        default=REPO / "bench" / "results" / f"archive-resolution-{datetime.date.today()}")
    args = parser.parse_args(argv)
    runs = archive.complete_runs(args.runs_dir)
    if not runs:
        print(f"no complete runs below {args.runs_dir}", file=sys.stderr)
        return 2
    totals, seconds, raw, run_json = collections.Counter(), 0.0, 0, 0
    point_bytes = collections.defaultdict(lambda: [0, 0.0])
    for run_dir in runs:
        meta = json.loads((run_dir / "run.json").read_text())
        exp_s = float(meta["timings"]["experiment_s"])
        seconds += exp_s
        raw += sum(p.stat().st_size for p in (run_dir / "tidy").glob("*.csv"))
        sizes = candidates(run_dir)
        totals.update(sizes)
        policy = sizes[list(sizes)[-1]]
        meta_bytes = xz((run_dir / "run.json").read_bytes())
        run_json += meta_bytes
        point_bytes[(meta["experiment"], meta["point"])][0] += policy - meta_bytes
        point_bytes[(meta["experiment"], meta["point"])][1] += exp_s
    rate_point = {k: b / s for k, (b, s) in point_bytes.items()}
    est = estimate(rate_point, run_json / len(runs), args.profile)
    lines = [f"# The results archive's resolution: {len(runs)} runs below `{args.runs_dir}`", "",
             f"Policy: `{archive.RESOLUTION}`.", "",
             f"{len(runs)} runs, {seconds:.0f} experiment-seconds, tidy CSVs {raw / 1e6:.1f} MB as written.", "",
             "| layout (xz -9e per run) | MB | bytes per experiment-second | "
             f"`{args.profile}` profile at that rate (MB) |", "|---|---|---|---|"]
    total_s = sum(v[1] for v in est.values())
    for name, b in totals.items():
        lines.append(f"| {name} | {b / 1e6:.3f} | {b / seconds:.0f} | {b / seconds * total_s / 1e6:.0f} |")
    lines += ["", f"Profile `{args.profile}` with the policy, each run at the measured tidy bytes per "
              "experiment-second of its sweep point (else of its experiment), plus "
              f"{run_json / len(runs) / 1e3:.1f} kB of run.json:", "",
              "| paper | runs | experiment-hours | tidy bytes per experiment-second (measured) | "
              "estimated archive (MB) |", "|---|---|---|---|---|"]
    for paper in PAPERS:
        n, s, b = est.get(paper, [0, 0.0, 0.0])
        mb = sum(v[0] for k, v in point_bytes.items() if paper_of(k[0]) == paper)
        ms = sum(v[1] for k, v in point_bytes.items() if paper_of(k[0]) == paper)
        lines.append(f"| {paper} | {n} | {s / 3600:.1f} | {mb / ms:.0f} | {b / 1e6:.1f} |")
    lines.append(f"| all | {sum(v[0] for v in est.values())} | {total_s / 3600:.1f} | | "
                 f"{sum(v[2] for v in est.values()) / 1e6:.1f} |")
    if args.check:
        if not shutil.which("Rscript") or not shutil.which("pdftoppm"):
            print("--check needs Rscript and pdftoppm", file=sys.stderr)
            return 2
        lines += ["", "Claims and figures, original against archived and restored:", ""] + check(runs, args.runs_dir)
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".md.tmp")
    tmp.write_text(text)
    tmp.replace(args.out.with_suffix(".md"))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
