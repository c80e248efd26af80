"""End-to-end tests of the R analysis (analysis/*.R) on synthetic run trees.

The trees come from synth_runs.py: piecewise-constant goodput, so the
steady-state values the R code must produce are known exactly. The R scripts
are run as the pipeline runs them (Rscript <script> <args>) and their outputs
are parsed.
"""

from __future__ import annotations

import csv
import json
import pathlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_runs  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ANALYSIS = REPO / "analysis"
CLAIMS_HEADER = ["id", "paper", "source", "text", "value", "unit", "kind", "op",
                 "experiment", "point", "metric", "args", "direction"]

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")


def rscript(*args, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["Rscript", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"Rscript {args} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def r_json(code: str):
    """Evaluate R code with the analysis library loaded; it must cat() JSON."""
    prelude = f'source("{ANALYSIS / "lib" / "load.R"}", chdir = TRUE)\n'
    return json.loads(rscript("-e", prelude + code).stdout)


def read_csv_rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as fh:
        return {row["id"]: row for row in csv.DictReader(fh)}


def evaluate_claims(paper: str, root: Path, tmp_path: Path) -> dict[str, dict[str, str]]:
    """claims/<paper>.csv evaluated on the run tree `root`, as the pipeline does: rows by id."""
    out = tmp_path / f"claims_{paper}.tex"
    rscript(ANALYSIS / "claims.R", REPO / "claims" / f"{paper}.csv", root, out)
    return read_csv_rows(out.with_suffix(".csv"))


def claims_all_reproduced(paper: str, root: Path, tmp_path: Path,
                          expected: dict[str, str] | None = None) -> dict[str, dict[str, str]]:
    """claims/<paper>.csv on a synthetic tree built to match the paper's statements: every
    claim evaluates, in the file's order, has a written reading, and is reproduced, except
    the rows in `expected` (id -> verdict: claims the construction cannot meet, each said
    why by the caller), which get exactly that verdict."""
    expected = expected or {}
    rows = evaluate_claims(paper, root, tmp_path)
    with (REPO / "claims" / f"{paper}.csv").open(newline="") as fh:
        claims = list(csv.DictReader(fh))
    assert list(rows) == [c["id"] for c in claims]
    assert len(rows) == len(claims) and all(c["reading"] for c in claims)
    wrong = {k: (v["verdict"], v["mean"], v["note"]) for k, v in rows.items()
             if v["verdict"] != expected.get(k, "reproduced")}
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())
    return rows


def validate_specs(spec_dir: Path) -> None:
    """`bbrlab validate` accepts every spec of `spec_dir` in both profiles, run as a user runs it."""
    specs = [str(p.relative_to(REPO / "mininet")) for p in sorted(spec_dir.glob("*.yaml"))]
    for profile in ("quick", "paper"):
        res = subprocess.run([sys.executable, "-m", "bbrlab", "validate", *specs, "--profile", profile],
                             cwd=REPO / "mininet", capture_output=True, text=True,
                             env={"PYTHONPATH": str(REPO / "mininet"), "PATH": "/usr/bin:/bin"})
        assert res.returncode == 0, res.stdout + res.stderr


def expand_spec(path: Path, profile: str) -> list:
    """The run specs of one experiment spec in one profile."""
    sys.path.insert(0, str(REPO / "mininet"))
    from bbrlab.experiment import spec as bbrspec
    return bbrspec.expand(bbrspec.load(path, profile=profile))


def paper_experiments(key: str) -> list:
    """The experiments of paper `key`, as config/experiments.csv lists them."""
    sys.path.insert(0, str(REPO / "mininet"))
    from bbrlab.experiment import experiments as bbrexperiments
    exps, _ = bbrexperiments.load(REPO)
    return [e.name for e in exps.values() if e.paper == key]


def assert_paper_wired(key: str, seed: str) -> None:
    """A paper wired into the shared files: papers.csv names its seed and claims file; each of its
    experiments in config/experiments.csv runs in both profiles, has its spec (of that name) and
    figure script, regenerates items no other experiment claims, and is shown by its report
    section, which the report frame inputs; every experiment the paper's claims name is listed."""
    sys.path.insert(0, str(REPO / "mininet"))
    from bbrlab.experiment import experiments as bbrexperiments
    exps, papers = bbrexperiments.load(REPO)
    assert papers[key].seed == seed
    assert not bbrexperiments.problems(REPO, exps, papers)
    mine = [e for e in exps.values() if e.paper == key]
    assert mine, key
    items = [i for e in mine for i in e.items]
    assert items and len(items) == len(set(items)), items
    for e in mine:
        assert {"quick", "paper"} <= set(e.profiles), e.name
        assert expand_spec(REPO / e.spec, "quick")[0]["name"] == e.name
        assert (REPO / e.figure).is_file() and (REPO / e.section).is_file()
        assert f"\\generatedfigure{{{e.name}}}" in (REPO / e.section).read_text(), e.name
        assert f"\\input{{sections/{pathlib.Path(e.section).stem}}}" in (REPO / "paper" / "report.tex").read_text()
    assert set(bbrexperiments.claims_experiments(REPO / papers[key].claims)) <= {e.name for e in mine}


def render_figure(script: Path, runs_dir: Path, out: Path, *args) -> Path:
    """Run a figure script as the pipeline does; it must leave a PDF and its PNG, and no temp file."""
    rscript(script, runs_dir, out, *args)
    assert out.read_bytes()[:5] == b"%PDF-" and out.stat().st_size > 1000
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.parent.glob(".tmp-*"))
    return out


