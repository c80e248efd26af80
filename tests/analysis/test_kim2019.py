"""Tests of the Kim et al. (2019) analysis: the two metrics added for it to analysis/lib/metrics.R
(ss_goodput_cv_pct, goodput_slope_mbps_s), claims/kim2019.csv and the figure scripts
analysis/figures/kim2019/*.R, on a synthetic run tree whose values are known by construction
(synth_ma2019.write_run: piecewise-constant rates), and the wiring of the experiments
(specs, figure scripts, configs, papers.csv)."""

from __future__ import annotations

import math
import shutil
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_ma2019 as synth  # noqa: E402
from test_r_analysis import (ANALYSIS, REPO, assert_paper_wired, paper_experiments, claims_all_reproduced,  # noqa: E402
                             evaluate_claims, r_json, render_figure)

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

FIG_DIR = ANALYSIS / "figures" / "kim2019"
EXPERIMENTS = paper_experiments("kim2019")
NONE2 = "f1_module_params=none__f2_module_params=none"
NONE4 = NONE2 + "__f3_module_params=none__f4_module_params=none"
NO_AGGR2 = "f1_module_params=extra_acked_cwnd-0__f2_module_params=extra_acked_cwnd-0"
# Figs. 2, 3, 6: BBR (6.1's, built in) and BBR with 4.14's cwnd target (bbr_e, algorithm 0, no allowance)
BBR2 = "f1_cc=bbr__f2_cc=bbr__" + NONE2
BBR4 = "f1_cc=bbr__f2_cc=bbr__f3_cc=bbr__f4_cc=bbr__" + NONE4
BBR_414 = "algorithm-0_extra_acked_cwnd-0"
BBR2_414 = f"f1_cc=bbr_e__f2_cc=bbr_e__f1_module_params={BBR_414}__f2_module_params={BBR_414}"
ALPHA_POINTS = {"bbr": "f1_cc=bbr__f2_cc=bbr__" + NONE2}
for a in (125, 150, 200, 300):
    ALPHA_POINTS[f"a{a}"] = f"f1_cc=bbr_e__f2_cc=bbr_e__f1_module_params=alpha_pct-{a}__f2_module_params=alpha_pct-{a}"
ALPHA_POINTS["alg1"] = "f1_cc=bbr_e__f2_cc=bbr_e__f1_module_params=algorithm-1__f2_module_params=algorithm-1"



# Both flows of Fig. 5 in ProbeRTT together at 20-20.2 s, as in the paper's figure ("after the
# ProbeRTT phase at 20 s" is that event: window probe_rtt_sync..end).
PROBE_RTT_AT_20 = lambda f, t: "probe_rtt" if 20.0 < t <= 20.2 else "probe_bw"  # noqa: E731

def wobble(amplitude):
    """A factor alternating 1 + a and 1 - a every 2 s (so 1-s bins see a square wave)."""
    return lambda t: 1 + amplitude * (1 if math.floor(t / 2) % 2 == 0 else -1)


def two_flows(cc, rtt2):
    return [synth.flow(1, cc, 10, 0, 40, "10 ms"), synth.flow(2, cc, rtt2, 0, 40, f"{rtt2} ms")]


def pair_rate(link, share1, total=0.95, amp=0.0, before20=None):
    """Flow 1 gets share1 % of total * link, flow 2 the rest; each wobbles by amp. Before 20 s,
    before20(t) gives flow 1's share instead."""
    w = wobble(amp)

    def rate(f, t):
        s1 = before20(t) if before20 and t <= 20 else share1
        s = s1 if f["flow"] == 1 else 100 - s1
        return total * link * s / 100 * w(t + (1 if f["flow"] == 2 else 0))
    return rate


def four_flows(cc):
    return [synth.flow(1, cc, 10, 0, 120, "10 ms (0 s)"), synth.flow(2, cc, 10, 14, 120, "10 ms (14 s)"),
            synth.flow(3, cc, 100, 80, 120, "100 ms (80 s)"), synth.flow(4, cc, 100, 94, 120, "100 ms (94 s)")]


