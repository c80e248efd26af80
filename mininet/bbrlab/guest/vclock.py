"""Sleeping until an absolute time of the guest's clock, and the flows' fixed start.

    sleep_until(t)           sleep until the guest's wall clock (CLOCK_REALTIME) reads t
    flows_phase_start(now)   the whole second at which the flows' phase starts

Why absolute times. On UML's virtual clock (time-travel=inf-cpu) computing is free but
every read of the clock costs the guest 256 ns (arch/um/kernel/time.c, timer_read()). A
relative sleep, `time.sleep(t - time.time())`, wakes at t plus the reads made between
computing the delay and entering the kernel, and their number depends on the
interpreter's and C library's code, which the guest runs from the host's packages. Each
such shift moves everything after it: the samplers' wake-ups, a flow's start, the
kernel's timers relative to them. clock_nanosleep with TIMER_ABSTIME wakes exactly at t,
whatever ran before, so the timeline of the flows' phase is the same on every host.

Why a fixed start. The set-up before the flows (the network built, shaped and pinged)
runs the host's `ip`, `tc`, `ping` and Python; how long it takes in guest time (clock
reads again) and how much randomness it draws differ between hosts. The flows' phase
therefore starts at the first whole second of guest time at least MARGIN_S after the
set-up ended: there the driver restarts the kernel's generator from the run's seed
(driver.restart_randomness), and time zero, the samplers' grid and every flow start are
fixed offsets from it. A set-up a few microseconds longer or shorter lands on the same
second (docs/clocks-and-fidelity.md).
"""
from __future__ import annotations

import ctypes
import math
import os

CLOCK_REALTIME = 0
TIMER_ABSTIME = 1
MARGIN_S = 0.5          # the flows' phase starts at least this long after the set-up ended


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.clock_nanosleep.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_Timespec),
                                  ctypes.POINTER(_Timespec)]


def timespec(t: float) -> _Timespec:
    """t (epoch seconds) as a timespec, to the nanosecond nearest to t."""
    ns = round(t * 1e9)
    return _Timespec(ns // 10**9, ns % 10**9)


def sleep_until(t: float) -> None:
    """Sleep until CLOCK_REALTIME reads t (at once when it is past); a signal does not shorten it."""
    ts = timespec(t)
    while True:
        err = _libc.clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, ctypes.byref(ts), None)
        if err != 4:                    # EINTR: sleep on to the same absolute time
            if err:
                raise OSError(err, f"clock_nanosleep until {t}")
            return


PR_SET_TIMERSLACK = 29


def no_timer_slack() -> None:
    """This process's and its future children's timer slack to 1 ns (prctl PR_SET_TIMERSLACK; 0
    would mean the default, 50 us). With slack, a sleep ends at the first timer interrupt in
    [t, t + slack], so when it ends depends on whatever other timers the guest has pending, such
    as those its set-up left behind (writeback, workqueues); without, it ends at t."""
    if _libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_TIMERSLACK)")


def driver_first() -> None:
    """The calling process (the driver) to SCHED_FIFO, its children back to the default policy
    (SCHED_RESET_ON_FORK). When the driver and the sampler wake at the same instant (a flow
    starts on a sample time), the ordinary scheduler runs first whichever has used less CPU,
    and the driver's CPU includes its set-up, which depends on the host's binaries; the
    real-time policy runs the driver first, always. It only ever sleeps or waits."""
    os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))


def flows_phase_start(now: float, margin_s: float = MARGIN_S) -> float:
    """The first whole second of the guest's wall clock at least margin_s after now."""
    return float(math.ceil(now + margin_s))
