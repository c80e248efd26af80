#!/usr/bin/env python3
"""What a coarser archived resolution for long transfers would save, and what it would change.

    PYTHONPATH=mininet .venv/bin/python bench/long_run_resolution.py
        [--source ARCHIVE:EXPERIMENT ...] [--tmp DIR] [--keep]
        [--out bench/results/long-run-resolution-<date>]

Reads archived full-length runs (default: Utsumi & Hasegawa's 6000-s runs, the three of
utsumi2022_fig04 in data/paper-controls and those of utsumi2022_fig06_10 in data/paper;
the archives are only read: archive.restore() into a temporary directory, and the
original run.json taken from the tarball so that archive.pack() of a restored run gives
the archived bytes back). Writes <out>.md and prints it. Never boots a testbed; runs R
(analysis/claims.R, analysis/transfer_length.R) on every candidate's tree, one at a time.

For every candidate policy (CANDIDATES below) the runs' tidy CSVs are rewritten as the
policy would keep them (the rewritten tree is what a restore would give), then measured:

- bytes: len(archive.pack(run)), the tarball archive.add() would write (run.json as
  archived, each tidy CSV column-major and delta-coded, archive.DROPPED left out, xz -9e);
- claims: analysis/claims.R claims/utsumi2022.csv <tree> ... 10 (warm-up 10 s, as
  bench/archive_resolution.py --check), every claim with a value: mean, interval,
  verdict and strength against the exact runs' (r2, as archived);
- transfer length: analysis/transfer_length.R with the arguments of the workflow's
  rule transfer_length (claims/utsumi2022.csv, mininet/specs/utsumi2022/
  transfer_length_controls.csv, 3 seeds, T = 600 1200 2000 s): per claim reading the
  experiments, run and T, the value over the whole transfer and over the first T s, and
  whether the check holds; and the duration the rule chooses per experiment;
- per value: absolute and relative difference from the exact value, and whether it lies
  inside the Verdict band around the exact value (claims/README.md "The band of an exact
  claim": convergence_band() of analysis/lib/transfer_length.R, i.e. 15 % of the exact
  value's distance from its scale's reference plus the scale's resolution);
- per run and flow over the whole transfer: the loss episodes (loss_episodes() of
  analysis/lib/metrics_utsumi2022.R, from increments of retrans_total), the CUBIC model's
  inputs (CA phases, their mean and sd, recovery r, mean smoothed RTT R), its rate, the
  measured sending rate and the FC-phase share: where thinning merges or splits episodes.

Candidates (goodput 1 s: per flow, the 50-ms bins ending in each second (k - 1, k] summed;
tcp/queue 1 s: the sample closing each second, the one at k.0000/k.0001 s; details in
CANDIDATES): r2 as archived; L, r2 without the columns no Utsumi & Hasegawa analysis reads
(UTSUMI_UNREAD); 1 goodput 1 s; 2 = 1 + tcp 1 s; 2e = 2 + every sample where
retrans_total rose and the one before it; 3, 3e = 2, 2e + queue 1 s; L+3e, L+3, L+1;
L+1 + tcp every 100 ms. --only PREFIX restricts the run to some (r2 always runs);
--tmp DIR --keep keeps the trees' evaluations and caches each candidate's measurements
(result<n>.json), so a second call only measures what is new.

The profile estimate: every run of Utsumi & Hasegawa's paper profile
(bbrlab.experiment.repetitions.runs(spec, profile="paper")) at the measured bytes of the
candidate: run.json (xz alone, mean) + per flow-second (goodput and tcp members) x flows x
duration + per second (queue member) x duration, the members' shares of a tarball from
each member compressed alone; utsumi2022_fig04's rates for its runs, utsumi2022_fig06_10's
(one CUBIC and one BBR or BBR-FCA flow) for every other spec.
"""
import argparse
import collections
import csv
import datetime
import glob
import io
import json
import lzma
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.data import archive, columnar  # noqa: E402
from bbrlab.experiment import repetitions  # noqa: E402

DEFAULT_SOURCES = [f"{REPO}/data/paper-controls:utsumi2022_fig04", f"{REPO}/data/paper:utsumi2022_fig06_10"]
CLAIMS = "claims/utsumi2022.csv"
CONTROLS = "mininet/specs/utsumi2022/transfer_length_controls.csv"
SEEDS = 3
CANDIDATE_T = [600, 1200, 2000]
WARMUP_S = 10
PHASE_S = 1e-3      # the sampler's phase (t_s of a 50-ms sample is k.0000 or k.0001 s, never 1 ms off)

