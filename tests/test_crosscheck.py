"""The backend cross-check (`snakemake crosscheck`, docs/native-backend.md), short of
running it: its specs and config key, the pipeline's plan (both backends into separate
trees, nothing added to the default target), the refusal before anything runs when a
backend cannot run here, and analysis/crosscheck.R on constructed and copied run trees.
No testbed boots."""
import csv
import json
import shutil
import subprocess
import sys
import tarfile

import pytest

from bbrlab.experiment import experiments, spec
from bbrlab.host import crosscheck
from bbrlab.host.backends import native
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "analysis"))
import synth_runs  # noqa: E402

SPECS = ["crosscheck_twoflow", "crosscheck_oneflow"]
needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")


def snakemake(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "snakemake", "--nolock", *args], cwd=cwd,
                          capture_output=True, text=True)


def test_config_lists_the_crosscheck_specs_which_validate():
    table, _ = experiments.load(REPO)
    assert [e.name for e in experiments.of_profile(table, "crosscheck")] == SPECS
    for name in SPECS:
        s = spec.load(REPO / table[name].spec, profile="crosscheck")
        assert s["name"] == name and s["clock"] == "virtual"
        assert len(spec.expand(s)) == 1
        assert table[name].profiles == ("crosscheck",) and not table[name].paper


def test_default_target_plans_no_crosscheck():
    res = snakemake("-n", "--forcerun", "run")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "crosscheck" not in out


def test_plan_runs_each_spec_on_both_backends_into_separate_trees():
    res = snakemake("-n", "-p", "--forcerun", "crosscheck_run", "crosscheck", "--", "crosscheck")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    py = "-m bbrlab run"
    for name in SPECS:
        spec_file = f"mininet/specs/crosscheck/{name}.yaml"
        assert (f"{py} {spec_file} --profile crosscheck --out results/crosscheck/uml/runs --point base --rep 1 "
                "--backend uml --kernel build/kernel/linux") in out
        assert (f"{py} {spec_file} --profile crosscheck --out results/crosscheck/native/runs --point base "
                "--rep 1 --backend native --clock real") in out
    assert ("Rscript analysis/crosscheck.R results/crosscheck/uml/runs results/crosscheck/native/runs "
            "results/crosscheck/comparison.csv 10 uml,native") in out
    assert out.count("rule crosscheck_run:") == 4


def sandbox(tmp_path):
    """A checkout whose kernel build is a stub that fails at once: whatever went wrong, a
    real Snakemake run in it can neither build a kernel nor boot a testbed."""
    box = tmp_path / "box"
    box.mkdir()
    for name in ("Snakefile", "workflow", "config", "mininet", "analysis", "envs", "Vagrantfile", "profiles",
                 "paper", "claims"):
        (box / name).symlink_to(REPO / name)
    (box / "kernel").mkdir()
    shutil.copy(REPO / "kernel" / "uml.config", box / "kernel" / "uml.config")
    (box / "kernel" / "build-uml.sh").write_text("#!/bin/sh\necho 'stub kernel build' >&2\nexit 1\n")
    (box / "kernel" / "build-uml.sh").chmod(0o755)
    return box


