"""The report's layout: one part per paper, the summary table (analysis/summary.R),
point labels in the R analysis and tables that fit the page.

R scripts are run as the pipeline runs them (Rscript <script> <args>) on
constructed claims CSVs and the synthetic run trees of synth_runs.py.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_runs  # noqa: E402
from test_r_analysis import ANALYSIS, REPO, rscript  # noqa: E402,F401

sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import experiments as bbrexperiments  # noqa: E402

PAPER = REPO / "paper"

needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")
needs_latex = pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")


SEED_FILE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")     # the seed papers' file names


def papers() -> list[dict]:
    with (PAPER / "papers.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def items_of(key: str) -> int:
    """The figures and tables of paper `key` that config/experiments.csv says its experiments regenerate."""
    exps, _ = bbrexperiments.load(REPO)
    return sum(len(e.items) for e in exps.values() if e.paper == key)


def published_items() -> int:
    """Every paper's items (config/experiments.csv)."""
    return sum(items_of(p["key"]) for p in papers())


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def table_rows(tex: str) -> dict[str, list[str]]:
    """Body rows (below the header) of a generated table by their first cell, up to a colon."""
    rows = {}
    for line in tex.split("\\midrule", 1)[1].splitlines():
        if line.endswith("\\\\") and " & " in line:
            cells = [c.strip() for c in line[:-2].split(" & ")]
            rows[re.sub(r":.*$", "", cells[0])] = cells[1:]
    return rows


# ---- report structure -----------------------------------------------------------------

def test_report_frame_inputs_one_part_per_paper():
    frame = (PAPER / "report.tex").read_text()
    inputs = re.findall(r"^\\input\{sections/([a-z0-9_]+)\}", frame, re.M)
    keys = [p["key"] for p in papers()]
    # besides the papers' parts: the records of the lexicon change and of the band rule change
    # right after the verdict rule, Ma et al.'s findings right after its part, BBR's successors
    # after the papers (experiments with no paper key), and the testbed's findings
    extra = ["lexicon_change", "band_rule_change", "ma2019_findings", "successors", "testbed_findings"]
    assert inputs[inputs.index("verdict_rule") + 1] == "lexicon_change"
    assert inputs[inputs.index("verdict_rule") + 2] == "band_rule_change"
    assert inputs[inputs.index("ma2019") + 1] == "ma2019_findings" and inputs[-1] == "testbed_findings"
    assert inputs[-2] == "successors"
    parts = [name for name in inputs if name not in extra]
    assert parts[0] == "verdict_rule" and parts[1:] == keys
    for name in inputs:
        assert (PAPER / "sections" / f"{name}.tex").is_file()
    # the frame's order: setup, summary, verdict rule, the papers, fidelity
    body = frame.split("\\begin{document}", 1)[1]
    order = [body.index(s) for s in ("sec:setup", "sec:summary", "\\input{sections/verdict_rule}",
                                     "\\input{sections/ma2019}", "\\input{sections/testbed_findings}",
                                     "sec:fidelity")]
    assert order == sorted(order)
    # every paper's part has its own section label
    for key in keys:
        assert f"\\label{{sec:{key}}}" in (PAPER / "sections" / f"{key}.tex").read_text()


def test_every_generated_input_may_be_missing():
    """Parts and frame include generated files only through the placeholders."""
    for tex in [PAPER / "report.tex", *sorted((PAPER / "sections").glob("*.tex"))]:
        body = "\n".join(line for line in tex.read_text().splitlines() if not line.lstrip().startswith("%"))
        body = body.split("\\begin{document}")[-1]
        assert not re.search(r"\\(input|includegraphics)(\[[^]]*\])?\{generated/", body), tex.name


