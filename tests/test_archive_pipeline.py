"""A profile rebuilt from the results archive without a testbed, in a copy of the pipeline
(tests/test_workflow.py's): runs the archive holds with the checkout's keys are restored, not
booted (no kernel or module is planned, and the copy has no kernel to boot), the figure is drawn
from them; a run whose resolved spec changed since it was archived is stale and planned to run.

The archive is made from synthetic runs (tests/analysis/synth_runs.py) carrying the keys of the
real jobs of two Ma et al. experiments (BBR, and BBQ, a variant module)."""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

from bbrlab.experiment import repetitions, runkey
from bbrlab.data import archive
from conftest import REPO
from test_workflow import copy_pipeline, plan, snakemake

sys.path.insert(0, str(REPO / "tests" / "analysis"))
import synth_runs  # noqa: E402

EXPERIMENTS = ["ma2019_fig01", "ma2019_fig13"]
REVISION = "0123456789abcdef0123456789abcdef01234567"     # the revision the synthetic runs say ran them
CONFIG = ["--config", f"experiments=[{','.join(EXPERIMENTS)}]", "claims=[ma2019]"]


def jobs(box, experiment, profile="quick"):
    """The runs the box's pipeline plans for an experiment: its spec with the box's added repetitions."""
    return repetitions.runs(box / "mininet" / "specs" / "ma2019" / f"{experiment}.yaml", profile, root=box)


def booted_runs(box) -> list:
    """The run jobs of a dry run that would boot a testbed (their inputs name the kernel), as
    opposed to those restored from the archive (their inputs name its tarball)."""
    res = snakemake(box, "-n", *CONFIG)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    runs = re.findall(r"^(?:local)?rule run:\n    input: ([^\n]+)\n    output: ([^\n]+)", res.stdout + res.stderr, re.M)
    assert runs
    assert all(("build/kernel/ready-" in i) != ("data/quick/runs/" in i) for i, _ in runs)
    return sorted(o for i, o in runs if "build/kernel/ready-" in i)


def write_synthetic_run(runs, experiment, job, profile, goodput_mbps=40.0):
    """A synthetic run of `job` (every flow at goodput_mbps) with the job's keys, in
    runs/<experiment>/<point>/rep<k>; returns its directory."""
    flows = [{"flow": f["flow"], "cc": f["cc"], "rtt_ms": float(f["rtt_ms"]), "start_s": float(f["start_s"]),
              "stop_s": float(f["stop_s"]), "label": f["label"]} for f in job["flows"]]
    run_dir = runs / experiment / job["point"] / f"rep{job['repetition']}"
    synth_runs.write_run(run_dir, experiment=experiment, point=job["point"], repetition=job["repetition"],
                         flows=flows, phases={f["flow"]: [(1e9, goodput_mbps)] for f in flows},
                         qdelay_phases=[(1e9, 5.0)], retrans={f["flow"]: 0 for f in flows})
    meta = json.loads((run_dir / "run.json").read_text())
    meta.update(spec=job, run_key=runkey.run_key(job), modules_key=runkey.modules_key(job), profile=profile,
                git_revision=REVISION)
    (run_dir / "run.json").write_text(json.dumps(meta))
    return run_dir


def archive_synthetic_runs(box, profile="quick", experiments=EXPERIMENTS, first=None) -> int:
    """Synthetic runs of every job (or the `first` jobs) of `experiments` in `profile`, with those
    jobs' keys, archived in box/data/<profile> (the profile's default archive); returns how many."""
    runs = box / "staging" / profile
    n = 0
    for experiment in experiments:
        for job in jobs(box, experiment, profile)[:first]:
            write_synthetic_run(runs, experiment, job, profile)
            n += 1
    counts = archive.add(box / "data" / profile, archive.complete_runs(runs), progress=lambda *_: None)
    assert counts["added"] == n
    return n


