"""Tests of the Yang et al. (2019, Adaptive-BBR) analysis: the metrics added for it to
analysis/lib/metrics.R (ss_rtt_ms, ss_rtt_queueing_ms, startup_s, convergence_s),
claims/yang2019.csv and the figure scripts analysis/figures/yang2019/*.R, on a synthetic run
tree whose values are known by construction (synth_ma2019.write_run: piecewise-constant rates,
socket RTT = base RTT + bottleneck queueing delay), runs that contradict the paper, and the
wiring of the experiments (specs, figure scripts, configs, papers.csv, report part)."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_ma2019 as synth  # noqa: E402
from test_r_analysis import (ANALYSIS, REPO, assert_paper_wired, paper_experiments, claims_all_reproduced,  # noqa: E402
                             evaluate_claims, r_json, render_figure)

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

FIG_DIR = ANALYSIS / "figures" / "yang2019"
EXPERIMENTS = paper_experiments("yang2019")
CCS = ("bbr", "bbq", "adaptive_bbr")
PAIR = {cc: f"f1_cc={cc}__f2_cc={cc}" for cc in CCS}
NONE2 = "f1_module_params=none__f2_module_params=none"      # Fig. 3: the modules' defaults
LINK = 20.0


def jain_share(j):
    """Flow 1's share (fraction) of two flows whose Jain's index is j (flow 1 the smaller)."""
    return (1 - (1 / j - 1) ** 0.5) / 2


def two(cc, rtt1, rtt2, dur=40.0):
    return [synth.flow(1, cc, rtt1, 0, dur, f"{rtt1} ms RTT"), synth.flow(2, cc, rtt2, 0, dur, f"{rtt2} ms RTT")]


def fixed(m1, m2, early=None):
    """Flow 1 gets m1, flow 2 m2 Mbit/s; before 3 s early = (e1, e2) instead."""
    def rate(f, t):
        a, b = early if early and t <= 3 else (m1, m2)
        return a if f["flow"] == 1 else b
    return rate


def shares(s1, total=19.0):
    return fixed(total * s1, total * (1 - s1))


# Fig. 3: the published averages; BBR's 5-ms flow leads before 3 s; Adaptive-BBR's from 3 s.
FIG03 = {"bbr": (0.8, 18.8), "bbq": (5.8, 13.8), "adaptive_bbr": (10.2, 9.7)}
# Fig. 4(a)/(b): Jain's index per algorithm; (b): BBR 0.52 at 30 ms.
JAIN = {"bbr": 0.6, "bbq": 0.84, "adaptive_bbr": 0.98}
# Fig. 4(c): the 10-ms flow's share (%) per algorithm and N.
FIG04C = {"bbr": {1: 11.0, 3: 8.0, 5: 5.9}, "bbq": {1: 28.6, 3: 15.0, 5: 6.6},
          "adaptive_bbr": {1: 53.8, 3: 28.2, 5: 19.4}}
# Fig. 5: bottleneck queueing delay (ms) after the start-up, so the 5-ms flow's RTT is 5 + it.
FIG05 = {"bbr": 18.0, "bbq": 8.0, "adaptive_bbr": 1.2}
# Fig. 6: when the 15-ms flow's share settles (s), from 90/10 to its final 30 %.
FIG06 = {"bbr": 18.0, "adaptive_bbr": 24.0}


def fig06_rate(settle):
    def rate(f, t):
        if f["flow"] == 2:
            return 1.9 if t <= settle else 5.7
        if t <= 0.3:
            return 4.0
        if t <= 3:
            return 18.0
        if t <= 63:
            return 17.1 if t <= settle else 13.3
        return 6.0 if t <= 63.9 else 18.0
    return rate


QOFFSET_POINTS = [f"delayed_ack={a}__sender_qdisc={q}" for q in ("fq", "none") for a in ("True", "False")]
# One Adaptive-BBR flow alone: 19 Mbit/s of goodput, 5-ms RTT, 2 ms of queueing on 20 Mbit/s.
QOFFSET_MBPS, QOFFSET_RTT_MS, QOFFSET_QDELAY_MS = 19.0, 5.0, 2.0


def write_qoffset_run(root: Path, point: str) -> Path:
    """A sender whose socket samples are exact (synth: delivery rate = goodput, inflight = RTprop's
    pipe + its own backlog, both rounded to packets), with header-capture backlog."""
    return synth.write_run(root, "yang2019_qoffset", point, 1,
                           [synth.flow(1, "adaptive_bbr", QOFFSET_RTT_MS, 0, 20, "Adaptive-BBR (5 ms)")],
                           link_mbps=LINK, rate=lambda f, t: QOFFSET_MBPS, qdelay=lambda t: QOFFSET_QDELAY_MS,
                           flow_queue=True, sample_s=0.05, queue_s=0.05)


def write_tree(root: Path, contradict: bool = False) -> None:
    for cc, (m1, m2) in FIG03.items():
        if contradict and cc == "adaptive_bbr":
            m1, m2 = 0.3, 12.5                      # what the testbed's first runs showed
        synth.write_run(root, "yang2019_fig03", f"{PAIR[cc]}__mtu_bytes=1052__{NONE2}", 1, two(cc, 5, 20),
                        link_mbps=LINK, rate=fixed(m1, m2, early=(12, 6) if cc == "bbr" else None))
        q = FIG05[cc] if not (contradict and cc == "adaptive_bbr") else 39.0
        synth.write_run(root, "yang2019_fig05", PAIR[cc], 1, two(cc, 5, 20), link_mbps=LINK,
                        rate=fixed(m1, m2), qdelay=lambda t, q=q: 30.0 if t < 1.5 else q)
        for rate_mbps in (10, 20, 50):
            synth.write_run(root, "yang2019_fig04a", f"{PAIR[cc]}__rate_mbps={rate_mbps}", 1, two(cc, 10, 15),
                            link_mbps=rate_mbps, rate=shares(jain_share(JAIN[cc]), 0.95 * rate_mbps))
        for rtt in (15, 20, 30, 50):
            j = 0.52 if (cc == "bbr" and rtt == 30) else 0.9 if (cc == "bbq" and rtt > 15) else JAIN[cc]
            synth.write_run(root, "yang2019_fig04b", f"{PAIR[cc]}__f2_rtt_ms={rtt}", 1, two(cc, 10, rtt),
                            link_mbps=LINK, rate=shares(jain_share(j)))
        for n, share in FIG04C[cc].items():
            flows = [synth.flow(1, cc, 10, 0, 40, "10 ms RTT")] + [
                synth.flow(k, cc, 15, 0, 40, "15 ms RTT") for k in range(2, n + 2)]
            synth.write_run(root, "yang2019_fig04c", f"{PAIR[cc]}__f2_count={n}", 1, flows, link_mbps=LINK,
                            rate=lambda f, t, s=share, n=n: 19 * s / 100 if f["flow"] == 1 else 19 * (100 - s) / 100 / n)
    for point in QOFFSET_POINTS:
        write_qoffset_run(root, point)
    for cc, settle in FIG06.items():
        flows = [synth.flow(1, cc, 10, 0, 70, "10 ms RTT"), synth.flow(2, cc, 15, 3, 63, "15 ms RTT (3-63 s)")]
        synth.write_run(root, "yang2019_fig06", PAIR[cc], 1, flows, link_mbps=LINK, duration_s=70,
                        rate=fig06_rate(settle if not contradict else 5.0))


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("yang2019")
    write_tree(root)
    return root


def run_dir(tree: Path, experiment: str, point: str) -> Path:
    return tree / "runs" / experiment / point / "rep1"


def test_rtt_startup_and_convergence_metrics(tree):
    got = r_json(f"""
      r5 <- read_run("{run_dir(tree, "yang2019_fig05", PAIR["bbr"])}")
      r6 <- read_run("{run_dir(tree, "yang2019_fig06", PAIR["adaptive_bbr"])}")
      r6b <- read_run("{run_dir(tree, "yang2019_fig06", PAIR["bbr"])}")
      cat(jsonlite::toJSON(list(
        rtt = ss_rtt_ms(r5, flow = 1), rtt2 = ss_rtt_ms(r5, flow = 2),
        early = ss_rtt_ms(r5, flow = 1, window = c(start = 0, end = 1.4)),
        queueing = ss_rtt_queueing_ms(r5, flow = 1),
        conv = convergence_s(r6, flow = 2), conv_bbr = convergence_s(r6b, flow = 2),
        conv_tight = convergence_s(r6, flow = 2, tol_pct = 0.01),
        start = startup_s(r6, flow = 1, frac = 0.8),
        ramp = rampup_s(r6, flow = 1, frac = 0.8)), auto_unbox = TRUE, digits = NA))
    """)
    assert got["rtt"] == pytest.approx(5 + 18, rel=1e-9)
    assert got["rtt2"] == pytest.approx(20 + 18, rel=1e-9)
    assert got["early"] == pytest.approx(5 + 30, rel=1e-9)
    assert got["queueing"] == pytest.approx(18, rel=1e-9)
    # the 15-ms flow joins at 3 s; its share settles at 30 % from 24 s (18 s with BBR)
    assert got["conv"] == pytest.approx(21, abs=1e-6)
    assert got["conv_bbr"] == pytest.approx(15, abs=1e-6)
    assert got["conv_tight"] == pytest.approx(21, abs=1e-6)   # settled shares are exactly 30 %
    # 4 Mbit/s in the bins centred up to 0.25 s, then 18: the first 100-ms bin whose centred
    # 3-bin mean reaches 16 is the one centred at 0.45 s (the one at 0.35 s still averages 13.3)
    assert got["start"] == pytest.approx(0.45, abs=1e-6)
    # 6 Mbit/s from 63 s, 18 from 63.9 s: the first bin whose 3-bin mean reaches 16 is centred at 64.05 s
    assert got["ramp"] == pytest.approx(1.05, abs=1e-6)


def backlog_estimate(run: Path) -> dict:
    return r_json(f"""
      t <- backlog_estimate_table(read_run("{run}"), 1, from_s = 1)
      s <- backlog_estimate_summary(t)
      cat(jsonlite::toJSON(c(as.list(s), list(max_abs_resid = max(abs(t$q_est_pkts - t$backlog_pkts -
          t$rate_term_pkts - t$outside_term_pkts)))), auto_unbox = TRUE, digits = NA))
    """)


def test_backlog_estimate_exact_sender(tmp_path):
    """Q = inflight - RTprop x delivery rate (Yang et al., Alg. 1): for a sender whose delivery
    rate is its throughput and whose inflight is RTprop's pipe plus its own backlog, Q equals the
    real backlog up to the packet rounding of inflight and backlog, and the rate term is zero."""
    got = backlog_estimate(write_qoffset_run(tmp_path, QOFFSET_POINTS[0]))
    pipe = QOFFSET_MBPS * 1e6 / 8 * QOFFSET_RTT_MS / 1e3 / synth.MSS                # 8.2 segments
    own = QOFFSET_QDELAY_MS / 1e3 * LINK * 1e6 / 8 / synth.FRAME                    # 3.3 packets
    assert got["backlog_pkts"] == pytest.approx(round(own))
    assert got["q_est_pkts"] == pytest.approx(round(pipe + own) - pipe, abs=1e-6)
    assert got["rate_term_pkts"] == pytest.approx(0, abs=1e-9)
    assert abs(got["offset_pkts"]) <= 1
    assert got["max_abs_resid"] < 1e-9
    assert got["rtprop_ms"] == pytest.approx(QOFFSET_RTT_MS)


def test_backlog_estimate_finds_each_source(tmp_path):
    """A rate sample 20 % below the throughput and 3 segments held outside the queue (a
    delayed ACK, the sender's qdisc): the offset splits into 0.2 x throughput x RTprop and 3."""
    run = write_qoffset_run(tmp_path, QOFFSET_POINTS[0])
    exact = backlog_estimate(run)
    path = run / "tidy" / "tcp.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["delivery_rate_mbps"] = str(0.8 * float(r["delivery_rate_mbps"]))
        r["inflight_pkts"] = str(int(r["inflight_pkts"]) + 3)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    got = backlog_estimate(run)
    pipe = QOFFSET_MBPS * 1e6 / 8 * QOFFSET_RTT_MS / 1e3 / synth.MSS
    assert got["rate_term_pkts"] == pytest.approx(0.2 * pipe, rel=1e-6)
    assert got["outside_term_pkts"] == pytest.approx(exact["outside_term_pkts"] + 3, abs=1e-6)
    assert got["offset_pkts"] == pytest.approx(exact["offset_pkts"] + 3 + 0.2 * pipe, abs=1e-6)


def test_backlog_estimate_needs_captures(tmp_path):
    run = synth.write_run(tmp_path, "yang2019_qoffset", QOFFSET_POINTS[0], 1,
                          [synth.flow(1, "adaptive_bbr", 5, 0, 20)], link_mbps=LINK)
    assert backlog_estimate(run)["n"] == 0


def test_convergence_never_reached_is_na(tmp_path):
    flows = [synth.flow(1, "bbr", 10, 0, 70, "a"), synth.flow(2, "bbr", 15, 3, 63, "b")]
    # flow 2's share alternates 10 % / 50 % every 2 s: never 5 s within 10 points of its mean
    def rate(f, t):
        hi = int(t / 2) % 2 == 0
        if f["flow"] == 2:
            return 9.5 if hi else 1.9
        return 9.5 if hi else 17.1
    d = synth.write_run(tmp_path, "yang2019_fig06", PAIR["bbr"], 1, flows, link_mbps=LINK, duration_s=70, rate=rate)
    got = r_json(f'cat(jsonlite::toJSON(list(c = convergence_s(read_run("{d}"), flow = 2)), auto_unbox = TRUE))')
    assert got["c"] in ("NA", None)


def test_claims_file_yang2019(tree, tmp_path):
    """Every claim parses and evaluates; on the synthetic tree (built to match the paper's
    statements) each is reproduced, with the values the construction gives."""
    rows = claims_all_reproduced("yang2019", tree, tmp_path)
    assert float(rows["yang2019-fig05-qdelay"]["mean"]) == pytest.approx(100 * (1 - 1.2 / 18), rel=1e-6)
    assert float(rows["yang2019-fig04a-bbr"]["mean"]) == pytest.approx(0.6, rel=1e-3)
    assert float(rows["yang2019-fig04c-bbq-vs-bbr-1"]["mean"]) == pytest.approx(28.6 / 11, rel=1e-3)
    # "at around 24 s after 15-ms RTT flow joins": on the run's clock (clock = "run"), 21 s after the join at 3 s
    assert float(rows["yang2019-fig06-abbr-conv"]["mean"]) == pytest.approx(24, abs=1e-6)
    assert float(rows["yang2019-fig06-abbr-slower"]["mean"]) == pytest.approx(21 / 15, rel=1e-6)


def test_claims_fail_when_the_runs_say_otherwise(tmp_path):
    """Adaptive-BBR starving the 5-ms flow (0.3 vs 12.5 Mbit/s, as the first testbed runs did)
    with a deep queue, and converging at once: its claims are not reproduced; the others are."""
    root = tmp_path / "t"
    write_tree(root, contradict=True)
    rows = evaluate_claims("yang2019", root, tmp_path)
    for cid in ("yang2019-fig03-abbr-short", "yang2019-fig03-abbr-similar", "yang2019-fig03-abbr-fairer",
                "yang2019-fig05-qdelay", "yang2019-fig05-abbr", "yang2019-fig05-abbr-lowest",
                "yang2019-fig06-abbr-slower", "yang2019-fig06-abbr-conv"):
        assert rows[cid]["verdict"] == "not reproduced", (cid, rows[cid]["mean"])
    assert rows["yang2019-fig03-bbr-short"]["verdict"] == "reproduced"
    assert rows["yang2019-fig05-bbr"]["verdict"] == "reproduced"


def test_claims_not_run_without_runs(tmp_path):
    rows = evaluate_claims("yang2019", tmp_path / "empty", tmp_path)
    assert {v["verdict"] for v in rows.values()} == {"not run"}


FIGURES = sorted(p.stem for p in FIG_DIR.glob("yang2019_*.R"))


@pytest.mark.parametrize("figure", FIGURES)
def test_figure_scripts(tree, tmp_path, figure):
    render_figure(FIG_DIR / f"{figure}.R", tree / "runs" / figure, tmp_path / "fig" / f"{figure}.pdf", 10)


def test_yang2019_experiments_are_wired():
    """Every yang2019 spec has its figure script; the paper is wired into the shared files."""
    assert set(FIGURES) == set(EXPERIMENTS)
    assert_paper_wired("yang2019", "002_a6c969f5075f0d4e.txt")

def test_paper_profile_has_three_repetitions_and_60_s_runs():
    """Paper profile: at least three repetitions everywhere and runs of at least 60 s (Fig. 4
    included); quick: one repetition."""
    sys.path.insert(0, str(REPO / "mininet"))
    from bbrlab.experiment import spec as bbrspec
    for e in EXPERIMENTS:
        path = REPO / "mininet" / "specs" / "yang2019" / f"{e}.yaml"
        paper = bbrspec.expand(bbrspec.load(path, profile="paper"))
        assert min(r["duration_s"] for r in paper) >= 60, e
        reps = {}
        for r in paper:
            reps[r["point"]] = max(reps.get(r["point"], 0), r["repetition"])
        assert min(reps.values()) >= 3, e
        quick = bbrspec.expand(bbrspec.load(path, profile="quick"))
        assert max(r["repetition"] for r in quick) == 1, e
