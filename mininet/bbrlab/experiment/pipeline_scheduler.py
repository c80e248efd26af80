"""One pending re-evaluation timer in Snakemake's scheduler, not one more per scheduling round.

Snakemake's job scheduler (snakemake/scheduling/job_scheduler.py, 8.x and 9.x) ends every
scheduling round that had ready jobs by arming a `threading.Timer` for the job rate limiter's
window (`max-jobs-per-timespan`, always set: its default is 100/1s). When the timer fires, it
releases the scheduler's semaphore, and that starts another round, which arms another timer. A
job that finishes also starts a round. So every finished job starts a new chain of rounds that
never ends while jobs wait for cores: after N jobs, N chains each start a round per window.

- **The main job:** hundreds of runs wait for two cores, and more than 500 jobs finish. The
  rounds add up to tens of thousands, each one visiting every waiting job (its parameters and
  resources reset, the size of every input file asked). That was most of the Snakemake
  process's CPU time, which competed with the runs for the two cores.
- **A small workflow:** 120 jobs of 0.4 s on two cores made 779 rounds, their rate rising by
  about five per second every second.

coalesce_reevaluations() replaces the method that arms the timer with one that arms a timer only
when none is pending. The pending one fires within the window, and the round it starts arms the
next. Rounds still come from every finished job and at least once per window while jobs wait,
as the rate limiter needs. The timer is a daemon thread, so a pending one no longer holds the
process open after the last job (profiles/default/config.yaml, "The rate window").

Where the scheduler does not have that method (another Snakemake), nothing is replaced and the
pipeline runs as Snakemake made it; the function says whether it replaced it.
"""
from __future__ import annotations

import threading

_METHOD = "_schedule_reevalutation"       # Snakemake's own spelling
_MARK = "_bbrlab_one_reevaluation_timer"      # on the class: replaced
_PENDING = "_bbrlab_pending_reevaluation"     # on a scheduler: its timer


def one_pending_timer(arm_release):
    """The replacement of JobScheduler._schedule_reevalutation(self, delay): arm_release(self) is
    what the timer calls (Snakemake's: self._open_jobs.release()). At most one timer per scheduler
    is pending; a call while one is pending does nothing."""
    lock = threading.Lock()

    def schedule_reevaluation(self, delay) -> None:
        with lock:
            pending = getattr(self, _PENDING, None)
            if pending is not None and not pending.fired:
                return

            def fire():
                timer.fired = True
                arm_release(self)

            timer = threading.Timer(delay, fire)
            timer.daemon = True
            timer.fired = False
            setattr(self, _PENDING, timer)
        timer.start()

    return schedule_reevaluation


def coalesce_reevaluations(scheduler_class=None) -> bool:
    """Replace the scheduler's timer method (module docstring); True when it did, or had already."""
    if scheduler_class is None:
        try:
            from snakemake.scheduling.job_scheduler import JobScheduler as scheduler_class  # noqa: N813
        except ImportError:
            return False
    if getattr(scheduler_class, _MARK, False):
        return True
    if not callable(getattr(scheduler_class, _METHOD, None)):
        return False
    setattr(scheduler_class, _METHOD, one_pending_timer(lambda sched: sched._open_jobs.release()))
    setattr(scheduler_class, _MARK, True)
    return True