def test_an_archived_profile_is_rebuilt_without_a_testbed(tmp_path):
    box = copy_pipeline(tmp_path)
    before = plan(box, *CONFIG)
    assert "kernel" in before and "variant_module" in before          # without an archive: boots
    n = archive_synthetic_runs(box)
    jobs_planned = plan(box, *CONFIG)
    assert len(jobs_planned["run"]) == n and booted_runs(box) == []
    assert "kernel" not in jobs_planned and "variant_module" not in jobs_planned
    # really build the first experiment's figure: its runs come from the archive (the copy has no
    # kernel: a boot would fail)
    assert not (box / "build" / "kernel" / "linux").exists()
    res = snakemake(box, *CONFIG, "--", f"results/quick/report/generated/{EXPERIMENTS[0]}.pdf")
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    log = "".join(p.read_text() for p in (box / "results" / "quick" / "logs" / EXPERIMENTS[0]).rglob("*.log"))
    assert "restored from the archive" in log and "booting" not in log
    for job in jobs(box, EXPERIMENTS[0]):
        meta = json.loads((box / "results" / "quick" / "runs" / EXPERIMENTS[0] / job["point"]
                           / f"rep{job['repetition']}" / "run.json").read_text())
        assert meta["restored_from_archive"]["archive"] == "data/quick"
        assert meta["run_key"] == runkey.run_key(job)
    assert (box / "results" / "quick" / "report" / "generated" / f"{EXPERIMENTS[0]}.pdf").stat().st_size > 0


def test_a_changed_spec_makes_its_archived_runs_stale(tmp_path):
    box = copy_pipeline(tmp_path)
    archive_synthetic_runs(box)
    path = box / "mininet" / "specs" / "ma2019" / "ma2019_fig13.yaml"
    text = path.read_text()
    assert "seed:" not in text
    path.write_text(text.replace("\nflows:", "\nseed: 7\nflows:", 1))       # another seed: other runs
    booted = booted_runs(box)
    assert booted and all("ma2019_fig13" in o for o in booted)
    assert len(booted) == len(jobs(box, "ma2019_fig13"))                       # they must boot
    assert "kernel" in plan(box, *CONFIG)
    # the command line says so, naming the run, before it would boot
    job = jobs(box, "ma2019_fig13")[0]
    res = subprocess.run([sys.executable, "-m", "bbrlab", "archive", "status", "data/quick", str(path.relative_to(box)),
                          "--profile", "quick"], cwd=box, capture_output=True, text=True,
                         env={"PYTHONPATH": str(box / "mininet"), "PATH": "/usr/bin:/bin"})
    assert f"stale    ma2019_fig13/{job['point']}/rep1" in res.stdout, res.stdout + res.stderr


def test_a_changed_module_source_makes_its_archived_runs_stale(tmp_path):
    box = copy_pipeline(tmp_path)
    archive_synthetic_runs(box)
    header = box / "kernel" / "variants" / "bbq_math.h"
    header.write_text(header.read_text() + "\n#define BBRLAB_TEST_CHANGE 1\n")   # code, not a comment (runkey code_only)
    booted = booted_runs(box)
    bbq = [f"results/quick/runs/ma2019_fig13/{j['point']}/rep{j['repetition']}/run.json"
           for j in jobs(box, "ma2019_fig13") if any(f["cc"] == "bbq" for f in j["flows"])]
    assert bbq and booted == sorted(bbq)          # BBQ's runs boot again; BBR's are still restored
    assert "variant_module" in plan(box, *CONFIG)


def test_an_entry_replaced_after_its_copy_was_restored_is_restored_again(tmp_path):
    """A stale run rerun and archived again keeps its run key (only its module key changed): its copy
    restored before then must not stand for it. The entry's checksum names a stamp the restore
    depends on, so that run, and only it, is restored again; nothing boots."""
    box = copy_pipeline(tmp_path)
    archive_synthetic_runs(box)
    runs = [f"results/quick/runs/{EXPERIMENTS[0]}/{j['point']}/rep{j['repetition']}/run.json"
            for j in jobs(box, EXPERIMENTS[0])]
    res = snakemake(box, *CONFIG, "--", *runs)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert not set(runs) & set(plan(box, *CONFIG).get("run", []))      # restored: up to date
    # the first run archived again with other data (same keys): the entry is replaced
    run_dir = write_synthetic_run(box / "staging" / "again", EXPERIMENTS[0], jobs(box, EXPERIMENTS[0])[0], "quick",
                                  goodput_mbps=30.0)
    counts = archive.add(box / "data" / "quick", [run_dir], progress=lambda *_: None)
    assert counts["replaced"] == 1
    planned = plan(box, *CONFIG).get("run", [])
    assert [r for r in planned if r in runs] == [runs[0]]
    assert booted_runs(box) == []


