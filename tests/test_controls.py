"""The transfer-length rule's control runs (bbrlab/experiment/controls.py, docs/specs.md
"Transfer length"): which runs they are, where they are held once a spec is shortened, and that a
shortened spec runs the length the rule chose from them.

The reference for the control runs' length is the paper, not the specs: Utsumi & Hasegawa, Sec.
VI-A, "The duration of the data transfer is 6000 [sec]."
"""
import copy
import csv
import pathlib
import shutil
import subprocess

import pytest

from bbrlab.data import archive
from bbrlab.experiment import controls, experiments, repetitions, runkey
from bbrlab.host import runner

REPO = pathlib.Path(__file__).resolve().parents[1]
PAPER_TRANSFER_S = 6000          # Utsumi & Hasegawa, Sec. VI-A
ARCHIVES = [REPO / controls.ARCHIVE, REPO / "data" / controls.PROFILE]


def _paper_duration(experiment):
    spec = REPO / experiments.load(REPO)[0][experiment].spec
    return repetitions.runs(spec, profile=controls.PROFILE)[0]["duration_s"]


def _shortened():
    """The control table's experiments whose paper profile runs less than the paper's transfer."""
    return sorted(e for e in {r["experiment"] for r in controls.rows(REPO)} if _paper_duration(e) < PAPER_TRANSFER_S)


def _held(job):
    for where in ARCHIVES:
        state, row = archive.lookup_job(where, job) if (where / "manifest.csv").is_file() else (None, None)
        if state == "fresh":
            return where, row
    return None


def test_control_runs_are_the_paper_profile_runs_at_the_papers_length():
    """Every control point has seeds 1-3, each the paper-profile run of that point and repetition
    with only the transfer set to the paper's 6000 s."""
    exps = experiments.load(REPO)[0]
    pairs = controls.jobs(REPO)
    per_row = {}
    for row, job in pairs:
        per_row.setdefault((row["experiment"], row["point"]), []).append(job)
        assert job["duration_s"] == PAPER_TRANSFER_S, (job["name"], job["point"])
        paper = {(j["point"], j["repetition"]): j for j in repetitions.runs(REPO / exps[job["name"]].spec,
                                                                             profile=controls.PROFILE)}
        twin = copy.deepcopy(paper[(job["point"], job["repetition"])])
        for flow in twin["flows"]:          # flows that run to the end of the transfer
            if flow["stop_s"] == twin["duration_s"]:
                flow["stop_s"] = job["duration_s"]
        twin["duration_s"] = job["duration_s"]
        assert runkey.run_key(twin) == runkey.run_key(job)
    assert len(per_row) == len(controls.rows(REPO))
    for jobs in per_row.values():
        assert len({j["point"] for j in jobs}) == 1
        assert sorted(j["repetition"] for j in jobs) == [1, 2, 3]


