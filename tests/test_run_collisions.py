"""Two runs of one run into one results tree cannot collide (host/runner.py): each attempt works
in a temporary directory of its own, and a lock per run directory makes a second process asked
for a run that is being made refuse at once, touching nothing; a run whose tidy data is not all
of its raw data (data/extent.py) is failed, not published.

The runs replay the captured run's raw files (tests/fixtures/run_fig1short.tar.xz) through a
backend that does not boot anything: the runner's locking, tidying, checking and publishing are
the real ones."""
import json
import shutil
import subprocess
import sys
import tarfile
import threading

import pytest

from bbrlab import cli
from bbrlab.data import extent, tidy
from bbrlab.experiment import spec
from bbrlab.host import backends, runner
from conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "run_fig1short.tar.xz"


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """(job, raw directory) of the captured run."""
    where = tmp_path_factory.mktemp("captured")
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(where)
    job = spec.complete(json.loads((where / "run.json").read_text())["spec"])
    job = {k: v for k, v in job.items() if k not in ("backend", "modules", "guest")}
    return job, where / "raw"


class Replay(backends.Backend):
    """Writes the captured run's raw files; with `hold`, waits for it to be set before returning
    (a testbed still running)."""
    name = "replay"

    def __init__(self, raw, hold=None):
        self.raw, self.hold, self.started, self.executed = raw, hold, threading.Event(), 0

    def check(self):
        pass

    def describe(self):
        return {"backend": self.name, "kernel_release": None}

    def execute(self, run_dir, job, timeout_s):
        self.executed += 1
        shutil.copytree(self.raw, run_dir / "raw")
        self.started.set()
        if self.hold is not None:
            assert self.hold.wait(60)
        return backends.GuestResult(exit_status=0, timed_out=False, wall_s=0.1, cpu_s=0.1,
                                    console=str(run_dir / "raw" / "console.log"))


def quiet(_message):
    pass


def test_a_second_run_of_a_live_run_refuses_and_the_first_publishes_all_its_data(captured, tmp_path):
    job, raw = captured
    dest = tmp_path / "out" / job["name"] / job["point"] / "rep1"
    release = threading.Event()
    first = Replay(raw, hold=release)
    outcome = {}

    def run_first():
        try:
            outcome["summary"] = runner.execute(job, dest, backend=first, progress=quiet)
        except BaseException as err:         # noqa: BLE001 (reported by the assertion below)
            outcome["error"] = err
    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert first.started.wait(60)
        (live,) = dest.parent.glob(".rep1.tmp-*")
        second = Replay(raw)
        with pytest.raises(runner.RunBusy, match="another process .* is running this run into the same directory"):
            runner.execute(job, dest, backend=second, progress=quiet)
        assert second.executed == 0 and live.is_dir() and (live / "raw" / "timeline.json").is_file()
        assert not dest.exists()
    finally:
        release.set()
        thread.join(60)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["summary"]["status"] == "ok"
    expected = tidy.goodput_rows  # the rows the raw files give, computed afresh
    rows = []
    for flow in job["flows"]:
        rows += expected(flow["flow"], tidy.read_jsonl(raw / f"sockets_rcv{flow['flow']}.jsonl"),
                         json.loads((raw / "timeline.json").read_text())["t0"])
    assert len((dest / "tidy" / "goodput.csv").read_text().splitlines()) == len(rows) + 1 > 100
    assert not list(dest.parent.glob(".rep1.tmp*"))
    # the lock is free again: the next run of it goes ahead and replaces the published one
    assert runner.execute(job, dest, backend=Replay(raw), progress=quiet)["status"] == "ok"


