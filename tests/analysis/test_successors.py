"""The report part on BBR's successors (analysis/figures/successors/): its figure scripts on
synthetic run trees whose values are known exactly, the values files the report's prose reads
(<out>_values.tex), and the wording rule that turns those values into the findings' words.

Trees come from synth_runs.write_run (piecewise-constant goodput, 100 Mbit/s); a run's
bottleneck buffer and its flows' delivered bytes are set afterwards where a script reads them.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_runs  # noqa: E402
from test_r_analysis import ANALYSIS, render_figure, rscript  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

FIG_DIR = ANALYSIS / "figures" / "successors"


def values_of(pdf: Path) -> dict[str, str]:
    """{key: text} of the values file a successors figure script wrote beside its PDF."""
    text = pdf.with_name(pdf.stem + "_values.tex").read_text()
    return dict(re.findall(r"\\csname succv@([a-z0-9-]+)\\endcsname\{([^}]*)\}", text))


def two_flow_run(root: Path, experiment: str, point: str, ccs: tuple[str, str], rtts: tuple[float, float],
                 rates: tuple[float, float], starts=(0.0, 0.0), stop_s: float = 40.0, repetition: int = 1,
                 buffer_bytes: int | None = None) -> Path:
    """A run of two flows at constant goodput `rates` from 1 s after the later start."""
    flows = [{"flow": i + 1, "cc": ccs[i], "rtt_ms": rtts[i], "start_s": starts[i], "stop_s": stop_s,
              "label": f"flow {i + 1}"} for i in range(2)]
    phases = {i + 1: [(max(starts) + 1.0, 50.0), (stop_s, rates[i])] for i in range(2)}
    run = synth_runs.write_run(root / experiment / point / f"rep{repetition}", experiment=experiment,
                               point=point, repetition=repetition, flows=flows, phases=phases,
                               qdelay_phases=[(stop_s, 5.0)], retrans={1: 10, 2: 10})
    if buffer_bytes is not None:
        meta = json.loads((run / "run.json").read_text())
        meta["bottleneck"]["buffer_bytes"] = buffer_bytes
        (run / "run.json").write_text(json.dumps(meta))
    return run


def test_wording_rule_at_its_edges():
    """Distance from an even split: removes at <= 10 points, reduces / worsens at 10 points
    below / above BBR's, otherwise does not reduce."""
    code = (f'source("{ANALYSIS / "lib" / "figure.R"}", chdir = TRUE); '
            f'source("{FIG_DIR / "common.R"}"); '
            'cat(succ_unfairness_words(c(10, 10.1, 30, 30.1, 45, 50, NA), c(45, 45, 40, 40, 40, 40, 40)), sep = "|")')
    out = rscript("-e", code).stdout.strip().split("|")
    assert out == ["removes", "reduces", "reduces", "does not reduce", "does not reduce", "worsens", "--"]


def test_ma_fig01_values_and_words(tmp_path):
    """BBR 6.3 / 87.3 (Ma et al.'s numbers), BBRv2 40 / 55, BBRv3 20 / 75 Mbit/s (10-ms / 50-ms flow)."""
    runs = tmp_path / "runs"
    for cc, short, long in (("bbr", 6.3, 87.3), ("bbr2", 40.0, 55.0), ("bbr3", 20.0, 75.0)):
        two_flow_run(runs, "successors_ma_fig01", f"f1_cc={cc}__f2_cc={cc}", (cc, cc), (10.0, 50.0),
                     (short, long), starts=(0.0, 5.0), stop_s=60.0)
    pdf = render_figure(FIG_DIR / "successors_ma_fig01.R", runs, tmp_path / "gen" / "successors_ma_fig01.pdf", 10)
    v = values_of(pdf)
    assert (v["ma01-bbr-short"], v["ma01-bbr-long"], v["ma01-bbr-share"]) == ("6.3", "87.3", "6.7")
    assert v["ma01-bbrv2-share"] == "42.1" and v["ma01-bbrv3-share"] == "21.1"
    assert (v["ma01-bbr-n"], v["ma01-bbrv2-n"], v["ma01-bbrv3-n"]) == ("1", "1", "1")
    # BBRv2 within 10 points of even; BBRv3 28.9 points off, BBR 43.3: reduced by more than 10
    assert v["ma01-bbrv2-words"] == "removes" and v["ma01-bbrv3-words"] == "reduces"