@pytest.mark.skipif(not native.missing_prerequisites(), reason="the native backend can run on this host")
def test_refuses_before_anything_runs_when_native_cannot_run(tmp_path):
    box = sandbox(tmp_path)
    res = snakemake("--cores", "1", "crosscheck", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "backend cross-check: not every backend can run on this host, nothing was run:" in out
    assert "native: CANNOT run here:" in out
    for reason in native.missing_prerequisites():
        assert f"    - {reason}" in out
    uml = crosscheck.uml_problems(box / "build" / "kernel" / "linux")
    assert ("uml: can run here" in out) == (not uml)
    # nothing started: no job, no log, no result, no kernel build
    assert "stub kernel build" not in out and "Finished job" not in out
    assert not (box / "results").exists() and not (box / "build").exists()


def test_only_the_backends_still_to_run_are_asked(tmp_path):
    # the native side finished elsewhere and copied in: only the uml runs are planned
    box = sandbox(tmp_path)
    for name in SPECS:
        run = box / "results" / "crosscheck" / "native" / "runs" / name / "base" / "rep1"
        run.mkdir(parents=True)
        (run / "run.json").write_text("{}")
    res = snakemake("-n", "crosscheck", cwd=box)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "wildcards: backend=uml" in out and "wildcards: backend=native" not in out


def test_refusal_names_each_side_and_its_reasons():
    msg = crosscheck.refusal(["native", "uml"], found={"uml": [], "native": ["must run as root (network namespaces, tc)"]})
    lines = msg.splitlines()
    assert lines[0].endswith("nothing was run:")
    assert "  native: CANNOT run here:" in lines and "    - must run as root (network namespaces, tc)" in lines
    assert "  uml: can run here" in lines
    assert crosscheck.refusal(["uml"], found={"uml": []}) is None
    assert crosscheck.problems(["vagrant"])["vagrant"][0].startswith("unknown backend 'vagrant'")


def test_uml_needs_a_kernel_or_what_builds_it(tmp_path, monkeypatch):
    kernel = tmp_path / "linux"
    monkeypatch.setenv("LINUX_SOURCE_TARBALL", str(tmp_path / "missing.tar.xz"))
    assert any("missing.tar.xz is missing" in p for p in crosscheck.uml_problems(kernel))
    kernel.write_text("#!/bin/sh\n")
    kernel.chmod(0o755)
    assert crosscheck.uml_problems(kernel) == []


# --- analysis/crosscheck.R ---------------------------------------------------------

def compare(a, b, out, *extra):
    res = subprocess.run(["Rscript", str(REPO / "analysis" / "crosscheck.R"), str(a), str(b), str(out), *extra],
                         capture_output=True, text=True)
    return res


def rows_of(path):
    with open(path) as f:
        return {(r["experiment"], r["point"], r["flow"], r["metric"]): r for r in csv.DictReader(f)}


def fixture_run(root, experiment="crosscheck_twoflow"):
    """The captured 30-s two-flow testbed run (tests/fixtures) as run base/rep1 of `experiment`."""
    run = root / experiment / "base" / "rep1"
    run.mkdir(parents=True)
    with tarfile.open(REPO / "tests" / "fixtures" / "run_fig1short.tar.xz") as tar:
        tar.extractall(run)
    meta = json.loads((run / "run.json").read_text())
    meta["experiment"] = experiment
    (run / "run.json").write_text(json.dumps(meta))
    return run


def scale_goodput(run, flow, factor):
    path = run / "tidy" / "goodput.csv"
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["flow"] == str(flow):
            r["bytes"] = str(float(r["bytes"]) * factor)
            r["goodput_mbps"] = str(float(r["goodput_mbps"]) * factor)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


@needs_r
def test_a_real_run_compared_with_itself_agrees_exactly(tmp_path):
    fixture_run(tmp_path / "uml")
    fixture_run(tmp_path / "native")
    res = compare(tmp_path / "uml", tmp_path / "native", tmp_path / "out.csv")
    assert res.returncode == 0, res.stderr
    rows = rows_of(tmp_path / "out.csv")
    metrics = sorted({k[3] for k in rows})
    assert metrics == ["goodput_mbps", "qdelay_ms", "rtt_ms", "share_pct", "util_pct"]
    assert len(rows) == 2 * 3 + 2
    for r in rows.values():
        assert float(r["uml"]) == float(r["native"]) and float(r["diff"]) == 0 and r["within"] == "TRUE"
        assert r["n_valid_uml"] == r["n_valid_native"] == "1"
    assert "8 of 8 compared metrics within the run-to-run spread (uml vs native; 0 not comparable)." in res.stdout
    assert (tmp_path / "out.md").read_text().strip() == res.stdout.strip()


@needs_r
def test_a_perturbed_copy_shows_the_expected_difference(tmp_path):
    fixture_run(tmp_path / "uml")
    scale_goodput(fixture_run(tmp_path / "native"), 2, 1.05)     # the 50-ms flow gets 5 % more
    res = compare(tmp_path / "uml", tmp_path / "native", tmp_path / "out.csv")
    assert res.returncode == 0, res.stderr
    rows = rows_of(tmp_path / "out.csv")
    key = ("crosscheck_twoflow", "base")
    g2 = rows[key + ("2", "goodput_mbps")]
    assert float(g2["native"]) == pytest.approx(1.05 * float(g2["uml"]))
    assert float(g2["diff"]) == pytest.approx(0.05 * float(g2["uml"]))
    assert float(g2["spread"]) == pytest.approx(2.5)                   # 2.5 % of 100 Mbit/s
    assert float(g2["diff"]) > 2.5 and g2["within"] == "FALSE"
    g1 = rows[key + ("1", "goodput_mbps")]
    assert float(g1["diff"]) == 0 and g1["within"] == "TRUE"
    s1, s2 = rows[key + ("1", "share_pct")], rows[key + ("2", "share_pct")]
    assert float(s1["diff"]) == pytest.approx(-float(s2["diff"])) and float(s2["diff"]) > 0
    for flow, metric in (("1", "rtt_ms"), ("2", "rtt_ms"), ("", "qdelay_ms"), ("", "util_pct")):
        assert float(rows[key + (flow, metric)]["diff"]) == 0
    assert "| crosscheck_twoflow | base | 2 | goodput_mbps (Mbit/s) |" in res.stdout
    assert "| NO |" in res.stdout


@needs_r
def test_synthetic_trees_give_the_constructed_differences(tmp_path):
    # Fig. 1 shape (tests/analysis/synth_runs.py): exact steady-state values by construction
    synth_runs.fig01_run(tmp_path / "a", 1, 87.3, 6.3, qdelay_ss=20.0)
    synth_runs.fig01_run(tmp_path / "b", 1, 84.3, 6.3, qdelay_ss=25.0)
    synth_runs.fig01_run(tmp_path / "b", 2, 10.0, 80.0, fidelity_ok=False)   # invalid: never averaged
    res = compare(tmp_path / "a", tmp_path / "b", tmp_path / "out.csv", "10", "left,right")
    assert res.returncode == 0, res.stderr
    rows = rows_of(tmp_path / "out.csv")
    key = ("ma2019_fig01", "base")
    g2 = rows[key + ("2", "goodput_mbps")]
    assert float(g2["left"]) == pytest.approx(87.3) and float(g2["right"]) == pytest.approx(84.3)
    assert float(g2["diff"]) == pytest.approx(-3.0) and g2["within"] == "FALSE"
    assert g2["n_valid_left"] == "1" and g2["n_valid_right"] == "1"
    assert float(rows[key + ("1", "goodput_mbps")]["diff"]) == pytest.approx(0, abs=1e-9)
    # RTT: 10 ms + queueing delay, 20 vs 25 ms in steady state (the window's first socket
    # sample still sees the transient's 60 ms); allowed 1 ms + 15 % of the mean queueing delay
    r1 = rows[key + ("1", "rtt_ms")]
    left, right = float(r1["left"]), float(r1["right"])
    assert left == pytest.approx(30.0, abs=0.1) and right == pytest.approx(35.0, abs=0.1)
    assert float(r1["diff"]) == pytest.approx(5.0, abs=0.02)
    assert float(r1["spread"]) == pytest.approx(1 + 0.15 * ((left - 10) + (right - 10)) / 2)
    assert r1["within"] == "FALSE"
    qd = rows[key + ("", "qdelay_ms")]
    assert float(qd["diff"]) == pytest.approx(5.0) and float(qd["spread"]) == pytest.approx(4.375)
    assert "left" in res.stdout.splitlines()[0] and "difference (right - left)" in res.stdout.splitlines()[0]


@needs_r
def test_a_side_without_valid_runs_is_named_and_nothing_compared(tmp_path):
    synth_runs.fig01_run(tmp_path / "uml", 1, 87.3, 6.3)
    synth_runs.fig01_run(tmp_path / "native", 1, 87.3, 6.3, fidelity_ok=False)
    res = compare(tmp_path / "uml", tmp_path / "native", tmp_path / "out.csv")
    assert res.returncode == 1
    assert "no experiment has valid runs in both" in res.stderr
    assert "no valid run on native" in res.stdout
    assert not (tmp_path / "out.csv").exists()


@needs_r
def test_one_flow_run_has_no_share_row(tmp_path):
    for side, mbps in (("uml", 47.0), ("native", 46.5)):
        synth_runs.write_run(tmp_path / side / "crosscheck_oneflow" / "base" / "rep1", experiment="crosscheck_oneflow",
                             point="base", repetition=1, retrans={1: 5}, qdelay_phases=[(30.0, 2.0)],
                             flows=[{"flow": 1, "cc": "bbr", "rtt_ms": 20.0, "start_s": 0.0, "stop_s": 30.0}],
                             phases={1: [(30.0, mbps)]})
    res = compare(tmp_path / "uml", tmp_path / "native", tmp_path / "out.csv")
    assert res.returncode == 0, res.stderr
    rows = rows_of(tmp_path / "out.csv")
    assert sorted(k[2:] for k in rows) == [("", "qdelay_ms"), ("", "util_pct"), ("1", "goodput_mbps"), ("1", "rtt_ms")]
    assert float(rows[("crosscheck_oneflow", "base", "1", "goodput_mbps")]["diff"]) == pytest.approx(-0.5)
    assert "4 of 4 compared metrics within the run-to-run spread" in res.stdout