def four_rate(late10, late100, early=(60, 35), gap_close=False):
    """Mbit/s of each flow on 100 Mbit/s: 0-14 s flow 1 alone (95); 14-80 s flows 1 and 2 at
    `early` (with gap_close: 47.5 each from 60 s); 80-94 s 10 / 10 / 75; from 94 s each 10-ms
    flow late10, each 100-ms flow late100."""
    def rate(f, t):
        n = f["flow"]
        if t <= 14:
            return 95.0
        if t <= 80:
            if gap_close and t > 60:
                return 47.5
            return early[0] if n == 1 else early[1]
        if t <= 94:
            return 75.0 if n == 3 else 10.0
        return late10 if n <= 2 else late100
    return rate


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kim2019")
    for link in (10, 100):
        # Fig. 2 BBR: fair, wobbling by 20 %; Fig. 4 BBR-E: fair, wobbling by 5 %
        for point, cc in ((BBR2, "bbr"), (BBR2_414, "bbr_e")):
            synth.write_run(root, "kim2019_fig02", f"rate_mbps={link}__{point}", 1, two_flows(cc, 10),
                            link_mbps=link, rate=pair_rate(link, 50, amp=0.2))
        synth.write_run(root, "kim2019_fig04", f"rate_mbps={link}__{NONE2}", 1, two_flows("bbr_e", 10),
                        link_mbps=link, rate=pair_rate(link, 50, amp=0.05))
        # Fig. 3 BBR: the 10-ms flow gets 10 % of 95 % of the link
        for point, cc in ((BBR2, "bbr"), (BBR2_414, "bbr_e")):
            synth.write_run(root, "kim2019_fig03", f"rate_mbps={link}__{point}", 1, two_flows(cc, 100),
                            link_mbps=link, rate=pair_rate(link, 10))
        # Fig. 5 BBR-E: until 20 s the 10-ms flow's share rises from 5 to 23 %, then 50 %;
        # 96 % of the link in all
        for point in (NONE2, NO_AGGR2):
            synth.write_run(root, "kim2019_fig05", f"rate_mbps={link}__{point}", 1, two_flows("bbr_e", 100),
                            link_mbps=link, rate=pair_rate(link, 50, total=0.96, before20=lambda t: 5 + 0.9 * t),
                            state=PROBE_RTT_AT_20)
    synth.write_run(root, "kim2019_fig06", BBR4, 1, four_flows("bbr"), rate=four_rate(5.0, 45.0), duration_s=120)
    synth.write_run(root, "kim2019_fig07", NONE4, 1, four_flows("bbr_e"), duration_s=120,
                    rate=four_rate(10.0, 37.5, early=(50, 45), gap_close=True))
    # BBR-E's alpha: the 10-ms flow's share; Algorithm 1 wobbles by 30 %, the rest by 5 %
    shares = {"bbr": 15.0, "a125": 42.0, "a150": 45.0, "a200": 25.0, "a300": 24.0, "alg1": 30.0}
    for key, point in ALPHA_POINTS.items():
        cc = "bbr" if key == "bbr" else "bbr_e"
        params = {} if key == "bbr" else {"algorithm": 1} if key == "alg1" else {"alpha_pct": int(key[1:])}
        spec_flows = [{"cc": cc, "rtt_ms": rtt, "module_params": params} for rtt in (10, 100)]
        synth.write_run(root, "kim2019_bbre_alpha", point, 1, two_flows(cc, 100),
                        link_mbps=10, rate=pair_rate(10, shares[key], amp=0.3 if key == "alg1" else 0.05),
                        spec_extra={"flows": spec_flows})
    return root


def run_dir(tree: Path, experiment: str, point: str) -> Path:
    return tree / "runs" / experiment / point / "rep1"


def test_goodput_cv_and_slope(tree):
    got = r_json(f"""
      r2 <- read_run("{run_dir(tree, "kim2019_fig02", "rate_mbps=100__" + BBR2)}")
      r5 <- read_run("{run_dir(tree, "kim2019_fig05", "rate_mbps=10__" + NONE2)}")
      cat(jsonlite::toJSON(list(
        cv1 = ss_goodput_cv_pct(r2, flow = 1), cv = ss_goodput_cv_pct(r2),
        cv_win = ss_goodput_cv_pct(r2, flow = 1, window = c(start = 10, end = 12)),
        flat = ss_goodput_cv_pct(r5, flow = 1, window = c(start = 20, end = 40)),
        slope = goodput_slope_mbps_s(r5, flow = 1, window = c(start = 2, end = 20)),
        slope_after = goodput_slope_mbps_s(r5, flow = 1, window = c(start = 20, end = 40)),
        short = goodput_slope_mbps_s(r5, flow = 1, window = c(start = 20, end = 22))),
        auto_unbox = TRUE, digits = NA))
    """)
    # 1-s bins of a +-20 % square wave of period 4 s over 10-40 s (flow 2's shifted by 1 s)
    def cv(shift):
        w = wobble(0.2)
        x = [w(t + 0.5 + shift) for t in range(10, 40)]
        return 100 * statistics.stdev(x) / statistics.mean(x)
    assert got["cv1"] == pytest.approx(cv(0), rel=1e-3)
    assert got["cv"] == pytest.approx((cv(0) + cv(1)) / 2, rel=1e-3)
    assert got["cv_win"] in ("NA", None)                 # two bins are too few
    assert got["flat"] == pytest.approx(0, abs=1e-6)
    # flow 1 gets (5 + 0.9 t) % of 9.6 Mbit/s: slope 0.9 % x 9.6 = 0.0864 Mbit/s per s
    assert got["slope"] == pytest.approx(0.0864, rel=0.02)
    assert got["slope_after"] == pytest.approx(0, abs=1e-9)
    assert got["short"] in ("NA", None)


