"""The backend interface: what the host side (runner.py) asks of every testbed backend.

A backend is where the guest side of a run executes: a User-Mode Linux kernel (uml.py),
this host's own kernel (native.py), or a simulator (ns3_backend.py). The runner uses
only what `Backend` declares; a backend states its nature in class attributes
(`name`, `simulated`) and in what `guest_options()` puts into the job, never by the
runner or the guest testing its name.

The order of calls, per `bbrlab run` (runner.py) and so once per run of the pipeline:

    backend = backends.get(name, **options)
    backend.check()                 once: the host's prerequisites, programs built
    backend.check_job(job)          once per run, before anything of any run boots
    job["modules"] = backend.modules(job)
    job["guest"] = backend.guest_options()
    result = backend.execute(run_dir, job, timeout_s)   per run, after both checks passed
    backend.describe(), backend.guest_mem_mb(job)       into run.json's testbed

`execute` may assume check() and check_job(job) passed; it does not repeat them.

A backend with a guest fills GuestResult.timings from the lines its guest prints
(phases.py): the host-side boot and set-up times run.json records.
"""
import abc
import os
import pathlib
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field

from .errors import BackendError

TETHER = pathlib.Path(__file__).with_name("tether.py")


@dataclass
class GuestResult:
    """How a backend's execute() ended: the guest experiment's exit status (-1 when it never
    reported one, and on a timeout), whether the testbed was killed on the timeout, the host's
    wall and CPU seconds (user + system of the testbed and everything it started), the console
    log's path, and the host wall seconds of the guest's phases (phases.py; {} when the backend
    has none)."""
    exit_status: int           # guest experiment's exit status, -1 if it never reported one
    timed_out: bool
    wall_s: float
    cpu_s: float               # host CPU seconds (user + system) of the testbed
    console: str               # path of the console log
    timings: dict = field(default_factory=dict)   # host wall seconds of the guest's phases (phases.py)


class Backend(abc.ABC):
    """A testbed backend. Subclasses set `name` and implement the abstract methods; the
    others have defaults that fit a backend without a guest kernel of its own."""

    name: str = ""
    # True: the network is simulated (time is the simulator's): there is no guest CPU,
    # no timer lateness and no boot; fidelity.py skips the checks that measure those.
    simulated: bool = False

    @abc.abstractmethod
    def check(self) -> None:
        """Raise BackendError naming everything this host lacks to run this backend (and how to
        get it); build what the backend's runs need and is missing. Called once per process,
        before any run; cheap enough to repeat but never needed twice."""

    def check_job(self, job: dict) -> None:
        """Raise BackendError naming every field of the resolved run `job` this backend cannot
        run here (nothing was booted yet). Default: every run is accepted."""

    @abc.abstractmethod
    def describe(self) -> dict:
        """What run.json's `testbed` records of this backend: at least {"backend": name,
        "kernel_release": ... or None}."""

    @abc.abstractmethod
    def execute(self, run_dir: pathlib.Path, job: dict, timeout_s: float) -> GuestResult:
        """Run the resolved run `job` (also in run_dir/job.json) into run_dir/raw/ and return how
        it ended; at most timeout_s of wall time, after which the testbed is killed
        (GuestResult.timed_out). Success is exit_status 0 with raw/timeline.json written.
        Whatever the testbed started is gone when this returns or raises (interrupts too).
        Assumes check() and check_job(job) passed."""

    def modules(self, job: dict) -> list:
        """job["modules"]: the variant kernel modules the guest loads ([{"name", "path",
        "params"}], modules.py). Default: none (a backend without a kernel)."""
        return []

    def guest_options(self) -> dict:
        """job["guest"]: how the guest side (guest/driver.py) treats the kernel it runs on:

            offloads_by_ioctl  turn offloads off by ioctls (offloads.py, exact on the project's
                               own testbed kernel) instead of ethtool processes
            start_ovs          the kernel is the run's alone: start Open vSwitch's daemons in it
                               (with `switch: ovs`); a host runs its own
            teardown           remove the network after the run (false: the kernel powers off
                               next and takes it along)

        Default: a shared host kernel (ethtool, the host's OVS, tear down)."""
        return {"offloads_by_ioctl": False, "start_ovs": False, "teardown": True}

    def guest_mem_mb(self, job: dict):
        """The guest kernel's memory for this run in MB (run.json testbed.guest_mem_mb);
        None: the backend has no guest kernel of its own."""
        return None


#: How often tethered() calls on_poll while the testbed runs (seconds).
POLL_S = 0.2


class _ExitWaiter:
    """Sleep up to a timeout, waking as soon as process `pid` exits: a pidfd (Linux >= 5.3)
    becomes readable then, so the run's end is noticed at once rather than at the next
    0.2-s poll (about 0.1 s per run on average); plain sleeping where pidfds are missing."""

    def __init__(self, pid: int):
        try:
            self.fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.fd = None

    def __call__(self, timeout_s: float) -> None:
        if self.fd is None:
            time.sleep(timeout_s)
        else:
            select.select([self.fd], [], [], timeout_s)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def tethered(cmd, out, timeout_s: float, cwd=None, rmtree=None, after=None, env=None, on_poll=None):
    """Run `cmd` under a tether (tether.py), output to the open file `out`, at most `timeout_s`.

    The testbed dies with this process however it ends (SIGKILL too: the tether sees
    the pipe close), and on the timeout. `on_poll`, if given, is called every POLL_S while
    it runs and once after (phases.ConsoleTimes.poll). Returns (exit code, rusage of the
    tether and everything it reaped, timed_out)."""
    r, w = os.pipe()
    args = [sys.executable, "-S", str(TETHER), str(r)]
    if rmtree:
        args += ["--rmtree", str(rmtree)]
    if after:
        args += ["--after", after]
    try:
        proc = subprocess.Popen(args + ["--", *map(str, cmd)], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, pass_fds=(r,), cwd=cwd, env=env)
    finally:
        os.close(r)
    timed_out = False
    exited = _ExitWaiter(proc.pid)
    try:
        deadline = time.time() + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if on_poll is not None:
                on_poll()
            if pid:
                break
            if time.time() > deadline:
                timed_out = True
                os.write(w, b"k")
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            exited(POLL_S)
    except BaseException:
        # Ctrl-C, SIGTERM turned into SystemExit, ...: the closed pipe tells the tether to kill.
        os.close(w)
        w = None
        try:
            proc.wait(timeout=30)
        except BaseException:  # noqa: BLE001 - a second interrupt: the tether still sees the pipe closed
            pass
        raise
    finally:
        if w is not None:
            os.close(w)
        exited.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage, timed_out


def build_guest_programs(*names) -> None:
    """The project's C programs the testbed runs (guest_programs.py: the flows' two ends, the
    UML guest's init), compiled on the host unless up to date: the uml and native backends'
    check(), before any testbed starts."""
    from .. import guest_programs
    try:
        for name in names:
            guest_programs.build(name)
    except guest_programs.ProgramBuildError as err:
        raise BackendError(str(err)) from None