def test_a_shortened_spec_keeps_every_control_run_current():
    """A spec runs less than 6000 s in the paper profile only with all its control runs held, at
    their 6000-s keys, by the controls archive or the paper profile's; and its length is one of
    the rule's candidates."""
    shortened = _shortened()
    assert "utsumi2022_fig04" in shortened          # the rule's first choice (docs/specs.md)
    for row, job in controls.jobs(REPO):
        if row["experiment"] in shortened:
            assert _held(job) is not None, f"{job['name']}/{job['point']}/rep{job['repetition']} not held current"
    smk = (REPO / "workflow" / "rules" / "controls.smk").read_text()
    candidates = [int(x) for x in smk.split("TRANSFER_CANDIDATES_S = [", 1)[1].split("]", 1)[0].split(",")]
    for e in shortened:
        assert _paper_duration(e) in candidates, e


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")
def test_a_shortened_spec_runs_the_length_the_rule_chose(tmp_path):
    """The evidence table computed from the archived control runs (analysis/transfer_length.R)
    chooses, for every shortened spec, exactly the length its paper profile runs."""
    shortened = _shortened()
    runs = tmp_path / "runs"
    for row, job in controls.jobs(REPO):
        if row["experiment"] in shortened:
            where, entry = _held(job)
            archive.restore(where, entry, runs / job["name"] / job["point"] / f"rep{job['repetition']}")
    tex = tmp_path / "transfer_length.tex"
    out = subprocess.run(["Rscript", "analysis/transfer_length.R", "claims/utsumi2022.csv", controls.TABLE,
                          str(runs), str(tex), str(controls.SEEDS), "600", "1200", "2000"],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    with open(tmp_path / "transfer_length_summary.csv", newline="") as f:
        chosen = {r["experiment"]: r["chosen_s"] for r in csv.DictReader(f)}
    for e in shortened:
        assert chosen[e] not in ("", "NA") and float(chosen[e]) == _paper_duration(e), (e, chosen[e])


def test_a_control_run_is_restored_from_the_archive_that_holds_it(tmp_path):
    """`bbrlab run --full-length` with several archives restores a held control run from the
    one that holds it (nothing boots); the same point without --full-length is another run."""
    job = next(j for r, j in controls.jobs(REPO) if r["experiment"] == "utsumi2022_fig04" and j["repetition"] == 1)
    spec = REPO / experiments.load(REPO)[0][job["name"]].spec
    empty = tmp_path / "empty"
    summaries = runner.run_spec_file(spec, tmp_path / "out", profile=controls.PROFILE, full_length=True,
                                     only_point=job["point"], only_rep=1, archive=[empty, *ARCHIVES],
                                     progress=lambda *_: None)
    assert [s["run_key"] for s in summaries] == [runkey.run_key(job)]
    assert summaries[0]["restored_from_archive"]
    short = next(j for j in repetitions.runs(spec, profile=controls.PROFILE)
                 if j["point"] == job["point"] and j["repetition"] == 1)
    assert short["duration_s"] < PAPER_TRANSFER_S
    assert runner.restore_archived(short, [empty, REPO / controls.ARCHIVE], tmp_path / "x",
                                   progress=lambda *_: None) is None


@pytest.mark.parametrize("point, selector, expected", [
    ("buffer_bdp=128", "buffer_bdp=128", True),
    ("buffer_bdp=16", "buffer_bdp=128", False),
    ("f2_cc=bbr_fca__f1_rtt_ms=80__buffer_bdp=128", "f2_cc=bbr&f1_rtt_ms=80", False),
    ("f2_cc=bbr__f1_rtt_ms=80__buffer_bdp=128", "f2_cc=bbr&f1_rtt_ms=80", True),
    ("f2_cc=bbr__f1_rtt_ms=40__buffer_bdp=128", "f2_cc=bbr&f1_rtt_ms>=80", False),
    ("f2_cc=bbr__f1_rtt_ms=80.0", "f1_rtt_ms=80", True),             # numbers compare as numbers
    ("f1_count=5", "f2_count=5", False),                            # a key the point lacks
])
def test_point_selectors_read_as_the_claims_tables_read_them(point, selector, expected):
    assert controls.point_matches(point, selector) is expected


def test_bad_controls_are_named(tmp_path, monkeypatch):
    with pytest.raises(controls.ControlsError, match="not a condition"):
        controls.point_matches("buffer_bdp=128", "buffer_bdp")
    table = tmp_path / "controls.csv"
    table.write_text("experiment,point,why\nutsumi2022_fig04,buffer_bdp=3,none such\n")
    monkeypatch.setattr(controls, "TABLE", str(table))
    with pytest.raises(controls.ControlsError, match="line 2: 'buffer_bdp=3' matches no point"):
        controls.jobs(REPO)
    table.write_text("experiment,point,why\nutsumi2022_fig99,buffer_bdp=128,none such\n")
    with pytest.raises(controls.ControlsError, match="line 2: 'utsumi2022_fig99' is not an experiment"):
        controls.jobs(REPO)