def test_experiments_table_names_shipped_files():
    """Every row's spec, figure script, section and claims file exist, every spec and figure
    script in the tree is listed; each paper's seed file is named by its bare file name (the
    seed collection's NNN_<16 hex digits>.txt, no directory: where the collection lies differs
    between machines), one paper per seed, and its claims name the paper by its key."""
    exps, paps = bbrexperiments.load(REPO)
    assert bbrexperiments.problems(REPO, exps, paps) == []
    seeds = [paper["seed"] for paper in papers()]
    assert len(set(seeds)) == len(seeds), seeds
    for paper in papers():
        assert SEED_FILE.fullmatch(paper["seed"]), (paper["key"], paper["seed"])
        assert any(e.paper == paper["key"] for e in exps.values()), paper["key"]
        with (REPO / paper["claims"]).open(newline="") as fh:
            cited = {row["paper"] for row in csv.DictReader(fh)}
        assert cited == {paper["key"]}, (paper["claims"], cited)
    # no paper regenerates an item twice
    for key in paps:
        items = [i for e in exps.values() if e.paper == key for i in e.items]
        assert len(items) == len(set(items)), key


# ---- summary.R ------------------------------------------------------------------------

CLAIMS_COLS = ["id", "paper", "source", "experiment", "verdict", "strength", "n", "profile", "reps"]


@needs_r
def test_summary_counts_items_and_verdicts(tmp_path):
    gen = tmp_path / "generated"
    gen.mkdir()
    for fig in ("ma2019_fig01", "ma2019_fig04", "ma2019_fig08"):   # Fig. 1; Fig. 4 + Table I; Figs. 8-11
        (gen / f"{fig}.pdf").write_bytes(b"%PDF-")
    rows = [["c1", "p", "Fig. 1", "ma2019_fig01", "reproduced", "robust", "3", "paper", "3"],
            ["c2", "p", "Fig. 1", "ma2019_fig01", "reproduced", "marginal", "3", "paper", "3"],
            ["c3", "p", "Fig. 1", "ma2019_fig01", "reproduced", "robust", "2", "paper", "3"],
            ["c4", "p", "Fig. 4", "ma2019_fig04", "qualitatively reproduced", "marginal", "3", "paper", "3"],
            ["c5", "p", "Fig. 4", "ma2019_fig04", "not reproduced", "robust", "3", "paper", "3"],
            ["c6", "p", "Fig. 5", "ma2019_fig05", "not run", "", "0", "paper", "3"]]
    write_csv(gen / "claims_ma2019.csv", CLAIMS_COLS, rows)
    out = tmp_path / "summary.tex"
    rscript(ANALYSIS / "summary.R", gen, out)
    tex = out.read_text()
    got = table_rows(tex)
    ma, kim, total = got["Ma et al. (2019)"], got["Kim et al. (2019)"], got["All papers"]
    # Fig. 1; Fig. 4 and Table I; Figs. 8-11 (config/experiments.csv)
    # this report is the paper profile's own (no --reference): one row per paper, labelled with it
    assert ma == ["paper", f"7 of {items_of('ma2019')}", "3 (2/1)", "1 (0/1)", "1 (1/0)", "1", "3", "--"]
    assert kim == ["paper", f"0 of {items_of('kim2019')}", "--", "--", "--", "--", "--", "--"]   # no claims file
    assert got["Yang et al. (2019)"][1] == f"0 of {items_of('yang2019')}"
    # the total counts every paper's items
    assert total[:3] == ["paper", f"7 of {published_items()}", "3 (2/1)"]
    assert "Not regenerated in the paper profile: Ma et al. (2019): Fig. 3, Fig. 5" in tex
    assert "\\begin{tabular}" in tex and "\\linewidth" in tex


