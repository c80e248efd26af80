"""User-Mode Linux backend.

The testbed kernel (kernel/build-uml.sh) runs as an ordinary process of the
calling user. Its root file system is the host's, through hostfs, read-only;
guest_init.c (PID 1, built by guest_programs.py) mounts tmpfs where the guest writes and the run
directory read-write. Clock modes: `real` (guest time is host time) and
`virtual` (UML time-travel: guest computation takes no guest time, so a
loaded host cannot distort a run; wall time grows instead).

The guest's memory (`mem=`) is sized per run from its spec
(resources.guest_mem_mb: large bottleneck buffers need socket memory), and
check_job refuses, before anything boots, a run whose guest memory the host
cannot give now (MemAvailable).

The kernel runs under a tether (tether.py): it dies, with every process it
started, when the runner dies, however the runner dies.

Seeded guests. The run's seed (spec.py: the spec's `seed` plus the repetition)
goes on the kernel command line as `bbrlab.seed=<seed>`
(kernel/patches/uml-seeded-random.patch: all guest randomness from it); the guest's user
space gets PYTHONHASHSEED from it (guest_init.c); on the virtual clock the guest's wall
clock is pinned (`time-travel-start=`, GUEST_EPOCH_NS); the kernel runs with the host's
address-space randomisation off (`setarch -R`). Together these make a virtual-clock run a
function of its spec and seed. `seed_guest=False` boots with host randomness, start time
and layout, for comparisons. Why each: docs/clocks-and-fidelity.md, "Same seed, same
numbers".
"""
import os
import pathlib
import platform
import shutil
import tempfile
import time

from ...experiment import units
from .. import digests, guest_programs, modules, resources
from . import phases
from .base import Backend, GuestResult, build_guest_programs, tethered
from .errors import BackendError

REPO = pathlib.Path(__file__).resolve().parents[4]
PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_KERNEL = REPO / "build" / "kernel" / "linux"
# The virtual clock's wall-clock start: 2024-01-01T00:00:00Z, in nanoseconds (any fixed value).
GUEST_EPOCH_NS = 1_704_067_200 * 10**9
# Buckets of the guest's TCP socket hash tables (`thash_entries=`). Sized from memory, the kernel
# gives a 1-GB guest 8192 and a 3-GB one 32768; the sampler's sock_diag dump walks every bucket of
# the established table, in every host and every sample (a twelfth of a run's host CPU at 8192,
# bench/results/sampler-cost-2026-11-29.md). The testbed holds at most a few dozen connections
# (21 flows is the largest spec), so 256 buckets keep the chains short at every memory size. The
# table's size decides neither a packet's path nor its timing: the flows' bytes stay the same.
TCP_HASH_ENTRIES = 256


def mem_available_mb(meminfo="/proc/meminfo"):
    """The host's MemAvailable in MB, None where the kernel does not say."""
    try:
        for line in pathlib.Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def compile_package() -> None:
    """Byte-compile the package on the host before the guest boots. The guest's root file system
    is read-only, so without this its Python compiles every module of the package from source in
    every process of every run (the driver, the sampler), and in User-Mode Linux the compiler's
    memory traffic is expensive (page faults are ptrace stops; what it saves:
    bench/results/measurements-journal-2026-11-28.md, "What the cuts bought"). Up-to-date files
    are left alone; a tree the user cannot write is only slower."""
    import compileall
    compileall.compile_dir(str(PACKAGE_DIR), quiet=2)


