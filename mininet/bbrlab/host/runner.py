"""Host side of one run: prepare, execute on a backend, tidy, check, publish.

A run is written into a hidden temporary directory of its own next to its
destination (a new one per attempt) and renamed into place only when it is
complete (tidy data + run.json, the tidy data checked to be all of the raw
data: data/extent.py), so a directory named like a run always holds a finished
run. While a run is made or restored its directory's lock (`.<rep>.lock`
beside it, flock) is held: a second process asked for the same run in the
same results tree refuses at once (RunBusy) and touches nothing. A failed run (guest
crash, timeout, non-zero exit) is moved to `<dest>.failed/` with its console
log and a run.json whose status is "failed", and RunFailed is raised.
Before the boot, the BBR variant modules the flows use are built or found
(Backend.modules, modules.py) and handed to the guest in job["modules"], with
job["backend"] and job["guest"] (Backend.guest_options). The runner uses only the
Backend interface (backends/base.py) and checks a backend once per process.
"""
import contextlib
import fcntl
import json
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time

from ..experiment import controls, repetitions, runkey, spec
from . import backends, modules, sizing
from ..data import archive, extent, fidelity, tidy
from .progress import RunProgress
from .resources import default_timeout

REPO = pathlib.Path(__file__).resolve().parents[3]


class RunFailed(RuntimeError):
    """A run did not complete (testbed timeout, crash, non-zero exit, no timeline, tidy data that is
    not all of its raw data). The run was kept in <dest>.failed/ with a run.json of status
    "failed"; the message gives the reason, the console log's path and its last lines."""


class RunBusy(RuntimeError):
    """Another process holds the run's lock: it is making or restoring that run into the same
    directory. Nothing was started, written or removed."""


@contextlib.contextmanager
def run_lock(dest: pathlib.Path):
    """Hold the lock of run directory `dest` (an exclusive flock on `.<name>.lock` beside it, which
    records the holder's process id) for the body; RunBusy at once when another process holds it.
    The kernel releases the lock when its holder dies, however it dies."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    path = dest.with_name(f".{dest.name}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            raise RunBusy(f"{dest}: another process (pid {holder}) is running this run into the same directory "
                          "now; nothing was started or removed. Wait for it to finish, or give another --out") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def attempt_prefix(dest: pathlib.Path) -> str:
    """The name every attempt directory of run `dest` starts with (a new one per attempt, beside it)."""
    return f".{dest.name}.tmp-"


def _remove_leftovers(dest: pathlib.Path) -> None:
    """The temporary directories earlier attempts of this run left (killed by SIGKILL); called with
    the run's lock held, so none of them belongs to a live attempt."""
    for left in dest.parent.glob(f".{dest.name}.tmp*"):
        shutil.rmtree(left, ignore_errors=True)


def _publish_failed(job, dest, tmp, testbed, timings, error, console) -> None:
    """Keep a failed attempt as <dest>.failed/ with a run.json of status "failed" and raise RunFailed."""
    summary = run_summary(job, testbed, "failed", f"{error}; console log: {console}")
    summary["timings"] = timings
    failed = dest.with_name(dest.name + ".failed")
    shutil.rmtree(failed, ignore_errors=True)
    write_json(tmp / "run.json", summary)
    tmp.rename(failed)
    log = failed / "raw" / "console.log"
    console_tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:]) if log.is_file() else "(none)"
    raise RunFailed(f"{error}\nconsole log: {log}\n--- last lines ---\n{console_tail}")


def git_revision() -> str:
    """The repository's HEAD commit, with "-dirty" when tracked files differ from it; "unknown" when
    git is missing or the tree is not a git checkout."""
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev.stdout.strip() + ("-dirty" if dirty else "") if rev.returncode == 0 else "unknown"
    except OSError:
        return "unknown"


