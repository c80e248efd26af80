"""What a round of added repetitions settled (analysis/repetition_rounds.R), on a synthetic
tree whose values are known.

One point, Ma et al. Fig. 1's shape: the 50-ms flow's steady-state share is the `long` rate of
each run (the two rates sum to 100 Mbit/s). Seeds 1-3 give 5.8, 4.9 and 5.9 %: mean 5.53,
95 % t-interval +-1.37 (t_2 = 4.30, sd 0.55), so "share > 5 %" holds on the mean only
(marginal). The round's seeds 4-6 give 5.8, 5.9 and 5.8: over six runs the mean is 5.68 and
the interval +-0.41 (t_5 = 2.57, sd 0.39), entirely above 5: robust, settled. "share > 5.6 %"
is not reproduced before (5.53) and reproduced after (5.68), marginal both times: a changed
verdict that the round did not settle.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_runs  # noqa: E402
from test_r_analysis import ANALYSIS, CLAIMS_HEADER, rscript  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

SHARES = {1: 5.8, 2: 4.9, 3: 5.9, 4: 5.8, 5: 5.9, 6: 5.8}


def claim(cid: str, bound: str) -> dict:
    return {"id": cid, "paper": "p.txt", "source": "Fig. 1", "text": "t", "value": bound, "unit": "%",
            "kind": "bound", "op": ">", "experiment": "ma2019_fig01", "point": "base",
            "metric": "ss_share_pct", "args": "flow = 2", "direction": ""}


def write_case(tmp: Path, reps, rows: list[list]) -> list[str]:
    for rep in reps:
        synth_runs.fig01_run(tmp, rep, SHARES[rep], 100 - SHARES[rep], profile="paper")
    claims = tmp / "claims" / "ma2019.csv"
    claims.parent.mkdir(parents=True, exist_ok=True)
    with claims.open("w", newline="") as fh:
        w = csv.DictWriter(fh, CLAIMS_HEADER)
        w.writeheader()
        w.writerow(claim("share-above-5", "5"))
        w.writerow(claim("share-above-5.6", "5.6"))
        w.writerow(claim("untouched", "1"))
    (tmp / "paper").mkdir(exist_ok=True)
    (tmp / "paper" / "papers.csv").write_text("key,citation,title,seed,claims\n"
                                              "ma2019,Ma et al. (2019),T,000.txt,claims/ma2019.csv\n")
    table = tmp / "added.csv"
    table.write_text("profile,experiment,point,repetitions,round,claims\n"
                     + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return [tmp / "runs", table, tmp / "out" / "rounds.tex", 10, tmp / "paper" / "papers.csv", claims]


def read(out: Path) -> tuple[str, dict]:
    with out.with_suffix(".csv").open(newline="") as fh:
        return out.read_text(), {r["claim"]: r for r in csv.DictReader(fh)}


def other_paper_runs(root: Path) -> None:
    """Seeds 1-6 of a point of another paper's experiment, which round 1 gave seeds too."""
    flows = [{"flow": 1, "cc": "bbr", "rtt_ms": 10.0, "start_s": 0.0, "stop_s": 30.0}]
    for rep in range(1, 7):
        synth_runs.write_run(root / "runs" / "kim2019_fig02" / "base" / f"rep{rep}", experiment="kim2019_fig02",
                             point="base", repetition=rep, flows=flows, phases={1: [(30, 90.0)]},
                             qdelay_phases=[(30, 1.0)], retrans={1: 0}, profile="paper")


def test_a_round_settles_the_claim_its_seeds_decide(tmp_path):
    other_paper_runs(tmp_path)
    args = write_case(tmp_path, range(1, 7), [["paper", "ma2019_fig01", "base", 6, 1, "share-above-5"],
                                              ["paper", "kim2019_fig02", "base", 6, 1, "kim-claim"]])
    rscript(ANALYSIS / "repetition_rounds.R", *args)
    tex, rows = read(args[2])
    r5 = rows["share-above-5"]
    assert (r5["marked"], r5["n_before"], r5["n_after"]) == ("TRUE", "3", "6")
    assert (r5["verdict_before"], r5["strength_before"]) == ("reproduced", "marginal")
    assert (r5["verdict_after"], r5["strength_after"]) == ("reproduced", "robust")
    r56 = rows["share-above-5.6"]
    assert r56["marked"] == "FALSE"
    assert (r56["verdict_before"], r56["verdict_after"]) == ("not reproduced", "reproduced")
    assert r56["strength_after"] == "marginal"
    assert "untouched" not in rows          # robust before and after: not listed
    # paper, round, points, runs added, marked, settled, still marginal, changed
    assert "Ma et al. (2019) & 1 & 1 & 3 & 1 & 1 & 0 & 0 + 1" in tex
    assert "share-above-5.6" in tex
    assert "Kim" not in tex                 # the other paper's claims file was not given


def test_without_rows_the_table_says_no_round_has_run(tmp_path):
    args = write_case(tmp_path, range(1, 4), [])
    rscript(ANALYSIS / "repetition_rounds.R", *args)
    tex, rows = read(args[2])
    assert "No round of added repetitions has run yet" in tex and rows == {}


def test_a_report_without_the_papers_reference_gets_the_no_round_table(tmp_path):
    args = write_case(tmp_path, range(1, 7), [["paper", "ma2019_fig01", "base", 6, 1, "share-above-5"]])
    rscript(ANALYSIS / "repetition_rounds.R", *args[:5])          # no claims file
    tex, rows = read(args[2])
    assert "No round of added repetitions has run yet" in tex and rows == {}
