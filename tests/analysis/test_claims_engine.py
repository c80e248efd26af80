"""The claims engine (analysis/lib/verdict.R) on constructed runs whose values are
known: aggregates over sweep points (all / min / max / trend), claim windows
(numbers and the synchronised-ProbeRTT event), the tolerance on the measured
quantity of relative claims, and the 95 % intervals behind robust / marginal.

Each case is built so that the obvious wrong implementation fails it: an "all"
claim that averages over points, a window ignored, a tolerance applied to a
derived percentage, an interval that ignores the spread."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_ma2019 as synth  # noqa: E402
from test_r_analysis import ANALYSIS, r_json, read_csv_rows, rscript, write_claims  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

COLUMNS = ["id", "paper", "source", "text", "reading", "value", "unit", "kind", "op",
           "experiment", "point", "aggregate", "by", "window", "metric", "args", "direction",
           "ref_experiment", "ref_point", "relation", "lexicon", "departure", "min_duration_s"]
TWO = [synth.flow(1, "bbr", 10), synth.flow(2, "bbr", 50)]


def constant_run(root, experiment, point, rep, g1, g2=40.0, **kw):
    """Two flows 0-30 s; flow 1 at g1 Mbit/s, flow 2 at g2 (steady state 10-30 s)."""
    return synth.write_run(root, experiment, point, rep, TWO,
                           rate=lambda f, t: g1 if f["flow"] == 1 else g2, **kw)


def evaluate(tmp_path, root, rows):
    claims = write_claims(tmp_path / "c.csv", rows, header=COLUMNS, metric="ss_goodput_mbps",
                          args="flow = 1", experiment="e")
    rscript(ANALYSIS / "claims.R", claims, root, tmp_path / "c.tex")
    return read_csv_rows(tmp_path / "c.csv")


# ---- aggregates -------------------------------------------------------------------

@pytest.fixture()
def sweep(tmp_path):
    """Points x=1..4: flow 1 gets 5, 6, 12, 7 Mbit/s (x=3 breaks "< 10")."""
    root = tmp_path / "sweep"
    for x, g in zip((1, 2, 3, 4), (5.0, 6.0, 12.0, 7.0)):
        constant_run(root, "e", f"x={x}", 1, g)
    constant_run(root, "e", "x=5__arm=b", 1, 1.0)     # excluded by the selectors below
    return root


def test_all_claim_fails_on_one_point(tmp_path, sweep):
    rows = evaluate(tmp_path, sweep, [
        dict(id="all", value="10", kind="bound", op="<", point="x>=1&x<=4", aggregate="all",
             direction="ss_goodput_mbps(flow = 1) < ss_goodput_mbps(flow = 2)"),
        dict(id="all-but-3", value="10", kind="bound", op="<", point="x!=3&x<=4", aggregate="all"),
    ])
    a = rows["all"]
    # the mean over points (7.5) is below 10: an engine averaging points would pass
    assert a["verdict"] == "qualitatively reproduced"     # bound fails at x=3, direction holds
    assert float(a["mean"]) == pytest.approx(12.0) and a["at"] == "x=3"
    assert (a["n_points"], a["direction_points"]) == ("4", "4/4")
    assert rows["all-but-3"]["verdict"] == "reproduced"
    assert float(rows["all-but-3"]["mean"]) == pytest.approx(7.0)   # the least favourable point


def test_min_and_max_claims(tmp_path, sweep):
    rows = evaluate(tmp_path, sweep, [
        dict(id="min", value="5", point="x<=4", aggregate="min"),
        dict(id="max", value="12", point="x<=4", aggregate="max"),
        dict(id="max-low", value="7", point="x<=4", aggregate="max"),
        dict(id="min-bound", value="6", kind="bound", op=">=", point="x<=4", aggregate="min"),
    ])
    assert float(rows["min"]["mean"]) == pytest.approx(5.0) and rows["min"]["at"] == "x=1"
    assert float(rows["max"]["mean"]) == pytest.approx(12.0) and rows["max"]["at"] == "x=3"
    assert rows["min"]["verdict"] == rows["max"]["verdict"] == "reproduced"
    assert rows["max-low"]["verdict"] == "not reproduced"          # 12 is 71 % above 7
    assert rows["min-bound"]["verdict"] == "not reproduced"        # "at least 6": 5 < 6


def test_single_point_claim_selecting_several_points_is_an_error(tmp_path, sweep):
    claims = write_claims(tmp_path / "c.csv", [dict(id="x", value="1", point="x<=4")],
                          header=COLUMNS, metric="ss_goodput_mbps", args="flow = 1", experiment="e")
    proc = rscript(ANALYSIS / "claims.R", claims, sweep, tmp_path / "c.tex", check=False)
    assert proc.returncode != 0 and "selects 4 points" in proc.stderr
    assert not (tmp_path / "c.tex").exists()


def test_trend_claims(tmp_path):
    root = tmp_path / "t"
    for x, g in zip((10, 20, 50, 100), (30.0, 20.0, 12.0, 5.0)):      # falls monotonically
        constant_run(root, "falls", f"rtt={x}", 1, g)
    for x, g in zip((10, 20, 50, 100), (30.0, 10.0, 31.0, 20.0)):     # tau = 0, ends fall
        constant_run(root, "noisy", f"rtt={x}", 1, g)
    for x, g in zip((10, 20), (30.0, 20.0)):
        constant_run(root, "short", f"rtt={x}", 1, g)
    trend = dict(value="", kind="trend", op="<", point="*", by="rtt")
    rows = evaluate(tmp_path, root, [
        dict(id="falls", experiment="falls", **trend),
        dict(id="grows", experiment="falls", **{**trend, "op": ">"}),
        dict(id="noisy", experiment="noisy", **trend),
        dict(id="short", experiment="short", **trend),
    ])
    assert float(rows["falls"]["mean"]) == pytest.approx(-1.0)
    assert rows["falls"]["verdict"] == "reproduced"
    assert rows["grows"]["verdict"] == "not reproduced"
    # Kendall's tau of (30, 10, 31, 20) over x is 0: not a trend, though the last
    # point is below the first (the built-in direction holds)
    assert float(rows["noisy"]["mean"]) == pytest.approx(0.0)
    assert rows["noisy"]["verdict"] == "qualitatively reproduced"
    assert rows["short"]["verdict"] == "not run" and "needs >= 3 points" in rows["short"]["note"]


# ---- windows ----------------------------------------------------------------------

def test_claim_windows(tmp_path):
    """Flow 1: 10 Mbit/s until 40 s, then 50; both flows in ProbeRTT 40.0-40.2 s."""
    root = tmp_path / "w"
    flows = [synth.flow(1, "bbr", 10, 0, 60), synth.flow(2, "bbr", 50, 0, 60)]
    prt = lambda f, t: "probe_rtt" if 40.0 < t <= 40.2 else "probe_bw"  # noqa: E731
    synth.write_run(root, "e", "sync", 1, flows, state=prt,
                    rate=lambda f, t: (10.0 if t <= 40 else 50.0) if f["flow"] == 1 else 40.0)
    # here flow 2's ProbeRTT (50.0-50.2 s) never overlaps flow 1's (40.0-40.2 s)
    apart = lambda f, t: "probe_rtt" if (40.0 < t <= 40.2 if f["flow"] == 1 else 50.0 < t <= 50.2) else "probe_bw"  # noqa: E731
    synth.write_run(root, "e", "apart", 1, flows, state=apart,
                    rate=lambda f, t: (10.0 if t <= 40 else 50.0) if f["flow"] == 1 else 40.0)
    rows = evaluate(tmp_path, root, [
        dict(id="steady", value="50", point="sync"),
        dict(id="fixed", value="50", point="sync", window="40..60"),
        dict(id="sync", value="50", point="sync", window="probe_rtt_sync..end"),
        dict(id="no-sync", value="50", point="apart", window="probe_rtt_sync..end"),
        dict(id="beyond", value="50", point="sync", window="40..90"),
    ])
    # steady state 10-60 s: (30 s at 10 + 20 s at 50) / 50 s = 26 Mbit/s
    assert float(rows["steady"]["mean"]) == pytest.approx(26.0, rel=1e-3)
    assert rows["steady"]["verdict"] == "not reproduced"
    assert float(rows["fixed"]["mean"]) == pytest.approx(50.0, rel=1e-3)
    # the episode ends at the first sample after it (40.3 s): 40.3-60 s, all at 50
    assert float(rows["sync"]["mean"]) == pytest.approx(50.0, rel=1e-3)
    assert rows["sync"]["verdict"] == "reproduced"
    assert rows["no-sync"]["verdict"] == "not run" and "no probe_rtt_sync" in rows["no-sync"]["note"]
    assert rows["beyond"]["verdict"] == "not run" and "before the window's end" in rows["beyond"]["note"]


# ---- relative claims on unbounded quantities ------------------------------------------
# The rule (verdict.R header, "Match"): 15 % of the published number's distance from its
# scale's reference; a percentage change or reduction is tested in percentage points of
# the change, a ratio ("6.14x") on the ratio.

@pytest.mark.parametrize("ratio, relation, published, verdict", [
    # 64.5 % reduction +- 9.675 points: 54.8-74.2 %, i.e. ratios 0.258-0.452
    (0.42, "pct_reduction", "64.5", "reproduced"),        # 58 %
    (0.46, "pct_reduction", "64.5", "not reproduced"),    # 54 %
    # 55.2 % improvement +- 8.28 points: 46.9-63.5 %
    (1.50, "pct_change", "55.2", "reproduced"),
    (1.45, "pct_change", "55.2", "not reproduced"),
    # 6.14x +- 0.921: 5.22-7.06
    (5.3, "ratio", "6.14", "reproduced"),
    (5.2, "ratio", "6.14", "not reproduced"),
])
def test_relative_tolerance_on_the_stated_relation(tmp_path, ratio, relation, published, verdict):
    root = tmp_path / "r"
    constant_run(root, "e", "ref", 1, 20.0)
    constant_run(root, "e", "new", 1, 20.0 * ratio)
    row = evaluate(tmp_path, root, [dict(id="x", value=published, point="new", ref_point="ref",
                                         relation=relation)])["x"]
    assert row["verdict"] == verdict


# ---- bounded quantities: the cases the flat 15 % got wrong, at both ends -------------

def jain_two(g1: float, g2: float = 40.0) -> float:
    return (g1 + g2) ** 2 / (2 * (g1 ** 2 + g2 ** 2))


def rate_for_jain(j: float, g2: float = 40.0) -> float:
    """Flow 1's rate (below g2) that gives two flows Jain's index j."""
    a, b, c = 1 - 2 * j, 2 * g2, g2 ** 2 * (1 - 2 * j)
    return (-b + (b * b - 4 * a * c) ** 0.5) / (2 * a) if a else -c / b


def test_reduction_near_100_pct_can_match(tmp_path):
    """A 93.3 % reduction: the flat 15 % on the ratio 0.067 accepted only 92.3-94.3 %;
    in points of the change it accepts 79.3-100 %, so a 90 % reduction matches and an
    75 % one does not."""
    root = tmp_path / "r"
    constant_run(root, "e", "ref", 1, 20.0)
    constant_run(root, "e", "p90", 1, 2.0)
    constant_run(root, "e", "p75", 1, 5.0)
    rows = evaluate(tmp_path, root, [
        dict(id="p90", value="93.3", point="p90", ref_point="ref", relation="pct_reduction"),
        dict(id="p75", value="93.3", point="p75", ref_point="ref", relation="pct_reduction")])
    assert rows["p90"]["verdict"] == "reproduced"
    assert rows["p75"]["verdict"] == "not reproduced"
    assert float(rows["p90"]["accept_lo"]) == pytest.approx(93.3 - 0.15 * 93.3, abs=1e-6)


def test_similar_jain_indices_near_one_can_fail(tmp_path):
    """"similar" (ratio 1) of two Jain indices >= 0.95: the flat 15 % passed any pair;
    on the unfairness 1 - J the predicted index is the reference's (1.0), accepted to
    +- 0.005, so 0.957 fails and 0.9998 matches."""
    root = tmp_path / "j"
    constant_run(root, "e", "ref", 1, 40.0)                    # J = 1
    constant_run(root, "e", "far", 1, 26.0)                    # J = 0.957
    constant_run(root, "e", "near", 1, 39.0)                   # J = 0.9998
    assert jain_two(26.0) > 0.95
    rows = evaluate(tmp_path, root, [
        dict(id=p, value="1", unit="x", metric="ss_jain", args="", point=p, ref_point="ref")
        for p in ("far", "near")])
    assert rows["far"]["verdict"] == "not reproduced"
    assert rows["near"]["verdict"] == "reproduced"


def test_jain_index_tolerance_on_the_unfairness(tmp_path):
    """"around 0.84": 0.84 +- (0.15 * 0.16 + 0.005) = 0.811-0.869; the flat 15 % took
    0.71-0.97, so 0.92 passed; a 0.6 accepts 0.535-0.665."""
    root = tmp_path / "j"
    for name, j in (("j92", 0.92), ("j85", 0.85), ("j64", 0.64), ("j70", 0.70)):
        constant_run(root, "e", name, 1, rate_for_jain(j))
    rows = evaluate(tmp_path, root, [
        dict(id="j92", value="0.84", unit="index", metric="ss_jain", args="", point="j92"),
        dict(id="j85", value="0.84", unit="index", metric="ss_jain", args="", point="j85"),
        dict(id="j64", value="0.6", unit="index", metric="ss_jain", args="", point="j64"),
        dict(id="j70", value="0.6", unit="index", metric="ss_jain", args="", point="j70")])
    assert float(rows["j92"]["mean"]) == pytest.approx(0.92, abs=1e-3)
    assert rows["j92"]["verdict"] == "not reproduced"
    assert rows["j85"]["verdict"] == "reproduced"
    assert rows["j64"]["verdict"] == "reproduced"
    assert rows["j70"]["verdict"] == "not reproduced"


def test_change_of_a_jain_index_is_tested_on_the_index_it_predicts(tmp_path):
    """"improves by -2.2 %" against a reference index of 0.9 predicts 0.880, accepted to
    +- (0.15 * 0.12 + 0.005) = 0.857-0.903. The flat 15 % on the ratio took 0.748-1.01:
    0.80 passed."""
    root = tmp_path / "j"
    constant_run(root, "e", "ref", 1, rate_for_jain(0.9))
    constant_run(root, "e", "low", 1, rate_for_jain(0.80))
    constant_run(root, "e", "ok", 1, rate_for_jain(0.87))
    rows = evaluate(tmp_path, root, [
        dict(id=p, value="-2.2", unit="%", metric="ss_jain", args="", point=p, ref_point="ref",
             relation="pct_change") for p in ("low", "ok")])
    assert rows["low"]["verdict"] == "not reproduced"
    assert rows["ok"]["verdict"] == "reproduced"


def test_share_tolerance_from_the_nearer_end(tmp_path):
    """A share near 100 % is as precise as its complement near 0, and near an end the
    distance stops at the 10-point end zone: "95 %" accepts 95 +- (0.15 * 10 + 0.05) =
    93.45-96.55 (the flat 15 % took 80.75-109: any share above 81 % passed; without the
    end zone 94.2-95.8); "5 %" accepts 3.45-6.55."""
    root = tmp_path / "s"
    constant_run(root, "e", "s85", 1, 40.0 * 85 / 15)    # flow 1 share 85 %
    constant_run(root, "e", "s95", 1, 40.0 * 95 / 5)
    constant_run(root, "e", "s5", 1, 40.0 * 5 / 95)
    rows = evaluate(tmp_path, root, [
        dict(id=p, value=v, unit="%", metric="ss_share_pct", point=p)
        for p, v in (("s85", "95"), ("s95", "95"), ("s5", "5"))])
    assert rows["s85"]["verdict"] == "not reproduced"
    assert rows["s95"]["verdict"] == "reproduced"
    assert rows["s5"]["verdict"] == "reproduced"
    assert float(rows["s5"]["accept_hi"]) == pytest.approx(6.55, abs=1e-6)
    assert float(rows["s95"]["accept_lo"]) == pytest.approx(93.45, abs=1e-6)


def test_band_at_the_ends_and_for_times():
    """The band at a scale's end and for a time on the run's clock (match_band):
    a Jain index of 0.99 accepts 0.97-1.01 (the end zone 0.1: +- 0.02, not +- 0.0065);
    a 5 % change 2.75-7.25 (floor 15 points: +- 2.25, not +- 0.75); "64 s", one second
    after the other flow leaves at 63 s (rampup_s, clock = "run"), 63.35-64.65 (15 % of
    the 1 s since the event, plus half a printed second; 15 % of 64 s took 54.4-73.6);
    a ProbeRTT "at 42 s" 40-44 (15 % of the 10-s ProbeRTT interval it follows, + 0.5);
    and the bounds compared with a band's edge (bound_threshold)."""
    out = r_json(r'''
      claim <- function(...) { c <- modifyList(list(ref_point = "", relation = "", args = ""),
                                               list(...))
                               c$published <- as.numeric(c$value); c }
      run <- list(meta = list(flows = list(list(flow = 1, start_s = 0),
                                           list(flow = 2, start_s = 3, stop_s = 63)),
                              spec = list(duration_s = 80)))
      ramp <- claim(value = "64", metric = "rampup_s", args = 'flow = 1, clock = "run"')
      ramp_event <- claim(value = "1", metric = "rampup_s", args = 'flow = 1')
      probe <- claim(value = "42", metric = "probe_rtt_common_near_s", args = "at_s = 42")
      most30 <- claim(value = "30", metric = "ss_total_cwnd_pkts", kind = "bound", op = "<=",
                      ref_point = "x=1", relation = "pct_change", lexicon = "at-most")
      gain <- claim(value = "47.8", metric = "ss_jain", kind = "bound", op = ">=",
                    ref_point = "x=1", relation = "pct_change", lexicon = "at-least")
      more <- claim(value = "1", metric = "ss_goodput_mbps", kind = "bound", op = ">",
                    ref_point = "x=1", relation = "ratio", lexicon = "improves")
      less <- claim(value = "1", metric = "ss_jain", kind = "bound", op = "<",
                    ref_point = "x=1", relation = "ratio", lexicon = "improves")
      cat(jsonlite::toJSON(list(
        jain = match_band(claim(value = "0.99", metric = "ss_jain")),
        change = match_band(claim(value = "5", metric = "ss_total_cwnd_pkts", ref_point = "x=1",
                                  relation = "pct_change")),
        ramp = match_band(ramp, origin = clock_origin(ramp, list(run))),
        ramp_is_clock = clock_instant(ramp), event_is_clock = clock_instant(ramp_event),
        probe = match_band(probe, origin = clock_origin(probe, list(run))),
        share3 = match_band(claim(value = "3", metric = "ss_share_pct")),
        share3_of_10 = match_band(claim(value = "3", metric = "ss_share_pct"), n_flows = 10),
        most30 = bound_threshold(most30, match_band(most30)),
        gain_ok = bound_threshold(gain, match_band(gain, ref_mean = 0.6)),
        gain_capped = bound_threshold(gain, match_band(gain, ref_mean = 0.98)),
        more = bound_threshold(more, match_band(more)),
        less_jain = bound_threshold(less, match_band(less, ref_mean = 0.8))), digits = 10))
    ''')
    assert out["jain"] == pytest.approx([0.97, 1.01])
    assert out["change"] == pytest.approx([1.0275, 1.0725])
    assert out["ramp"] == pytest.approx([63.35, 64.65])
    assert out["ramp_is_clock"] == [True] and out["event_is_clock"] == [False]
    assert out["probe"] == pytest.approx([40.0, 44.0])
    # a share of 3 %: two flows' end zone is 10 points (+- 1.55); of ten flows 20 / 10 = 2 points,
    # below the share itself, so 15 % of 3 (+- 0.5)
    assert out["share3"] == pytest.approx([1.45, 4.55])
    assert out["share3_of_10"] == pytest.approx([2.5, 3.5])
    # bounds: "will not exceed 30 %" at the far edge of 30's band (34.5), as the exact "30 %"
    # accepts; "at least 47.8 %" on an index of 0.6 at the near edge of the index it predicts
    # (0.887 - 0.022); capped (0.98 * 1.478 > 1): the number as it stands; "more" beyond 1.15;
    # "smaller" on an index of 0.8 below (0.8 - 0.035) / 0.8
    assert out["most30"] == pytest.approx([34.5])
    assert out["gain_ok"] == pytest.approx([100 * ((0.6 * 1.478 - (0.15 * 0.1132 + 0.005)) / 0.6 - 1)])
    assert out["gain_capped"] == pytest.approx([47.8])
    assert out["more"] == pytest.approx([1.15])
    assert out["less_jain"] == pytest.approx([(0.8 - 0.035) / 0.8])