def write_claims(path: Path, rows: list[dict], header=CLAIMS_HEADER, **defaults) -> Path:
    """A claims CSV of `rows`, each completed with placeholder text and `defaults`."""
    base = {"paper": "synthetic", "source": "Fig. 0", "text": "t", "unit": "u",
            "experiment": "ma2019_fig01", **defaults}
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=header, restval="")
        w.writeheader()
        for row in rows:
            w.writerow({**base, **row})
    return path


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return synth_runs.make_fig01_tree(tmp_path_factory.mktemp("results"))


def test_per_run_metrics_match_constructed_values(tree):
    rep1 = tree / "runs" / "ma2019_fig01" / "base" / "rep1"
    got = r_json(f"""
      r <- read_run("{rep1}")
      cat(jsonlite::toJSON(list(
        window = unname(steady_window(r)),
        g1 = ss_goodput_mbps(r, 1), g2 = ss_goodput_mbps(r, 2),
        g1_w5 = ss_goodput_mbps(r, 1, warmup_s = 5),
        share1 = ss_share_pct(r, 1), total = ss_total_mbps(r), jain = ss_jain(r),
        qdelay = ss_qdelay_ms(r), rtx1 = retrans_pkts(r, 1), rtx2 = retrans_pkts(r, 2)),
        auto_unbox = TRUE, digits = NA))
    """)
    # Window: flow 2 joins at 2 s, + 10 s warm-up; flow 1 stops first, at 60 s.
    assert got["window"] == [12, 60]
    assert got["g1"] == pytest.approx(6.3, abs=1e-9)
    assert got["g2"] == pytest.approx(87.3, abs=1e-9)
    # A 5-s warm-up takes in 5 s of the transient (flow 1 at 40 Mbit/s).
    assert got["g1_w5"] == pytest.approx((5 * 40 + 48 * 6.3) / 53, abs=1e-9)
    assert got["share1"] == pytest.approx(100 * 6.3 / 93.6, abs=1e-9)
    assert got["total"] == pytest.approx(93.6, abs=1e-9)
    assert got["jain"] == pytest.approx(93.6 ** 2 / (2 * (6.3 ** 2 + 87.3 ** 2)), abs=1e-12)
    assert got["qdelay"] == pytest.approx(20.0, abs=1e-9)  # transient 60 ms excluded
    assert (got["rtx1"], got["rtx2"]) == (100, 300)