def test_a_fresh_clone_rebuilds_the_paper_report_from_its_archive(tmp_path):
    """The paper profile's report (figures, claims, summary, PDF) from its archive alone
    (archived_only=true: the experiments it holds whole): the copy has no kernel, every run is
    restored (none boots), the summary's headline names the archive's revision, and a paper the
    archive does not hold says it was not run in the paper profile."""
    box = copy_pipeline(tmp_path)
    assert not (box / "build" / "kernel" / "linux").exists()
    n = archive_synthetic_runs(box, "paper", ["ma2019_fig01"])
    cfg = ["--config", "profile=paper", "archived_only=true"]     # every experiment the archive holds whole
    planned = plan(box, *cfg)
    assert len(planned["run"]) == n and "kernel" not in planned and "variant_module" not in planned
    assert {o.split("/")[3] for o in planned["run"]} == {"ma2019_fig01"}
    res = snakemake(box, *cfg)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    logs = "".join(p.read_text() for p in (box / "results" / "paper" / "logs" / "ma2019_fig01").rglob("*.log"))
    assert logs.count("restored from the archive") == n and "booting" not in logs
    gen = box / "results" / "paper" / "report" / "generated"
    assert (box / "results" / "paper" / "report" / "report.pdf").stat().st_size > 0
    assert (gen / "ma2019_fig01.pdf").is_file() and (gen / "claims_ma2019.csv").is_file()
    summary = (gen / "summary.tex").read_text()
    assert f"Ma et al. (2019) & paper & 1 of" in summary and f"rev.\\ {REVISION[:7]}, 20" in summary
    assert "Utsumi and Hasegawa (2022) & paper & 0 of" in summary and "not run in the paper profile" in summary
    assert "Not run in the paper profile" in (gen / "headline_utsumi2022.tex").read_text()
    assert "\\emph{Paper profile} (runs archived in \\texttt{data/paper}" in (gen / "headline_ma2019.tex").read_text()


def test_another_profile_shows_the_paper_verdicts_from_the_archive(tmp_path):
    """The quick profile's claims table and summary with the paper profile's verdicts beside its
    own: the paper runs are unpacked from data/paper into results/quick/reference/ (not booted),
    only for experiments the archive holds whole."""
    box = copy_pipeline(tmp_path)
    archive_synthetic_runs(box)                                   # the quick runs, restored too
    n = archive_synthetic_runs(box, "paper", ["ma2019_fig01"])
    archive_synthetic_runs(box, "paper", ["ma2019_fig13"], first=2)   # held in part: not run in the paper profile
    planned = plan(box, *CONFIG)
    assert planned["reference_run"] == ["results/quick/reference/paper/restored/ma2019_fig01.txt"]
    assert "kernel" not in planned and "variant_module" not in planned
    gen = "results/quick/report/generated"
    res = snakemake(box, *CONFIG, "--", f"{gen}/claims_ma2019.tex", f"{gen}/summary.tex")
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    table = (box / gen / "claims_ma2019.tex").read_text()
    assert table.count("paper profile:") > 10 and "Profile quick against the paper profile" in table
    assert "\\textbf{Profile quick against the paper profile} (3 repetition(s)" in table
    restored = (box / "results/quick/reference/paper/restored/ma2019_fig01.txt").read_text().splitlines()
    assert len(restored) == n and all(line.startswith("ma2019_fig01/") for line in restored)
    ref = (box / gen / "reference" / "claims_ma2019.csv").read_text()
    assert ",paper,3" in ref                      # evaluated on the paper runs (profile, repetitions)
    headline = (box / gen / "headline_ma2019.tex").read_text()
    assert "\\emph{Paper profile}" in headline and "\\emph{Profile quick}" in headline
    assert "\\texttt{ma2019\\_fig13}" in headline           # not in the archive whole: named
    coverage = {r["experiment"]: r for r in csv.DictReader(io.StringIO((box / gen / "archive_coverage.csv").read_text()))}
    assert (coverage["ma2019_fig13"]["runs"], coverage["ma2019_fig13"]["current"]) == (str(len(jobs(box, "ma2019_fig13", "paper"))), "2")