def test_min_duration_leaves_short_runs_not_run(tmp_path):
    """A whole-run average whose published number needs a longer run than the profile's
    (min_duration_s) is "not run", not "not reproduced"."""
    root = tmp_path / "d"
    constant_run(root, "e", "base", 1, 10.0)              # 30-s runs
    rows = evaluate(tmp_path, root, [
        dict(id="long", value="10", min_duration_s="60"),
        dict(id="short", value="10", min_duration_s="30")])
    assert rows["long"]["verdict"] == "not run"
    assert "needs runs of >= 60 s" in rows["long"]["note"]
    assert rows["short"]["verdict"] == "reproduced"
    # the counts the report's prose inputs, written beside the table
    counts = (tmp_path / "c_counts.tex").read_text()
    assert "Of the 2 claims: 1 reproduced, 0 qualitatively reproduced, 0 not reproduced, 1 not run" in counts


def test_relative_claim_over_sweep_points(tmp_path):
    """BBQ/BBR per rate: the reference point is the claim's point with arm=bbr."""
    root = tmp_path / "s"
    for rate, (bbr, bbq) in {10: (20.0, 30.0), 100: (10.0, 40.0), 400: (5.0, 4.0)}.items():
        constant_run(root, "e", f"arm=bbr__rate={rate}", 1, bbr)
        constant_run(root, "e", f"arm=bbq__rate={rate}", 1, bbq)
    better = "ss_goodput_mbps(flow = 1) > ref(ss_goodput_mbps(flow = 1))"
    rows = evaluate(tmp_path, root, [
        dict(id="all", value="1", kind="bound", op=">", point="arm=bbq", aggregate="all",
             ref_point="arm=bbr", relation="ratio", direction=better),
        dict(id="max", value="4", point="arm=bbq", aggregate="max", ref_point="arm=bbr",
             relation="ratio"),
    ])
    assert rows["all"]["verdict"] == "not reproduced" and rows["all"]["at"] == "arm=bbq__rate=400"
    assert rows["all"]["direction_points"] == "2/3"
    assert float(rows["max"]["mean"]) == pytest.approx(4.0) and rows["max"]["at"] == "arm=bbq__rate=100"
    # the points each claim reads, its references included (the added-repetitions rule marks them)
    assert rows["all"]["points_read"].split(";") == sorted(
        f"e/arm={arm}__rate={rate}" for arm in ("bbq", "bbr") for rate in (10, 100, 400))