@needs_r
def test_summary_without_strength_profile_or_reps_shows_dashes(tmp_path):
    gen = tmp_path / "generated"
    gen.mkdir()
    write_csv(gen / "claims_ma2019.csv", ["id", "paper", "source", "experiment", "verdict", "n"],
              [["c1", "p", "Fig. 1", "ma2019_fig01", "reproduced", "2"],
               ["c2", "p", "Fig. 1", "ma2019_fig01", "not reproduced", "2"],
               ["c3", "p", "Fig. 3", "ma2019_fig03", "not run", "0"]])
    # a paper with a claims file but no row in papers.csv still gets a row
    write_csv(gen / "claims_new2024.csv", CLAIMS_COLS, [["n1", "p", "Fig. 2", "new2024_fig02",
                                                         "reproduced", "robust", "1", "quick", "1"]])
    out = tmp_path / "summary.tex"
    rscript(ANALYSIS / "summary.R", gen, out, PAPER / "papers.csv")
    got = table_rows(out.read_text())
    # the profile label is read from the claims files (quick, from new2024's)
    assert got["Ma et al. (2019)"] == ["quick", f"0 of {items_of('ma2019')}", "1 (--)", "0", "1 (--)", "1", "--", "--"]
    assert got["new2024"] == ["quick", "--", "1 (1/0)", "0", "0", "0", "1", "--"]
    assert got["All papers"][-2:] == ["1", ""]


@needs_r
def test_summary_with_no_claims_at_all(tmp_path):
    gen = tmp_path / "generated"
    gen.mkdir()
    out = tmp_path / "summary.tex"
    rscript(ANALYSIS / "summary.R", gen, out)
    got = table_rows(out.read_text())
    assert set(got) == {p["citation"] for p in papers()} | {"All papers"}
    assert got["All papers"] == ["this", f"0 of {published_items()}", "--", "--", "--", "--", "--", ""]


COVERAGE_COLS = ["experiment", "paper", "points", "runs", "current", "stale", "missing", "experiment_s",
                 "missing_experiment_s", "host_cpu_s", "revisions", "first_archived", "last_archived"]


def ordered_rows(tex: str) -> list[list[str]]:
    """Body rows of a generated table in order, every cell (a second row of a paper has an empty
    first cell)."""
    return [[c.strip() for c in line[:-2].split(" & ")] for line in tex.split("\\midrule", 1)[1].splitlines()
            if line.endswith("\\\\") and " & " in line]


