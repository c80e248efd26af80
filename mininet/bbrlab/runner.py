"""Host side of one run: prepare, execute on a backend, tidy, check, publish.

A run is written into a hidden temporary directory next to its destination
and renamed into place only when it is complete (tidy data + run.json), so a
directory named like a run always holds a finished run. A failed run (guest
crash, timeout, non-zero exit) is moved to `<dest>.failed/` with its console
log and a run.json whose status is "failed", and RunFailed is raised.
Before the boot, the BBR variant modules the flows use are built or found
(modules.py) and handed to the guest in job["modules"].
"""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import time

from . import backends, fidelity, modules, spec, tidy

REPO = pathlib.Path(__file__).resolve().parents[2]


class RunFailed(RuntimeError):
    pass


def git_revision() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev.stdout.strip() + ("-dirty" if dirty else "") if rev.returncode == 0 else "unknown"
    except OSError:
        return "unknown"


def default_timeout(job: dict) -> float:
    """Generous bound on a run's wall time, to catch a hung testbed: set-up plus the run. On the
    virtual clock the wall time is the run's host CPU cost (up to about 6 host CPU-s per
    experiment-s, bench/results/) stretched by whatever else shares the host's cores, and no
    result depends on it: 8 times the duration timed out a 20-s four-flow run at 100 Mbit/s on
    a host with three other testbeds running, so the bound is 30 times."""
    factor = 30.0 if job["clock"] == "virtual" else 1.5
    return 180 + 10 * len(job["flows"]) + factor * job["duration_s"]


def write_json(path: pathlib.Path, data: dict) -> None:
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
    bn = job["bottleneck"]
    return {
        "schema": 1, "status": status, "error": error,
        "experiment": job["name"], "point": job["point"], "repetition": job["repetition"],
        "point_label": job.get("point_label", job["point"]),
        "seed": job["seed"], "profile": job.get("profile"), "spec": job,
        "flows": [{"flow": f["flow"], "cc": f["cc"], "rtt_ms": f["rtt_ms"], "start_s": f["start_s"],
                   "stop_s": f["stop_s"], "label": f["label"], "sender": f"snd{f['flow']}",
                   "receiver": f"rcv{f['flow']}", "access_rate_mbps": f.get("access_rate_mbps")}
                  for f in job["flows"]],
        "bottleneck": {"rate_mbps": bn["rate_mbps"], "buffer_bytes": bn["buffer_bytes_resolved"],
                       "aqm": bn["aqm"]["kind"], "shaper": bn["shaper"], "loss_rate": bn.get("loss_rate", 0)},
        "receivers": {"delayed_ack": job.get("delayed_ack", True)},
        "testbed": testbed, "git_revision": git_revision(),
    }


def execute(job: dict, dest, backend_name: str = "uml", timeout_s=None, progress=print, **backend_args) -> dict:
    """Run one resolved run spec into directory `dest`; returns its run.json content."""
    dest = pathlib.Path(dest).resolve()
    backend = backends.get(backend_name, **backend_args)
    backend.check()
    if hasattr(backend, "check_job"):
        backend.check_job(job)       # e.g. the guest's memory: refused before anything is written or booted
    job = dict(job, backend=backend_name, modules=modules.for_job(job, backend_name, getattr(backend, "kernel", None)))
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write_json(tmp / "job.json", job)
    timeout_s = timeout_s or default_timeout(job)
    progress(f"[{job['name']}/{job['point']}/rep{job['repetition']}] booting {backend_name} testbed "
             f"({job['clock']} clock, {job['duration_s']:g} s run, timeout {timeout_s:.0f} s)")
    try:
        result = backend.execute(tmp, job, timeout_s)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): the backend has killed the testbed; nothing half-done stays.
        # (A SIGKILL leaves the hidden directory, which the next attempt of this run removes.)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    testbed = dict(backend.describe(), clock=job["clock"], modules=modules.describe(job["modules"]), **host_info())
    if hasattr(backend, "guest_mem_mb"):
        testbed["guest_mem_mb"] = backend.guest_mem_mb(job)
    timings = {"wall_s": round(result.wall_s, 3), "host_cpu_s": round(result.cpu_s, 3)}
    error = None
    if result.timed_out:
        error = f"testbed timed out after {timeout_s:.0f} s"
    elif result.exit_status != 0:
        error = ("testbed exited without reporting a status (crash?)" if result.exit_status < 0
                 else f"experiment failed in the testbed with status {result.exit_status}")
    elif not (tmp / "raw" / "timeline.json").exists():
        error = "experiment reported success but wrote no timeline"
    if error:
        summary = run_summary(job, testbed, "failed", f"{error}; console log: {result.console}")
        summary["timings"] = timings
        failed = dest.with_name(dest.name + ".failed")
        shutil.rmtree(failed, ignore_errors=True)
        write_json(tmp / "run.json", summary)
        tmp.rename(failed)
        console_tail = "\n".join((failed / "raw" / "console.log").read_text(errors="replace").splitlines()[-25:])
        raise RunFailed(f"{error}\nconsole log: {failed / 'raw' / 'console.log'}\n--- last lines ---\n{console_tail}")
    data = tidy.make_tidy(tmp, job)
    timeline = data["timeline"]
    testbed.update(kernel_release=timeline["kernel_release"], congestion_controls=timeline["congestion_controls"],
                   randomness=timeline.get("randomness"))
    timings.update(timeline["timings"])
    timings["experiment_s"] = job["duration_s"]
    summary = run_summary(job, testbed, "ok")
    summary["timings"] = timings
    summary["fidelity"] = fidelity.evaluate(tmp, job, data)
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
    return pathlib.Path(root) / job["name"] / job["point"] / f"rep{job['repetition']}"


def run_spec_file(path, out_root, profile=None, backend="uml", clock=None, only_point=None,
                  only_rep=None, progress=print, **backend_args) -> list:
    """All runs of a spec file (validated up front), one after the other."""
    overrides = {"clock": clock} if clock else None
    jobs = spec.expand(spec.load(path, profile=profile, overrides=overrides))
    if only_point is not None:
        jobs = [j for j in jobs if j["point"] == only_point]
    if only_rep is not None:
        jobs = [j for j in jobs if j["repetition"] == only_rep]
    if not jobs:
        raise spec.SpecError(f"{path}: no run matches point={only_point} repetition={only_rep}")
    checked = backends.get(backend, **backend_args)
    checked.check()
    for job in jobs:                 # every run's resources, before the first boot
        if hasattr(checked, "check_job"):
            checked.check_job(job)
    summaries = []
    for k, job in enumerate(jobs, 1):
        progress(f"run {k}/{len(jobs)}")
        started = time.time()
        summaries.append(execute(job, run_dir_name(out_root, job), backend, progress=progress, **backend_args))
        progress(f"run {k}/{len(jobs)} took {time.time() - started:.0f} s")
    return summaries


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
    tidy.make_tidy(run_dir, meta["spec"])
    meta["tidy_rewritten"] = {"git_revision": git_revision(),
                              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    write_json(meta_path, meta)
    return "tidy data rewritten"
