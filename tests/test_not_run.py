"""The paper-profile experiments the archive does not hold whole are named in the report with a
reason (config/paper_not_run.csv, analysis/not_run.R): every such experiment has one, and no
reason is left behind for an experiment the archive holds whole."""
import csv
import pathlib
import shutil
import subprocess

import pytest

from bbrlab.data import archive
from bbrlab.experiment import experiments, repetitions

REPO = pathlib.Path(__file__).resolve().parents[1]
REASONS = REPO / "config" / "paper_not_run.csv"


def _held_whole() -> dict:
    """{experiment: whether data/paper holds every paper-profile run of it with this checkout's keys}."""
    rows = archive.read_manifest(REPO / "data" / "paper")
    modules = {}
    return {e.name: all(archive.held_row(rows, job, modules) is not None
                        for job in repetitions.runs(REPO / e.spec, profile="paper"))
            for e in experiments.of_profile(experiments.load(REPO)[0], "paper")}


def test_every_experiment_not_held_whole_has_a_reason_and_no_other_does():
    with REASONS.open(newline="") as f:
        reasons = {r["experiment"]: r["reason"] for r in csv.DictReader(f)}
    held = _held_whole()
    lacking = sorted(e for e, whole in held.items() if not whole)
    assert lacking, "the archive holds the whole paper profile: config/paper_not_run.csv should be empty"
    assert sorted(e for e in lacking if not reasons.get(e, "").strip()) == []
    assert sorted(e for e in reasons if held.get(e, False) or e not in held) == []


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")
def test_the_table_names_each_lacking_experiment_and_its_reason(tmp_path):
    coverage = tmp_path / "coverage.csv"
    coverage.write_text("experiment,paper,points,runs,current,stale,missing,experiment_s,missing_experiment_s,"
                        "host_cpu_s,revisions,first_archived,last_archived\n"
                        "a_whole,p,1,3,3,0,0,180,0,9,abc,,\n"
                        "b_part,p,2,6,3,0,3,21600,10800,9,abc,,\n"
                        "c_none,p,1,3,0,1,2,18000,18000,0,,,\n")
    reasons = tmp_path / "reasons.csv"
    reasons.write_text('experiment,reason\nb_part,"6000-s transfers: for a cluster"\n')
    out = tmp_path / "not_run.tex"
    proc = subprocess.run(["Rscript", "analysis/not_run.R", coverage, reasons, out], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    tex = out.read_text()
    assert "a\\_whole" not in tex
    assert "b\\_part} & 3 / 6 & 3 & 6000-s transfers: for a cluster" in tex
    assert "c\\_none} & 0 / 3 & 5 & no reason given" in tex
    reasons.write_text('experiment,reason\nz_unknown,"x"\n')
    proc = subprocess.run(["Rscript", "analysis/not_run.R", coverage, reasons, tmp_path / "o.tex"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "z_unknown" in proc.stderr and not (tmp_path / "o.tex").exists()