@needs_r
def test_summary_headline_is_the_paper_profile_and_the_own_profile_is_labelled(tmp_path):
    """Another profile's summary (the quick one's): per paper the paper profile's row from the
    reference claims and the archive's coverage, then its own row labelled with its profile; a
    paper the archive does not hold says so and why; the headline sentences and size macros."""
    gen, ref = tmp_path / "generated", tmp_path / "generated" / "reference"
    ref.mkdir(parents=True)
    (gen / "ma2019_fig01.pdf").write_bytes(b"%PDF-")
    write_csv(gen / "claims_ma2019.csv", CLAIMS_COLS,
              [["c1", "p", "Fig. 1", "ma2019_fig01", "reproduced", "marginal", "1", "quick", "1"],
               ["c2", "p", "Fig. 1", "ma2019_fig01", "not reproduced", "marginal", "1", "quick", "1"]])
    write_csv(ref / "claims_ma2019.csv", CLAIMS_COLS,
              [["c1", "p", "Fig. 1", "ma2019_fig01", "reproduced", "robust", "3", "paper", "3"],
               ["c2", "p", "Fig. 1", "ma2019_fig01", "reproduced", "robust", "3", "paper", "3"]])
    write_csv(gen / "claims_utsumi2022.csv", CLAIMS_COLS,
              [["u1", "p", "Fig. 4", "utsumi2022_fig04", "reproduced", "marginal", "1", "quick", "1"]])
    cov = write_csv(tmp_path / "coverage.csv", COVERAGE_COLS,
                    [["ma2019_fig01", "ma2019", "1", "3", "3", "0", "0", "360", "0", "90.5", "abc1234",
                      "2026-11-26T03:00:00Z", "2026-11-26T04:00:00Z"],
                     ["ma2019_fig03", "ma2019", "7", "21", "0", "1", "20", "2520", "2520", "0", "", "", ""],
                     ["utsumi2022_fig04", "utsumi2022", "10", "10", "0", "0", "10", "60000", "60000", "0", "", "", ""]])
    out = gen / "summary.tex"
    rscript(ANALYSIS / "summary.R", gen, out, PAPER / "papers.csv", REPO / "config" / "experiments.csv",
            "--profile", "quick", "--reference", ref, "--coverage", cov, "--archive", "data/paper")
    tex = out.read_text()
    rows = ordered_rows(tex)
    i = next(k for k, r in enumerate(rows) if r[0] == "Ma et al. (2019)")
    # the headline: the paper profile's verdicts, items the archive holds whole, its revision and day
    assert rows[i] == ["Ma et al. (2019)", "paper", f"1 of {items_of('ma2019')}", "2 (2/0)", "0", "0", "0", "3",
                       "rev.\\ abc1234, 2026-11-26"]
    assert rows[i + 1] == ["", "quick", f"1 of {items_of('ma2019')}", "1 (0/1)", "0", "1 (0/1)", "0", "1", "this report"]
    u = next(k for k, r in enumerate(rows) if r[0] == "Utsumi and Hasegawa (2022)")
    assert "not run in the paper profile" in rows[u][3] and rows[u + 1][1:4] == ["quick", f"0 of {items_of('utsumi2022')}", "1 (0/1)"]
    assert "the archive \\texttt{data/paper} holds 0 of its 10 paper-profile runs" in tex
    assert "16.7 hours of experiment time not held" in tex
    headline = (gen / "headline_ma2019.tex").read_text()
    assert "of its 2 claims, 2 reproduced (2 robust, 0 marginal)" in headline and "rev.\\ abc1234" in headline
    assert "\\emph{Profile quick}" in headline and "1 not reproduced (0 robust, 1 marginal)" in headline
    assert "\\texttt{ma2019\\_fig03}" in headline            # held only in part: named
    assert (gen / "headline_utsumi2022.tex").read_text().count("Not run in the paper profile") == 1
    sizes = (gen / "paper_profile.tex").read_text()
    assert "pp@ma2019@runs\\endcsname{24}" in sizes and "pp@all@hours\\endcsname{17}" in sizes
    assert "pp@ma2019@cpuhours\\endcsname{0.0}" in sizes and "pp@utsumi2022@cpuhours\\endcsname{--}" in sizes
    # the verdict macros of the prose (\claimverdict): the paper profile's, with their strength
    verdicts = (gen / "claim_verdicts.tex").read_text().splitlines()
    assert "\\expandafter\\def\\csname cv@c2\\endcsname{reproduced, robust}" in verdicts   # not quick's
    assert not any("cv@u1" in line for line in verdicts)     # Utsumi's paper profile has no claims table here


@needs_r
def test_claim_verdict_macros_name_not_run_without_strength(tmp_path):
    gen = tmp_path / "generated"
    gen.mkdir()
    write_csv(gen / "claims_ma2019.csv", CLAIMS_COLS,
              [["c1", "p", "Fig. 1", "ma2019_fig01", "not reproduced", "marginal", "3", "paper", "3"],
               ["c6", "p", "Fig. 5", "ma2019_fig05", "not run", "", "0", "paper", "3"]])
    rscript(ANALYSIS / "summary.R", gen, gen / "summary.tex")
    verdicts = (gen / "claim_verdicts.tex").read_text()
    assert "cv@c1\\endcsname{not reproduced, marginal}" in verdicts
    assert "cv@c6\\endcsname{not run}" in verdicts


# ---- point labels in R ----------------------------------------------------------------

