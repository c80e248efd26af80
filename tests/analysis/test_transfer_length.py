"""The shortened-transfer rule's evidence (analysis/transfer_length.R, docs/specs.md
"Transfer length"), on synthetic full-length runs whose values over any prefix are known.

The run: two flows over 200 s; flow 1 gets 80 and flow 2 20 Mbit/s until 100 s, then 50/50.
Over the steady state [10, T] Jain's index is therefore, by hand:
  T = 50:  (80 + 20)^2 / (2 (80^2 + 20^2))                          = 0.7353
  T = 190: means 65 / 35                -> 100^2 / (2 (65^2 + 35^2)) = 0.9174
  T = 200: means 64.21 / 35.79           -> 0.9253 (the full transfer)
The band around 0.9253 is 15 % of 1 - J plus 0.005 (claims/README.md): [0.9091, 0.9415].
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_runs  # noqa: E402
from test_r_analysis import ANALYSIS, r_json, rscript  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

EXP = "utsumi2022_fig06_10"
POINT = "f2_cc=bbr_fca__f1_rtt_ms=80__buffer_bdp=128"
HEADER = ["id", "paper", "source", "text", "reading", "value", "unit", "kind", "op", "experiment",
          "point", "aggregate", "metric", "args", "ref_point"]


def jain(a: float, b: float) -> float:
    """Jain's index of two rates."""
    return (a + b) ** 2 / (2 * (a * a + b * b))


def full_means(t_end: float) -> tuple[float, float]:
    """Mean rates of the two flows over [10, t_end] (t_end > 100)."""
    span = t_end - 10
    return (80 * 90 + 50 * (t_end - 100)) / span, (20 * 90 + 50 * (t_end - 100)) / span


def write_control(root: Path, rep: int) -> None:
    flows = [{"flow": 1, "cc": "cubic", "rtt_ms": 80.0, "start_s": 0.0, "stop_s": 200.0},
             {"flow": 2, "cc": "bbr_fca", "rtt_ms": 80.0, "start_s": 0.0, "stop_s": 200.0}]
    synth_runs.write_run(root / EXP / POINT / f"rep{rep}", experiment=EXP, point=POINT, repetition=rep,
                         flows=flows, phases={1: [(100, 80.0), (200, 50.0)], 2: [(100, 20.0), (200, 50.0)]},
                         qdelay_phases=[(200, 5.0)], retrans={1: 10, 2: 10}, profile="paper")


def write_inputs(tmp: Path, claims: list[dict]) -> tuple[Path, Path]:
    cpath = tmp / "claims.csv"
    with cpath.open("w", newline="") as fh:
        w = csv.DictWriter(fh, HEADER)
        w.writeheader()
        for c in claims:
            w.writerow({"paper": "p.txt", "source": "Fig. 6", "text": "t", "reading": "r", "unit": "",
                        "experiment": EXP, "point": "*", "aggregate": "all", "args": "", "ref_point": "",
                        "op": "", **c})
    ctrl = tmp / "controls.csv"
    ctrl.write_text("experiment,point,why\n"
                    f"{EXP},f2_cc=bbr_fca&f1_rtt_ms=80&buffer_bdp=128,the deepest buffer\n")
    return cpath, ctrl


def run_rule(tmp: Path, claims: list[dict], reps: int, *candidates) -> tuple[list[dict], list[dict], str]:
    cpath, ctrl = write_inputs(tmp, claims)
    out = tmp / "out" / "transfer_length.tex"
    rscript(ANALYSIS / "transfer_length.R", cpath, ctrl, tmp / "runs", out, reps, *candidates)
    with out.with_suffix(".csv").open(newline="") as fh:
        checks = list(csv.DictReader(fh))
    with (out.parent / "transfer_length_summary.csv").open(newline="") as fh:
        summary = list(csv.DictReader(fh))
    return checks, summary, out.read_text()


EXACT = {"id": "fair-exact", "kind": "exact", "value": "0.93", "metric": "ss_jain"}


