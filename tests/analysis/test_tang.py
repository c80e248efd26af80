"""Tests of the Tang ("BBR Fairness Evaluation Using NS-3") analysis: the metrics added for it
to analysis/lib/metrics_tang.R (summed cwnd/inflight, ProbeRTT period, window and synchronisation,
gain phases, goodput share after ProbeRTT, cwnd variation, fair bins), claims/tang.csv and the
figure scripts analysis/figures/tang/*.R, on a synthetic run tree whose values are known by
construction (synth_ma2019.write_run, with the socket samples' cwnd, state and pacing gain set
per flow and time), a tree that contradicts the paper, and the specs of both profiles."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_ma2019 as synth  # noqa: E402
from test_r_analysis import (ANALYSIS, REPO, assert_paper_wired, paper_experiments, claims_all_reproduced,  # noqa: E402
                             evaluate_claims, expand_spec, r_json, render_figure, validate_specs)

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

FIG_DIR = ANALYSIS / "figures" / "tang"
SPEC_DIR = REPO / "mininet" / "specs" / "tang"
EXPERIMENTS = paper_experiments("tang")
LINK = 10.0

# Quick-profile durations (s); Table II's synthetic runs last the paper profile's 200 s, the
# only length in which its 1.09 Mbit/s average and "near capacity over the initial 20 seconds"
# can both hold.
DUR = {"tang_fig02": 40, "tang_table2": 200, "tang_fig03": 50, "tang_table3": 95, "tang_fig04": 40,
       "tang_fig05": 60, "tang_fig06": 60}

TABLE2 = {("bbr", "0_0001"): 9.12, ("bbr", "0_001"): 9.08, ("bbr", "0_01"): 1.09,
          ("cubic", "0_0001"): 9.22, ("cubic", "0_001"): 3.93, ("cubic", "0_01"): 0.92}
TABLE3 = {1: 342, 2: 360, 3: 395, 5: 415, 8: 444}
FIG05_BYTES = {0.8: 200000, 1.5: 375000, 3: 750000, 6: 1500000}
FIG05_SHARE = {0.8: 75.0, 1.5: 70.0}            # BBR's share (%, dominates: > 66.7); 3 BDP oscillates, 6 BDP decays
FIG05_RETRANS = {0.8: (400, 300), 1.5: (200, 200), 3: (100, 100), 6: (10, 50)}


def ms(t: float) -> int:
    return round(t * 1000)


def patch_run(run_dir: Path, cwnd=None, meta=None, inflight=None) -> None:
    """Set tcp.csv's cwnd_pkts to cwnd(flow, t) (and inflight_pkts to inflight(flow, t), when
    given) and merge `meta` into run.json's bottleneck."""
    if cwnd is not None:
        path = run_dir / "tidy" / "tcp.csv"
        with path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            r["cwnd_pkts"] = str(cwnd(int(r["flow"]), float(r["t_s"])))
            if inflight is not None:
                r["inflight_pkts"] = str(inflight(int(r["flow"]), float(r["t_s"])))
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    if meta:
        p = run_dir / "run.json"
        m = json.loads(p.read_text())
        m["bottleneck"].update(meta)
        p.write_text(json.dumps(m, indent=1))


def flows(ccs, rtt, dur, labels=None):
    return [synth.flow(i + 1, cc, rtt, 0, dur, (labels or [None] * len(ccs))[i] or cc.upper())
            for i, cc in enumerate(ccs)]


def bbr_state(period, offset=0.0, length=0.3, first=1.0, only=None):
    """ProbeRTT for `length` s every `period` s (from `first` + offset); other samples probe_bw;
    flows whose cc is not bbr (or not in `only`) have no state."""
    def state(f, t):
        if f["cc"] != "bbr" or (only is not None and f["flow"] not in only):
            return ""
        k = ms(t - offset)
        return "probe_rtt" if t > first + offset and 0 < k % ms(period) <= ms(length) else "probe_bw"
    return state