@pytest.fixture(scope="module")
def labelled_tree(tmp_path_factory) -> Path:
    """The Fig. 1 tree plus two swept runs: one with a point label, one written before them."""
    root = synth_runs.make_fig01_tree(tmp_path_factory.mktemp("results"))
    flows = [{"flow": 1, "cc": "bbq", "rtt_ms": 20.0, "start_s": 0.0, "stop_s": 30.0},
             {"flow": 2, "cc": "bbq", "rtt_ms": 50.0, "start_s": 0.0, "stop_s": 30.0}]
    for point, label in (("f1_cc=bbq__f2_cc=bbq__f1_rtt_ms=20__f2_rtt_ms=50", "BBQ, 20 vs 50 ms"),
                         ("f1_cc=bbq__f2_cc=bbq__f1_rtt_ms=200__f2_rtt_ms=300", None)):
        run = synth_runs.write_run(root / "runs" / "ma2019_fig17" / point / "rep1", experiment="ma2019_fig17",
                                   point=point, repetition=1, flows=flows,
                                   phases={1: [(30, 40.0)], 2: [(30, 50.0)]}, qdelay_phases=[(30, 5.0)],
                                   retrans={1: 1, 2: 1})
        if label:
            meta = json.loads((run / "run.json").read_text())
            (run / "run.json").write_text(json.dumps(dict(meta, point_label=label)))
    return root


@needs_r
def test_point_label_falls_back_to_the_point_name(labelled_tree):
    code = (f'source("{ANALYSIS / "lib" / "load.R"}", chdir = TRUE)\n'
            f'runs <- read_runs("{labelled_tree}")\n'
            'i <- runs$index$experiment == "ma2019_fig17"\n'
            'cat(jsonlite::toJSON(list(index = runs$index$point_label[i],'
            ' meta = vapply(runs$runs[i], function(r) point_label(r$meta), ""),'
            ' empty = point_label(list()))))')
    got = json.loads(rscript("-e", code).stdout)
    assert got["index"] == got["meta"] == ["BBQ, 20 vs 50 ms", "f1_cc=bbq__f2_cc=bbq__f1_rtt_ms=200__f2_rtt_ms=300"]
    assert got["empty"] == ["base"]


@needs_r
def test_fidelity_table_shows_labels_and_fits_the_text_width(labelled_tree, tmp_path):
    out = tmp_path / "fidelity.tex"
    rscript(ANALYSIS / "fidelity.R", labelled_tree, out)
    tex = out.read_text()
    assert "\\begin{tabularx}{\\linewidth}" in tex and "X@{}}" in tex
    assert "ma2019\\_fig17 & BBQ, 20 vs 50~ms & 1 & valid" in tex
    # an unlabelled run's point name may break after its underscores
    assert "f1\\_\\allowbreak{}cc=bbq" in tex


@needs_r
def test_testbed_table_wraps_its_values(labelled_tree, tmp_path):
    out = tmp_path / "testbed.tex"
    rscript(ANALYSIS / "testbed_table.R", labelled_tree, out)
    assert "p{0.7\\linewidth}" in out.read_text()


# ---- the report builds, from all or some generated inputs ------------------------------

def build_report(report: Path) -> subprocess.CompletedProcess:
    shutil.copy(PAPER / "report.tex", report)
    shutil.copytree(PAPER / "sections", report / "sections")
    return subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
                          cwd=report, capture_output=True, text=True, timeout=300)


def pdf_text(pdf: Path) -> str:
    if not shutil.which("pdftotext"):
        return ""
    return subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout


@needs_r
@needs_latex
def test_report_builds_with_summary_and_no_overfull_tables(labelled_tree, tmp_path):
    report = tmp_path / "report"
    gen = report / "generated"
    rscript(ANALYSIS / "testbed_table.R", labelled_tree, gen / "testbed.tex")
    rscript(ANALYSIS / "figures" / "ma2019" / "ma2019_fig01.R", labelled_tree, gen / "ma2019_fig01.pdf")
    rscript(ANALYSIS / "fidelity.R", labelled_tree, gen / "fidelity.tex")
    write_csv(gen / "claims_ma2019.csv", CLAIMS_COLS,
              [["c1", "p", "Fig. 1", "ma2019_fig01", "reproduced", "robust", "2", "quick", "1"]])
    rscript(ANALYSIS / "summary.R", gen, gen / "summary.tex")
    proc = build_report(report)
    assert proc.returncode == 0, proc.stdout[-3000:]
    log = (report / "report.log").read_text(errors="replace")
    # no table of ours runs off the page (the claims table is not generated here)
    for name in ("testbed", "summary", "fidelity"):
        chunk = log.split(f"generated/{name}.tex", 1)[1].split("(./", 1)[0]
        assert "Overfull \\hbox" not in chunk, name
    text = pdf_text(report / "report.pdf")
    if text:
        assert "All papers" in text and f"1 of {items_of('ma2019')}" in text
        assert "BBQ, 20 vs 50 ms" in text
        assert "Not generated in this profile: the claims table of Ma et al." in text