def test_read_runs_flags_invalid_and_ignores_incomplete(tree):
    got = r_json(f"""
      runs <- read_runs("{tree}")
      cat(jsonlite::toJSON(list(
        index = runs$index[, c("repetition", "valid", "verdict")],
        goodput_reps = sort(unique(runs$goodput$repetition)),
        goodput_valid_cols = all(c("experiment", "point", "repetition", "valid") %in%
                                 names(runs$goodput)))))
    """)
    index = {row["repetition"]: (row["valid"], row["verdict"]) for row in got["index"]}
    assert index == {1: (True, "valid"), 2: (False, "invalid"), 3: (True, "valid"),
                     4: (False, "failed")}  # rep5 has no run.json
    assert got["goodput_reps"] == [1, 2, 3]  # the failed run has no tidy data
    assert got["goodput_valid_cols"] == [True]


def test_aggregate_uses_valid_runs_only(tree):
    got = r_json(f"""
      runs <- read_runs("{tree}")
      vals <- bind_rows(lapply(runs$runs, function(r) mutate(r$key,
        value = if (r$key$valid) ss_goodput_mbps(r, 2) else 999)))
      cat(jsonlite::toJSON(aggregate_valid(vals), digits = NA))
    """)[0]
    assert got["n"] == 2
    assert got["mean"] == pytest.approx(86.3)
    assert got["sd"] == pytest.approx(2 ** 0.5)
    assert (got["min"], got["max"]) == (pytest.approx(85.3), pytest.approx(87.3))


def test_claims_script_ma2019(tree, tmp_path):
    out = tmp_path / "generated" / "claims_ma2019.tex"
    rscript(ANALYSIS / "claims.R", REPO / "claims" / "ma2019.csv", tree, out)
    rows = read_csv_rows(out.with_suffix(".csv"))
    long, short = rows["ma2019-fig01-long"], rows["ma2019-fig01-short"]
    # Valid runs: rep1 (87.3 / 6.3) and rep3 (85.3 / 8.3); rep2 (45 / 50) is invalid.
    assert float(long["mean"]) == pytest.approx(86.3)
    assert float(short["mean"]) == pytest.approx(7.3)
    assert (long["n"], long["n_runs"]) == ("2", "4")
    assert float(short["min"]) == pytest.approx(6.3) and float(short["max"]) == pytest.approx(8.3)
    assert long["verdict"] == "reproduced"  # -1.1 %
    assert short["verdict"] == "qualitatively reproduced"  # +15.9 %, 10-ms flow still loses
    assert long["direction_points"] == "1/1" and long["direction_holds"] == "TRUE"
    # 95 % t interval over the two valid runs: 86.3 +- 12.706 * 1.414 / sqrt(2)
    assert float(long["ci_lo"]) == pytest.approx(86.3 - 12.7062, abs=1e-3)
    assert float(long["ci_hi"]) == pytest.approx(86.3 + 12.7062, abs=1e-3)
    assert long["strength"] == "marginal"       # 90 * 0.85 = 76.5 lies inside the interval
    tex = out.read_text()
    assert "\\begin{longtable}" in tex and "\\toprule" in tex and "\\end{longtable}" in tex
    assert "qualitatively reproduced" in tex and "86.3 [73.6, 99.0]" in tex
    assert not list(out.parent.glob(".tmp-*"))


def test_claims_warmup_argument(tree, tmp_path):
    out = tmp_path / "c.tex"
    rscript(ANALYSIS / "claims.R", REPO / "claims" / "ma2019.csv", tree, out, 5)
    short = read_csv_rows(tmp_path / "c.csv")["ma2019-fig01-short"]
    expected = ((5 * 40 + 48 * 6.3) / 53 + (5 * 40 + 48 * 8.3) / 53) / 2
    assert float(short["mean"]) == pytest.approx(expected)
    assert short["warmup_s"] == "5"