def write_tree(root: Path, contradict: bool = False) -> None:
    # ---- Fig. 2: BBR 9.12 / CUBIC 9.31 Mbit/s; BBR: 5 ms of queue, ProbeRTT every 10 s at 4
    # packets, a 1.25 phase every 10/6 s; CUBIC: 220 ms of queue.
    d = DUR["tang_fig02"]
    cycle = 1667                                   # ms: six 8-RTT cycles per 10 s
    for cc, mbps, q in (("bbr", 9.12, 5.0), ("cubic", 9.31, 220.0)):
        if contradict and cc == "bbr":
            mbps, q = 7.0, 250.0
        state = bbr_state(10.0) if not (contradict and cc == "bbr") else (lambda f, t: "probe_bw")
        gain = lambda f, t: 1.25 if (ms(t) % cycle) < 150 else (0.75 if (ms(t) % cycle) < 350 else 1.0)  # noqa: E731
        run = synth.write_run(root, "tang_fig02", f"f1_cc={cc}", 1, flows([cc], 200, d, ["single flow"]),
                              link_mbps=LINK, rate=lambda f, t, m=mbps: m, qdelay=lambda t, q=q: q,
                              state=state, gain=gain, link_util=0.95 if cc == "bbr" else 0.97)
        patch_run(run, cwnd=lambda f, t, s=state, c=cc: 4 if s({"cc": c, "flow": f}, t) == "probe_rtt" else 336)
    # ---- Table II: constant rates, except BBR at 1 %: 9 Mbit/s for 20 s, then what makes 1.09 on average.
    d = DUR["tang_table2"]
    for (cc, loss), v in TABLE2.items():
        if contradict and cc == "cubic":
            v = 9.2                                             # CUBIC unaffected by loss
        if cc == "bbr" and loss == "0_01" and not contradict:
            late = (v * d - 9.0 * 20) / (d - 20)
            rate = lambda f, t, late=late: 9.0 if t <= 20 else late  # noqa: E731
        else:
            rate = lambda f, t, v=v: v  # noqa: E731
        run = synth.write_run(root, "tang_table2", f"f1_cc={cc}__loss_rate={loss}", 1,
                              flows([cc], 200, d, ["single flow"]), link_mbps=LINK, rate=rate)
        patch_run(run, meta={"loss_rate": float(loss.replace("_", "."))})
    # ---- Fig. 3: two BBR flows, 4.75 Mbit/s each, ProbeRTT together every 10.5 s (at 42.1 s).
    d = DUR["tang_fig03"]
    for rtt in (200, 20):
        state = bbr_state(10.5)
        rate = lambda f, t: 4.75  # noqa: E731
        if contradict:
            s1, s2 = bbr_state(10.5, only={1}), bbr_state(10.5, offset=5.0, only={2})
            state = lambda f, t, s1=s1, s2=s2: s1(f, t) if f["flow"] == 1 else s2(f, t)  # noqa: E731
            rate = lambda f, t: 8.0 if f["flow"] == 1 else 1.5  # noqa: E731
        synth.write_run(root, "tang_fig03", f"f1_rtt_ms={rtt}__f2_rtt_ms={rtt}__f2_start_s=0", 1,
                        flows(["bbr", "bbr"], rtt, d, ["flow 0", "flow 1"]), link_mbps=LINK,
                        rate=rate, state=state)
    # ---- Table III: the flows' cwnds sum to the published totals (every sample).
    d = DUR["tang_table3"]
    for n, total in TABLE3.items():
        if contradict:
            total = {1: 342, 2: 300, 3: 250, 5: 200, 8: 150}[n]
        per = [total // n + (1 if k < total % n else 0) for k in range(n)]
        run = synth.write_run(root, "tang_table3", f"f1_count={n}", 1, flows(["bbr"] * n, 200, d, ["BBR"] * n),
                              link_mbps=LINK, rate=lambda f, t, n=n: 9.5 / n)
        patch_run(run, cwnd=lambda f, t, per=per: per[f - 1])
    # ---- Fig. 4: one flow (10 ms of queue, cwnd 342) vs three (50 ms, summed cwnd 395): RTT 250
    # against 210 ms, 1.19x, an increase beyond the 15 % band a comparison needs.
    d = DUR["tang_fig04"]
    for n, q, total in ((1, 10.0, 342), (3, 50.0, 395)):
        if contradict and n == 3:
            q, total = 5.0, 300
        per = [total // n + (1 if k < total % n else 0) for k in range(n)]
        run = synth.write_run(root, "tang_fig04", f"f1_count={n}", 1, flows(["bbr"] * n, 200, d, ["BBR"] * n),
                              link_mbps=LINK, rate=lambda f, t, n=n: 9.5 / n, qdelay=lambda t, q=q: q)
        patch_run(run, cwnd=lambda f, t, per=per: per[f - 1])
    # ---- Fig. 5: BBR (flow 1) vs CUBIC (flow 2), 200-ms RTT.
    d = DUR["tang_fig05"]
    for bdp, nbytes in FIG05_BYTES.items():
        state, gain, qdelay = (lambda f, t: "probe_bw" if f["cc"] == "bbr" else ""), (lambda f, t: 1.0), (lambda t: 100.0)
        if bdp in FIG05_SHARE:
            share = FIG05_SHARE[bdp] if not contradict else 30.0
            rate = lambda f, t, s=share: 9.5 * (s if f["flow"] == 1 else 100 - s) / 100  # noqa: E731
        elif bdp == 3:
            # BBR high (7) for 5 s, then low (2.5) for 5 s after its ProbeRTT at t mod 10 = 5;
            # a 1.25 phase every 1.6 s over which the queue rises.
            def rate(f, t):
                high = (ms(t) % 10000) < 5000
                return (7.0 if high else 2.5) if f["flow"] == 1 else (2.5 if high else 7.0)
            state = bbr_state(10.0, offset=5.0, first=0.0)
            gain = lambda f, t: 1.25 if ms(t) % 1600 < 200 else 1.0  # noqa: E731
            qdelay = lambda t: 100.0 + 50.0 * (ms(t) % 1600) / 1000  # noqa: E731
            if contradict:
                rate = lambda f, t: 4.75  # noqa: E731
        else:
            # BBR decays from 4 to 0.5 Mbit/s over 30 s and stays there; CUBIC takes the rest.
            def rate(f, t):
                bbr = max(0.5, 4.0 * (1 - t / 30))
                return bbr if f["flow"] == 1 else 9.5 - bbr
            if contradict:
                rate = lambda f, t: 8.0 if f["flow"] == 1 else 1.5  # noqa: E731
        r1, r2 = FIG05_RETRANS[bdp]
        run = synth.write_run(root, "tang_fig05", f"f1_rtt_ms=200__f2_rtt_ms=200__buffer_bytes={nbytes}", 1,
                              flows(["bbr", "cubic"], 200, d), link_mbps=LINK, rate=rate, state=state,
                              gain=gain, qdelay=qdelay, retrans={1: r1, 2: r2})
        patch_run(run, meta={"buffer_bytes": nbytes})
    # ---- Fig. 6: 20-ms RTT; BBR's ProbeRTT every 10 s, CUBIC gets 8 of 9.5 Mbit/s for 2 s after it.
    d = DUR["tang_fig06"]
    state = bbr_state(10.0, length=0.2, first=0.0)
    low = lambda t: 0 < ms(t) % 10000 <= 2000  # noqa: E731
    if contradict:
        rate, state = (lambda f, t: 4.75), (lambda f, t: "probe_bw" if f["cc"] == "bbr" else "")
        cwnd = lambda f, t: 20  # noqa: E731
    else:
        rate = lambda f, t: (1.5 if low(t) else 8.0) if f["flow"] == 1 else (8.0 if low(t) else 1.5)  # noqa: E731
        cwnd = lambda f, t: (4 if state({"cc": "bbr", "flow": 1}, t) == "probe_rtt" else 10 if low(t) else 40) if f == 1 else 30  # noqa: E731
    run = synth.write_run(root, "tang_fig06", "buffer_bdp=1_5", 1, flows(["bbr", "cubic"], 20, d), link_mbps=LINK,
                          rate=rate, state=state)
    patch_run(run, cwnd=cwnd, meta={"buffer_bytes": 37500})


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tang")
    write_tree(root)
    return root


def run_dir(tree: Path, experiment: str, point: str) -> Path:
    return tree / "runs" / experiment / point / "rep1"


def test_tang_metrics(tree):
    got = r_json(f"""
      f2 <- read_run("{run_dir(tree, "tang_fig02", "f1_cc=bbr")}")
      t3 <- read_run("{run_dir(tree, "tang_table3", "f1_count=3")}")
      g3 <- read_run("{run_dir(tree, "tang_fig03", "f1_rtt_ms=20__f2_rtt_ms=20__f2_start_s=0")}")
      f5 <- read_run("{run_dir(tree, "tang_fig05", "f1_rtt_ms=200__f2_rtt_ms=200__buffer_bytes=750000")}")
      f6 <- read_run("{run_dir(tree, "tang_fig06", "buffer_bdp=1_5")}")
      cat(jsonlite::toJSON(list(
        cwnd3 = ss_total_cwnd_pkts(t3, window = c(start = 85, end = 95)),
        period = probe_rtt_period_s(f2, flow = 1), pcwnd = probe_rtt_min_cwnd_pkts(f2, flow = 1),
        phases = gain_phase_rate(f2, flow = 1, gain = 1.25, per_s = 10),
        sync = probe_rtt_sync_pct(g3), near = probe_rtt_common_near_s(g3, at_s = 42),
        after5 = probe_rtt_after_share_pct(f5, flow = 2, during = 1, span_s = 2),
        after6 = probe_rtt_after_share_pct(f6, flow = 2, during = 1, span_s = 1),
        cv6 = ss_cwnd_cv_pct(f6, flow = 1), fair6 = fair_bins_pct(f6),
        fair_even = fair_bins_pct(t3)), auto_unbox = TRUE, digits = NA))
    """)
    assert got["cwnd3"] == 395
    # ProbeRTT from 10.1, 20.1, 30.1 s (samples every 0.1 s), at cwnd 4
    assert got["period"] == pytest.approx(10.0, abs=1e-6)
    assert got["pcwnd"] == 4
    # a 1.25 phase from every multiple of 1.667 s: 18 start in the steady state 10-40 s
    assert got["phases"] == pytest.approx(6.0, rel=1e-9)
    assert got["sync"] == 100
    assert got["near"] == pytest.approx(42.1, abs=1e-6)
    assert got["after5"] == pytest.approx(100 * 7 / 9.5, rel=1e-6)
    assert got["after6"] == pytest.approx(100 * 8 / 9.5, rel=1e-6)
    assert got["cv6"] > 20
    assert got["fair6"] == 0
    assert got["fair_even"] == 100


def test_total_cwnd_sums_latest_samples(tmp_path):
    """Two flows sampled at different instants: the sum takes each flow's latest sample, a flow
    before its first sample adds 0, and the median is over the union of sample times."""
    fl = [synth.flow(1, "bbr", 200, 0, 20, "a"), synth.flow(2, "bbr", 200, 5, 20, "b")]
    run = synth.write_run(tmp_path, "tang_table3", "f1_count=2", 1, fl, link_mbps=LINK, rate=lambda f, t: 4.0)
    patch_run(run, cwnd=lambda f, t: 100 if f == 1 else 50, inflight=lambda f, t: 80 if f == 1 else 30)
    got = r_json(f"""
      r <- read_run("{run}")
      cat(jsonlite::toJSON(list(early = ss_total_cwnd_pkts(r, window = c(start = 1, end = 4)),
                                late = ss_total_cwnd_pkts(r, window = c(start = 10, end = 20)),
                                infl = ss_total_inflight_pkts(r, window = c(start = 10, end = 20))),
                           auto_unbox = TRUE, digits = NA))
    """)
    assert got["early"] == 100
    assert got["late"] == 150
    assert got["infl"] == 110                       # the in-flight column, summed the same way


def test_flow_sums_with_single_samples_and_probe_rtt_without_a_common_episode():
    """A flow with one sample counts from it on; flows whose ProbeRTTs never overlap are never
    synchronised and have no common ProbeRTT."""
    got = r_json("""
      r <- list(tcp = tibble(flow = c(1L, 2L, 2L), t_s = c(1, 0.5, 1.5), cwnd_pkts = c(10, 5, 7)))
      st <- tibble(flow = rep(1:2, each = 40), t_s = rep(seq(0.1, 4, by = 0.1), 2))
      st$state <- ifelse(st$flow == 1 & st$t_s > 1 & st$t_s <= 1.3, "probe_rtt",
                         ifelse(st$flow == 2 & st$t_s > 2 & st$t_s <= 2.3, "probe_rtt", "probe_bw"))
      st$cwnd_pkts <- ifelse(st$state == "probe_rtt", 4, 100)
      meta <- list(flows = list(list(flow = 1, cc = "bbr", rtt_ms = 20), list(flow = 2, cc = "bbr", rtt_ms = 20)),
                   spec = list(duration_s = 4))
      u <- list(tcp = st, meta = meta, goodput = tibble())
      cat(jsonlite::toJSON(list(sums = flows_sum_series(r, "cwnd_pkts", c(start = 0, end = 2)),
                                sync = probe_rtt_sync_pct(u, window = c(start = 0, end = 4)),
                                near = probe_rtt_common_near_s(u, at_s = 2),
                                pcwnd = probe_rtt_min_cwnd_pkts(u, flow = 2)), auto_unbox = TRUE, digits = NA))
    """)
    assert got["sums"] == [5, 15, 17]
    assert got["sync"] == 0
    assert got["near"] in ("NA", None)
    assert got["pcwnd"] == 4


def test_claims_file_tang(tree, tmp_path):
    """Every claim parses and evaluates; on the synthetic tree (built to match the paper's
    statements) each is reproduced, with the values the construction gives."""
    rows = claims_all_reproduced("tang", tree, tmp_path, expected={
        # Table III's own numbers disagree: 395 / 342 packets is +15.5 %, printed as 0.10;
        # the tree is built from the packets, and +15.5 is outside 10 +- 1.5 points
        "tang-table3-increase-3": "not reproduced",
        # "a slight overestimate" read as within the 15 % band: the paper's 3 flows give 1.155
        "tang-fig04-cwnd": "qualitatively reproduced",
        # the 100- and 20-ms RTT points of Fig. 5 run in the paper profile only; the tree is the quick one
        "tang-fig05-3-fair-20": "not run", "tang-fig05-3-fair-20b": "not run",
        **{f"tang-fig05-{c}-{rtt}": "not run" for rtt in (100, 20) for c in (
            "6-cubic", "6-takeover", "6-bbr-falls", "3-oscillate", "3-elusive", "3-probe", "3-probertt",
            "small-bbr", "share-trend", "retrans-bbr", "retrans-cubic")},
        "tang-fig05-3-fair-100": "not run"})
    val = lambda cid: float(rows[cid]["mean"])  # noqa: E731
    assert val("tang-fig02-bbr-avg") == pytest.approx(9.12, rel=1e-4)
    assert val("tang-fig02-cubic-higher") == pytest.approx(9.31 / 9.12, rel=1e-4)
    assert val("tang-table2-bbr-1e-2") == pytest.approx(1.09, rel=1e-4)
    assert val("tang-table2-bbr-early") == pytest.approx(90.0, rel=1e-4)
    for n, v in TABLE3.items():
        assert val(f"tang-table3-cwnd-{n}") == v
        if n > 1:   # "increase 0" of one flow against itself is not a claim (claims/README.md)
            assert val(f"tang-table3-increase-{n}") == pytest.approx(100 * (v / 342 - 1), rel=1e-6)
    assert val("tang-table3-max-30") == pytest.approx(100 * (444 / 342 - 1), rel=1e-6)
    assert val("tang-fig03-probertt-42") == pytest.approx(42.1, abs=1e-6)
    assert val("tang-fig05-3-fair") == pytest.approx(1.0, rel=1e-4)   # Jain: an even split
    assert val("tang-fig06-bbr-takes-over") == pytest.approx(100 * (2 * 1.5 + 8 * 8) / 95, abs=0.5)


def test_claims_fail_when_the_runs_say_otherwise(tmp_path):
    """BBR with a deep queue and no ProbeRTT, CUBIC untouched by loss, unsynchronised unfair BBR
    pairs, a total cwnd that shrinks with more flows, CUBIC losing at 6 BDP, steady fair sharing
    at 20 ms: those claims are not reproduced (or not run, where the metric has nothing to
    measure); the untouched ones still are."""
    root = tmp_path / "t"
    write_tree(root, contradict=True)
    rows = evaluate_claims("tang", root, tmp_path)
    for cid in ("tang-fig02-bbr-avg", "tang-fig02-bbr-noqueue", "tang-fig02-bbr-rtt", "tang-fig02-lower-queue",
                "tang-table2-cubic-1e-3", "tang-table2-cubic-degrades-1", "tang-table2-bbr-tolerant",
                "tang-table2-bbr-early", "tang-fig03-fair", "tang-fig03-sync", "tang-table3-cwnd-8",
                "tang-table3-grows", "tang-fig04-queue", "tang-fig04-cwnd", "tang-fig05-6-cubic",
                "tang-fig05-small-bbr", "tang-fig05-share-trend", "tang-fig05-3-oscillate",
                "tang-fig06-cyclic", "tang-fig06-bbr-takes-over", "tang-fig06-rare-fairness",
                "tang-fig06-cwnd-fluctuates"):
        assert rows[cid]["verdict"] == "not reproduced", (cid, rows[cid]["mean"], rows[cid]["verdict"])
    for cid in ("tang-fig02-probertt-period", "tang-fig06-cubic-regains"):
        assert rows[cid]["verdict"] == "not run", (cid, rows[cid]["verdict"])
    for cid in ("tang-fig02-cubic-avg", "tang-table2-bbr-1e-4", "tang-table3-cwnd-1", "tang-fig05-retrans-bbr"):
        assert rows[cid]["verdict"] == "reproduced", (cid, rows[cid]["mean"])


def test_claims_not_run_without_runs(tmp_path):
    rows = evaluate_claims("tang", tmp_path / "empty", tmp_path)
    assert {v["verdict"] for v in rows.values()} == {"not run"}


FIGURES = sorted(p.stem for p in FIG_DIR.glob("tang_*.R"))


def test_every_experiment_has_a_figure_script():
    assert set(FIGURES) == set(EXPERIMENTS)
    assert set(EXPERIMENTS) == {"tang_fig02", "tang_table2", "tang_fig03", "tang_table3", "tang_fig04",
                                "tang_fig05", "tang_fig06"}


@pytest.mark.parametrize("figure", FIGURES)
def test_figure_scripts(tree, tmp_path, figure):
    render_figure(FIG_DIR / f"{figure}.R", tree / "runs" / figure, tmp_path / "fig" / f"{figure}.pdf", 10)


def test_specs_validate():
    validate_specs(SPEC_DIR)


def load_runs(experiment: str, profile: str) -> list:
    return expand_spec(SPEC_DIR / f"{experiment}.yaml", profile)


def test_paper_profile_has_three_repetitions_and_the_papers_lengths():
    """Paper profile: at least three repetitions of every point, at least 100 s (the paper's
    events at 42 and 90 s; Table II 200 s); quick: one repetition; the default configuration
    of Table I everywhere (10 Mbit/s, 100 Mbit/s leaves, no loss outside Table II)."""
    for e in EXPERIMENTS:
        paper = load_runs(e, "paper")
        assert min(r["duration_s"] for r in paper) >= (200 if e == "tang_table2" else 100), e
        reps = {}
        for r in paper:
            reps[r["point"]] = max(reps.get(r["point"], 0), r["repetition"])
        assert min(reps.values()) >= 3, e
        quick = load_runs(e, "quick")
        assert max(r["repetition"] for r in quick) == 1, e
        for r in paper + quick:
            assert r["bottleneck"]["rate_mbps"] == 10, e
            assert all(f["access_rate_mbps"] == 100 for f in r["flows"]), e
            assert (r["bottleneck"].get("loss_rate", 0) > 0) == (e == "tang_table2"), e


def test_quick_profile_budget():
    """The quick profile's runs, at 0.8 host CPU-s per simulated second plus 15 s of boot and
    set-up each, fit about 12 minutes of two cores (1440 CPU-s)."""
    runs = [r for e in EXPERIMENTS for r in load_runs(e, "quick")]
    cost = sum(15 + 0.8 * r["duration_s"] for r in runs)
    assert cost <= 1440, (len(runs), cost)


def test_default_configuration():
    """200-ms RTT (100 ms one way) and a 1.5-BDP buffer of it: 375 kB; 20-ms RTT: 37.5 kB."""
    fig02 = load_runs("tang_fig02", "quick")[0]
    assert fig02["flows"][0]["rtt_ms"] == 200
    assert fig02["bottleneck"]["buffer_bytes_resolved"] == 375000
    fig06 = load_runs("tang_fig06", "quick")[0]
    assert fig06["bottleneck"]["buffer_bytes_resolved"] == 37500




def test_tang_experiments_are_wired():
    assert_paper_wired("tang", "003_281891140eb3522b.txt")

