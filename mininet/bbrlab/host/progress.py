"""Progress of a long run, read from the host without touching the testbed.

A run says nothing between "booting" and "done" on its own; for a 600-s or
6000-s transfer that is minutes to hours of silence. The guest's sampler
already appends the bottleneck queue's samples to RUN_DIR/raw/qdisc.jsonl on
the shared file system (buffered: a block reaches the file every few seconds
of experiment time), each line stamped with the guest's clock (`"t"`). The
host reads the first and the last complete line of that file at a wall-clock
interval and reports

    [<run>] experiment 120/600 s (20 %), 2.1 s wall per experiment-s, ETA 17 min

Nothing is added to the guest: no process, no write, no system call, so what
the flows see cannot change. The sampler starts `lead_s` (1 s) before the
experiment's time zero; the first line's time minus that lead is time zero.
"""
import json
import pathlib
import threading
import time

QDISC_FILE = ("raw", "qdisc.jsonl")
LEAD_S = 1.0            # samplers start this long before time zero (driver.py timeline "lead_s")
TAIL_BYTES = 8192


def _line_time(line: bytes):
    try:
        return float(json.loads(line)["t"])
    except (ValueError, KeyError, TypeError):
        return None


def experiment_time(run_dir, lead_s: float = LEAD_S):
    """Seconds of experiment time the guest's sampler has reached, None before its first
    complete line reached the file."""
    path = pathlib.Path(run_dir).joinpath(*QDISC_FILE)
    try:
        with open(path, "rb") as f:
            first = f.readline()
            if not first.endswith(b"\n"):
                return None
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            tail = f.read().split(b"\n")
    except OSError:
        return None
    t_first = _line_time(first)
    complete = [line for line in tail[:-1] if line.strip()]    # the part after the last newline is unfinished
    t_last = _line_time(complete[-1]) if complete else None
    if t_first is None or t_last is None:
        return None
    return max(0.0, t_last - t_first - lead_s)


def report(label: str, reached_s, duration_s: float, wall_s: float) -> str:
    """One progress line (see the module's docstring)."""
    if reached_s is None or reached_s <= 0:
        return f"[{label}] setting up ({wall_s:.0f} s wall so far)"
    reached_s = min(reached_s, duration_s)
    rate = wall_s / reached_s
    eta_s = rate * (duration_s - reached_s)
    eta = f"{eta_s / 60:.0f} min" if eta_s >= 120 else f"{eta_s:.0f} s"
    return (f"[{label}] experiment {reached_s:.0f}/{duration_s:g} s ({100 * reached_s / duration_s:.0f} %), "
            f"{rate:.1f} s wall per experiment-s, ETA {eta}")


class RunProgress:
    """Prints a run's progress every `interval_s` of wall time while it runs (a daemon thread
    that only reads the run's sampler file). Use as a context manager around the backend's
    execute(); a run that ends before the first interval prints nothing."""

    def __init__(self, run_dir, duration_s: float, label: str, emit=print, interval_s: float = 60.0):
        self.run_dir, self.duration_s, self.label = pathlib.Path(run_dir), float(duration_s), label
        self.emit, self.interval_s = emit, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bbrlab-progress", daemon=True)
        self._start = None

    def _loop(self):
        while not self._stop.wait(self.interval_s):
            self.emit(report(self.label, experiment_time(self.run_dir), self.duration_s,
                             time.monotonic() - self._start))

    def __enter__(self):
        self._start = time.monotonic()
        if self.interval_s > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return False
