"""Shared fixtures. Tests that boot the testbed use `kernel`, which builds the
UML kernel once (kernel/build-uml.sh skips an up-to-date build) and reuses it."""
import csv
import json
import os
import pathlib
import re
import subprocess
import sys
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
FIXTURES = REPO / "tests" / "fixtures"
SLOWEST_SHOWN = 30


def pytest_configure(config):
    """Every session ends with its slowest tests listed (pytest --durations), unless the command line
    asks otherwise: what a test costs is then in each CI log, for the suite's dated record."""
    if config.option.durations is None:
        config.option.durations = SLOWEST_SHOWN


@pytest.fixture(scope="session")
def kernel():
    """Path of the testbed kernel, built on first use (about 5-8 min on 2 cores). The build runs
    under the build directory's lock (flock), as the pipeline's kernel rule does: a second caller
    (another test session, the pipeline, a checkout sharing build/) waits and then finds the kernel
    up to date instead of compiling in the same tree at the same time."""
    out = REPO / "build" / "kernel"
    out.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["flock", str(out / ".build.lock"), str(REPO / "kernel" / "build-uml.sh"), str(out)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail(f"testbed kernel build failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return REPO / "build" / "kernel" / "linux"


@pytest.fixture
def fixtures():
    return FIXTURES


def goodput_by_flow(run_dir, t_from, t_to) -> dict:
    """Mean goodput (Mbit/s) of each flow ("1", "2", ...) over bins ending in (t_from, t_to], from tidy/goodput.csv."""
    sums, secs = {}, {}
    with open(pathlib.Path(run_dir) / "tidy" / "goodput.csv") as f:
        for r in csv.DictReader(f):
            if t_from < float(r["t_s"]) <= t_to:
                sums[r["flow"]] = sums.get(r["flow"], 0) + int(r["bytes"])
                secs[r["flow"]] = secs.get(r["flow"], 0) + float(r["interval_s"])
    return {f: sums[f] * 8 / secs[f] / 1e6 for f in sums}


def write_spec(path: pathlib.Path, text: str) -> pathlib.Path:
    """Write a test's spec. With BBRLAB_TEST_SEED set (bench/testbed_seeds.py), a spec that names no
    seed gets that one: the same test on another trajectory of its flows, to find assertions that hold
    only on the trajectory seed 1 happens to give."""
    seed = os.environ.get("BBRLAB_TEST_SEED")
    if seed and not re.search(r"^seed:", text, re.M):
        text = text.rstrip("\n") + f"\nseed: {int(seed)}\n"
    path.write_text(text)
    return path


def cli(*args, env=None, user=None, cwd=None):
    """Run `python3 -m bbrlab ARGS` as a subprocess (Debian's python3, like the pipeline's venv)."""
    env = dict(os.environ if env is None else env, PYTHONPATH=str(REPO / "mininet"))
    cmd = [sys.executable, "-m", "bbrlab", *map(str, args)]
    if user:
        cmd = ["runuser", "-u", user, "--", "env", f"PYTHONPATH={env['PYTHONPATH']}", "HOME=/tmp", "/usr/bin/python3",
               "-m", "bbrlab", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)


@pytest.fixture
def run_dir(tmp_path):
    """(test_archive*.py) The captured run as runs/<experiment>/<point>/rep1, with a run key in its run.json."""
    src = tmp_path / "src"
    src.mkdir()
    with tarfile.open(REPO / "tests" / "fixtures" / "run_fig1short.tar.xz") as tar:
        tar.extractall(src)
    meta = json.loads((src / "run.json").read_text())
    meta["run_key"] = "k" * 16
    (src / "run.json").write_text(json.dumps(meta, indent=1))
    dest = tmp_path / "runs" / meta["experiment"] / meta["point"] / f"rep{meta['repetition']}"
    dest.parent.mkdir(parents=True)
    src.rename(dest)
    return dest