def test_nsperf_coexist_range_over_buffers(tmp_path):
    """The BBR-type flow (flow 2) at 0.1, 1 and 16 BDP (30-ms RTT, 100 Mbit/s: 1 BDP = 375 kB):
    BBR 45 / 30 / 10, BBRv2 25 / 22 / 20, BBRv3 30 / 20 / 10 Mbit/s."""
    runs = tmp_path / "runs"
    series = {"bbr": (45, 30, 10), "bbr2": (25, 22, 20), "bbr3": (30, 20, 10)}
    for cc, rates in series.items():
        for bdp, rate in zip((0.1, 1, 16), rates):
            two_flow_run(runs, "successors_nsperf_coexist", f"f2_cc={cc}__buffer_bdp={bdp}", ("cubic", cc),
                         (30.0, 30.0), (50.0 - rate, float(rate)), starts=(0.0, 2.0), stop_s=60.0,
                         buffer_bytes=round(375000 * bdp))
    pdf = render_figure(FIG_DIR / "successors_nsperf_coexist.R", runs, tmp_path / "gen" / "successors_nsperf_coexist.pdf", 10)
    v = values_of(pdf)
    assert (v["co-bbr-b01"], v["co-bbr-b1"], v["co-bbr-b16"]) == ("45.0", "30.0", "10.0")
    assert (v["co-bbr-range"], v["co-bbrv2-range"], v["co-bbrv3-range"]) == ("35.0", "5.0", "20.0")
    assert v["co-bbrv2-rangeratio"] == "0.14" and v["co-bbrv2-rangewords"] == "far less"
    assert v["co-bbrv3-rangeratio"] == "0.57" and v["co-bbrv3-rangewords"] == "less"
    assert v["co-bufs"] == "0.1, 1, 16"


def set_delivered(run: Path, segments: int) -> None:
    """Every flow of the run has delivered `segments` full segments by its last sample."""
    path = run / "tidy" / "tcp.csv"
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    col = header.index("bytes_acked")
    for r in body:
        r[col] = str(segments * int(r[header.index("mss_bytes")]))
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([header] + body)


def test_nsperf_shallow_retransmit_rate(tmp_path):
    """Two flows, each 900 segments delivered: BBR 100 retransmissions each (10 % of those
    sent), BBRv2 10 each (1.10 %), BBRv3 40 each (4.26 %)."""
    runs = tmp_path / "runs"
    for cc, retx in (("bbr", 100), ("bbr2", 10), ("bbr3", 40)):
        flows = [{"flow": i, "cc": cc, "rtt_ms": 100.0, "start_s": 0.0, "stop_s": 30.0, "label": "flows"}
                 for i in (1, 2)]
        run = synth_runs.write_run(runs / "successors_nsperf_shallow" / f"f1_cc={cc}__f1_count=2" / "rep1",
                                   experiment="successors_nsperf_shallow", point=f"f1_cc={cc}__f1_count=2",
                                   repetition=1, flows=flows, phases={1: [(30.0, 45.0)], 2: [(30.0, 45.0)]},
                                   qdelay_phases=[(30.0, 1.0)], retrans={1: retx - 7, 2: retx - 7})
        set_delivered(run, 900)
    pdf = render_figure(FIG_DIR / "successors_nsperf_shallow.R", runs, tmp_path / "gen" / "successors_nsperf_shallow.pdf", 10)
    v = values_of(pdf)
    # 2 MB buffer of the synthetic runs, 100 Mbit/s x 100 ms: 1.6 BDP -> key b16
    assert v["sh-bbr-b16-n2-retx"] == "10.00" and v["sh-bbrv2-b16-n2-retx"] == "1.10"
    assert v["sh-bbrv3-b16-n2-retx"] == "4.26"
    assert v["sh-bbrv2-b16-n2-ratio"] == "0.11" and v["sh-bbrv2-b16-n2-words"] == "far below"
    assert v["sh-bbrv3-b16-n2-ratio"] == "0.43" and v["sh-bbrv3-b16-n2-words"] == "below"
    assert v["sh-bbr-b16-n2-util"] == "90.00"