class UmlBackend(Backend):
    """The guest side in the User-Mode Linux testbed kernel (module docstring). kernel: its path
    (default $BBRLAB_KERNEL, else DEFAULT_KERNEL); mem_mb: the guest's memory for every run
    (None: sized per run, resources.guest_mem_mb); seed_guest: seed the guest from the run
    (module docstring, "Seeded guests")."""
    name = "uml"

    def __init__(self, kernel=None, mem_mb=None, seed_guest=True):
        self.kernel = pathlib.Path(kernel or os.environ.get("BBRLAB_KERNEL", DEFAULT_KERNEL)).absolute()
        self.mem_mb = mem_mb         # None: sized per run from its spec
        self.seed_guest = seed_guest

    def guest_mem_mb(self, job: dict) -> int:
        """mem= of the guest: as given to the constructor, else sized from the run (resources.py)."""
        return self.mem_mb or resources.guest_mem_mb(job)

    def check_job(self, job: dict, meminfo="/proc/meminfo") -> None:
        """Refuse, before booting, a run whose guest memory the host cannot give now, or whose
        loss recovery needs a larger receive window than TCP can advertise (units.check_span)."""
        need = self.guest_mem_mb(job)
        available = mem_available_mb(meminfo)
        if available is not None and need > available:
            raise BackendError(
                f"{job.get('name', 'run')}/{job.get('point', 'base')}: the testbed guest needs {need} MB of memory"
                f" (bottleneck buffer {job['bottleneck']['buffer_bytes_resolved'] / 1e6:g} MB, up to"
                f" {units.window_bytes(job) / 1e6:g} MB in flight per flow, kept by sender and receiver),"
                f" but this host has only {available} MB available (MemAvailable in {meminfo}); nothing was booted."
                " Run it on a host with more free memory, or make the buffer smaller.")
        try:
            units.check_span(job)
        except ValueError as err:
            raise BackendError(str(err)) from None

    def check(self) -> None:
        """The testbed kernel is there and executable, setarch for a seeded guest, the guest's
        C programs built."""
        if not self.kernel.is_file():
            raise BackendError(f"testbed kernel not found: {self.kernel}\n"
                               "build it with: kernel/build-uml.sh   (or: snakemake build/kernel/linux)")
        if not os.access(self.kernel, os.X_OK):
            raise BackendError(f"testbed kernel is not executable by this user: {self.kernel}")
        if self.seed_guest and not shutil.which("setarch"):
            raise BackendError("setarch not found (util-linux): a seeded testbed runs with the host's address-space"
                               " randomisation off; install util-linux")
        build_guest_programs("bulk", "guest_init")

    def modules(self, job: dict) -> list:
        """The run's variant modules, built for the testbed kernel (kernel/build-variants.sh)."""
        return modules.for_job(job, "uml", self.kernel)

    def guest_options(self) -> dict:
        """The kernel is the run's own: offloads by ioctl, Open vSwitch started in the guest, no
        teardown (the guest powers off)."""
        return {"offloads_by_ioctl": True, "start_ovs": True, "teardown": False}

    def describe(self) -> dict:
        """{"backend": "uml", "kernel": the kernel's path, "kernel_sha256": its digest (None when it is
        missing), "kernel_release": the release file next to it, None without one}."""
        release = self.kernel.parent / "release"
        return {"backend": self.name, "kernel": str(self.kernel),
                "kernel_sha256": digests.sha256_file(self.kernel) if self.kernel.is_file() else None,
                "kernel_release": release.read_text().strip() if release.exists() else None}

    def command(self, run_dir: pathlib.Path, clock: str, uml_dir: str, mem_mb: int = 1024, seed=None) -> list:
        """The kernel's command line; with a seed (and seed_guest) the guest's randomness comes from it."""
        for path in (run_dir, PACKAGE_DIR, guest_programs.binary("guest_init")):
            if any(c.isspace() for c in str(path)):
                raise BackendError(f"path contains white space, which the UML command line cannot carry: {path}")
        cmd = [str(self.kernel), f"mem={mem_mb}M", "root=/dev/root", "rootfstype=hostfs",
               "rootflags=/", "ro", f"init={guest_programs.binary('guest_init')}",
               "con0=null,fd:1", "con=null", "ssl=null", f"uml_dir={uml_dir}", "umid=bbrlab",
               f"BBRLAB_RUN={run_dir}", f"BBRLAB_PYTHONPATH={PACKAGE_DIR.parent}",
               f"thash_entries={TCP_HASH_ENTRIES}"]
        if clock == "virtual":
            cmd.append("time-travel=inf-cpu")
        if seed is not None and self.seed_guest:
            if not isinstance(seed, int) or seed < 0:
                raise BackendError(f"run seed must be a non-negative integer, not {seed!r}")
            cmd += [f"bbrlab.seed={seed}", f"BBRLAB_PYTHONHASHSEED={seed % 2**32}"]
            if clock == "virtual":
                cmd.append(f"time-travel-start={GUEST_EPOCH_NS}")
            cmd = ["setarch", platform.machine(), "--addr-no-randomize"] + cmd
        return cmd

    def execute(self, run_dir: pathlib.Path, job: dict, timeout_s: float) -> GuestResult:
        """Backend.execute in the testbed kernel: byte-compiles the package, boots the kernel (command())
        under the tether in a scratch uml_dir removed afterwards, the console in raw/console.log. The
        exit status is what the guest wrote to run_dir/guest_exit (-1 without that file)."""
        compile_package()
        run_dir = pathlib.Path(run_dir).resolve()
        raw = run_dir / "raw"
        raw.mkdir(exist_ok=True)
        console = raw / "console.log"
        uml_dir = tempfile.mkdtemp(prefix="bbrlab-uml-")
        cmd = self.command(run_dir, job["clock"], uml_dir, self.guest_mem_mb(job), job["seed"])
        console_times = phases.ConsoleTimes(console)
        start = time.time()
        try:
            with open(console, "wb") as out:
                out.write(("host: " + " ".join(cmd) + "\n").encode())
                out.flush()
                _code, usage, timed_out = tethered(cmd, out, timeout_s, cwd=uml_dir, rmtree=uml_dir,
                                                   on_poll=console_times.poll)
        finally:
            shutil.rmtree(uml_dir, ignore_errors=True)
        exit_file = run_dir / "guest_exit"
        exit_status = int(exit_file.read_text().strip()) if exit_file.exists() else -1
        if timed_out:
            with open(console, "a") as out:
                out.write(f"\nhost: testbed killed after the {timeout_s:.0f}-s timeout\n")
        end = time.time()
        return GuestResult(exit_status=exit_status, timed_out=timed_out, wall_s=end - start,
                           cpu_s=usage.ru_utime + usage.ru_stime, console=str(console),
                           timings=console_times.timings(start))
