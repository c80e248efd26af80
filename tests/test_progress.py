"""Progress of a long run (bbrlab/host/progress.py), read from a real captured sampler file
(tests/fixtures/run_fig1short.tar.xz: a 30-s run) as the guest leaves it mid-run."""
import pathlib
import tarfile
import time

import pytest

from bbrlab.host import progress

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def qdisc_lines(tmp_path_factory):
    d = tmp_path_factory.mktemp("fx")
    with tarfile.open(REPO / "tests" / "fixtures" / "run_fig1short.tar.xz") as tar:
        tar.extractall(d)
    import json
    t0 = json.loads((d / "raw" / "timeline.json").read_text())["t0"]    # the experiment's time zero
    return (d / "raw" / "qdisc.jsonl").read_bytes().splitlines(keepends=True), t0


def _write(run_dir, data: bytes):
    (run_dir / "raw").mkdir(parents=True, exist_ok=True)
    (run_dir / "raw" / "qdisc.jsonl").write_bytes(data)


def test_time_reached_from_a_partly_written_file(qdisc_lines, tmp_path):
    import json
    qdisc_lines, t0 = qdisc_lines
    t = [json.loads(x)["t"] for x in qdisc_lines]
    # the file as the guest left it after writing its first 400 lines and half of the next
    half = qdisc_lines[400][: len(qdisc_lines[400]) // 2]
    _write(tmp_path, b"".join(qdisc_lines[:400]) + half)
    reached = progress.experiment_time(tmp_path)
    assert reached == pytest.approx(t[399] - t0, abs=0.05)     # against the guest's own time zero
    # the whole file: the 30-s run and its tail (samplers stop after the last flow)
    _write(tmp_path, b"".join(qdisc_lines))
    assert 29 <= progress.experiment_time(tmp_path) <= 33


def test_nothing_yet(tmp_path):
    assert progress.experiment_time(tmp_path) is None           # no file
    _write(tmp_path, b'{"t": 12.5, "qdi')                        # first line unfinished
    assert progress.experiment_time(tmp_path) is None
    assert "setting up" in progress.report("x", None, 600, 12)


def test_report_line():
    line = progress.report("tang_fig05/base/rep1", 120, 600, 240)
    assert "experiment 120/600 s (20 %)" in line
    assert "2.0 s wall per experiment-s" in line and "ETA 16 min" in line


def test_thread_reports_while_running_and_stops(qdisc_lines, tmp_path):
    qdisc_lines, _t0 = qdisc_lines
    _write(tmp_path, b"".join(qdisc_lines[:200]))
    lines = []
    with progress.RunProgress(tmp_path, 30, "run", emit=lines.append, interval_s=0.05):
        time.sleep(0.3)
    n = len(lines)
    assert n >= 2 and all("experiment" in x for x in lines)
    time.sleep(0.15)
    assert len(lines) == n                                       # stopped with the run