def write_json(path: pathlib.Path, data: dict) -> None:
    """Write `data` as indented JSON (non-JSON values as str()) to path.tmp, then rename it to path."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    tmp.rename(path)


def host_info() -> dict:
    """Where the run ran: the host name and, under a batch scheduler, the job."""
    info = {"host": socket.gethostname()}
    if os.environ.get("SLURM_JOB_ID"):
        info["job"] = {"scheduler": "slurm", "id": os.environ["SLURM_JOB_ID"],
                       "node": os.environ.get("SLURMD_NODENAME")}
    return info


def run_summary(job: dict, testbed: dict, status: str, error=None) -> dict:
    """run.json's common content for a run with status `status` ("ok" or "failed") and `error`: the
    experiment, point, repetition, seed, profile, the resolved spec and its run and modules keys,
    each flow's summary, the bottleneck, the receivers' ACK mode, `testbed` and the git revision.
    The caller adds the timings and, for a completed run, the fidelity verdict."""
    bn = job["bottleneck"]
    return {
        "schema": 1, "status": status, "error": error,
        "experiment": job["name"], "point": job["point"], "repetition": job["repetition"],
        "point_label": job["point_label"],
        "seed": job["seed"], "profile": job["profile"], "spec": job, "run_key": runkey.run_key(job),
        "modules_key": runkey.modules_key(job),
        "flows": [{"flow": f["flow"], "cc": f["cc"], "rtt_ms": f["rtt_ms"], "start_s": f["start_s"],
                   "stop_s": f["stop_s"], "label": f["label"], "sender": f"snd{f['flow']}",
                   "receiver": f"rcv{f['flow']}", "access_rate_mbps": f["access_rate_mbps"]}
                  for f in job["flows"]],
        "bottleneck": {"rate_mbps": bn["rate_mbps"], "buffer_bytes": bn["buffer_bytes_resolved"],
                       "aqm": bn["aqm"]["kind"], "shaper": bn["shaper"], "loss_rate": bn["loss_rate"]},
        "receivers": {"delayed_ack": job["delayed_ack"]},
        "testbed": testbed, "git_revision": git_revision(),
    }


def checked_backend(backend_name: str, jobs, **backend_args) -> backends.Backend:
    """The backend `backend_name`, its host checked (check) and every one of `jobs` accepted
    (check_job), before anything is written or booted; raises BackendError otherwise."""
    backend = backends.get(backend_name, **backend_args)
    backend.check()
    for job in jobs:
        backend.check_job(job)
    return backend


def execute(job: dict, dest, backend_name: str = "uml", timeout_s=None, progress=print, backend=None,
            **backend_args) -> dict:
    """Run one resolved run spec into directory `dest`; returns its run.json content.

    `backend`: a Backend whose check() and check_job(job) passed (run_spec_file's); without
    one, the backend `backend_name` is made from backend_args and checked here, once.
    RunBusy when another process is making this run into `dest` (run_lock)."""
    dest = pathlib.Path(dest).resolve()
    with run_lock(dest):
        return _execute(job, dest, backend_name, timeout_s, progress, backend, **backend_args)


def _execute(job: dict, dest: pathlib.Path, backend_name, timeout_s, progress, backend, **backend_args) -> dict:
    """execute() with the run's lock held."""
    if backend is None:
        backend = checked_backend(backend_name, [job], **backend_args)
    backend_name = backend.name
    job = dict(job, backend=backend_name, modules=backend.modules(job), guest=backend.guest_options())
    _remove_leftovers(dest)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=attempt_prefix(dest), dir=dest.parent))
    write_json(tmp / "job.json", job)
    timeout_s = timeout_s or default_timeout(job)
    progress(f"[{job['name']}/{job['point']}/rep{job['repetition']}] booting {backend_name} testbed "
             f"({job['clock']} clock, {job['duration_s']:g} s run, timeout {timeout_s:.0f} s)")
    # A long run reports how far it got (read on the host from the sampler's file; nothing in the
    # guest): every BBRLAB_PROGRESS_S seconds of wall time (default 60; 0: never).
    interval_s = float(os.environ.get("BBRLAB_PROGRESS_S", "60"))
    try:
        with RunProgress(tmp, job["duration_s"], f"{job['name']}/{job['point']}/rep{job['repetition']}",
                         emit=progress, interval_s=0 if backend.simulated else interval_s):
            result = backend.execute(tmp, job, timeout_s)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): the backend has killed the testbed; nothing half-done stays.
        # (A SIGKILL leaves the hidden directory, which the next attempt of this run removes.)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    testbed = dict(backend.describe(), clock=job["clock"], modules=modules.describe(job["modules"]), **host_info())
    guest_mem_mb = backend.guest_mem_mb(job)
    if guest_mem_mb is not None:
        testbed["guest_mem_mb"] = guest_mem_mb
    timings = {"wall_s": round(result.wall_s, 3), "host_cpu_s": round(result.cpu_s, 3), **result.timings}
    error = None
    if result.timed_out:
        error = f"testbed timed out after {timeout_s:.0f} s"
    elif result.exit_status != 0:
        error = ("testbed exited without reporting a status (crash?)" if result.exit_status < 0
                 else f"experiment failed in the testbed with status {result.exit_status}")
    elif not (tmp / "raw" / "timeline.json").exists():
        error = "experiment reported success but wrote no timeline"
    if error:
        _publish_failed(job, dest, tmp, testbed, timings, error, result.console)
    raw_before = extent.snapshot(tmp)
    data = tidy.make_tidy(tmp, job)
    timeline = data["timeline"]
    testbed.update(kernel_release=timeline["kernel_release"], congestion_controls=timeline["congestion_controls"],
                   randomness=timeline.get("randomness"))
    # The guest's set-up on its own clock as guest_setup_s (on the virtual clock set-up takes no
    # guest time: 0.0); setup_s and boot_s are the host's wall seconds (the guest's phase marks).
    timings.update({("guest_setup_s" if k == "setup_s" else k): v for k, v in timeline["timings"].items()})
    timings.update(result.timings)
    timings["experiment_s"] = job["duration_s"]
    summary = run_summary(job, testbed, "ok")
    summary["timings"] = timings
    summary["fidelity"] = fidelity.evaluate(tmp, job, data)
    cut = extent.problems(tmp, job, data, raw_before)
    if cut:
        _publish_failed(job, dest, tmp, testbed, timings, "the tidy data is not all of the raw data: " + "; ".join(cut),
                        result.console)
    write_json(tmp / "run.json", summary)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.rmtree(dest.with_name(dest.name + ".failed"), ignore_errors=True)
    os.replace(tmp, dest)
    verdict = "valid" if summary["fidelity"]["valid"] else "INVALID (" + ", ".join(
        f"{c['name']} {c['subject']}" for c in summary["fidelity"]["checks"] if not c["ok"]) + ")"
    progress(f"[{job['name']}/{job['point']}/rep{job['repetition']}] done in {result.wall_s:.0f} s wall, "
             f"{result.cpu_s:.0f} s host CPU; fidelity {verdict}")
    return summary


