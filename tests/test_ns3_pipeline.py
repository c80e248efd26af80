"""The pipeline's ns-3 switch (docs/ns3-backend.md), short of running it: `--config
backend=ns3` plans the configured runs ns-3 accepts into results/<profile>-ns3/ and none it
refuses, with no kernel or module build; `compare_ns3` adds the published / ns-3 / kernel
table to the kernel report; analysis/ns3_compare.R on constructed claims CSVs. Nothing runs."""
import csv
import re
import shutil
import subprocess
import sys

import pytest

from bbrlab.experiment import spec
from bbrlab.experiment import experiments
from bbrlab.host.backends import ns3_backend
from conftest import REPO

needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")


def snakemake(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "snakemake", "--nolock", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def configured_jobs():
    for e in experiments.of_profile(experiments.load(REPO)[0], "quick"):
        yield from spec.expand(spec.load(REPO / e.spec, profile="quick"))


def run_json(tree, job):
    return f"{tree}/runs/{job['name']}/{job['point']}/rep{job['repetition']}/run.json"


def test_ns3_switch_plans_accepted_runs_into_their_own_tree_and_skips_refused_ones():
    res = snakemake("-n", "-p", "--forcerun", "run", "--config", "backend=ns3")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    accepted, refused = [], []
    for job in configured_jobs():
        (refused if ns3_backend.refusals(job) else accepted).append(job)
    assert accepted and refused     # e.g. the BBR variants' runs are refused
    planned = set(re.findall(r"output: (results/\S+/run\.json)", out))
    assert planned == {run_json("results/quick-ns3", j) for j in accepted}
    for job in refused:
        assert f"/{job['name']}/{job['point']}/rep{job['repetition']}/" not in out
    assert "--out results/quick/runs" not in out and "--backend ns3" in out and "--kernel" not in out
    assert "rule kernel:" not in out and "rule variant_module:" not in out
    assert "results/quick-ns3/refused.csv" in out     # the skipped runs, listed by rule ns3_refused


def checkout(tmp_path):
    """The repository's files without its results/ and build/: plans that do not depend on
    what this checkout has already run."""
    box = tmp_path / "box"
    box.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in ("results", "build", ".snakemake", ".git"):
            (box / entry.name).symlink_to(entry)
    return box


def test_kernel_plan_is_unchanged_and_compares_only_when_asked(tmp_path):
    box = checkout(tmp_path)
    res = snakemake("-n", "-p", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "quick-ns3" not in out and "ns3_compare" not in out and "--backend uml" in out
    # asked, without the ns-3 tree: the kernel pipeline does not build it, so the plan stops
    res = snakemake("-n", "-p", "--config", "compare_ns3=[tang]", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "results/quick-ns3/report/generated/claims_tang.csv" in out
    # with the ns-3 tree's claims there: the table is planned and the report needs it
    ns3_claims = box / "results" / "quick-ns3" / "report" / "generated" / "claims_tang.csv"
    ns3_claims.parent.mkdir(parents=True)
    ns3_claims.write_text("id\n")
    res = snakemake("-n", "-p", "--config", "compare_ns3=[tang]", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert ("Rscript analysis/ns3_compare.R results/quick/report/generated/claims_tang.csv "
            "results/quick-ns3/report/generated/claims_tang.csv "
            "results/quick/report/generated/ns3_compare_tang.tex") in out
    assert "results/quick/report/generated/ns3_compare_tang.tex, results/quick/report/generated/fidelity.tex" in out


CLAIM_COLS = ["id", "source", "text", "published", "unit", "kind", "op", "aggregate", "mean", "n",
              "verdict", "strength", "profile", "reps"]


def claims_csv(path, rows):
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CLAIM_COLS)
        w.writerows(rows)
    return path


@needs_r
def test_compare_marks_a_disagreement_and_a_claim_missing_from_one_tree(tmp_path):
    kernel = claims_csv(tmp_path / "kernel.csv", [
        ["c-same", "Fig. 2", "BBR gets 9.12", "9.12", "Mbit/s", "exact", "", "", "9.0", "1", "reproduced", "marginal", "quick", "1"],
        ["c-differ", "Table II", "BBR keeps 8.85", "8.85", "Mbit/s", "exact", "", "", "8.8", "1", "reproduced", "marginal", "quick", "1"],
        ["c-kernel-only", "Fig. 5", "BBR 25 %", "25", "%", "bound", "<", "all", "20", "1", "reproduced", "marginal", "quick", "1"],
    ])
    ns3 = claims_csv(tmp_path / "ns3.csv", [
        ["c-same", "Fig. 2", "BBR gets 9.12", "9.12", "Mbit/s", "exact", "", "", "9.1", "1", "reproduced", "marginal", "quick", "1"],
        ["c-differ", "Table II", "BBR keeps 8.85", "8.85", "Mbit/s", "exact", "", "", "0.02", "1", "not reproduced", "marginal", "quick", "1"],
    ])
    out = tmp_path / "generated" / "ns3_compare_x.tex"
    proc = subprocess.run(["Rscript", str(REPO / "analysis" / "ns3_compare.R"), str(kernel), str(ns3), str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with out.with_suffix(".csv").open(newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    assert list(rows) == ["c-same", "c-differ", "c-kernel-only"]
    assert rows["c-differ"]["differ"] == "TRUE"
    assert (rows["c-differ"]["ns3_verdict"], rows["c-differ"]["kernel_verdict"]) == ("not reproduced", "reproduced")
    assert rows["c-same"]["differ"] == "FALSE"
    assert rows["c-kernel-only"]["ns3_verdict"] == "not run" and rows["c-kernel-only"]["differ"] == "FALSE"
    tex = out.read_text()
    body = [line for line in tex.splitlines() if line.endswith("\\\\") and "``" in line]
    assert len(body) == 3
    differ_line = next(line for line in body if "BBR keeps 8.85" in line)
    assert differ_line.rstrip("\\ ").endswith("$\\neq$")
    assert "0.02\\newline not reproduced" in differ_line and "8.80\\newline reproduced" in differ_line
    kernel_only = next(line for line in body if "BBR 25" in line)
    assert "--\\newline not run" in kernel_only and "$\\neq$" not in kernel_only
    assert "$\\neq$" not in next(line for line in body if "BBR gets 9.12" in line)
    assert "Verdicts differ on 1 of 3 claims." in tex
    # the ns-3 tree not there at all: every claim not run on ns-3, none marked
    proc = subprocess.run(["Rscript", str(REPO / "analysis" / "ns3_compare.R"), str(kernel),
                           str(tmp_path / "absent.csv"), str(out)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "$\\neq$ &" not in out.read_text() and "Verdicts differ on 0 of 3 claims." in out.read_text()


def test_linux_rules_have_their_own_tree_and_a_wrong_value_stops_the_plan(tmp_path):
    box = checkout(tmp_path)
    res = snakemake("-n", "-p", "--config", "backend=ns3", "ns3_rules=linux", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    runs = re.findall(r"output: (results/\S+/run\.json)", out)
    assert runs and all(r.startswith("results/quick-ns3-linux/runs/") for r in runs)
    assert "--backend ns3 --ns3-rules linux" in out and "results/quick-ns3/" not in out
    # the stock rules are the default and pass no switch
    res = snakemake("-n", "-p", "--config", "backend=ns3", cwd=box)
    assert res.returncode == 0 and "--ns3-rules" not in res.stdout + res.stderr
    # a misspelt value, or the rules asked of the kernel backend: no plan, the key named
    for bad in (["backend=ns3", "ns3_rules=linx"], ["ns3_rules=linux"]):
        res = snakemake("-n", "--config", *bad, cwd=box)
        assert res.returncode != 0 and "ns3_rules" in res.stdout + res.stderr


def test_compare_with_linux_rules_reads_the_third_tree(tmp_path):
    box = checkout(tmp_path)
    for tree in ("quick-ns3", "quick-ns3-linux"):
        claims = box / "results" / tree / "report" / "generated" / "claims_tang.csv"
        claims.parent.mkdir(parents=True)
        claims.write_text("id\n")
    res = snakemake("-n", "-p", "--config", "compare_ns3=[tang]", "compare_ns3_linux=true", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert ("Rscript analysis/ns3_compare.R results/quick/report/generated/claims_tang.csv "
            "results/quick-ns3/report/generated/claims_tang.csv "
            "results/quick/report/generated/ns3_compare_tang.tex "
            "results/quick-ns3-linux/report/generated/claims_tang.csv") in out


@needs_r
def test_compare_counts_the_disagreements_linux_rules_settle_as_the_kernel(tmp_path):
    row = lambda cid, mean, verdict: [cid, "Fig. 3", f"claim {cid}", "5.8", "Mbit/s", "exact", "", "", mean,
                                      "1", verdict, "marginal", "quick", "1"]
    kernel = claims_csv(tmp_path / "kernel.csv", [row("a", "5.9", "reproduced"), row("b", "9.6", "not reproduced"),
                                                  row("c", "5.7", "reproduced")])
    ns3 = claims_csv(tmp_path / "ns3.csv", [row("a", "0.1", "not reproduced"), row("b", "0.2", "not reproduced"),
                                            row("c", "0.3", "not reproduced")])
    linux = claims_csv(tmp_path / "linux.csv", [row("a", "5.5", "reproduced"), row("b", "9.2", "not reproduced"),
                                                row("c", "0.4", "not reproduced")])
    out = tmp_path / "ns3_compare_x.tex"
    proc = subprocess.run(["Rscript", str(REPO / "analysis" / "ns3_compare.R"), str(kernel), str(ns3), str(out),
                           str(linux)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with out.with_suffix(".csv").open(newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    # a: ns-3 and kernel differ, Linux rules agree with the kernel; b: no difference to settle;
    # c: they differ and the Linux rules keep ns-3's verdict
    assert [(rows[i]["differ"], rows[i]["linux_as_kernel"]) for i in "abc"] == [
        ("TRUE", "TRUE"), ("FALSE", "FALSE"), ("TRUE", "FALSE")]
    assert rows["a"]["linux_mean"] == "5.5" and rows["c"]["linux_verdict"] == "not reproduced"
    tex = out.read_text()
    assert "ns-3, Linux rules" in tex and "Verdicts differ on 2 of 3 claims." in tex
    assert "Of those 2, ns-3 under Linux's rules gives the kernel's verdict on 1;" in tex
    assert "ns-3 under Linux's rules and the kernel differ on 1 of the 3 claims both ran." in tex
    line_a = next(line for line in tex.splitlines() if "claim a" in line)
    # the columns in order: ns-3, Linux rules, kernel
    assert line_a.index("0.1\\newline") < line_a.index("5.5\\newline") < line_a.index("5.9\\newline")
