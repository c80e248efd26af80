"""User-Mode Linux backend.

The testbed kernel (kernel/build-uml.sh) runs as an ordinary process of the
calling user. Its root file system is the host's, through hostfs, read-only;
guest_init.sh (PID 1) mounts tmpfs where the guest writes and the run
directory read-write. Clock modes: `real` (guest time is host time) and
`virtual` (UML time-travel: guest computation takes no guest time, so a
loaded host cannot distort a run; wall time grows instead).

The guest's memory (`mem=`) is sized per run from its spec
(resources.guest_mem_mb: large bottleneck buffers need socket memory), and
check_job refuses, before anything boots, a run whose guest memory the host
cannot give now (MemAvailable).

The kernel runs under a tether (tether.py): it dies, with every process it
started, when the runner dies, however the runner dies.
"""
import os
import pathlib
import shutil
import tempfile
import time

from . import BackendError, GuestResult, tethered

REPO = pathlib.Path(__file__).resolve().parents[3]
PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_KERNEL = REPO / "build" / "kernel" / "linux"


def mem_available_mb(meminfo="/proc/meminfo"):
    """The host's MemAvailable in MB, None where the kernel does not say."""
    try:
        for line in pathlib.Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


class UmlBackend:
    name = "uml"

    def __init__(self, kernel=None, mem_mb=None):
        self.kernel = pathlib.Path(kernel or os.environ.get("BBRLAB_KERNEL", DEFAULT_KERNEL)).absolute()
        self.mem_mb = mem_mb         # None: sized per run from its spec

    def guest_mem_mb(self, job: dict) -> int:
        from .. import resources
        return self.mem_mb or resources.guest_mem_mb(job)

    def check_job(self, job: dict, meminfo="/proc/meminfo") -> None:
        """Refuse, before booting, a run whose guest memory the host cannot give now."""
        need = self.guest_mem_mb(job)
        available = mem_available_mb(meminfo)
        if available is not None and need > available:
            from .. import units
            raise BackendError(
                f"{job.get('name', 'run')}/{job.get('point', 'base')}: the testbed guest needs {need} MB of memory"
                f" (bottleneck buffer {job['bottleneck']['buffer_bytes_resolved'] / 1e6:g} MB, up to"
                f" {units.window_bytes(job) / 1e6:g} MB in flight per flow, kept by sender and receiver),"
                f" but this host has only {available} MB available (MemAvailable in {meminfo}); nothing was booted."
                " Run it on a host with more free memory, or make the buffer smaller.")

    def check(self) -> None:
        if not self.kernel.is_file():
            raise BackendError(f"testbed kernel not found: {self.kernel}\n"
                               "build it with: kernel/build-uml.sh   (or: snakemake build/kernel/linux)")
        if not os.access(self.kernel, os.X_OK):
            raise BackendError(f"testbed kernel is not executable by this user: {self.kernel}")

    def describe(self) -> dict:
        release = self.kernel.parent / "release"
        return {"backend": self.name, "kernel": str(self.kernel),
                "kernel_release": release.read_text().strip() if release.exists() else None}

    def command(self, run_dir: pathlib.Path, clock: str, uml_dir: str, mem_mb: int = 1024) -> list:
        for path in (run_dir, PACKAGE_DIR):
            if any(c.isspace() for c in str(path)):
                raise BackendError(f"path contains white space, which the UML command line cannot carry: {path}")
        cmd = [str(self.kernel), f"mem={mem_mb}M", "root=/dev/root", "rootfstype=hostfs",
               "rootflags=/", "ro", f"init={PACKAGE_DIR / 'guest_init.sh'}",
               "con0=null,fd:1", "con=null", "ssl=null", f"uml_dir={uml_dir}", "umid=bbrlab",
               f"BBRLAB_RUN={run_dir}", f"BBRLAB_PYTHONPATH={PACKAGE_DIR.parent}"]
        if clock == "virtual":
            cmd.append("time-travel=inf-cpu")
        return cmd

    def execute(self, run_dir: pathlib.Path, job: dict, timeout_s: float) -> GuestResult:
        self.check()
        self.check_job(job)
        run_dir = pathlib.Path(run_dir).resolve()
        raw = run_dir / "raw"
        raw.mkdir(exist_ok=True)
        console = raw / "console.log"
        uml_dir = tempfile.mkdtemp(prefix="bbrlab-uml-")
        cmd = self.command(run_dir, job.get("clock", "real"), uml_dir, self.guest_mem_mb(job))
        start = time.time()
        try:
            with open(console, "wb") as out:
                out.write(("host: " + " ".join(cmd) + "\n").encode())
                out.flush()
                _code, usage, timed_out = tethered(cmd, out, timeout_s, cwd=uml_dir, rmtree=uml_dir)
        finally:
            shutil.rmtree(uml_dir, ignore_errors=True)
        exit_file = run_dir / "guest_exit"
        exit_status = int(exit_file.read_text().strip()) if exit_file.exists() else -1
        if timed_out:
            with open(console, "a") as out:
                out.write(f"\nhost: testbed killed after the {timeout_s:.0f}-s timeout\n")
        return GuestResult(exit_status=exit_status, timed_out=timed_out, wall_s=time.time() - start,
                           cpu_s=usage.ru_utime + usage.ru_stime, console=str(console))