def run_dir_name(root, job: dict) -> pathlib.Path:
    """A run's directory under root: <root>/<experiment>/<point>/rep<repetition>."""
    return pathlib.Path(root) / job["name"] / job["point"] / f"rep{job['repetition']}"


def run_spec_file(path, out_root, profile=None, backend="uml", clock=None, only_point=None,
                  only_rep=None, progress=print, archive=None, full_length=False, limits=None,
                  **backend_args) -> list:
    """All runs of a spec file (validated up front), one after the other. With `archive` (a
    results archive directory, bbrlab/data/archive.py, or a list of them, looked up in order) a
    run an archive holds with this checkout's keys is restored from it instead of booted; the
    backend is checked only for the others. full_length: the spec's own duration_s (the paper's
    transfer) whatever the profile runs, as the transfer-length rule's control runs
    (bbrlab/experiment/controls.py). limits: spec.LIMITS raised or lowered (--max-runs, --max-flows)."""
    overrides = {"clock": clock} if clock else {}
    if full_length:
        overrides["duration_s"] = controls.paper_length(path)
    jobs = repetitions.runs(path, profile=profile, overrides=overrides or None, limits=limits)
    if only_point is not None:
        jobs = [j for j in jobs if j["point"] == only_point]
    if only_rep is not None:
        jobs = [j for j in jobs if j["repetition"] == only_rep]
    if not jobs:
        raise spec.SpecError(f"{path}: no run matches point={only_point} repetition={only_rep}")
    summaries, to_run = [], jobs
    if archive is not None:
        to_run = []
        for job in jobs:
            restored = restore_archived(job, archive, run_dir_name(out_root, job), progress)
            if restored is None:
                to_run.append(job)
            else:
                summaries.append(restored)
    if not to_run:
        return summaries
    checked = checked_backend(backend, to_run, **backend_args)    # every run's resources, before the first boot
    sizing.check(to_run, out_root, checked.name)                  # memory and disk of this machine, all runs
    for k, job in enumerate(to_run, 1):
        progress(f"run {k}/{len(to_run)}")
        started = time.time()
        summaries.append(execute(job, run_dir_name(out_root, job), progress=progress, backend=checked))
        progress(f"run {k}/{len(to_run)} took {time.time() - started:.0f} s")
    return summaries


def restore_archived(job: dict, archive_dir, dest, progress=print):
    """The run from the results archive (bbrlab/data/archive.py; or the first of a list of them)
    that holds it with this checkout's keys: unpacked into `dest`, its run.json content returned,
    nothing booted. None when no archive holds it current (one holding it stale is said, naming
    the run: it must be rerun)."""
    name = f"{job['name']}/{job['point']}/rep{job['repetition']}"
    archives = [archive_dir] if isinstance(archive_dir, (str, pathlib.Path)) else list(archive_dir)
    stale = []
    for where in archives:
        state, row = archive.lookup_job(where, job)
        if state == "fresh":
            with run_lock(pathlib.Path(dest).resolve()):
                archive.restore(where, row, dest)
            progress(f"[{name}] restored from the archive {where} (archived {row['archived_at']}, "
                     f"revision {row['git_revision'][:12]}): not run")
            return json.loads((pathlib.Path(dest) / "run.json").read_text())
        if state == "stale":
            stale.append(str(where))
    if stale:
        progress(f"[{name}] the archive {', '.join(stale)} holds this run STALE (its resolved spec or a module "
                 "it loads changed since it was archived): running it again")
    return None


def retidy(run_dir: pathlib.Path) -> str:
    """Recompute a finished run's tidy/ from its raw/ with this revision's parsers
    (e.g. after a parser fix), and record that in run.json (tidy_rewritten). The
    fidelity verdict is kept: the checks read the raw samples, which do not change."""
    meta_path = run_dir / "run.json"
    if not meta_path.is_file() or not (run_dir / "raw").is_dir():
        raise SystemExit(f"bbrlab tidy: {run_dir}: not a finished run (needs run.json and raw/)")
    meta = json.loads(meta_path.read_text())
    if meta.get("status") != "ok":
        return "skipped (a failed run)"
    tidy.make_tidy(run_dir, spec.complete(meta["spec"]))     # a run of an earlier revision may lack defaults
    meta["tidy_rewritten"] = {"git_revision": git_revision(),
                              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    write_json(meta_path, meta)
    return "tidy data rewritten"
