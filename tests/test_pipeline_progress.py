"""The pipeline's progress line (bbrlab/experiment/pipeline_progress.py): the phase, the runs done
and left, read from the outputs the planned jobs write after the pipeline started."""
import os
import time

from bbrlab.experiment import pipeline_progress as pp


def test_rules_fall_into_phases_and_stamps_into_none():
    assert pp.phase_of("run") == "runs" and pp.phase_of("reference_run") == "archive"
    assert pp.phase_of("figure") == "analysis" and pp.phase_of("report") == "report"
    assert pp.phase_of("run_key") is None and pp.phase_of("all") is None


def test_counts_take_only_outputs_written_since_the_start(tmp_path):
    since = time.time() - 5          # the file system's clock may lag time.time() a little
    old, new, missing = tmp_path / "old", tmp_path / "new", tmp_path / "missing"
    old.touch()
    os.utime(old, (since - 100, since - 100))            # a stale output the job will rewrite
    new.touch()
    plan = [("runs", [str(old)]), ("runs", [str(new)]), ("runs", [str(missing)]), ("report", [str(missing)])]
    assert pp.counts(plan, since) == {"runs": (1, 3), "report": (0, 1)}


def test_the_line_names_the_phase_and_the_runs_left():
    line = pp.line({"build": (15, 15), "runs": (45, 220), "analysis": (0, 75), "report": (0, 1)}, 192)
    assert line == "[pipeline  3:12] in runs, 175 runs left: runs 45/220 · build 15/15 · analysis 0/75 · report 0/1"
    assert pp.line({"runs": (2, 2), "report": (1, 1)}, 3725).startswith("[pipeline 1:02:05] done: ")
    # modules still being built beside the runs: the line says the runs, not the build
    assert pp.line({"build": (11, 19), "runs": (89, 236), "analysis": (13, 65)}, 635).startswith(
        "[pipeline 10:35] in runs, 147 runs left: ")
    assert pp.line({"build": (1, 19), "runs": (0, 236)}, 60).startswith("[pipeline  1:00] in build, 236 runs left: ")


def test_the_watcher_prints_when_a_job_finishes_and_not_otherwise(tmp_path):
    lines = []
    out = tmp_path / "run.json"
    watcher = pp.Watcher([("runs", [str(out)])], emit=lines.append, interval_s=3600,
                         since=time.time() - 5)
    watcher.start()
    watcher.check()
    assert len(lines) == 1 and "0/1" in lines[0]
    out.touch()
    watcher.stop()
    assert len(lines) == 2 and lines[1].endswith("done: runs 1/1")