# Columns of tcp.csv and queue.csv that no metric of Utsumi & Hasegawa's claims or figures reads
# (those read: goodput.csv all; tcp.csv flow, t_s, cc, state, rtt_ms, cwnd_pkts, mss_bytes,
# retrans_total, variant_estimate_mbps; queue.csv t_s, sent_bytes). Their other readers:
# delivery_rate_mbps, bbr_min_rtt_ms: Yang et al.'s backlog estimate; inflight_pkts: Ma et al.,
# Tang et al. and the cwnd/inflight metrics; bytes_acked: the successors' nsperf figure;
# bbr_pacing_gain: Ma, Yang, Tang; bbr_inflight_hi_pkts: none; backlog_pkts, qdelay_ms: the
# queue metrics of Ma, Yang, Tang (and the backend cross-check, which reads fresh runs).
UTSUMI_UNREAD = {
    "tcp.csv": ("inflight_pkts", "delivery_rate_mbps", "bytes_acked", "bbr_min_rtt_ms",
                "bbr_pacing_gain", "bbr_inflight_hi_pkts"),
    "queue.csv": ("backlog_pkts", "qdelay_ms"),
}


# ---- CSV rewriting -----------------------------------------------------------------------
def parse(text):
    eol = "\r\n" if text.endswith("\r\n") else "\n"
    lines = text[:-len(eol)].split(eol)
    return eol, lines[0].split(","), [line.split(",") for line in lines[1:]]


def unparse(eol, header, rows):
    return "".join(",".join(r) + eol for r in [header] + rows)


def second_of(t_s: str) -> int:
    """The whole second a sample or a bin's end belongs to: (k - 1, k] (k.0001 counts as k)."""
    return math.ceil(float(t_s) - PHASE_S)


def goodput_1s(text):
    """goodput.csv re-binned to whole seconds: per flow, the bins ending in (k - 1, k] summed
    (bytes; interval_s the sum of the bins' lengths, rounded to 6 digits as the tidy writer
    rounds dt), t_s the last bin's end, goodput_mbps = round(bytes * 8 / interval_s / 1e6, 6)."""
    eol, header, rows = parse(text)
    i = {c: k for k, c in enumerate(header)}
    out, cur, key = [], None, None
    for r in rows:
        k = (r[i["flow"]], second_of(r[i["t_s"]]))
        if k != key:
            if cur:
                out.append(cur)
            key, cur = k, {"flow": r[i["flow"]], "t_s": r[i["t_s"]], "dt": 0.0, "bytes": 0}
        cur["t_s"] = r[i["t_s"]]
        cur["dt"] += float(r[i["interval_s"]])
        cur["bytes"] += int(r[i["bytes"]])
    if cur:
        out.append(cur)
    new = []
    for b in out:
        dt = round(b["dt"], 6)
        row = {"flow": b["flow"], "t_s": b["t_s"], "interval_s": str(dt), "bytes": str(b["bytes"]),
               "goodput_mbps": str(round(b["bytes"] * 8 / dt / 1e6, 6))}
        new.append([row[c] for c in header])
    return unparse(eol, header, new)


def thin_1s(text, events=False, period_s=1.0):
    """One sample per whole second (per flow where there is a flow column): the last sample in
    (k - 1, k], i.e. the one at k.0000/k.0001 s, which closes the 1-s goodput bin (period_s:
    the same for slots of that length, (k - 1, k] x period_s). events: also every sample at
    which retrans_total rose and the sample before it (so that every increment lies between
    the same two samples as in the full series)."""
    eol, header, rows = parse(text)
    i = {c: k for k, c in enumerate(header)}
    fl = i.get("flow")
    keep = set()
    last = {}
    for n, r in enumerate(rows):
        slot = math.ceil((float(r[i["t_s"]]) - PHASE_S) / period_s + 1e-9)
        last[(r[fl] if fl is not None else "", slot)] = n
    keep.update(last.values())
    if events:
        prev = {}
        for n, r in enumerate(rows):
            f = r[fl] if fl is not None else ""
            v = r[i["retrans_total"]]
            if v == "":
                continue
            if f in prev and float(v) > float(rows[prev[f]][i["retrans_total"]]):
                keep.update((prev[f], n))
            prev[f] = n
    return unparse(eol, header, [rows[n] for n in sorted(keep)])


def drop_cols(text, cols):
    present = [c for c in cols if c in text.split("\n", 1)[0].strip().split(",")]
    return columnar.without_columns(text, present)


def lossless(files):
    return {n: drop_cols(t, UTSUMI_UNREAD[n]) if n in UTSUMI_UNREAD else t for n, t in files.items()}


def c1(files):
    return {**files, "goodput.csv": goodput_1s(files["goodput.csv"])}