# ---- the specs: the seeds' setups with the congestion control swept, and the quick budget ----

sys.path.insert(0, str(ANALYSIS.parent / "mininet"))
from bbrlab.experiment import experiments as bbrexperiments  # noqa: E402
from bbrlab.experiment import spec as bbrspec  # noqa: E402

REPO = ANALYSIS.parent
SUCCESSORS = [e for e in bbrexperiments.load(REPO)[0].values() if e.name.startswith("successors_")]
# Each rerun of a paper's experiment and the seed spec it copies (the seed's points it covers).
SEEDS = {"successors_ma_fig01": "ma2019_fig01", "successors_ma_fig05": "ma2019_fig05",
         "successors_tang_fig05": "tang_fig05", "successors_utsumi_fig06": "utsumi2022_fig06_10"}
# What a run may differ in from the seed's run of the same setup: its identity (name, paper, figure,
# point, repetition), labels, its key,
# and the congestion control of the BBR-type flows.
IDENTITY = {"name", "paper", "items", "point", "point_label", "description", "run_key", "sweep_values", "repetitions",
            "repetition", "seed"}


def runs(experiment: str, profile: str) -> list[dict]:
    exps, _ = bbrexperiments.load(REPO)
    return bbrspec.expand(bbrspec.load(REPO / exps[experiment].spec, profile=profile))


def setup_of(job: dict) -> str:
    """The run without its identity and with every BBR-type flow's cc written as "bbr"."""
    flows = [dict(f, cc="bbr" if f["cc"] in ("bbr2", "bbr3") else f["cc"], label="") for f in job["flows"]]
    return json.dumps({k: v for k, v in dict(job, flows=flows).items() if k not in IDENTITY}, sort_keys=True)


def test_the_part_is_wired_without_a_paper():
    """Six experiments, no paper key (no claims, not in the summary), one report part."""
    assert sorted(e.name for e in SUCCESSORS) == sorted(
        [*SEEDS, "successors_nsperf_shallow", "successors_nsperf_coexist"])
    for e in SUCCESSORS:
        assert e.paper == "" and e.items == () and set(e.profiles) == {"quick", "paper"}
        assert e.section == "paper/sections/successors.tex" and e.figure.startswith("analysis/figures/successors/")


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_every_experiment_runs_bbr_bbrv2_and_bbrv3_on_the_same_setups(profile):
    for e in SUCCESSORS:
        by_setup: dict[str, set] = {}
        for job in runs(e.name, profile):
            ccs = {f["cc"] for f in job["flows"]} - {"cubic"}
            if not ccs:         # CUBIC alone (nsperf's reference)
                continue
            by_setup.setdefault(setup_of(job), set()).add(tuple(sorted(ccs)))
        for setup, ccs in by_setup.items():
            assert {("bbr",), ("bbr2",), ("bbr3",)} <= ccs, (e.name, ccs)


def test_the_papers_setups_are_the_seed_specs():
    """A successors rerun's BBR runs are the seed spec's runs (same resolved setup, paper
    profile's length) on the seed's points it covers; BBRv2 / BBRv3 only change the cc."""
    for mine, seed in SEEDS.items():
        ours = {setup_of(j) for j in runs(mine, "paper")}
        theirs = {setup_of(j) for j in runs(seed, "paper") if all(f["cc"] in ("bbr", "cubic") for f in j["flows"])}
        assert ours <= theirs, (mine, len(ours - theirs))
        assert ours & theirs, mine


def test_quick_profile_budget():
    """The part's quick runs at 3 host CPU-s of boot and set-up plus (0.02 + 0.15 x rate / 100
    Mbit/s) CPU-s per simulated second (measured 2026-11-26: 59 runs, 409 CPU-s) fit 10 minutes."""
    cost = sum(3 + j["duration_s"] * (0.02 + 0.15 * j["bottleneck"]["rate_mbps"] / 100)
               for e in SUCCESSORS for j in runs(e.name, "quick"))
    assert cost <= 600, cost