def test_prefix_values_and_the_band_around_the_full_transfer(tmp_path):
    write_control(tmp_path / "runs", 1)
    checks, summary, tex = run_rule(tmp_path, [EXACT], 1, 50, 190)
    by_t = {float(c["t_s"]): c for c in checks}
    assert set(by_t) == {50.0, 190.0}
    full = jain(*full_means(200))
    for c in checks:
        assert float(c["value_full"]) == pytest.approx(full, abs=1e-3)
        assert float(c["band_lo"]) == pytest.approx(full - (0.15 * (1 - full) + 0.005), abs=1e-3)
    assert float(by_t[50]["value_t"]) == pytest.approx(jain(80, 20), abs=1e-3)
    assert float(by_t[190]["value_t"]) == pytest.approx(jain(*full_means(190)), abs=1e-3)
    assert by_t[50]["holds"] == "FALSE" and by_t[190]["holds"] == "TRUE"
    rows = {float(r["t_s"]): r for r in summary}
    assert rows[50]["accepted"] == "FALSE" and rows[190]["accepted"] == "TRUE"
    assert float(rows[50]["chosen_s"]) == 190
    assert "190 s" in tex and "fair-exact" in tex


def test_a_bound_claim_asks_for_the_same_side_of_its_bound(tmp_path):
    write_control(tmp_path / "runs", 1)
    below = {"id": "unfair", "kind": "bound", "op": "<", "value": "0.8", "metric": "ss_jain"}
    high = {"id": "fair", "kind": "bound", "op": ">=", "value": "0.95", "metric": "ss_jain"}
    checks, summary, _ = run_rule(tmp_path, [below, high], 1, 50)
    holds = {c["claim"]: c["holds"] for c in checks}
    # 0.735 over 50 s is below 0.8, 0.925 over 200 s is not: the short run would say "unfair".
    assert holds["unfair"] == "FALSE"
    # Both are below 0.95: the same verdict for "fair", though far apart.
    assert holds["fair"] == "TRUE"
    assert summary[0]["chosen_s"] == ""


def test_a_candidate_needs_every_seed_and_every_longer_candidate(tmp_path):
    write_control(tmp_path / "runs", 1)
    _, summary, tex = run_rule(tmp_path, [EXACT], 2, 190)
    assert summary[0]["complete_points"] == "0" and summary[0]["accepted"] == "FALSE"
    assert "0 of 1 points have 2 seeds" in tex
    write_control(tmp_path / "runs", 2)
    # 190 holds; 180 (J = 0.908) falls just outside the band [0.9091, 0.9415].
    _, summary, _ = run_rule(tmp_path, [EXACT], 2, 180, 190)
    rows = {float(r["t_s"]): r for r in summary}
    assert rows[180]["accepted"] == "FALSE" and rows[190]["accepted"] == "TRUE"
    assert all(float(r["chosen_s"]) == 190 for r in summary)


def test_a_failing_longest_candidate_decides_before_the_seeds_are_complete(tmp_path):
    """One seed of two, and the check fails at the longest candidate (50 s): no candidate can be
    accepted whatever the other seed shows, and the table says so."""
    write_control(tmp_path / "runs", 1)
    _, summary, tex = run_rule(tmp_path, [EXACT], 2, 50)
    assert summary[0]["failed"] == "1" and summary[0]["chosen_s"] == ""
    assert "6000 s: no candidate holds" in tex and "points have 2 seeds" not in tex


def test_a_shorter_candidate_is_not_chosen_past_a_longer_one_that_fails():
    code = f'''source("{ANALYSIS / "lib" / "transfer_length.R"}")
    checks <- tibble(experiment = "e", t_s = c(600, 1200, 2000), holds = c(TRUE, FALSE, TRUE))
    coverage <- tibble(experiment = "e", control = "p", runs = 3L)
    s <- accepted_durations(checks, coverage, c(600, 1200, 2000), 3L)
    cat(jsonlite::toJSON(list(accepted = s$accepted, chosen = s$chosen_s[1])))'''
    assert r_json(code) == {"accepted": [False, False, True], "chosen": [2000]}