def test_the_lock_holds_across_processes_and_the_command_says_so(captured, tmp_path, monkeypatch, capsys):
    dest = tmp_path / "out" / "x" / "base" / "rep1"
    code = ("import pathlib, sys, time\nfrom bbrlab.host import runner\n"
            f"with runner.run_lock(pathlib.Path({str(dest)!r})):\n    print('held', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env={"PYTHONPATH": str(REPO / "mininet"), "PATH": "/usr/bin:/bin"})
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(runner.RunBusy, match=f"pid {holder.pid}"):
            with runner.run_lock(dest):
                pass
        job, raw = captured
        monkeypatch.setattr(backends, "get", lambda name, **kw: Replay(raw))
        spec_file = tmp_path / "x.yaml"
        spec_file.write_text(json.dumps({"name": "x", "duration_s": 30, "flows": [{"cc": "bbr", "rtt_ms": 10}],
                                         "bottleneck": {"rate_mbps": 10, "buffer_pkts": 10}}))
        assert cli.main(["run", str(spec_file), "--out", str(tmp_path / "out"), "--backend", "uml"]) == 6
        assert "run in progress elsewhere" in capsys.readouterr().err
        assert not (tmp_path / "out" / "x" / "base" / "rep1").exists()
    finally:
        holder.kill()
        holder.wait()
    with runner.run_lock(dest):          # released when its holder died (killed, not unwound)
        pass


def test_a_killed_attempts_temporary_directory_is_removed_by_the_next(captured, tmp_path):
    job, raw = captured
    dest = tmp_path / "out" / job["name"] / job["point"] / "rep1"
    dest.parent.mkdir(parents=True)
    for left in (".rep1.tmp", ".rep1.tmp-abc12345"):
        (dest.parent / left / "raw").mkdir(parents=True)
    (dest.parent / ".rep10.tmp-other").mkdir()           # another run's: not this run's leftover
    runner.execute(job, dest, backend=Replay(raw), progress=quiet)
    assert sorted(p.name for p in dest.parent.iterdir()) == [".rep1.lock", ".rep10.tmp-other", "rep1"]


@pytest.mark.parametrize("damage", ["tidy cut short", "raw changed"])
def test_a_run_whose_tidy_data_is_not_all_its_raw_data_fails(captured, tmp_path, monkeypatch, damage):
    job, raw = captured
    dest = tmp_path / "out" / job["name"] / job["point"] / "rep1"
    make_tidy = tidy.make_tidy

    def damaged(run_dir, job):
        data = make_tidy(run_dir, job)
        if damage == "tidy cut short":
            path = run_dir / "tidy" / "goodput.csv"
            lines = path.read_text().splitlines(keepends=True)
            path.write_text("".join(lines[:len(lines) // 2]))
        else:
            with open(run_dir / "raw" / "qdisc.jsonl", "a") as f:
                f.write("{}\n")
        return data
    monkeypatch.setattr(tidy, "make_tidy", damaged)
    with pytest.raises(runner.RunFailed, match="the tidy data is not all of the raw data: "
                       + ("tidy/goodput.csv has" if damage == "tidy cut short" else "raw files changed")):
        runner.execute(job, dest, backend=Replay(raw), progress=quiet)
    assert not dest.exists()
    failed = json.loads((dest.with_name("rep1.failed") / "run.json").read_text())
    assert failed["status"] == "failed" and "not all of the raw data" in failed["error"]


def test_tidy_series_that_end_before_the_run_does_are_named(captured, tmp_path):
    job, raw = captured
    run_dir = tmp_path / "run"
    shutil.copytree(raw, run_dir / "raw")
    data = tidy.make_tidy(run_dir, job)
    before = extent.snapshot(run_dir)
    assert extent.problems(run_dir, job, data, before) == []
    # the raw files read while still being written: the series end early
    early = dict(data, goodput=[r for r in data["goodput"] if r["t_s"] < 10],
                 queue=[r for r in data["queue"] if r["t_s"] < 10])
    tidy.write_csv(run_dir / "tidy" / "goodput.csv", tidy.GOODPUT_COLUMNS, early["goodput"])
    tidy.write_csv(run_dir / "tidy" / "queue.csv", tidy.QUEUE_COLUMNS, early["queue"])
    found = extent.problems(run_dir, job, early, before)
    assert found[0].startswith("the queue samples end at 9.") and f"before the run's end ({job['duration_s']:g} s)" in found[0]
    assert [p.split(":")[0] for p in found[1:]] == ["flow 1", "flow 2"]
