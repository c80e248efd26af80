"""The guest's phases timed on the host's clock, from the lines it prints to its console.

On the virtual clock the guest's own clocks stand still while it computes, so its set-up
takes no guest time; the host sees it take seconds. The backend watches the console log
while the testbed runs (ConsoleTimes.poll, from base.tethered's wait loop, every 0.2 s) and
notes when each of these lines first appears:

    BOOTED   "bbrlab-guest: booted"             guest_init.c, once the kernel has booted
    SET_UP   "measuring base RTT of each path"  the guest driver, once the network is set up

boot_s is the time from the testbed's start to BOOTED, setup_s from BOOTED (or, without a boot,
from the start) to SET_UP: the driver's start, the modules, the dumbbell and its shaping. The
guest writes nothing for this (a file the guest created before the flows changed them: the
runs' ephemeral ports moved), so nothing the flows see changes. Resolution: the poll interval.
The two lines are testbed facts the guest prints (experiment/testbed.py).
"""
import pathlib
import time

from ...experiment.testbed import BOOTED, SET_UP


class ConsoleTimes:
    """First-appearance times (host clock) of marker lines in a console log being written."""

    def __init__(self, console: pathlib.Path, markers=(BOOTED, SET_UP), clock=time.time):
        self.console, self.markers, self.clock = pathlib.Path(console), tuple(markers), clock
        self.seen = {}
        self._offset = 0
        self._carry = b""

    def poll(self) -> None:
        """Read what the log gained since the last poll and note the markers it shows first."""
        if len(self.seen) == len(self.markers):
            return
        try:
            with open(self.console, "rb") as f:
                f.seek(self._offset)
                new = f.read()
        except OSError:
            return
        self._offset += len(new)
        text = self._carry + new
        now = self.clock()
        for marker in self.markers:
            if marker not in self.seen and marker.encode() in text:
                self.seen[marker] = now
        longest = max(len(m) for m in self.markers)
        self._carry = text[-longest:]

    def timings(self, start: float) -> dict:
        """boot_s and setup_s (module docstring) of the markers seen, rounded to ms."""
        out = {}
        setup_from = start
        if BOOTED in self.seen:
            out["boot_s"] = round(self.seen[BOOTED] - start, 3)
            setup_from = self.seen[BOOTED]
        if SET_UP in self.seen:
            out["setup_s"] = round(self.seen[SET_UP] - setup_from, 3)
        return out