def test_bad_controls_stop_before_reading_runs(tmp_path):
    cpath, ctrl = write_inputs(tmp_path, [EXACT])
    ctrl.write_text("experiment,point,why\nutsumi2022_fig99,buffer_bdp=128,x\n")
    proc = rscript(ANALYSIS / "transfer_length.R", cpath, ctrl, tmp_path / "none", tmp_path / "o.tex", check=False)
    assert proc.returncode != 0 and "utsumi2022_fig99" in proc.stderr
    assert not (tmp_path / "o.tex").exists()


def test_truncate_run_is_the_run_as_if_it_had_ended_at_t(tmp_path):
    write_control(tmp_path, 1)
    run = tmp_path / EXP / POINT / "rep1"
    code = f'''source("{ANALYSIS / "lib" / "transfer_length.R"}")
    r <- truncate_run(read_run("{run}"), 50)
    late <- tryCatch(truncate_run(read_run("{run}"), 201), error = function(e) conditionMessage(e))
    cat(jsonlite::toJSON(list(ends = c(max(r$goodput$t_s), max(r$tcp$t_s), max(r$queue$t_s)),
                              stops = vapply(r$meta$flows, function(f) f$stop_s, 0),
                              end = run_end_s(r), late = late), auto_unbox = TRUE))'''
    got = r_json(code)
    assert max(got["ends"]) <= 50 and min(got["ends"]) >= 49.9
    assert got["stops"] == [50, 50] and got["end"] == 50
    assert "before 201 s" in got["late"]


def write_short(root: Path, rep: int, phases: dict) -> None:
    """A 100-s run of the control point (a shortened spec's run), seed `rep`."""
    flows = [{"flow": 1, "cc": "cubic", "rtt_ms": 80.0, "start_s": 0.0, "stop_s": 100.0},
             {"flow": 2, "cc": "bbr_fca", "rtt_ms": 80.0, "start_s": 0.0, "stop_s": 100.0}]
    synth_runs.write_run(root / EXP / POINT / f"rep{rep}", experiment=EXP, point=POINT, repetition=rep,
                         flows=flows, phases=phases, qdelay_phases=[(100, 5.0)], retrans={1: 5, 2: 5},
                         profile="paper")


def test_a_shortened_run_is_checked_against_its_controls_first_seconds(tmp_path):
    """Step 2 on real runs: the T-s run of seed 1 is the control's first 100 s (80/20 Mbit/s),
    so Jain's index over [10, 100] is 0.7353 on both; seed 2's T-s run split 50/50 from the start
    (J = 1), outside the band around the prefix's 0.7353 ([0.6907, 0.7799]); a short run whose
    seed has no control run is not compared."""
    for rep in (1, 2):
        write_control(tmp_path / "runs", rep)
    write_short(tmp_path / "short", 1, {1: [(100, 80.0)], 2: [(100, 20.0)]})
    write_short(tmp_path / "short", 2, {1: [(100, 50.0)], 2: [(100, 50.0)]})
    write_short(tmp_path / "short", 3, {1: [(100, 80.0)], 2: [(100, 20.0)]})
    cpath, ctrl = write_inputs(tmp_path, [EXACT])
    out = tmp_path / "out" / "prefix.tex"
    rscript(ANALYSIS / "transfer_length_prefix.R", cpath, ctrl, tmp_path / "runs", tmp_path / "short", out)
    with out.with_suffix(".csv").open(newline="") as fh:
        rows = {int(r["repetition"]): r for r in csv.DictReader(fh)}
    assert set(rows) == {1, 2}
    assert float(rows[1]["value_run"]) == pytest.approx(jain(80, 20), abs=1e-3)
    assert float(rows[1]["value_prefix"]) == pytest.approx(jain(80, 20), abs=1e-3)
    assert rows[1]["holds"] == "TRUE" and float(rows[1]["t_s"]) == 100
    assert float(rows[2]["value_run"]) == pytest.approx(1.0, abs=1e-3)
    assert float(rows[2]["value_prefix"]) == pytest.approx(jain(80, 20), abs=1e-3)
    assert rows[2]["holds"] == "FALSE"
    tex = out.read_text()
    assert "seed 1" in tex and "seed 2" in tex and "seed 3" not in tex
    assert "0\\,\\%" in tex and " % " not in tex          # a bare % would comment out the row's end
