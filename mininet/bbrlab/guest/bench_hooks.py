"""Optional measurement hooks of the bench scripts (bench/), kept out of the guest's production path.

A bench script asks for a hook by setting a key in the run's job before it runs it (never a
spec: the spec schema has none of these keys):

    driver_profile        bench/setup_profile.py: the guest driver's set-up under cProfile,
                          and what importing it costs (python -X importtime)
    proc_accounting       bench/host_cost_profile.py: per-process event counts of the guest
                          at the phase boundaries and during the run (procacct.py)
    receiver_lowat_bytes  bench/host_cost_profile.py: SO_RCVLOWAT on each flow's receiver
                          once it is connected (rcvlowat.py)
    setup_noise           tests/test_determinism.py: extra guest work at the end of set-up
                          (that many processes started, random bytes drawn, files written and
                          clock reads), as another host's binaries would do; the flows' data
                          must not change (vclock.py)

driver.py calls for_job(job, raw, log) once and then the hooks' methods at its phase boundaries.
For a job without any of these keys it gets NO_HOOKS, whose methods do nothing and import
nothing, so an ordinary run executes none of this module's measurement code.
"""
import pathlib
import subprocess
import sys

HOOK_KEYS = ("driver_profile", "proc_accounting", "receiver_lowat_bytes", "setup_noise")


class Hooks:
    """The hook points of driver.main, in the order it calls them. This base does nothing."""

    def started(self) -> None:
        """Before anything of the run (modules, network) exists."""

    def set_up(self) -> None:
        """The network is built and shaped."""

    def samplers_started(self, t0: float, tail_s: float) -> None:
        """The samplers run; the flows start at t0 (guest time.time())."""

    def flow_started(self, job: dict, servers: list, i: int) -> None:
        """Flow i (0-based) was started; servers[i][0] is its receiver process."""

    def flows_done(self) -> None:
        """Every flow's sender has ended."""

    def experiment_done(self) -> None:
        """Everything is collected; the timeline is written next."""


NO_HOOKS = Hooks()


class BenchHooks(Hooks):
    """The hooks a bench job asks for (module docstring)."""

    def __init__(self, job: dict, raw: pathlib.Path, log):
        self.job, self.raw, self.log = job, raw, log
        self.profile = self._start_driver_profile() if job.get("driver_profile") else None
        self.marks = None
        self.acct = None

    def started(self) -> None:
        """With proc_accounting: imports procacct and records the global counters as mark "start"."""
        if self.job.get("proc_accounting"):
            from . import procacct
            self.procacct = procacct
            self.marks = {"start": procacct.global_counters()}

    def _start_driver_profile(self):
        """The driver's Python from here to the end of set-up under cProfile, and what importing
        the driver costs, from a second interpreter (python -X importtime) run first. Meaningful
        on the real clock only: on the virtual clock the guest's clocks do not advance while it
        computes."""
        import cProfile
        res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import bbrlab.guest.driver"],
                             capture_output=True, text=True)
        (self.raw / "driver_importtime.txt").write_text(res.stderr)
        profile = cProfile.Profile()
        profile.enable()
        return profile

    def set_up(self) -> None:
        """Ends the driver profile (raw/driver_setup.pstats) and, with proc_accounting, records mark
        "setup_done"."""
        if self.profile is not None:
            self.profile.disable()
            self.profile.dump_stats(str(self.raw / "driver_setup.pstats"))
        if self.marks is not None:
            self.marks["setup_done"] = self.procacct.global_counters()
        if self.job.get("setup_noise"):
            self._setup_noise(int(self.job["setup_noise"]))

    def _setup_noise(self, n: int) -> None:
        """n processes started, n * 64 random bytes drawn (getrandom), n files written and n * 100
        clock reads: the kinds of set-up work that differ between hosts' binaries."""
        import os
        import time
        for k in range(n):
            subprocess.run(["true"], check=True)
            os.urandom(64)
            (self.raw / f"noise_{k}.tmp").write_bytes(os.urandom(16))
            for _ in range(100):
                time.monotonic()
        self.log(f"set-up noise: {n} processes, {n * 64} random bytes, {n} files, {n * 100} clock reads")

    def samplers_started(self, t0: float, tail_s: float) -> None:
        """With proc_accounting: records mark "samplers_started" and starts procacct's snapshot thread
        over the job's window (raw/procacct_{start,end,after}.json)."""
        if self.marks is not None:
            self.marks["samplers_started"] = self.procacct.global_counters()
            self.acct = self.procacct.start_thread(self.job, self.raw, t0, tail_s)

    def flow_started(self, job: dict, servers: list, i: int) -> None:
        """With receiver_lowat_bytes: sets SO_RCVLOWAT on flow i's receiver socket once it is connected
        (rcvlowat.apply_when_connected, in the background)."""
        if job.get("receiver_lowat_bytes"):
            from . import rcvlowat, traffic
            rcvlowat.apply_when_connected(servers[i][0].pid, traffic.port(job["flows"][i]["flow"]),
                                          job["receiver_lowat_bytes"], self.log)

    def flows_done(self) -> None:
        """Waits up to 30 s for procacct's snapshot thread, when one runs."""
        if self.acct is not None:
            self.acct.join(timeout=30)

    def experiment_done(self) -> None:
        """With proc_accounting: records mark "experiment_done" and writes every mark to
        raw/procacct_marks.json (atomically)."""
        if self.marks is not None:
            self.marks["experiment_done"] = self.procacct.global_counters()
            self.procacct.write_atomic(self.raw / "procacct_marks.json", self.marks)


def for_job(job: dict, raw: pathlib.Path, log) -> Hooks:
    """The hooks `job` asks for: NO_HOOKS unless it has one of HOOK_KEYS."""
    if not any(job.get(key) for key in HOOK_KEYS):
        return NO_HOOKS
    return BenchHooks(job, raw, log)