def c2(files, events=False):
    f = c1(files)
    return {**f, "tcp.csv": thin_1s(f["tcp.csv"], events)}


def c3(files, events=False):
    f = c2(files, events)
    return {**f, "queue.csv": thin_1s(f["queue.csv"])}


CANDIDATES = {
    "r2 (exact, as archived)": ("every row, every kept value", lambda f: f),
    "L: r2 without Utsumi's unread columns": (
        "lossless for Utsumi & Hasegawa's analyses: tcp.csv " + " ".join(UTSUMI_UNREAD["tcp.csv"])
        + ", queue.csv " + " ".join(UTSUMI_UNREAD["queue.csv"]) + " dropped", lossless),
    "1: goodput 1 s": ("goodput.csv in 1-s bins", c1),
    "2: 1 + tcp 1 s": ("1, tcp.csv the sample closing each second", lambda f: c2(f)),
    "2e: 1 + tcp 1 s + loss samples": ("2, plus every sample where retrans_total rose and the one before it",
                                      lambda f: c2(f, True)),
    "3: 2 + queue 1 s": ("2, queue.csv the sample closing each second", lambda f: c3(f)),
    "3e: 2e + queue 1 s": ("2e, queue.csv the sample closing each second", lambda f: c3(f, True)),
    "L+3e": ("3e without Utsumi's unread columns", lambda f: lossless(c3(f, True))),
    "L+3": ("3 without Utsumi's unread columns", lambda f: lossless(c3(f))),
    "L+1": ("1 without Utsumi's unread columns", lambda f: lossless(c1(f))),
    "L+1+tcp 0.1 s": ("L+1, tcp.csv the sample closing each 100 ms (every other one; the other "
                      "Utsumi specs sample every 100 ms)",
                      lambda f: lossless({**c1(f), "tcp.csv": thin_1s(f["tcp.csv"], period_s=0.1)})),
}


# ---- runs -----------------------------------------------------------------------------------
def restore_all(sources, dest):
    """Restore the sources' runs below dest/<experiment>/<point>/rep<k>, run.json as archived.
    Returns [(run_dir, manifest bytes)]."""
    out = []
    for src in sources:
        where, experiment = src.rsplit(":", 1)
        for key, row in sorted(archive.read_manifest(where).items()):
            if key[0] != experiment:
                continue
            d = archive.restore(where, row, dest / key[0] / key[1] / f"rep{key[2]}")
            with tarfile.open(archive.entry_path(where, *key), mode="r:xz") as tar:
                (d / "run.json").write_bytes(tar.extractfile("run.json").read())
            out.append((d, int(row["bytes"])))
    return out


def xz(data: bytes) -> int:
    return len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


def write_tree(runs, root, exact_root, transform):
    """The candidate's tree: every run's tidy CSVs rewritten; the run directories."""
    dirs = []
    for run, _ in runs:
        d = root / run.relative_to(exact_root)
        (d / "tidy").mkdir(parents=True)
        shutil.copyfile(run / "run.json", d / "run.json")
        files = {p.name: p.read_bytes().decode() for p in sorted((run / "tidy").glob("*.csv"))}
        for name, text in transform(files).items():
            (d / "tidy" / name).write_bytes(text.encode())     # line ends as written (CRLF)
        dirs.append(d)
    return dirs


def build(runs, root, exact_root, transform):
    """write_tree(), then per run a dict of its bytes (tarball, members compressed alone, rows)."""
    sizes = []
    for d in write_tree(runs, root, exact_root, transform):
        rel = d.relative_to(root)
        members = archive.compact(d)
        meta = json.loads((d / "run.json").read_text())
        sizes.append({"run": str(rel), "experiment": meta["experiment"], "flows": len(meta["flows"]),
                      "duration_s": float(meta["spec"]["duration_s"]), "pack": len(archive.pack(d)),
                      **{name: xz(data) for name, data in members.items()},
                      **{f"rows/{p.stem}": p.read_bytes().count(b"\n") - 1 for p in (d / "tidy").glob("*.csv")}})
    return sizes


def rscript(*args):
    p = subprocess.run(["Rscript", *map(str, args)], cwd=REPO, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"Rscript {args[0]} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")