# ---- intervals and strength ---------------------------------------------------------

def test_intervals_and_strength(tmp_path):
    root = tmp_path / "i"
    for rep, g in enumerate((50.0, 51.0, 49.0), 1):       # tight: 50 +- 2.48
        constant_run(root, "e", "tight", rep, g)
    for rep, g in enumerate((40.0, 60.0, 50.0), 1):       # wide: 50 +- 24.8
        constant_run(root, "e", "wide", rep, g)
    constant_run(root, "e", "single", 1, 50.0)
    rows = evaluate(tmp_path, root, [
        dict(id="tight", value="50", point="tight",
             direction="ss_goodput_mbps(flow = 1) > ss_goodput_mbps(flow = 2)"),
        dict(id="wide", value="50", point="wide"),
        dict(id="single", value="50", point="single"),
        dict(id="tight-off", value="80", point="tight"),
    ])
    t = rows["tight"]
    # sd 1, n 3: half-width qt(0.975, 2) / sqrt(3) = 4.303 / 1.732 = 2.484
    assert float(t["ci_lo"]) == pytest.approx(50 - 2.4841, abs=1e-3)
    assert float(t["ci_hi"]) == pytest.approx(50 + 2.4841, abs=1e-3)
    assert (t["verdict"], t["strength"]) == ("reproduced", "robust")
    # 50 +- 24.8 reaches outside 42.5-57.5: the same mean, but marginal
    assert (rows["wide"]["verdict"], rows["wide"]["strength"]) == ("reproduced", "marginal")
    assert (rows["single"]["verdict"], rows["single"]["strength"]) == ("reproduced", "marginal")
    assert rows["single"]["ci_lo"] == ""
    # 80 +- 15 % is 68-92: the whole interval is outside, so "not reproduced" is robust
    assert (rows["tight-off"]["verdict"], rows["tight-off"]["strength"]) == ("not reproduced", "robust")


