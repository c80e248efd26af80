"""Every claim can be evaluated in every profile, before anything runs: its point
selector matches points of its experiment's sweep in the quick and paper profiles
(exactly one for a single-point claim, at least three for a trend; none where the profile
leaves the claim's points out on purpose, QUICK_OMITS and PAPER_OMITS), a window given in
seconds lies inside the runs, and a claim comparing two experiments compares runs of
the same duration and flow timing (like with like)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_r_analysis import REPO, r_json  # noqa: E402

sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import experiments as bbrexperiments  # noqa: E402
from bbrlab.experiment import spec as bbrspec  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

PROFILES = ("quick", "paper")
# Claims the quick profile leaves to the paper profile on purpose, each with the spec that
# says so: Utsumi & Hasegawa's Jain figures at 40 ms one way (Figs. 11-13), cut so that the
# quick profiles of that paper and Tang's fit 30 minutes (utsumi2022_fig07_11.yaml); Tang's Fig. 5
# at the 50- and 10-ms propagation delays (100- and 20-ms RTT; tang_fig05.yaml) and 3 BDP at 10 ms
# (tang_fig06.yaml), all run in the paper profile only; Utsumi & Hasegawa's 1 BDP at 40 ms one
# way, which the quick profile's Fig. 10 does not run (64 and 128 BDP; utsumi2022_fig06_10.yaml).
# Each is a condition of the claim's point selector, matched whole (f1_rtt_ms=20 is not
# f1_rtt_ms=200).
QUICK_OMITS = {"utsumi2022_fig07_11": ("f1_rtt_ms=80",), "utsumi2022_fig08_12": ("f1_rtt_ms=80",),
               "tang_fig05": ("f1_rtt_ms=100", "f1_rtt_ms=20"), "tang_fig06": ("buffer_bdp=3",),
               "utsumi2022_fig09_13": ("f1_rtt_ms=80",), "utsumi2022_fig06_10": ("buffer_bdp=1",)}
# Claims the paper profile leaves to the quick profile: none. (Until 2026-11-29 Figs. 6-13's
# paper sweeps did not list Utsumi & Hasegawa's BBRv2+ series; they do now, in both profiles.)
PAPER_OMITS = {}
OMITS = {"quick": QUICK_OMITS, "paper": PAPER_OMITS}


def omitted_from(claim: dict, profile: str) -> bool:
    conditions = set(re.split(r"&|__", claim["point"]))
    return any(c in conditions for c in OMITS[profile].get(claim["experiment"], ()))
CLAIM_FILES = sorted((REPO / "claims").glob("*.csv"))


def claims_of(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def spec_path(experiment: str) -> Path:
    """The experiment's spec, as config/experiments.csv lists it."""
    return REPO / bbrexperiments.load(REPO)[0][experiment].spec


def runs_of(experiment: str, profile: str) -> list[dict]:
    return bbrspec.expand(bbrspec.load(spec_path(experiment), profile=profile))


@pytest.fixture(scope="module", params=CLAIM_FILES, ids=lambda p: p.stem)
def coverage(request, tmp_path_factory):
    """Per claim and profile: the number of points its selector matches (via the
    engine's own point_matches()), and the runs of its experiments. The point names go to
    R in a file: with module parameters in them they pass R's limit on an -e expression."""
    claims = claims_of(request.param)
    experiments = {c["experiment"] for c in claims} | {c.get("ref_experiment") or c["experiment"] for c in claims}
    runs = {(e, p): runs_of(e, p) for e in experiments for p in PROFILES}
    points = {f"{e}|{p}": sorted({r["point"] for r in rs}) for (e, p), rs in runs.items()}
    points_file = tmp_path_factory.mktemp("points") / "points.json"
    points_file.write_text(json.dumps(points))
    got = r_json(f"""
      claims <- read_claims("{request.param}")
      pts <- jsonlite::fromJSON("{points_file}")
      out <- lapply(seq_len(nrow(claims)), function(i) {{
        c <- claims[i, ]
        sapply(c("quick", "paper"), function(p) {{
          ps <- pts[[paste0(c$experiment, "|", p)]]
          sum(vapply(ps, point_matches, TRUE, selector = c$point))
        }}, simplify = FALSE)
      }})
      names(out) <- claims$id
      cat(jsonlite::toJSON(out, auto_unbox = TRUE))
    """)
    return claims, got, runs


def test_every_claim_selects_points_in_every_profile(coverage):
    claims, got, _ = coverage
    for c in claims:
        for profile in PROFILES:
            n = got[c["id"]][profile]
            if omitted_from(c, profile):
                assert n == 0, f"{c['id']}: listed in OMITS[{profile!r}], yet {profile} has {n} points"
                continue
            if c["kind"] == "trend":
                assert n >= 3, f"{c['id']}: a trend needs 3 points, {profile} has {n}"
            elif c["aggregate"]:
                assert n >= 1, f"{c['id']}: no point in {profile}"
            else:
                assert n == 1, f"{c['id']}: selects {n} points in {profile}"


def test_numeric_windows_lie_inside_the_runs(coverage):
    claims, _, runs = coverage
    for c in claims:
        window = c.get("window", "")
        if not window:
            continue
        ends = window.split("..")
        for profile in PROFILES:
            for run in runs[(c["experiment"], profile)]:
                for end in ends:
                    if end.replace(".", "", 1).isdigit():
                        assert float(end) <= run["duration_s"], \
                            f"{c['id']}: window {window} outside a {run['duration_s']}-s {profile} run"


def test_cross_experiment_claims_compare_like_with_like(coverage):
    claims, _, runs = coverage
    timing = lambda r: (r["duration_s"], [(f.get("start_s"), f.get("stop_s"), f.get("rtt_ms"))  # noqa: E731
                                          for f in r["flows"]])
    for c in claims:
        ref = c.get("ref_experiment") or c["experiment"]
        if ref == c["experiment"]:
            continue
        for profile in PROFILES:
            a = {str(timing(r)) for r in runs[(c["experiment"], profile)]}
            b = {str(timing(r)) for r in runs[(ref, profile)]}
            assert a == b, f"{c['id']}: {c['experiment']} and {ref} differ in {profile}: {a} vs {b}"