def test_archived_only_without_an_archive_is_refused(tmp_path):
    box = copy_pipeline(tmp_path)
    res = snakemake(box, "-n", "--config", "archived_only=true")
    assert res.returncode != 0
    assert "archived_only=true: profile quick has no results archive" in res.stdout + res.stderr


def test_the_external_archive_walk_through(tmp_path):
    """docs/cluster.md, "Results too large for git": the store outside the repository starts as a
    copy of the archive git holds; the cluster's plan restores what the store holds and boots the
    rest; `archive add --to STORE` takes the finished runs; the report's parts are rebuilt from the
    store alone with archive=STORE archived_only=true, in a checkout without those results."""
    box = copy_pipeline(tmp_path)
    archive_synthetic_runs(box, "paper", ["ma2019_fig01"])              # what git holds (data/paper)
    store = tmp_path / "store" / "archive-paper"
    # 1. the store starts as a copy of data/paper
    store.parent.mkdir(parents=True)
    subprocess.run(["cp", "-a", str(box / "data" / "paper"), str(store)], check=True)
    assert (store / "manifest.csv").is_file()
    # 2. the cluster's plan (dry run): Fig. 1 restored from the store, Fig. 13 boots
    cfg = ["--config", "profile=paper", f"archive={store}", "experiments=[ma2019_fig01,ma2019_fig13]", "claims=[ma2019]"]
    res = snakemake(box, "-n", *cfg)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    planned = re.findall(r"^(?:local)?rule run:\n    input: ([^\n]+)\n    output: ([^\n]+)", out, re.M)
    restored = sorted(o for i, o in planned if str(store) in i)
    booted = sorted(o for i, o in planned if "build/kernel/ready-" in i)
    assert restored and all("/ma2019_fig01/" in o for o in restored)
    assert len(restored) == len(jobs(box, "ma2019_fig01", "paper"))
    assert booted and all("/ma2019_fig13/" in o for o in booted)
    assert len(booted) == len(jobs(box, "ma2019_fig13", "paper"))
    # ... which the cluster runs into results/paper/runs (written here: no testbed boots in a test)
    runs = box / "results" / "paper" / "runs"
    for job in jobs(box, "ma2019_fig13", "paper"):
        write_synthetic_run(runs, "ma2019_fig13", job, "paper")
    # 3. archive add --to the store
    res = subprocess.run([sys.executable, "-m", "bbrlab", "archive", "add", "results/paper/runs", "--to", str(store),
                          "--experiment", "ma2019_fig13"], cwd=box, capture_output=True, text=True,
                         env={"PYTHONPATH": str(box / "mininet"), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stdout + res.stderr
    held = archive.read_manifest(store)
    assert {k[0] for k in held} == {"ma2019_fig01", "ma2019_fig13"}
    assert "ma2019_fig13" not in {k[0] for k in archive.read_manifest(box / "data" / "paper")}   # git's archive unchanged
    # 4. in a checkout without those results: the report's parts from the store alone, nothing boots
    subprocess.run(["rm", "-rf", str(box / "results")], check=True)
    cfg = ["--config", "profile=paper", f"archive={store}", "archived_only=true", "claims=[ma2019]"]
    planned = plan(box, *cfg)
    assert "kernel" not in planned and "variant_module" not in planned
    assert {o.split("/")[3] for o in planned["run"]} == {"ma2019_fig01", "ma2019_fig13"}
    gen = "results/paper/report/generated"
    res = snakemake(box, *cfg, "--", f"{gen}/ma2019_fig13.pdf", f"{gen}/claims_ma2019.csv")
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    logs = "".join(p.read_text() for p in (box / "results" / "paper" / "logs").rglob("rep*.log"))
    assert "restored from the archive" in logs and "booting" not in logs
    meta = json.loads(next((box / "results" / "paper" / "runs" / "ma2019_fig13").rglob("run.json")).read_text())
    assert meta["restored_from_archive"]["archive"] == str(store)
    claims = list(csv.DictReader(io.StringIO((box / gen / "claims_ma2019.csv").read_text())))
    assert {r["profile"] for r in claims if r["experiment"] == "ma2019_fig13" and r["profile"]} == {"paper"}