def test_verdict_rule_cases(tree, tmp_path):
    """Constructed claims against the tree (valid means: flow 2 86.3, flow 1 7.3,
    flow 1 share (6.3/93.6 + 8.3/93.6)/2 = 7.8 %)."""
    longer = "ss_goodput_mbps(flow = 2) > ss_goodput_mbps(flow = 1)"
    shorter_wins = "ss_goodput_mbps(flow = 1) > ss_goodput_mbps(flow = 2)"
    claims = write_claims(tmp_path / "claims.csv", [
        dict(id="near", value="90", metric="ss_goodput_mbps", args="flow = 2", direction=longer),
        dict(id="far-dir", value="40", metric="ss_goodput_mbps", args="flow = 2", direction=longer),
        dict(id="far-nodir", value="40", metric="ss_goodput_mbps", args="flow = 2"),
        dict(id="near-dir-fails", value="86", metric="ss_goodput_mbps", args="flow = 2",
             direction=shorter_wins),
        dict(id="bound-ok", value="25", kind="bound", op="<", metric="ss_share_pct",
             args="flow = 1"),
        dict(id="bound-violated", value="5", kind="bound", op="<", metric="ss_share_pct",
             args="flow = 1", direction="ss_share_pct(flow = 1) < 50"),
        dict(id="unrun", value="1", metric="ss_jain", experiment="nonexistent"),
        dict(id="other-point", value="1", metric="ss_jain", point="rtt_20"),
    ])
    rscript(ANALYSIS / "claims.R", claims, tree, tmp_path / "v.tex")
    verdicts = {k: v["verdict"] for k, v in read_csv_rows(tmp_path / "v.csv").items()}
    assert verdicts == {
        "near": "reproduced",                      # |86.3 - 90| / 90 = 4 %
        "far-dir": "qualitatively reproduced",     # 116 % off, direction holds
        "far-nodir": "not reproduced",
        "near-dir-fails": "not reproduced",        # value within 0.3 %, effect reversed
        "bound-ok": "reproduced",                  # 7.8 % < 25 %
        "bound-violated": "qualitatively reproduced",  # 7.8 % not < 5 %, but < 50 %
        "unrun": "not run",
        "other-point": "not run",
    }


def test_verdict_tolerance_edges():
    got = r_json("""
      v <- function(mean, dir = NA) claim_verdict(2, value_matches(mean, 100, "exact", "", mean, 100), dir)
      cat(jsonlite::toJSON(c(v(115), v(85), v(115.01), v(115.01, TRUE), v(100, FALSE),
                             claim_verdict(0, NA, TRUE),
                             claim_verdict(3, value_matches(30, 25, "bound", "<=", 30, 25), NA))))
    """)
    assert got == ["reproduced", "reproduced", "not reproduced", "qualitatively reproduced",
                   "not reproduced", "not run", "not reproduced"]


def test_report_states_the_same_tolerance():
    tol = r_json("cat(TOLERANCE)")
    assert tol == 0.15
    assert "15\\,\\%" in (REPO / "paper" / "sections" / "verdict_rule.tex").read_text()


@pytest.mark.parametrize("bad", [
    dict(metric="system", args='command = "true"'),
    dict(metric="ss_goodput_mbps", args="flow = 1 + 1"),
    dict(metric="ss_goodput_mbps", args="flow = 1", direction="ss_goodput_mbps(flow = 1)"),
    dict(metric="ss_goodput_mbps", args="flow = 1", kind="bound", op="=="),
])
def test_malformed_claims_are_rejected(tree, tmp_path, bad):
    claims = write_claims(tmp_path / "bad.csv", [dict(id="x", value="1", **bad)])
    proc = rscript(ANALYSIS / "claims.R", claims, tree, tmp_path / "bad.tex", check=False)
    assert proc.returncode != 0
    assert not (tmp_path / "bad.tex").exists()


