"""Per-process event counts of the testbed guest, for the host-cost profile.

On User-Mode Linux every guest user process is a host process that the UML
kernel drives with ptrace: each guest system call, each guest page fault and
each interrupt that arrives while the process runs stops it on the host and
switches to the UML kernel and back. What a guest process costs the host is
therefore set by how often it enters the guest kernel, not by its guest CPU
time (on the virtual clock, computation takes no guest time at all, so guest
utime/stime say little). This module records, for every guest process, the
counts the guest kernel keeps (page faults, voluntary and involuntary context
switches, and the start addresses of its memory mappings, by which the host
side -- bench/host_cost_profile.py -- finds the host process that carries the
same address space).

Off unless the job asks for it (job["proc_accounting"], set only by the
profile bench): snapshot() reads /proc once per process and is not run at all
in an ordinary experiment, so nothing the flows see changes.
"""
import json
import os
import pathlib
import threading
import time


def _stat_fields(text: str) -> tuple:
    """(comm, fields after the comm) of a /proc/<pid>/stat line (comm may hold spaces)."""
    left, right = text.index("("), text.rindex(")")
    return text[left + 1:right], text[right + 2:].split()


def process(pid: int, proc="/proc") -> dict:
    """One process's counts; None if it has gone."""
    base = pathlib.Path(proc) / str(pid)
    try:
        comm, f = _stat_fields((base / "stat").read_text())
        status = dict(line.split(":", 1) for line in (base / "status").read_text().splitlines() if ":" in line)
        cmdline = (base / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        maps = []
        for line in (base / "maps").read_text().splitlines():
            lo, hi = line.split()[0].split("-")
            maps.append([int(lo, 16), int(hi, 16)])
    except (OSError, ValueError):
        return None
    # stat fields after comm: state(0) ppid(1) ... minflt(7) majflt(9) utime(11) stime(12) num_threads(17)
    return {"pid": pid, "ppid": int(f[1]), "comm": comm, "cmdline": cmdline[:160],
            "minflt": int(f[7]), "majflt": int(f[9]), "utime": int(f[11]), "stime": int(f[12]),
            "threads": int(f[17]),
            "nvcsw": int(status.get("voluntary_ctxt_switches", "0")),
            "nivcsw": int(status.get("nonvoluntary_ctxt_switches", "0")),
            "maps": maps}


def global_counters(proc="/proc") -> dict:
    """The guest's forks since boot (processes), context switches (ctxt) and interrupts (intr)."""
    out = {}
    for line in pathlib.Path(proc, "stat").read_text().splitlines():
        key, *vals = line.split()
        if key in ("ctxt", "processes", "intr"):
            out[key] = int(vals[0])
    return out


def snapshot(proc="/proc") -> dict:
    """Every process's counts and the guest's global counters (/proc/stat ctxt, intr)."""
    procs = []
    for entry in os.listdir(proc):
        if entry.isdigit():
            rec = process(int(entry), proc)
            if rec is not None:
                procs.append(rec)
    return {"t": time.time(), "global": global_counters(proc), "procs": procs}


def write_atomic(path: pathlib.Path, data: dict) -> None:
    """Write `data` as compact JSON to path.tmp, then rename it to path."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")))
    tmp.rename(path)


def window(job: dict) -> tuple:
    """(start, end) in seconds after time zero: all flows running, none stopping yet."""
    start = max(f["start_s"] for f in job["flows"]) + 1.0
    end = min(f["stop_s"] for f in job["flows"]) - 0.5
    if end <= start:
        raise ValueError(f"proc accounting needs a window with every flow running: start {start:g} s, end {end:g} s")
    return start, end


def start_thread(job: dict, raw: pathlib.Path, t0: float, tail_s: float) -> threading.Thread:
    """Snapshot at both ends of window(job) into raw/procacct_{start,end}.json, and once more
    near the end of the tail (`tail_s` after the last flow stops; the samplers still run) into
    raw/procacct_after.json: what the flows' ends cost."""
    start, end = window(job)
    after = max(f["stop_s"] for f in job["flows"]) + 0.8 * tail_s

    def body():
        for name, at in (("start", start), ("end", end), ("after", after)):
            delay = t0 + at - time.time()
            if delay > 0:
                time.sleep(delay)
            write_atomic(raw / f"procacct_{name}.json", dict(snapshot(), at_s=at))

    thread = threading.Thread(target=body, daemon=True, name="procacct")
    thread.start()
    return thread