def episodes(tree, out):
    """Per run and flow over the whole transfer: loss episodes, the CUBIC model's inputs and
    output (analysis/lib/metrics_utsumi2022.R), the measured sending rate and the FC share."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "episodes.R").write_text(EPISODES_R)
    rscript(out / "episodes.R", REPO, tree, out / "episodes.csv")
    return list(csv.DictReader(open(out / "episodes.csv", newline="")))


def evaluate(tree, out):
    out.mkdir(parents=True)
    rscript("analysis/claims.R", CLAIMS, tree, out / "claims.tex", WARMUP_S)
    rscript("analysis/transfer_length.R", CLAIMS, CONTROLS, tree, out / "tl.tex", SEEDS, *CANDIDATE_T)
    read = lambda p: list(csv.DictReader(open(p, newline="")))  # noqa: E731
    return {"claims": read(out / "claims.csv"), "tl": read(out / "tl.csv"), "summary": read(out / "tl_summary.csv")}


EPISODES_R = r"""
args <- commandArgs(TRUE)
source(file.path(args[1], "analysis", "lib", "load.R"), chdir = TRUE)
runs <- read_runs(args[2])
rows <- list()
for (run in runs$runs) for (f in flows_table(run$meta)$flow) {
  w <- c(start = 0, end = run_end_s(run))
  ep <- loss_episodes(run, f)
  p <- cubic_model_inputs(run, f, window = w)
  rows[[length(rows) + 1]] <- data.frame(
    experiment = run$key$experiment, point = run$key$point, repetition = run$key$repetition, flow = f,
    episodes = nrow(ep), phases = if (is.null(p)) NA else p$n_phases,
    t_avg_s = if (is.null(p)) NA else p$t_avg, t_sd_s = if (is.null(p)) NA else sqrt(p$t_var),
    r_s = if (is.null(p)) NA else p$r, R_s = if (is.null(p)) NA else p$R,
    model_mbps = cubic_model_mbps(run, f, window = w), sending_mbps = cubic_sending_mbps(run, f, window = w),
    fc_phase_pct = cubic_fc_phase_pct(run, f, window = w))
}
write.csv(do.call(rbind, rows), args[3], row.names = FALSE)
"""


BAND_R = r"""
args <- commandArgs(TRUE)
source(file.path(args[1], "analysis", "lib", "load.R"), chdir = TRUE)
source(file.path(args[1], "analysis", "lib", "transfer_length.R"))
claims <- read_claims(args[2])
v <- read.csv(args[3], stringsAsFactors = FALSE)
b <- t(vapply(seq_len(nrow(v)), function(i) {
  if (is.na(v$value[i])) return(c(NA_real_, NA_real_))
  convergence_band(claims[claims$id == v$claim[i], ], v$value[i])
}, numeric(2)))
write.csv(data.frame(v, lo = b[, 1], hi = b[, 2]), args[4], row.names = FALSE)
"""


def bands(pairs, tmp):
    """{(claim, exact value): (lo, hi)}: convergence_band() around each exact value."""
    src, dst, script = tmp / "band_in.csv", tmp / "band_out.csv", tmp / "band.R"
    script.write_text(BAND_R)
    pairs = sorted(pairs, key=lambda p: (p[0], -math.inf if p[1] is None else p[1]))
    with open(src, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["claim", "value"])
        for c, v in pairs:
            w.writerow([c, "NA" if v is None else repr(v)])
    rscript(script, REPO, CLAIMS, src, dst)
    out = {}
    for (c, v), r in zip(pairs, csv.DictReader(open(dst))):
        assert r["claim"] == c
        out[(c, v)] = (num(r["lo"]), num(r["hi"]))
    return out


def num(x):
    return None if x in ("", "NA", None) else float(x)


def diff(a, b):
    """(absolute, relative) difference of b from a; None where either is missing."""
    if a is None or b is None:
        return None, None
    d = abs(b - a)
    return d, (d / abs(a) if a else (0.0 if d == 0 else math.inf))


def compare(exact, cand, band):
    """Rows of value comparisons and the verdict/check changes of a candidate against the exact tree."""
    values, changes = [], []
    ex = {r["id"]: r for r in exact["claims"]}
    for r in cand["claims"]:
        e = ex[r["id"]]
        if e["verdict"] == "not run" and r["verdict"] == "not run":
            continue
        a, b = num(e["mean"]), num(r["mean"])
        lo, hi = band.get((r["id"], a), (None, None))
        values.append({"what": "claim", "claim": r["id"], "run": "mean over runs", "window": "claim's",
                       "exact": a, "cand": b, "diff": diff(a, b),
                       "in_band": None if a is None or b is None or lo is None else lo - 1e-9 <= b <= hi + 1e-9})
        for col in ("verdict", "strength"):
            if e[col] != r[col]:
                changes.append(f"claims.R {r['id']}: {col} {e[col] or '-'} -> {r[col] or '-'}")
    key = lambda r: (r["experiment"], r["control"], r["point"], r["repetition"], r["claim"], r["t_s"])  # noqa: E731
    et = {key(r): r for r in exact["tl"]}
    seen_full = set()
    for r in cand["tl"]:
        e = et[key(r)]
        run = f"{r['experiment'].replace('utsumi2022_', '')} {r['label']} rep{r['repetition']}"
        if key(r)[:5] not in seen_full:
            seen_full.add(key(r)[:5])
            a, b = num(e["value_full"]), num(r["value_full"])
            lo, hi = band.get((r["claim"], a), (None, None))
            values.append({"what": "transfer length", "claim": r["claim"], "run": run, "window": "whole transfer",
                           "exact": a, "cand": b, "diff": diff(a, b),
                           "in_band": None if a is None or b is None or lo is None else lo - 1e-9 <= b <= hi + 1e-9})
        a, b = num(e["value_t"]), num(r["value_t"])
        lo, hi = band.get((r["claim"], a), (None, None))
        values.append({"what": "transfer length", "claim": r["claim"], "run": run, "window": f"first {r['t_s']} s",
                       "exact": a, "cand": b, "diff": diff(a, b),
                       "in_band": None if a is None or b is None or lo is None else lo - 1e-9 <= b <= hi + 1e-9})
        if e["holds"] != r["holds"]:
            changes.append(f"transfer length {r['claim']} {run} T={r['t_s']}: holds {e['holds']} -> {r['holds']}")
    es = {(r["experiment"], r["t_s"]): r for r in exact["summary"]}
    for r in cand["summary"]:
        e = es[(r["experiment"], r["t_s"])]
        for col in ("failed", "accepted", "chosen_s"):
            if e[col] != r[col]:
                changes.append(f"transfer length summary {r['experiment']} T={r['t_s']}: {col} {e[col]} -> {r[col]}")
    return values, sorted(set(changes))


# ---- the profile estimate --------------------------------------------------------------------
KINDS = ("goodput", "tcp", "queue")


def rates(sizes):
    """Per experiment: run.json bytes (mean), and per member kind (bytes per row, rows per
    flow-second, or per second for queue), the tarball's tidy bytes split among the members
    by their bytes compressed alone."""
    out = {}
    for exp in sorted({s["experiment"] for s in sizes}):
        ss = [s for s in sizes if s["experiment"] == exp]
        b, rows, secs = collections.Counter(), collections.Counter(), collections.Counter()
        for s in ss:
            alone = {k: s[f"tidy/{k}.col"] for k in KINDS}
            total = sum(alone.values())
            for k in KINDS:
                b[k] += (s["pack"] - s["run.json"]) * alone[k] / total
                rows[k] += s[f"rows/{k}"]
                secs[k] += s["duration_s"] * (1 if k == "queue" else s["flows"])
        out[exp] = {"run.json": statistics.mean(s["run.json"] for s in ss),
                    **{k: (b[k] / rows[k], rows[k] / secs[k]) for k in KINDS}}
    return out


def profile_runs(pattern):
    """[(experiment, flows, duration_s, sample_interval_s, queue_sample_interval_s)] of the
    paper profile of the specs matching pattern."""
    out = []
    for path in sorted(glob.glob(str(REPO / pattern))):
        for job in repetitions.runs(path, profile="paper"):
            out.append((job["name"], len(job["flows"]), float(job["duration_s"]),
                        float(job["sample_interval_s"]), float(job["queue_sample_interval_s"])))
    return out


def selector_matches(point: str, selector: str) -> bool:
    """Whether a sweep point (k=v__k=v) matches a control selector (k=v&k<=v&k>=v), numbers
    compared as numbers (the selectors of transfer_length_controls.csv)."""
    vals = dict(kv.split("=", 1) for kv in point.split("__") if "=" in kv)
    for cond in selector.split("&"):
        op = next(o for o in ("<=", ">=", "=") if o in cond)
        k, v = cond.split(op, 1)
        if k not in vals:
            return False
        try:
            a, b = float(vals[k]), float(v)
        except ValueError:
            a, b = vals[k], v
        if not {"=": a == b, "<=": a <= b, ">=": a >= b}[op]:
            return False
    return True


def control_runs():
    """The transfer-length control runs (transfer_length_controls.csv points, seeds 1-SEEDS, at
    the paper's 6000 s), in profile_runs() form."""
    with open(REPO / CONTROLS, newline="") as f:
        controls = list(csv.DictReader(f))
    out = []
    for path in sorted(glob.glob(str(REPO / "mininet" / "specs" / "utsumi2022" / "*.yaml"))):
        for job in repetitions.runs(path, profile="paper"):
            if int(job["repetition"]) <= SEEDS and any(
                    c["experiment"] == job["name"] and selector_matches(job["point"], c["point"]) for c in controls):
                out.append((job["name"], len(job["flows"]), 6000.0, float(job["sample_interval_s"]),
                            float(job["queue_sample_interval_s"])))
    return out


def estimate(rate, runs):
    """Bytes of the runs: each member's rows at the measured rows per (flow-)second, capped at
    the run's own sampling rate (specs sampling every 100 ms have half the rows of the
    measured 50-ms runs), times the measured bytes per row; plus run.json."""
    total = 0.0
    for exp, flows, dur, si, qi in runs:
        r = rate.get(exp) or rate["utsumi2022_fig06_10"]
        total += r["run.json"]
        for k in KINDS:
            per_row, rows_per_s = r[k]
            cap = 1 / (qi if k == "queue" else si)
            total += per_row * min(rows_per_s, cap) * dur * (1 if k == "queue" else flows)
    return total


# ---- report ----------------------------------------------------------------------------------
def fmt(x, spec=".4g"):
    return "NA" if x is None else format(x, spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", help="ARCHIVE:EXPERIMENT (repeatable)")
    parser.add_argument("--tmp", type=pathlib.Path, help="work directory (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--only", action="append", help="candidate name prefixes to run (default all)")
    parser.add_argument("--out", type=pathlib.Path,
                        default=REPO / "bench" / "results" / f"long-run-resolution-{datetime.date.today()}")
    args = parser.parse_args(argv)
    sources = args.source or DEFAULT_SOURCES
    tmp = args.tmp or pathlib.Path(tempfile.mkdtemp(prefix="long-run-resolution-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        runs = restore_all(sources, tmp / "exact") if not (tmp / "runs.json").is_file() else \
            [(pathlib.Path(d), b) for d, b in json.loads((tmp / "runs.json").read_text())]
        (tmp / "runs.json").write_text(json.dumps([(str(d), b) for d, b in runs]))
        exact_root = tmp / "exact"
        names = [n for n in CANDIDATES if not args.only or any(n.startswith(p) for p in args.only) or n.startswith("r2")]
        results = {}
        for n, name in enumerate(names):
            print(f"[{datetime.datetime.utcnow():%H:%M:%S}] {name}", file=sys.stderr, flush=True)
            cache = tmp / f"result{n}.json"
            if cache.is_file() and json.loads(cache.read_text())["name"] == name:
                results[name] = json.loads(cache.read_text())      # measured before (--tmp kept)
                if "episodes" not in results[name]:
                    root = tmp / f"tree{n}"
                    shutil.rmtree(root, ignore_errors=True)
                    write_tree(runs, root, exact_root, CANDIDATES[name][1])
                    results[name]["episodes"] = episodes(root, tmp / f"eval{n}")
                    cache.write_text(json.dumps(results[name]))
                    shutil.rmtree(root)
                continue
            root = tmp / f"tree{n}"
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(tmp / f"eval{n}", ignore_errors=True)
            sizes = build(runs, root, exact_root, CANDIDATES[name][1])
            ev = evaluate(root, tmp / f"eval{n}")
            results[name] = {"name": name, "sizes": sizes, "eval": ev, "episodes": episodes(root, tmp / f"eval{n}")}
            cache.write_text(json.dumps(results[name]))
            shutil.rmtree(root)
        exact = results[names[0]]["eval"]
        pairs = set()
        for r in exact["claims"]:
            pairs.add((r["id"], num(r["mean"])))
        for r in exact["tl"]:
            pairs.add((r["claim"], num(r["value_full"])))
            pairs.add((r["claim"], num(r["value_t"])))
        band = bands(pairs, tmp)
        text = report(runs, names, results, band, sources)
    finally:
        if not args.keep and not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out = args.out.with_suffix(".md")
    tmp_out = out.with_name(out.name + ".tmp")
    tmp_out.write_text(text)
    tmp_out.replace(out)
    print(text)
    return 0


EPISODE_COLS = ("episodes", "phases", "t_avg_s", "t_sd_s", "r_s", "R_s", "model_mbps", "sending_mbps",
                "fc_phase_pct")


def episode_lines(exact, cand):
    """The loss episodes and the CUBIC model's inputs per run and flow (whole transfer), where
    the candidate differs from the exact runs."""
    if not exact or not cand:
        return []
    key = lambda r: (r["experiment"], r["point"], r["repetition"], r["flow"])  # noqa: E731
    ex = {key(r): r for r in exact}
    rows = []
    for r in cand:
        e = ex[key(r)]
        if all(e[c] == r[c] for c in EPISODE_COLS):
            continue
        cells = []
        for c in EPISODE_COLS:
            a, b = num(e[c]), num(r[c])
            if c in ("episodes", "phases"):
                cells.append(f"{e[c]} -> {r[c]}" if e[c] != r[c] else e[c])
            else:
                d = diff(a, b)[1]
                cells.append("=" if d == 0 else f"{fmt(None if d is None else 100 * d, '.2g')} %")
        label = "bbr" if "f2_cc=bbr__" in r["point"] else ("fca" if "bbr_fca" in r["point"] else "cubic")
        rows.append(f"| {r['experiment'].replace('utsumi2022_', '')} {label} rep{r['repetition']} flow {r['flow']} | "
                    + " | ".join(cells) + " |")
    if not rows:
        return ["Loss episodes and the CUBIC model's inputs (every run and flow, whole transfer): identical.", ""]
    return ["Loss episodes and the CUBIC model's inputs per run and flow over the whole transfer "
            "(analysis/lib/metrics_utsumi2022.R; counts exact -> candidate, else the relative difference; "
            "flow 2 is the model's observer, flow 1 the CUBIC flow it models):", "",
            "| run, flow | episodes | CA phases | t_avg | t_sd | r | R | model rate | sending rate | FC phases % |",
            "|---|---|---|---|---|---|---|---|---|---|"] + rows + [""]


def report(runs, names, results, band, sources):
    prof = profile_runs("mininet/specs/utsumi2022/*.yaml")
    nsperf = profile_runs("mininet/specs/successors/successors_nsperf_shallow.yaml")
    exact = results[names[0]]
    lines = [f"# Output of `bench/long_run_resolution.py` ({datetime.date.today()})", "",
             "Runs (restored from " + ", ".join(f"`{s}`" for s in sources) + "):", ""]
    for (d, mbytes), s in zip(runs, exact["sizes"]):
        lines.append(f"- `{s['run']}`: {s['flows']} flows, {s['duration_s']:.0f} s; archived {mbytes} B, "
                     f"archive.pack() of the restored run {s['pack']} B")
    lines += ["", f"Profile: Utsumi & Hasegawa's paper profile, {len(prof)} runs, "
              f"{sum(r[2] for r in prof) / 3600:.1f} experiment-hours, "
              f"{sum(r[1] * r[2] for r in prof) / 3600:.1f} flow-hours "
              f"({sum(r[1] * r[2] for r in prof if r[3] >= 0.1) / 3600:.1f} of them sampled every 100 ms, "
              "the rest every 50 ms). For comparison, nsperf's shallow-buffer paper profile "
              f"(successors_nsperf_shallow): {len(nsperf)} runs, {sum(r[2] for r in nsperf) / 3600:.1f} "
              f"experiment-hours, {sum(r[1] * r[2] for r in nsperf) / 3600:.1f} flow-hours, estimated at "
              "utsumi2022_fig06_10's bytes per row (its flows are not Utsumi's: a rough scale only; "
              "candidate L does not apply to it, its figure reads bytes_acked).", "",
              "## Candidates", "",
              "| candidate | kept | kB per run (mean; fig04, fig06_10) | kB per 6000-s 2-flow run, each | "
              "Utsumi paper profile (MB) | nsperf shallow (MB, rough) | claims.R verdict changes | transfer-length check changes | "
              "values outside the band | max rel. diff |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    details = []
    for name in names:
        res = results[name]
        packs = [s["pack"] for s in res["sizes"]]
        by_exp = collections.defaultdict(list)
        for s in res["sizes"]:
            by_exp[s["experiment"]].append(s["pack"])
        est = estimate(rates(res["sizes"]), prof)
        est_ns = estimate({"utsumi2022_fig06_10": rates(res["sizes"])["utsumi2022_fig06_10"]}, nsperf)
        values, changes = compare(exact["eval"], res["eval"], band)
        n_claim = sum(1 for c in changes if c.startswith("claims.R"))
        n_tl = sum(1 for c in changes if c.startswith("transfer length"))
        out_band = [v for v in values if v["in_band"] is False]
        missing = [v for v in values if (v["exact"] is None) != (v["cand"] is None)]
        rels = [v["diff"][1] for v in values if v["diff"][1] is not None]
        max_rel = max(rels) if rels else None
        lines.append(f"| {name} | {CANDIDATES[name][0]} | {statistics.mean(packs) / 1e3:.0f} "
                     f"({'; '.join(f'{statistics.mean(v) / 1e3:.0f}' for _, v in sorted(by_exp.items()))}) | "
                     f"{' '.join(f'{p / 1e3:.0f}' for p in packs)} | {est / 1e6:.0f} | {est_ns / 1e6:.0f} | {n_claim} | {n_tl} | "
                     f"{len(out_band) + len(missing)} of {len(values)} | {fmt(None if max_rel is None else 100 * max_rel, '.3g')} % |")
        # where the bytes go
        members = collections.Counter()
        for s in res["sizes"]:
            members.update({k: v for k, v in s.items() if k == "run.json" or k.startswith("tidy/")})
        if name == names[0]:
            continue
        det = [f"### {name}", "", f"Members, each compressed alone, summed over the runs: " +
               ", ".join(f"{k} {v / 1e3:.0f} kB" for k, v in sorted(members.items())) + ".", ""]
        det += ["Verdict and check changes: " + ("none." if not changes else ""), ""]
        det += [f"- {c}" for c in changes]
        if changes:
            det.append("")
        ranked = sorted((v for v in values if v["diff"][0] is not None), key=lambda v: -(v["diff"][1] or 0))
        moved = [v for v in ranked if v["diff"][0] > 0]
        det += [f"Values compared: {len(values)} ({sum(1 for v in values if v['what'] == 'claim')} claim means, "
                f"the rest per run from the transfer-length checks); differing: {len(moved)}; "
                f"outside the band around the exact value: {len(out_band)}; computable on one side only: "
                f"{len(missing)}.", ""]
        claim_rows = [v for v in values if v["what"] == "claim"]
        if claim_rows:
            det += ["| claim (claims.R mean) | exact | candidate | abs. diff | rel. diff | in band |", "|---|---|---|---|---|---|"]
            for v in claim_rows:
                det.append(f"| {v['claim']} | {fmt(v['exact'], '.6g')} | {fmt(v['cand'], '.6g')} | "
                           f"{fmt(v['diff'][0], '.3g')} | {fmt(None if v['diff'][1] is None else 100 * v['diff'][1], '.3g')} % | "
                           f"{'-' if v['in_band'] is None else ('yes' if v['in_band'] else 'NO')} |")
            det.append("")
        det += episode_lines(results[names[0]].get("episodes"), res.get("episodes"))
        per_claim = collections.defaultdict(list)
        for v in values:
            if v["what"] != "claim" and v["diff"][0] is not None:
                per_claim[v["claim"]].append(v)
        if per_claim:
            det += ["Per claim over the transfer-length values (every run, whole transfer and first T s):", "",
                    "| claim | values | differing | max abs. diff | max rel. diff | outside band | worst |",
                    "|---|---|---|---|---|---|---|"]
            for c, vs in sorted(per_claim.items()):
                worst = max(vs, key=lambda v: v["diff"][1] or 0)
                det.append(f"| {c} | {len(vs)} | {sum(1 for v in vs if v['diff'][0] > 0)} | "
                           f"{max(v['diff'][0] for v in vs):.3g} | {100 * max(v['diff'][1] for v in vs):.3g} % | "
                           f"{sum(1 for v in vs if v['in_band'] is False)} | "
                           f"{worst['run']}, {worst['window']}: {fmt(worst['exact'], '.5g')} -> {fmt(worst['cand'], '.5g')} |")
            det.append("")
        details += det
    ctl = control_runs()
    short = [(e, f, min(d, 600.0), si, qi) for e, f, d, si, qi in prof]
    lines += ["", "The same rates on other sets of runs (MB): the paper profile as it stands; every spec at "
              "600 s at most (as the transfer-length rule made Fig. 4); the transfer-length control runs "
              f"alone ({len(ctl)} runs, {sum(r[1] for r in ctl)} flows, at 6000 s: "
              "the points of transfer_length_controls.csv, seeds 1-3):", "",
              "| candidate | paper profile | every spec at <= 600 s | control runs at 6000 s |", "|---|---|---|---|"]
    for name in names:
        r = rates(results[name]["sizes"])
        lines.append(f"| {name} | {estimate(r, prof) / 1e6:.0f} | {estimate(r, short) / 1e6:.1f} | "
                     f"{estimate(r, ctl) / 1e6:.1f} |")
    lines += ["", "Rates used for the estimates (run.json B; per member: B per row, rows per flow-second "
              "(queue: per second) as measured on the 50-ms runs):", ""]
    for name in names:
        r = rates(results[name]["sizes"])
        lines.append(f"- {name}: " + "; ".join(
            f"{e.replace('utsumi2022_', '')} {v['run.json']:.0f}, "
            + ", ".join(f"{k} {v[k][0]:.2f} x {v[k][1]:.2f}" for k in KINDS) for e, v in r.items()))
    lines += ["", "## Per candidate", ""] + details
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