def pdf_text(pdf) -> str:
    """The text of a PDF (pdftotext); the test is skipped without it."""
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    return subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout


def test_figure_pdf_and_png(tree, tmp_path):
    out = tmp_path / "fig" / "ma2019_fig01.pdf"
    rscript(ANALYSIS / "figures" / "ma2019" / "ma2019_fig01.R", tree / "runs" / "ma2019_fig01", out)
    assert out.read_bytes()[:5] == b"%PDF-"
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.parent.glob(".tmp-*"))
    text = pdf_text(out)                     # a plot of the runs, not the placeholder
    assert "No valid run" not in text and "Goodput" in text, text


def test_figure_placeholder_without_valid_runs(tmp_path):
    """With no valid run the figure is the placeholder, saying so and how many runs it found."""
    root = tmp_path / "results"
    synth_runs.fig01_run(root, 1, 80.0, 10.0, fidelity_ok=False)
    out = tmp_path / "fig.pdf"
    rscript(ANALYSIS / "figures" / "ma2019" / "ma2019_fig01.R", root, out)
    assert out.read_bytes()[:5] == b"%PDF-" and out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = " ".join(pdf_text(out).split())
    assert "No valid run of ma2019_fig01 (1 runs found)." in text, text


def test_fidelity_table_lists_every_run(tree, tmp_path):
    out = tmp_path / "fidelity.tex"
    rscript(ANALYSIS / "fidelity.R", tree, out)
    tex = out.read_text()
    rows = [line for line in tex.splitlines() if line.startswith("ma2019\\_fig01 & base")]
    verdicts = [row.split(" & ")[2:4] for row in rows]
    assert verdicts == [["1", "valid"], ["2", "invalid"], ["3", "valid"], ["4", "failed"]]
    assert "timer\\_lateness (guest): measured 7.5" in rows[1]
    assert "error: guest did not boot" in rows[3]
    assert "1 incomplete run directory" in tex and "\\label{tab:fidelity}" in tex


def test_testbed_table(tree, tmp_path):
    out = tmp_path / "testbed.tex"
    rscript(ANALYSIS / "testbed_table.R", tree, out)
    tex = out.read_text()
    assert "Guest kernel & 6.1.0-synthetic \\\\" in tex
    assert "Runs & 4 (2 valid, 1 invalid, 1 failed) \\\\" in tex
    assert "Congestion controls & reno, cubic, bbr \\\\" in tex
    assert "Hosts & (not recorded) \\\\" in tex      # the synthetic runs name no host
    assert "Kernel build (sha256) & 0123456789ab \\\\" in tex
    assert "Module builds (sha256) & none \\\\" in tex      # no synthetic run loads a module


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
def test_report_builds(tree, tmp_path):
    """The whole chain as the pipeline runs it: scripts -> generated/ -> latexmk."""
    report = tmp_path / "report"
    gen = report / "generated"
    rscript(ANALYSIS / "testbed_table.R", tree, gen / "testbed.tex")
    rscript(ANALYSIS / "figures" / "ma2019" / "ma2019_fig01.R", tree, gen / "ma2019_fig01.pdf")
    rscript(ANALYSIS / "claims.R", REPO / "claims" / "ma2019.csv", tree, gen / "claims_ma2019.tex")
    rscript(ANALYSIS / "fidelity.R", tree, gen / "fidelity.tex")
    shutil.copy(REPO / "paper" / "report.tex", report)
    shutil.copytree(REPO / "paper" / "sections", report / "sections")
    proc = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "report.tex"],
                          cwd=report, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (report / "report.pdf").read_bytes()[:5] == b"%PDF-"
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(report / "report.pdf"), "-"],
                              capture_output=True, text=True).stdout
        assert "qualitatively" in text and "86.3" in text
