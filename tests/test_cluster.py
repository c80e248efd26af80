"""The pipeline through a real SLURM cluster (profiles/slurm) and the cluster pre-flight checks.

A one-node SLURM (tests/slurm_cluster.py: Debian's munge, slurmctld, slurmd
under a temporary directory) takes the runs of a tiny test-only experiment
(two 5-s virtual-clock runs) as SLURM jobs; the report is built locally from
them. The pipeline works on a copy of the repository's pipeline files so the
test's experiment and results stay out of the working tree. Nothing is left
running: the daemons stop and leftover job steps are killed at the end.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from bbrlab.experiment import spec
from bbrlab.host import cluster, resources
from conftest import REPO
import slurm_cluster

PIPELINE_FILES = ("Snakefile", "workflow", "mininet", "analysis", "kernel", "paper", "config", "claims", "profiles", "envs")
EXPERIMENT = "smoke_cluster"
SPEC = f"""
name: {EXPERIMENT}
description: two tiny runs for the cluster tests
duration_s: 5
clock: virtual
bottleneck: {{rate_mbps: 20, buffer_bdp: 1.0}}
flows:
  - {{cc: bbr, rtt_ms: 10}}
sweep:
  bottleneck.rate_mbps: [10, 20]
"""
CONFIG = f"""
profile: quick
warmup_s: 1
experiments: [{EXPERIMENT}]
claims: []
"""


def pipeline_copy(root: pathlib.Path, kernel) -> pathlib.Path:
    """The pipeline's files, the testbed kernel (hard link) and the test experiment under root."""
    work = root / "pipeline"
    for name in PIPELINE_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            work.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / name)
    (work / "build" / "kernel").mkdir(parents=True)
    for name in ("linux", "release", "inputs.sha256"):
        src = pathlib.Path(kernel).parent / name
        if src.exists():
            try:
                os.link(src, work / "build" / "kernel" / name)
            except OSError:
                shutil.copy2(src, work / "build" / "kernel" / name)
    (work / "mininet" / "specs" / "smoke").mkdir(parents=True, exist_ok=True)
    (work / "mininet" / "specs" / "smoke" / f"{EXPERIMENT}.yaml").write_text(SPEC)
    with (work / "config" / "experiments.csv").open("a") as fh:     # no paper: runs only
        fh.write(f"{EXPERIMENT},,,quick,mininet/specs/smoke/{EXPERIMENT}.yaml,,\n")
    (work / "test-config.yaml").write_text(CONFIG)
    return work


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the one-node SLURM runs slurmd, which starts jobs as their user: needs root")
    missing = slurm_cluster.missing_tools()
    if missing:
        pytest.fail(f"SLURM/munge tools missing ({', '.join(missing)}): run ./setup.sh (envs/debian-packages.txt)")
    # munged wants every directory above its socket searchable by all: not under pytest's 0700 tree
    root = tempfile.mkdtemp(prefix="bbrlab-slurm-")
    os.chmod(root, 0o755)
    cluster_ = slurm_cluster.SlurmCluster(root)
    try:
        cluster_.start()
        yield cluster_
    finally:
        cluster_.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory, kernel):
    return pipeline_copy(tmp_path_factory.mktemp("cluster"), kernel)


def snakemake_command(*args, profile="profiles/slurm"):
    cmd = [sys.executable, "-m", "snakemake", "--profile", profile, "--configfile", "test-config.yaml",
           "--latency-wait", "5"]
    if profile == "profiles/slurm":
        # no accounting on the test cluster (slurm_cluster.py): job states from squeue
        cmd += ["--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
                "--slurm-no-account"]
    return cmd + list(args)


def snakemake(work, env, *args, timeout=900, profile="profiles/slurm"):
    return subprocess.run(snakemake_command(*args, profile=profile), cwd=work, env=env, capture_output=True,
                          text=True, timeout=timeout)


def pids_of(pattern) -> set:
    return set(subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split())


