"""One short line per finished job of the pipeline: its phase, the runs done and left, the time.

Snakemake prints a block of rule header per job (hundreds for the first command); this prints

    [pipeline  3:12] runs 45/220 · archive 40/40 · analysis 0/75 · report 0/1 · build 15/15 (kernel built)

whenever a job of the plan has finished, read from the files its jobs write (an output counts
as done once it is there and written after the pipeline started). Nothing here touches a job:
a daemon thread of the Snakemake process looks at the outputs every few seconds.

    phase_of(rule)                 the phase a rule's jobs belong to, None for stamps
    plan_of(jobs)                  [(phase, [outputs of one job]), ...] of the jobs to run
    line(counts, elapsed_s)        the progress line
    Watcher(plan, emit, ...)       the thread (start(), stop())
    quiet_console(logfiles)        Snakemake's rule headers to its log file only
"""
from __future__ import annotations

import os
import re
import threading
import time

# The phases in the order a first run goes through them; a rule not named here is analysis.
PHASES = ("build", "runs", "archive", "analysis", "report")
_RULE_PHASE = {
    "kernel": "build", "variant_module": "build", "variant_params": "build", "vagrant_up": "build",
    "run": "runs", "control_run": "runs", "crosscheck_run": "runs",
    "reference_run": "archive", "transfer_length_runs": "archive",
    "report": "report",
}
_STAMPS = {"run_key", "cc_labels_key", "point_labels_key", "all", "control_runs"}


def phase_of(rule: str):
    """The phase of a rule's jobs (PHASES); None for a content stamp or a target-only rule."""
    if rule in _STAMPS:
        return None
    return _RULE_PHASE.get(rule, "analysis")


def plan_of(jobs) -> list:
    """[(phase, [output paths]), ...] of Snakemake jobs (their rule's name and outputs)."""
    return [(phase, [str(o) for o in job.output]) for job in jobs
            for phase in [phase_of(job.rule.name)] if phase is not None]


def _done(outputs, since: float) -> bool:
    try:
        return all(os.stat(o).st_mtime >= since for o in outputs)
    except OSError:
        return False


def counts(plan, since: float) -> dict:
    """{phase: (done, total)} of the plan, in PHASES order, phases without jobs left out."""
    out = {}
    for phase in PHASES:
        jobs = [o for p, o in plan if p == phase]
        if jobs:
            out[phase] = (sum(_done(o, since) for o in jobs), len(jobs))
    return out


def _clock(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:2d}:{s % 60:02d}"


def line(counts_: dict, elapsed_s: float) -> str:
    """The progress line: the phase the pipeline is in, then each phase's jobs done/total, runs
    first. The phase is the runs once one has finished and while some are left (the variant
    modules are built when the first run that loads each needs it, so the build phase ends late),
    else the first unfinished one."""
    order = sorted(counts_, key=lambda p: (p != "runs", PHASES.index(p)))
    parts = [f"{p} {d}/{t}" for p in order for d, t in [counts_[p]]]
    runs = counts_.get("runs")
    current = next((p for p in PHASES if p in counts_ and counts_[p][0] < counts_[p][1]), None)
    if runs and 0 < runs[0] < runs[1]:
        current = "runs"
    where = "done" if current is None else f"in {current}"
    left = f", {runs[1] - runs[0]} runs left" if runs and runs[0] < runs[1] else ""
    return f"[pipeline {_clock(elapsed_s)}] {where}{left}: " + " · ".join(parts)


class Watcher:
    """Emits line() each time the counts change (checked every interval_s), from a daemon thread."""

    def __init__(self, plan, emit=print, interval_s: float = 5.0, since=None):
        self.plan, self.emit, self.interval_s = list(plan), emit, interval_s
        self.since = time.time() if since is None else since
        self._stop = threading.Event()
        self._last = None
        self._thread = threading.Thread(target=self._loop, name="bbrlab-pipeline-progress", daemon=True)

    def check(self):
        """Emit the line when the counts differ from the last emitted ones."""
        now = counts(self.plan, self.since)
        if now != self._last:
            self._last = now
            self.emit(line(now, time.time() - self.since))

    def _loop(self):
        while not self._stop.wait(self.interval_s):
            self.check()

    def start(self):
        """Emit the first line and start the thread; returns the watcher."""
        self.check()
        self._thread.start()
        return self

    def stop(self):
        """Stop the thread and emit the last line if it changed."""
        self._stop.set()
        self.check()


# Snakemake's per-job events the console leaves to the log file while progress lines are printed;
# errors, warnings and everything else still reach the console.
_PER_JOB_EVENTS = {"job_info", "shellcmd", "job_finished", "progress", "resources_info", "run_info"}


# and the scheduler's lines per round of jobs and per stamp it touches
_SCHEDULER = re.compile(r"^(Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.|Touching output file .*)$")


class _PerJobFilter:
    def filter(self, record) -> bool:
        if str(getattr(record, "event", "")) in _PER_JOB_EVENTS:
            return False
        try:
            return not _SCHEDULER.match(record.getMessage())
        except (TypeError, ValueError):
            return True


def quiet_console(logfiles) -> list:
    """Leave Snakemake's per-job records (rule headers, 'N of M steps') to its log file(s) (the
    `log` an onstart handler gets): drop them from its console handler only. Returns the log
    files; with none the console is left as it is, so nothing is lost."""
    import logging
    logfiles = [str(f) for f in logfiles or []]
    if logfiles:
        for handler in logging.getLogger("snakemake.logging").handlers:
            if handler.name == "DefaultStreamHandler":
                handler.addFilter(_PerJobFilter())
    return logfiles
