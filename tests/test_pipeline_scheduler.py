"""Snakemake's scheduling rounds with one pending re-evaluation timer (bbrlab/experiment/pipeline_scheduler.py).

The reference is what a rate limiter needs: a round when a job finishes and at least one per
window while jobs wait. That is about one round per job plus one per window, not the number
that grows with every finished job, which the installed Snakemake makes without the
replacement (checked here too, so that a Snakemake that fixes it is noticed)."""
import pathlib
import re
import subprocess
import sys
import threading
import time

import pytest

from bbrlab.experiment import pipeline_scheduler

JOBS, JOB_S, CORES, WINDOW_S = 80, 0.15, 2, 1


class FakeScheduler:
    def _schedule_reevalutation(self, delay):
        raise AssertionError("the original method was called")


def test_one_timer_pending_at_a_time_and_a_new_one_after_it_fired():
    released = []
    method = pipeline_scheduler.one_pending_timer(lambda sched: released.append(time.monotonic()))
    sched = FakeScheduler()
    for _ in range(20):                       # twenty rounds within one window
        method(sched, 0.2)
    time.sleep(0.5)
    assert len(released) == 1
    method(sched, 0.05)                       # the round the release started arms the next one
    time.sleep(0.3)
    assert len(released) == 2


def test_the_timer_does_not_hold_the_process_open():
    method = pipeline_scheduler.one_pending_timer(lambda sched: None)
    sched = FakeScheduler()
    method(sched, 30)
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    assert timers and all(t.daemon for t in timers)
    for t in timers:
        t.cancel()


def test_the_class_gets_the_replacement_once_and_another_class_is_left_alone():
    class Scheduler(FakeScheduler):
        pass

    assert pipeline_scheduler.coalesce_reevaluations(Scheduler) is True
    replaced = Scheduler._schedule_reevalutation
    assert pipeline_scheduler.coalesce_reevaluations(Scheduler) is True
    assert Scheduler._schedule_reevalutation is replaced

    class Other:
        pass

    assert pipeline_scheduler.coalesce_reevaluations(Other) is False


def rounds_of_a_small_workflow(tmp_path: pathlib.Path, coalesce: bool) -> tuple:
    """(scheduling rounds, wall seconds) of JOBS jobs of JOB_S seconds on CORES cores, the rate
    window WINDOW_S, with or without the replacement."""
    mininet = pathlib.Path(pipeline_scheduler.__file__).resolve().parents[2]
    (tmp_path / "Snakefile").write_text(
        f"import sys\nsys.path.insert(0, {str(mininet)!r})\n"
        "from bbrlab.experiment import pipeline_scheduler\n"
        + ("pipeline_scheduler.coalesce_reevaluations()\n" if coalesce else "")
        + f"rule all:\n    input: expand('out/{{i}}.txt', i=range({JOBS}))\n"
        f"rule job:\n    output: 'out/{{i}}.txt'\n    shell: 'sleep {JOB_S}; touch {{output}}'\n")
    t = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(CORES), "--scheduler", "greedy",
                          "--max-jobs-per-timespan", f"1000/{WINDOW_S}s", "--verbose"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    elapsed = time.monotonic() - t
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert len(list((tmp_path / "out").iterdir())) == JOBS
    return len(re.findall(r"^Ready jobs", res.stdout + res.stderr, re.M)), elapsed


@pytest.mark.parametrize("coalesce", [True, False], ids=["one timer", "snakemake's own"])
def test_rounds_per_job_and_window(tmp_path, coalesce):
    rounds, elapsed = rounds_of_a_small_workflow(tmp_path, coalesce)
    bound = JOBS + elapsed / WINDOW_S + 10
    if coalesce:
        assert rounds <= bound, f"{rounds} rounds for {JOBS} jobs in {elapsed:.1f} s"
    else:                                     # the growth the replacement removes
        assert rounds > 2 * bound, f"only {rounds} rounds without the replacement: has Snakemake changed?"