def test_claims_file_kim2019(tree, tmp_path):
    """Every claim parses and evaluates; on the synthetic tree (built to match the paper's
    statements) each is reproduced."""
    rows = claims_all_reproduced("kim2019", tree, tmp_path)
    assert float(rows["kim2019-fig04-stable-10"]["mean"]) == pytest.approx(0.05 / 0.2, rel=2e-2)
    assert float(rows["kim2019-fig05-vsbbr-100"]["mean"]) == pytest.approx(48 / 9.5, rel=1e-3)
    assert float(rows["kim2019-fig05-vsbbr-100-noaggr"]["mean"]) == pytest.approx(48 / 9.5, rel=1e-3)
    assert float(rows["kim2019-fig03-suppressed-10-noaggr"]["mean"]) == pytest.approx(10, rel=1e-3)
    # "better throughput": the 10-ms flow's goodput with BBR-E over that with BBR, steady state
    # (10 s to the end: its ramp before 20 s, then 50 % of 9.6 against 10 % of 9.5 Mbit/s)
    assert 1.15 < float(rows["kim2019-throughput-10"]["mean"]) < 48 / 9.5
    assert float(rows["kim2019-fig06-lost"]["mean"]) == pytest.approx(10, rel=1e-3)
    assert float(rows["kim2019-fig07-vsbbr"]["mean"]) == pytest.approx(10 / 5, rel=1e-3)
    assert float(rows["kim2019-alg1-unstable"]["mean"]) == pytest.approx(0.3 / 0.05, rel=2e-2)


def test_claims_fail_when_the_runs_say_otherwise(tmp_path):
    """Fig. 5 where the 100-ms flow keeps 80 % throughout: the fairness claim is not reproduced."""
    root = tmp_path / "t"
    synth.write_run(root, "kim2019_fig05", "rate_mbps=10__" + NONE2, 1, two_flows("bbr_e", 100),
                    link_mbps=10, rate=pair_rate(10, 20), state=PROBE_RTT_AT_20)
    rows = evaluate_claims("kim2019", root, tmp_path)
    assert rows["kim2019-fig05-fair-10"]["verdict"] == "not reproduced"
    assert rows["kim2019-fig05-first20-10"]["verdict"] == "reproduced"
    assert rows["kim2019-fig05-gradual-10"]["verdict"] == "not reproduced"     # flat, not growing
    assert rows["kim2019-fig05-fair-100"]["verdict"] == "not run"


def test_noaggr_claims_read_their_own_arm(tmp_path):
    """The -noaggr claims read the arm without the ACK-aggregation allowance, the others 6.1's BBR:
    a 10-ms flow suppressed with 6.1's BBR (10 %) but not with 4.14's cwnd target (40 %)."""
    root = tmp_path / "t"
    synth.write_run(root, "kim2019_fig03", "rate_mbps=10__" + BBR2, 1, two_flows("bbr", 100),
                    link_mbps=10, rate=pair_rate(10, 10))
    synth.write_run(root, "kim2019_fig03", "rate_mbps=10__" + BBR2_414, 1, two_flows("bbr_e", 100),
                    link_mbps=10, rate=pair_rate(10, 40))
    rows = evaluate_claims("kim2019", root, tmp_path)
    assert rows["kim2019-fig03-suppressed-10"]["verdict"] == "reproduced"
    # 40 % misses the bound (< 25 %) but keeps the direction (flow 1 below flow 2)
    assert rows["kim2019-fig03-suppressed-10-noaggr"]["verdict"] == "qualitatively reproduced"
    assert float(rows["kim2019-fig03-suppressed-10-noaggr"]["mean"]) == pytest.approx(40, rel=1e-3)


FIGURES = sorted(p.stem for p in FIG_DIR.glob("kim2019_*.R"))


@pytest.mark.parametrize("figure", FIGURES)
def test_figure_scripts(tree, tmp_path, figure):
    render_figure(FIG_DIR / f"{figure}.R", tree / "runs" / figure, tmp_path / "fig" / f"{figure}.pdf", 10)


def test_kim2019_experiments_are_wired():
    """Every kim2019 spec has its figure script; the paper is wired into the shared files."""
    assert set(FIGURES) == set(EXPERIMENTS)
    assert_paper_wired("kim2019", "001_adb406332a360c9c.txt")

