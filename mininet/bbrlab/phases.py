"""Phase marks: the guest's phases timed on the host's clock.

The guest (guest.py) creates an empty file raw/phases/<phase> when it starts (its boot is
over: kernel, init, Python) and when its network is set up. A file's modification time is
set by the host's kernel at creation (hostfs passes the create through; a native guest is on
the host), so it is the host's clock at that moment, also on the virtual clock, on which the
guest's own clocks stand still while it computes. The backend (backends/uml.py, native.py)
turns them into boot_s and setup_s with times(); run.json records them (runner.py).
Standard library only: both sides import it.
"""
import os
import pathlib

PHASES_DIR = "phases"
PHASE_STARTED, PHASE_SET_UP = "started", "set_up"


def mark(raw: pathlib.Path, phase: str) -> None:
    """Create the empty file raw/phases/<phase> (a new file: its creation time is the mark).
    Takes no guest time and changes nothing the flows see."""
    directory = pathlib.Path(raw) / PHASES_DIR
    directory.mkdir(exist_ok=True)
    os.close(os.open(directory / phase, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))


def times(run_dir: pathlib.Path, start: float, end: float) -> dict:
    """Host wall seconds of the guest's phases from its phase marks (module docstring):
    boot_s, from `start` (the testbed process started) to the guest's start, and setup_s, from
    there to the end of its network set-up. A mark that is missing, or whose time lies outside
    [start, end] (a clock the host did not set), is left out."""
    marks = {}
    for phase in (PHASE_STARTED, PHASE_SET_UP):
        try:
            t = (pathlib.Path(run_dir) / "raw" / PHASES_DIR / phase).stat().st_mtime
        except OSError:
            continue
        if start - 1.0 <= t <= end + 1.0:
            marks[phase] = max(start, min(end, t))
    out = {}
    if PHASE_STARTED in marks:
        out["boot_s"] = round(marks[PHASE_STARTED] - start, 3)
        if PHASE_SET_UP in marks:
            out["setup_s"] = round(marks[PHASE_SET_UP] - marks[PHASE_STARTED], 3)
    return out