@needs_latex
def test_report_builds_from_no_generated_input(tmp_path):
    report = tmp_path / "report"
    (report / "generated").mkdir(parents=True)
    proc = build_report(report)
    assert proc.returncode == 0, proc.stdout[-3000:]
    text = pdf_text(report / "report.pdf")
    if text:
        assert "experiment ma2019_fig01 is not in its configuration" in text
        assert "Not generated in this profile: the summary table" in text


def test_every_character_the_claims_tables_quote_can_be_typeset():
    """The claims tables quote the papers (text, reading, ...): every non-ASCII character of
    claims/*.csv is Latin-1 (inputenc's utf8 knows those) or declared in paper/report.tex
    (\\DeclareUnicodeCharacter); an undeclared one stops latexmk (a γ did, in the quick report)."""
    preamble = (REPO / "paper" / "report.tex").read_text()
    declared = {chr(int(h, 16)) for h in re.findall(r"\\DeclareUnicodeCharacter\{([0-9A-Fa-f]{4})\}", preamble)}
    missing = {}
    for path in sorted((REPO / "claims").glob("*.csv")):
        for ch in set(path.read_text(encoding="utf-8")):
            if ord(ch) > 0xFF and ch not in declared:
                missing.setdefault(path.name, []).append(f"{ch} (U+{ord(ch):04X})")
    assert not missing, f"characters LaTeX cannot typeset (declare them in paper/report.tex): {missing}"


# ---- another profile's claims table beside the paper profile's (analysis/lib/reference.R) ----

@needs_r
def test_claims_table_gives_the_paper_verdict_and_lists_disagreements(tmp_path):
    ref = write_csv(tmp_path / "paper.csv", ["id", "verdict", "strength", "profile", "reps", "mean"],
                    [["a", "reproduced", "robust", "paper", "3", "1"],
                     ["b", "not reproduced", "robust", "paper", "3", "2"],
                     ["c", "not run", "", "paper", "3", ""]])
    code = (f'source("{ANALYSIS / "lib" / "load.R"}", chdir = TRUE)\n'
            f'ref <- read_reference("{ref}", c("a", "b", "c", "d"))\n'
            'res <- tibble(id = c("a", "b", "c", "d"), verdict = c("reproduced", "reproduced", "reproduced", "not run"))\n'
            'cat(jsonlite::toJSON(list(cells = vapply(seq_len(4), function(i) reference_cell(ref, res$id[i], res$verdict[i]), ""),'
            ' par = paste(disagreement_lines(ref, res, "quick"), collapse = "\\n"))))')
    got = json.loads(rscript("-e", code).stdout)
    assert got["cells"][0] == "\\newline {\\scriptsize paper profile: reproduced (robust)}"
    assert got["cells"][1] == "\\newline {\\scriptsize paper profile: \\textbf{not reproduced} (robust)}"
    assert got["cells"][2] == got["cells"][3] == "\\newline {\\scriptsize paper profile: not run}"
    par = got["par"][0]
    assert "the verdicts differ on 1 of the 2 claims both evaluated: \\texttt{b} (quick: reproduced; paper: not reproduced)." in par
    assert "no verdict on 1 claim(s) evaluated here" in par
    # a file that is not a claims CSV is named
    bad = write_csv(tmp_path / "bad.csv", ["id", "verdict"], [["a", "reproduced"]])
    proc = rscript("-e", f'source("{ANALYSIS / "lib" / "load.R"}", chdir = TRUE); read_reference("{bad}", "a")', check=False)
    assert proc.returncode != 0 and "bad.csv: not a claims CSV" in proc.stderr
