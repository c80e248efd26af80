"""Whether a run's tidy data is all of its raw data, checked before the run is published.

A run's tidy files are computed from its raw sampler files (tidy.py). The runner publishes a
run only when (problems() is empty):

- the raw files did not change while the tidy data was computed from them (their sizes and
  modification times, snapshot() before tidying against the same after): nothing else wrote
  into the run's directory;
- every tidy file on disk has the rows computed (a file cut short after it was written is
  caught);
- the tidy series reach the end of the run: the queue samples to duration_s, each flow's
  goodput to its stop_s, within SLACK_S (a truncated file, or raw files read while still being
  written, end early). On the 250 archived runs of data/paper checked when this was written
  (a random sample), every queue series ended at or after duration_s and every flow's goodput
  at or after its stop_s (the samplers run past the end); a flow whose receiver was sampled
  but that has no goodput row at all never had its data connection.
"""
import csv
import pathlib

SLACK_S = 1.0


def snapshot(run_dir) -> dict:
    """{raw file name: (size, mtime_ns)} of a run's raw/ files."""
    raw = pathlib.Path(run_dir) / "raw"
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(raw.iterdir()) if p.is_file()} \
        if raw.is_dir() else {}


def _rows_on_disk(path: pathlib.Path) -> int:
    with open(path, newline="") as f:
        return sum(1 for _ in csv.reader(f)) - 1


def problems(run_dir, job: dict, data: dict, before: dict) -> list:
    """What makes the tidy data of a run (`data`: tidy.make_tidy's rows) not all of its raw data
    (module doc); [] when it is. `before`: snapshot() taken before tidying."""
    run_dir = pathlib.Path(run_dir)
    out = []
    after = snapshot(run_dir)
    changed = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    if changed:
        out.append(f"raw files changed while the tidy data was computed: {', '.join(changed[:5])}")
    for name in ("goodput", "tcp", "queue", "flow_queue"):
        if name not in data:
            continue
        path = run_dir / "tidy" / f"{name}.csv"
        on_disk = _rows_on_disk(path) if path.is_file() else -1
        if on_disk != len(data[name]):
            out.append(f"tidy/{name}.csv has {max(on_disk, 0)} rows, {len(data[name])} were computed")
    duration = job["duration_s"]
    queue_end = max((r["t_s"] for r in data["queue"]), default=None)
    if queue_end is None or queue_end < duration - SLACK_S:
        out.append(f"the queue samples end at {queue_end} s, before the run's end ({duration:g} s)")
    raw = run_dir / "raw"
    for flow in job["flows"]:
        ends = [r["t_s"] for r in data["goodput"] if r["flow"] == flow["flow"]]
        if not ends:
            sampled = raw / f"sockets_rcv{flow['flow']}.jsonl"
            if sampled.is_file() and sampled.stat().st_size > 0:
                out.append(f"flow {flow['flow']}: its receiver was sampled but it has no goodput row")
        elif max(ends) < flow["stop_s"] - SLACK_S:
            out.append(f"flow {flow['flow']}: goodput ends at {max(ends)} s, before its stop_s ({flow['stop_s']:g} s)")
    return out