def test_invalid_runs_are_left_out(tmp_path):
    root = tmp_path / "v"
    constant_run(root, "e", "p", 1, 50.0)
    constant_run(root, "e", "p", 2, 10.0, failed_check="guest_cpu")
    row = evaluate(tmp_path, root, [dict(id="x", value="50", point="p")])["x"]
    assert (row["n"], row["n_runs"], row["verdict"]) == ("1", "2", "reproduced")


def test_claims_compare_puts_two_run_sets_side_by_side(tmp_path, sweep):
    rows = [dict(id="all", value="10", kind="bound", op="<", point="x<=4", aggregate="all"),
            dict(id="max", value="12", point="x<=4", aggregate="max")]
    evaluate(tmp_path, sweep, rows)
    other = tmp_path / "other"
    other.mkdir()
    constant_run(tmp_path / "r2", "e", "x=1", 1, 5.0)
    claims = write_claims(other / "c.csv", rows, header=COLUMNS, metric="ss_goodput_mbps",
                          args="flow = 1", experiment="e")
    rscript(ANALYSIS / "claims.R", claims, tmp_path / "r2", other / "c.tex")
    out = tmp_path / "cmp.md"
    rscript(ANALYSIS / "claims_compare.R", out, f"A={tmp_path / 'c.csv'}", f"B={other / 'c.csv'}")
    lines = out.read_text().splitlines()
    assert len(lines) == 2 + 2 + 1
    assert lines[2].startswith("| all | all < 10") and "not reproduced" in lines[2]
    # B ran only x=1 (5 Mbit/s): "all < 10" holds there, and the max is 5, not 12
    assert lines[2].endswith("| reproduced (marginal) |")
    assert "5.00 (n=1, 1 pts)" in lines[3] and lines[3].endswith("| not reproduced (marginal) |")
    assert "1 reproduced, 0 qualitatively reproduced, 1 not reproduced, 0 not run" in lines[4]


def test_a_flow_that_never_ramps_up_is_not_reproduced_not_unrun(tmp_path):
    """rampup_s is Inf when the flow never reaches the link after the other leaves:
    the claim ran and failed, it is not 'not run'."""
    root = tmp_path / "ramp"
    flows = [synth.flow(1, "bbr", 10, 0, 20), synth.flow(2, "bbr", 50, 0, 30)]
    synth.write_run(root, "e", "p", 1, flows, rate=lambda f, t: 40.0)       # stays at 40 after 20 s
    row = evaluate(tmp_path, root, [dict(id="x", value="1.7", point="p", metric="rampup_s",
                                         args="flow = 2")])["x"]
    assert (row["verdict"], row["mean"]) == ("not reproduced", "Inf")
