"""Every claim can pass and can fail: the verdict rule (analysis/lib/verdict.R) on
synthetic measured values, no runs (analysis/lib/power.R, analysis/claims_power.R).

At the published number (or a value clearly on the stated side of a bound, a trend
ordered as stated) the verdict must be "reproduced"; at a value that contradicts the
sentence (the number moved by half its distance from the scale's reference point, a
change with its sign reversed, the other side of a bound, a trend reversed) it must
not be. A row that cannot do both states why in `power_exempt`. The flat bands the
rule replaced (15 % and 50 % of the measured quantity) must each fail rows: the check
has power over the rule itself. One R process per band for all claims files."""

from __future__ import annotations

import collections
import csv
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_r_analysis import ANALYSIS, REPO, rscript, write_claims  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

CLAIMS = sorted((REPO / "claims").glob("*.csv"))


def power(tmp_path: Path, band: str, files=CLAIMS) -> list[dict[str, str]]:
    out = tmp_path / f"power_{band}.csv"
    rscript(ANALYSIS / "claims_power.R", out, band, *files)
    with out.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def rule_rows(tmp_path_factory):
    return power(tmp_path_factory.mktemp("power"), "rule")


def test_every_claim_passes_and_fails_or_says_why(rule_rows):
    ids = [r["id"] for f in CLAIMS for r in csv.DictReader(f.open(newline=""))]
    assert [r["id"] for r in rule_rows] == ids       # every row of every file, in order
    per_paper = collections.defaultdict(collections.Counter)
    for r in rule_rows:
        paper = r["id"].split("-")[0]
        per_paper[paper]["rows"] += 1
        per_paper[paper]["both ways" if r["ok"] == "TRUE" else
                         "exempt" if r["power_exempt"] else "FAIL"] += 1
    print("\nclaims power test (reproduced at agreement, not at contradiction):")
    for paper, c in sorted(per_paper.items()):
        print(f"  {paper}: {c['both ways']}/{c['rows']} pass both ways, {c['exempt']} exempt "
              f"(power_exempt), {c['FAIL']} fail")
    failing = [f"{r['id']}: agree {r['agree']} at {r['agree_value']}, contradict "
               f"{r['contradict']} at {r['contradict_value']}"
               for r in rule_rows if r["ok"] != "TRUE" and not r["power_exempt"]]
    assert not failing, "rows without power and no power_exempt:\n" + "\n".join(failing)


def test_exemptions_are_needed(rule_rows):
    """An exemption on a row that passes both ways hides nothing and is stale."""
    stale = [r["id"] for r in rule_rows if r["ok"] == "TRUE" and r["power_exempt"]]
    assert not stale, f"power_exempt on rows that pass both ways: {stale}"


@pytest.mark.parametrize("band", ["flat15", "flat50"])
def test_flat_bands_fail_rows(tmp_path, band):
    rows = power(tmp_path, band)
    failing = {r["id"] for r in rows if r["ok"] != "TRUE"}
    assert failing, f"the {band} band passes every row: the check has no power over the rule"
    # the flat 15 % band: a Jain index of 0.84 accepted 0.71-0.97, so 0.76 and 0.92 passed
    if band == "flat15":
        assert "tang-table3-increase-2" in failing     # a 5 % change accepted its reverse
    else:
        assert "ma2019-fig01-long" in failing          # 87.3 Mbit/s accepted 43.65


def test_check_catches_rows_that_cannot_pass_or_cannot_fail(tmp_path):
    """Constructed rows: a bound beyond the scale's end cannot pass; an exact share of 100 %
    with a band of the whole scale cannot fail (flat 50 % band)."""
    f = write_claims(tmp_path / "c.csv", [
        dict(id="beyond-end", value="100", kind="bound", op=">", metric="ss_share_pct", args="flow = 1"),
        dict(id="fine-bound", value="61.5", kind="bound", op=">", metric="ss_share_pct", args="flow = 1"),
        dict(id="exact-jain", value="0.84", metric="ss_jain"),
        dict(id="trend", value="", kind="trend", op=">", point="*", by="x", metric="ss_jain"),
        dict(id="exact-time", value="64", metric="ss_goodput_mbps", args="flow = 1",
             direction="ss_goodput_mbps(flow = 1) > ss_goodput_mbps(flow = 2)"),
    ], header=["id", "paper", "source", "text", "value", "unit", "kind", "op", "experiment",
               "point", "by", "metric", "args", "direction"])
    rows = {r["id"]: r for r in power(tmp_path, "rule", [f])}
    assert rows["beyond-end"]["ok"] == "FALSE" and rows["beyond-end"]["agree"] != "reproduced"
    assert rows["fine-bound"]["ok"] == "TRUE"
    assert rows["exact-jain"]["ok"] == "TRUE"
    assert rows["exact-jain"]["contradict_value"] == "0.76 0.92"
    assert rows["trend"]["ok"] == "TRUE"
    t = rows["exact-time"]
    assert t["ok"] == "TRUE" and t["contradict"] == "qualitatively reproduced"
    assert t["contradict_with_direction"] == "not reproduced"
    flat = {r["id"]: r for r in power(tmp_path, "flat15", [f])}
    assert flat["exact-jain"]["ok"] == "FALSE"                    # 0.76 and 0.92 inside 0.71-0.97