def test_pipeline_runs_on_slurm_and_builds_the_report(slurm, pipeline):
    """Two runs as SLURM jobs, one of them cancelled (scancel) once its guest is up: the
    cancelled job's testbed dies with it, the run is submitted again and the report is built
    from the two complete runs only."""
    runs_dir = pipeline / "results" / "quick" / "runs" / EXPERIMENT
    cmd = snakemake_command()
    proc = subprocess.Popen(cmd, cwd=pipeline, env=slurm.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        deadline = time.time() + 300
        booted = []
        while not booted:
            assert time.time() < deadline and proc.poll() is None, "no guest came up"
            booted = [c for c in runs_dir.glob("*/.rep1.tmp*/raw/console.log")
                      if "bbrlab-guest: booted" in c.read_text(errors="replace")]
            time.sleep(0.3)
        tmp = booted[0].parents[1]
        point = tmp.parent.name
        testbed = pids_of(str(tmp))
        assert len(testbed) >= 3                           # tether, kernel, guest processes
        running = [line.split("|") for line in slurm.slurm("squeue", "--noheader", "--format=%i|%k").stdout.split()]
        cancelled = next(job for job, comment in running if comment.endswith(f"{point}_1"))
        slurm.slurm("scancel", cancelled, check=True)
        end = time.time() + 20
        while testbed & pids_of(str(tmp)) and time.time() < end:
            time.sleep(0.2)
        assert not testbed & pids_of(str(tmp)), "the cancelled job's testbed is still running"
        out, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out[-6000:] + "\n" + slurm.logs()
    states = dict(slurm.jobs())
    assert states.pop(cancelled) == "CANCELLED"
    assert len(states) == 2 and set(states.values()) == {"COMPLETED"}, states
    runs = sorted(runs_dir.glob("*/rep1/run.json"))
    assert len(runs) == 2, runs
    job_ids = set()
    for path in runs:
        summary = json.loads(path.read_text())
        assert summary["status"] == "ok", summary.get("error")
        assert summary["testbed"]["host"] == slurm.node
        assert summary["testbed"]["job"]["scheduler"] == "slurm"
        job_ids.add(summary["testbed"]["job"]["id"])
    assert job_ids == set(states)                          # each run ran in its own, completed job
    assert not list(runs_dir.glob("*/.rep1.tmp")) and not list(runs_dir.glob("*/rep1.failed"))
    report = pipeline / "results" / "quick" / "report" / "report.pdf"
    assert report.stat().st_size > 10_000
    testbed_tex = (pipeline / "results" / "quick" / "report" / "generated" / "testbed.tex").read_text()
    assert f"Hosts & {slurm.node} \\\\" in testbed_tex          # one host, named
    # each SLURM job asked for what the run rule declares (bbrlab/host/resources.py)
    job = spec.expand(spec.load(pipeline / "mininet" / "specs" / "smoke" / f"{EXPERIMENT}.yaml", profile="quick"))[0]
    minutes = resources.runtime_min(job)
    for job_id in states:
        shown = slurm.slurm("scontrol", "show", "job", job_id).stdout
        mem = re.search(r"MinMemoryNode=([0-9.]+)([MG])", shown)
        assert mem and round(float(mem.group(1)) * (1024 if mem.group(2) == "G" else 1)) == resources.mem_mb(job), shown
        assert "NumCPUs=1 " in shown, shown
    # the retry got twice the time (Snakemake's attempt 2)
    limits = {slurm.slurm("scontrol", "show", "job", j).stdout.split("TimeLimit=")[1].split()[0] for j in states}
    assert f"{minutes // 60:02d}:{minutes % 60:02d}:00" in limits
    assert f"{2 * minutes // 60:02d}:{2 * minutes % 60:02d}:00" in limits


def test_cluster_generic_profile_runs_a_run_through_its_submit_command(slurm, pipeline):
    """profiles/cluster-generic as shipped (sbatch as the generic submit command, a status script)."""
    target = f"results/quick/runs/{EXPERIMENT}/rate_mbps=10/rep1/run.json"
    before = dict(slurm.jobs())
    res = snakemake(pipeline, slurm.env, "--forcerun", "run", "--", target, profile="profiles/cluster-generic")
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:] + "\n" + slurm.logs()
    new_jobs = {job: state for job, state in slurm.jobs() if job not in before}
    assert list(new_jobs.values()) == ["COMPLETED"], new_jobs
    summary = json.loads((pipeline / target).read_text())
    assert summary["status"] == "ok" and summary["testbed"]["job"]["id"] in new_jobs
    assert (pipeline / "results" / "cluster-logs" / f"{next(iter(new_jobs))}.log").exists()


def test_cluster_generic_commands_are_checked_before_submitting(slurm, pipeline):
    before = slurm.jobs()
    res = snakemake(pipeline, slurm.env, "--forcerun", "run", "--cluster-generic-submit-cmd", "qsub -V -cwd",
                    profile="profiles/cluster-generic")
    assert res.returncode != 0
    assert "the submit command's program 'qsub' is not on the PATH (qsub -V -cwd)" in res.stdout + res.stderr
    assert slurm.jobs() == before


def test_a_partition_that_does_not_exist_fails_before_submitting(slurm, pipeline, tmp_path):
    before = slurm.jobs()
    res = snakemake(pipeline, slurm.env, "--default-resources", "slurm_partition=nosuchpartition", "--forcerun", "run")
    assert res.returncode != 0
    err = res.stdout + res.stderr
    assert "cluster check failed, nothing submitted" in err, err[-3000:]
    assert "partition 'nosuchpartition' does not exist on this cluster (partitions: bbrlab)" in err
    assert slurm.jobs() == before


def test_no_sbatch_on_the_path_fails_before_submitting(slurm, pipeline, tmp_path):
    # this machine's commands, less SLURM's: a host that is not a SLURM submit host
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    slurm_commands = {"sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct", "srun", "salloc", "sattach",
                      "sbcast", "sprio", "sreport", "sshare", "sstat", "strigger", "sview", "sacctmgr", "sdiag", "scrontab"}
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for tool in os.listdir(directory):
            if tool not in slurm_commands and not (bin_dir / tool).exists():
                os.symlink(os.path.join(directory, tool), bin_dir / tool)
    env = dict(slurm.env, PATH=f"{pathlib.Path(sys.executable).parent}:{bin_dir}")
    before = slurm.jobs()
    res = snakemake(pipeline, env, "--forcerun", "run")
    assert res.returncode != 0
    err = res.stdout + res.stderr
    assert "SLURM command(s) not on the PATH: sbatch" in err, err[-3000:]
    assert slurm.jobs() == before


def test_sacct_without_accounting_is_reported_with_the_fix(slurm):
    """The default status command, sacct, cannot work on a cluster without slurmdbd: the check says so."""
    problems = cluster.slurm_problems({None}, status_command=None, run=lambda cmd: slurm.slurm(*cmd))
    assert len(problems) == 1 and "'sacct' fails here" in problems[0]
    assert "pass --slurm-status-command squeue (MinJobAge is 600 s here, enough)" in problems[0]
    assert cluster.slurm_problems({None, slurm_cluster.PARTITION}, {None: 1024}, status_command="squeue",
                                  run=lambda cmd: slurm.slurm(*cmd)) == []
    too_big = cluster.slurm_problems({None}, {None: 10 ** 7}, status_command="squeue", run=lambda cmd: slurm.slurm(*cmd))
    assert too_big and "have at most" in too_big[0]
