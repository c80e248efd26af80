#!/usr/bin/env python3
"""Where a virtual-clock testbed run's host CPU goes, by guest process.

    .venv/bin/python bench/host_cost_profile.py [--duration 12] [--rate 100] [--flows 2]
        [--tag NAME] [--traffic bulk|iperf3] [--seed N] [--keep DIR] [--out bench/results/host-cost-<date>-<tag>.json]
    .venv/bin/python bench/host_cost_profile.py --spec SPEC --point POINT [--profile P] [--duration S] [--rep K] ...

With --spec, the run is that spec's point (as `bbrlab run --point` resolves it,
its repetition's seed), with --duration (when given) replacing its duration_s.

Runs one experiment (BBR flows of 10 and 50 ms RTT, the second starting 2 s
after the first, 2 MB buffer, virtual clock, the specs' default sampling) with
job["proc_accounting"] set: the guest (procacct.py) snapshots every guest
process's counts at both ends of a window in which all flows run. When each
snapshot appears in the run directory, this script snapshots, from the host's
/proc, every host process of that UML instance (the UML kernel and the host
process carrying each guest address space: User-Mode Linux drives guest user
code with ptrace, one host process per guest address space) and its own
Python processes (this runner and the tether). Host processes are matched to
guest processes by their memory mappings (UML maps a guest page at the same
virtual address in the host process). Over the window it reports, per
experiment-second:

  - per guest process: guest page faults and context switches, and its host
    process's voluntary context switches (each one a ptrace stop: a guest
    system call, page fault or interrupt), and host user/system CPU;
  - the UML kernel process's host user CPU (the guest kernel's own work:
    TCP, forwarding, qdiscs) and system CPU (the host system calls the UML
    kernel makes, most of them ptrace and wait4 driving the guest processes);
  - the host-side Python processes.

Counts come from /proc, so measuring costs nothing on the path; CPU seconds
are the kernel's tick-based accounting (10 ms resolution) and, on a shared
host, noisier than the counts. Writes the numbers as JSON and prints a table.
"""
import argparse
import datetime
import json
import os
import pathlib
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def make_job(duration, rate, flows, extra=None):
    rtts = [10, 50, 30, 70][:flows]
    raw = {"name": "host_cost", "duration_s": duration, "clock": "virtual",
           "bottleneck": {"rate_mbps": rate, "buffer_bytes": 2000000},
           "flows": [{"cc": "bbr", "rtt_ms": r, "start_s": 2 * k} for k, r in enumerate(rtts)],
           **(extra or {})}
    job = spec.expand(spec.resolve(raw))[0]
    job["proc_accounting"] = True
    return job


def spec_job(path, point, profile=None, duration=None, rep=1):
    """The resolved run of `point` (repetition `rep`) of the spec at `path`, with duration_s
    replaced when `duration` is given, and proc_accounting set. SystemExit naming the points
    when the spec has no such point."""
    overrides = {"duration_s": duration} if duration else None
    jobs = spec.expand(spec.load(path, profile=profile, overrides=overrides))
    for job in jobs:
        if job["point"] == point and job["repetition"] == rep:
            job["proc_accounting"] = True
            return job
    sys.exit(f"{path}: no point {point!r} rep {rep} (points: {', '.join(sorted({j['point'] for j in jobs}))})")


def read_task(path: pathlib.Path) -> dict:
    text = (path / "stat").read_text()
    f = text[text.rindex(")") + 2:].split()
    status = dict(line.split(":", 1) for line in (path / "status").read_text().splitlines() if ":" in line)
    return {"utime": int(f[11]), "stime": int(f[12]), "minflt": int(f[7]), "majflt": int(f[9]),
            "nvcsw": int(status["voluntary_ctxt_switches"]), "nivcsw": int(status["nonvoluntary_ctxt_switches"])}


def host_process(pid: int) -> dict:
    """Counts summed over the process's threads, and its mappings."""
    base = pathlib.Path("/proc", str(pid))
    total = {}
    for task in (base / "task").iterdir():
        try:
            for k, v in read_task(task).items():
                total[k] = total.get(k, 0) + v
        except (OSError, KeyError, ValueError):
            pass
    maps = []
    for line in (base / "maps").read_text().splitlines():
        parts = line.split()
        lo, hi = parts[0].split("-")
        maps.append([int(lo, 16), int(hi, 16), parts[5] if len(parts) > 5 else ""])
    stat = (base / "stat").read_text().rsplit(")", 1)[1].split()
    total["ppid"] = int(stat[1])
    total["reaped_ticks"] = int(stat[13]) + int(stat[14])    # cutime + cstime: children it has reaped
    total["maps"] = maps
    return total


def uml_pids(marker: str) -> list:
    """Every host process of the UML instance whose command line holds `marker`: the kernel
    (a group leader -- the tether makes it one -- with `marker` in its command line; the
    tether's command line holds it too) and everything in its process group (a guest address
    space's host process may not show the kernel's command line any more, since UML maps guest
    pages over the host memory it was read from)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stats[int(entry)] = pathlib.Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                pass
    groups = set()
    for pid in stats:
        try:
            if int(stats[pid][2]) == pid and marker in \
                    pathlib.Path("/proc", str(pid), "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                groups.add(pid)             # the UML kernel, leader of its own group
        except OSError:
            pass
    return [pid for pid, f in stats.items() if int(f[2]) in groups]


def host_snapshot(marker: str, python_pids: list) -> dict:
    procs = {}
    for pid in uml_pids(marker) + python_pids:
        try:
            procs[pid] = host_process(pid)
        except OSError:
            pass
    return {"t": time.time(), "procs": procs}


def python_pids() -> list:
    """This runner and its tether (a child of this process running tether.py)."""
    pids = [os.getpid()]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path("/proc", entry, "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and \
                        b"tether.py" in pathlib.Path("/proc", entry, "cmdline").read_bytes():
                    pids.append(int(entry))
            except (OSError, ValueError):
                pass
    return pids


def attempt_dir(dest: pathlib.Path, stop: threading.Event):
    """The run's attempt directory once the runner has made it (a new one per attempt beside the
    destination, named from runner.attempt_prefix), None when stopped first."""
    while True:
        found = sorted(dest.parent.glob(f"{runner.attempt_prefix(dest)}*"))
        if found:
            return found[0]
        if stop.wait(0.02):
            return None


def follow(dest: pathlib.Path, snaps: dict, samples: list, stop: threading.Event) -> None:
    """watch() and timeline() on the run's attempt directory, once it exists."""
    tmp = attempt_dir(dest, stop)
    if tmp is None:
        return
    marker = f"BBRLAB_RUN={tmp} "
    clock = threading.Thread(target=timeline, args=(tmp / "raw" / "console.log", marker, samples, stop), daemon=True)
    clock.start()
    watch(tmp / "raw", marker, snaps, stop)
    clock.join()


def watch(tmp_raw: pathlib.Path, marker: str, snaps: dict, stop: threading.Event) -> None:
    """Take a host snapshot as soon as each guest snapshot file appears."""
    for name in ("start", "end", "after"):
        path = tmp_raw / f"procacct_{name}.json"
        while not path.exists():
            if stop.wait(0.02):
                return
        pys = python_pids()
        snaps[name] = host_snapshot(marker, pys)
        snaps["python_pids"] = sorted(set(snaps.get("python_pids", pys)) & set(pys))


PHASES = [("boot: kernel and guest init", "bbrlab-guest: booted"),
          ("guest start: python, modules, Open vSwitch", "building dumbbell"),
          ("set-up: Mininet dumbbell, shaping, sysctls", "measuring base RTT"),
          ("base-RTT pings", "starting receivers"),
          ("loss model, receivers", "starting sampler"),
          ("sampler start", "time zero in"),
          ("lead: samplers before time zero", "start flow 1"),
          ("first flow alone", "start flow 2"),
          ("flows, tail, samplers stopped, results written", "] done"),
          ("teardown and power-off", None)]


def group_cpu_ticks(marker: str) -> int:
    """CPU ticks of the UML instance so far: its live processes, and what the ones it reaped used."""
    total = 0
    pids = uml_pids(marker)
    for pid in pids:
        try:
            stat = pathlib.Path("/proc", str(pid), "stat").read_text()
        except OSError:
            continue
        f = stat.rsplit(")", 1)[1].split()
        total += int(f[11]) + int(f[12])
        if int(f[1]) not in pids:                 # the UML kernel: add its reaped host processes
            total += int(f[13]) + int(f[14])
    return total


def timeline(console: pathlib.Path, marker: str, samples: list, stop: threading.Event) -> None:
    """Every 0.25 s: host time, the instance's CPU ticks and how far its console log has got."""
    while not stop.wait(0.25):
        try:
            text = console.read_text(errors="replace")
        except OSError:
            continue
        ticks = group_cpu_ticks(marker)
        if ticks:
            samples.append((time.time(), ticks, [line for _name, line in PHASES if line and line in text]))


def phases(samples: list, final_cpu_s: float) -> list:
    """Host CPU and wall seconds per phase, each phase ending when its console line first
    appears (a phase whose line never appears, e.g. a second flow's start in a one-flow run,
    is left out)."""
    out, prev_t, prev_cpu, k = [], samples[0][0], 0.0, 0
    for name, line in PHASES:
        if line is None:
            t, cpu = samples[-1][0], final_cpu_s
        else:
            j = next((j for j in range(k, len(samples)) if line in samples[j][2]), None)
            if j is None:
                continue
            k, t, cpu = j, samples[j][0], samples[j][1] / TICK
        out.append({"phase": name, "host_cpu_s": round(cpu - prev_cpu, 2), "host_wall_s": round(t - prev_t, 1)})
        prev_t, prev_cpu = t, cpu
    return out


def match(host_maps: list, kernel_maps: set, guest_procs: list):
    """The guest process whose mappings hold this host process's guest-range mappings."""
    ranges = [(lo, hi) for lo, hi, _name in host_maps if (lo, hi) not in kernel_maps]
    if not ranges:
        return None, 0.0
    best, best_score = None, 0.0
    for g in guest_procs:
        gm = g["maps"]
        inside = sum(1 for lo, hi in ranges if any(a <= lo and hi <= b for a, b in gm))
        if inside / len(ranges) > best_score:
            best, best_score = g, inside / len(ranges)
    return best, best_score


def label(g: dict) -> str:
    cmd = g["cmdline"] or f"[{g['comm']}]"
    if "bbrlab.guest.samplers" in cmd or g["comm"] == "bbrlab-sampler":     # a process, or forked from the driver
        return "python sampler"
    if "bbrlab.guest" in cmd:
        return "python guest.py (experiment driver)"
    if cmd.startswith("iperf3 -s"):
        return "iperf3 server (receiver)"
    if cmd.startswith("iperf3 -c"):
        return "iperf3 client (sender)"
    if "bulk.py receive" in cmd or "bulk receive" in cmd:
        return "bulk receive (receiver)"
    if "bulk.py send" in cmd or "bulk send" in cmd:
        return "bulk send (sender)"
    if "mininet:" in cmd:
        return f"{cmd.split()[0]} (Mininet host shell)"
    return cmd.split()[0].rsplit("/", 1)[-1]


def analyse(job, raw: pathlib.Path, snaps: dict, first="start", last="end") -> dict:
    """Per-process deltas between two snapshots (guest and host) of the same names."""
    g0 = json.loads((raw / f"procacct_{first}.json").read_text())
    g1 = json.loads((raw / f"procacct_{last}.json").read_text())
    window_s = g1["at_s"] - g0["at_s"]
    h0, h1 = snaps[first]["procs"], snaps[last]["procs"]
    py = set(snaps["python_pids"])
    uml = [p for p in h1 if p in h0 and p not in py]
    # The UML kernel: the process whose parent is not another UML process (the tether).
    kernels = [p for p in uml if h1[p]["ppid"] not in uml]
    if len(kernels) != 1:
        raise RuntimeError(f"expected one UML kernel process, found {kernels}")
    kernel = kernels[0]
    kernel_maps = {(lo, hi) for lo, hi, _n in h1[kernel]["maps"]}
    guest0 = {g["pid"]: g for g in g0["procs"]}

    def delta(a, b, keys):
        return {k: b[k] - a[k] for k in keys}

    host_keys = ("utime", "stime", "minflt", "nvcsw", "nivcsw", "reaped_ticks")
    rows = []
    for pid in sorted(uml):
        d = delta(h0[pid], h1[pid], host_keys)
        if pid == kernel:
            name, gd = "UML kernel (guest kernel code; ptrace/wait4 as tracer)", {}
        else:
            g, score = match(h1[pid]["maps"], kernel_maps, [x for x in g1["procs"] if x["maps"]])
            if g is None or score < 0.8:
                same_as_kernel = len(h1[pid]["maps"]) == len(h1[kernel]["maps"])
                name = "UML helper thread" if same_as_kernel else f"unmatched host process (best {score:.2f})"
                gd = {}
            else:
                name = f"{label(g)} [guest pid {g['pid']}]"
                gd = delta(guest0[g["pid"]], g, ("minflt", "nvcsw", "nivcsw")) if g["pid"] in guest0 else {}
        rows.append({"host_pid": pid, "what": name, "host": d, "guest": gd})
    for pid in sorted(py):
        if pid in h0 and pid in h1:
            rows.append({"host_pid": pid, "what": "host python (runner)" if pid == snaps["self_pid"]
                         else "host python (tether)", "host": delta(h0[pid], h1[pid], host_keys), "guest": {}})
    glob = {k: g1["global"][k] - g0["global"][k] for k in g1["global"]}
    host_wall = snaps[last]["t"] - snaps[first]["t"]
    return {"job": {k: job[k] for k in ("duration_s", "clock")}, "rate_mbps": job["bottleneck"]["rate_mbps"],
            "flows": len(job["flows"]), "window_experiment_s": window_s, "window_host_wall_s": host_wall,
            "clk_tck": TICK, "guest_global": glob, "rows": rows}


def table(result: dict) -> str:
    w = result["window_experiment_s"]
    lines = [f"window: {w:g} experiment-s, {result['window_host_wall_s']:.1f} host wall-s; "
             f"{result['rate_mbps']:g} Mbit/s, {result['flows']} flow(s); per experiment-second:", "",
             "| process | host user CPU-s | host sys CPU-s | host vol. ctx sw (ptrace stops) | host invol. ctx sw"
             " | host minflt | guest minflt | guest vol. ctx sw | guest invol. ctx sw |",
             "|---|---|---|---|---|---|---|---|---|"]
    tot = {"utime": 0, "stime": 0}
    for r in sorted(result["rows"], key=lambda r: -(r["host"]["utime"] + r["host"]["stime"])):
        h, g = r["host"], r["guest"]
        tot["utime"] += h["utime"]
        tot["stime"] += h["stime"]
        lines.append(f"| {r['what']} | {h['utime'] / TICK / w:.3f} | {h['stime'] / TICK / w:.3f} | "
                     f"{h['nvcsw'] / w:.0f} | {h['nivcsw'] / w:.0f} | {h['minflt'] / w:.0f} | "
                     + " | ".join(f"{g[k] / w:.0f}" if k in g else "-" for k in ("minflt", "nvcsw", "nivcsw")) + " |")
    lines.append(f"| **total** | {tot['utime'] / TICK / w:.3f} | {tot['stime'] / TICK / w:.3f} | | | | | | |")
    reaped = sum(r["host"].get("reaped_ticks", 0) for r in result["rows"] if r["what"].startswith("UML kernel"))
    lines += ["", f"host processes of guest processes that exited (reaped by the UML kernel): {reaped / TICK / w:.3f}"
              " CPU-s per experiment-second, not in the rows above"]
    gg = result["guest_global"]
    lines += ["", "guest /proc/stat over the window, per experiment-second: "
              + ", ".join(f"{k} {v / w:.0f}" for k, v in gg.items())]
    if result.get("phases"):
        lines += ["", "| phase | host CPU-s | host wall-s |", "|---|---|---|"]
        lines += [f"| {p['phase']} | {p['host_cpu_s']:.2f} | {p['host_wall_s']:.1f} |" for p in result["phases"]]
    marks = result.get("guest_marks")
    if marks:
        names = list(marks)
        lines += ["", "guest forks (processes started) and context switches between the driver's marks:", "",
                  "| from | to | forks | context switches |", "|---|---|---|---|"]
        for a, b in zip(names, names[1:]):
            lines.append(f"| {a} | {b} | {marks[b]['processes'] - marks[a]['processes']} | "
                         f"{marks[b]['ctxt'] - marks[a]['ctxt']} |")
        lines.append(f"| boot | start | {marks['start']['processes']} | {marks['start']['ctxt']} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, help="experiment seconds (default 12; with --spec, its own)")
    parser.add_argument("--spec", help="run this spec's --point instead of the built-in BBR job")
    parser.add_argument("--point", help="with --spec: the point (bbrlab runs SPEC lists them)")
    parser.add_argument("--profile", help="with --spec: the profile to resolve it with")
    parser.add_argument("--rep", type=int, default=1, help="with --spec: the repetition (its seed)")
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--flows", type=int, default=2)
    parser.add_argument("--tag", default="base")
    parser.add_argument("--lowat", type=int, default=0,
                        help="SO_RCVLOWAT in bytes on the iperf3 receivers' data sockets (rcvlowat.py; 0: off)")
    parser.add_argument("--traffic", choices=("bulk", "iperf3"), default="bulk",
                        help="the flows' two ends (bbrlab/guest/traffic.py; default: bulk)")
    parser.add_argument("--seed", type=int, default=1, help="the run's seed (repetitions differ by seed)")
    parser.add_argument("--keep", help="keep the run directory here (default: a temporary one, removed)")
    parser.add_argument("--out")
    args = parser.parse_args()
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"host-cost-{datetime.date.today()}-{args.tag}.json")
    if args.spec:
        job = spec_job(args.spec, args.point, args.profile, args.duration, args.rep)
    else:
        job = make_job(args.duration or 12, args.rate, args.flows, {"seed": args.seed})
        job["traffic_tool"] = args.traffic
    if args.lowat:
        job["receiver_lowat_bytes"] = args.lowat
    with tempfile.TemporaryDirectory(prefix="bbrlab-hostcost-") as root:
        dest = pathlib.Path(args.keep or root).resolve() / "run"
        dest.parent.mkdir(parents=True, exist_ok=True)
        snaps, stop, samples = {"self_pid": os.getpid()}, threading.Event(), []
        follower = threading.Thread(target=follow, args=(dest, snaps, samples, stop), daemon=True)
        follower.start()
        try:
            summary = runner.execute(job, dest, "uml", progress=lambda m: print(m, flush=True))
        finally:
            stop.set()
            follower.join()
        if "end" not in snaps:  # ("after" may be missing: a host snapshot taken too late)
            sys.exit("host snapshots missing: the guest wrote no procacct files")
        result = analyse(job, dest / "raw", snaps)
        if "after" in snaps:
            result["after_flows"] = analyse(job, dest / "raw", snaps, "end", "after")
        result["phases"] = phases(samples, summary["timings"]["host_cpu_s"])
        result["cpu_timeline"] = [[round(t - samples[0][0], 2), ticks / TICK, len(found)] for t, ticks, found in samples]
        marks_path = dest / "raw" / "procacct_marks.json"
        if marks_path.exists():
            result["guest_marks"] = json.loads(marks_path.read_text())
        result["run"] = {"timings": summary["timings"], "fidelity_valid": summary["fidelity"]["valid"],
                         "tag": args.tag, "receiver_lowat_bytes": args.lowat,
                         "traffic_tool": job.get("traffic_tool", args.traffic), "seed": job["seed"],
                         "spec": args.spec, "point": args.point}
    tmpout = out.with_name(out.name + ".tmp")
    tmpout.write_text(json.dumps(result, indent=1))
    tmpout.rename(out)
    print(table(result))
    if "after_flows" in result:
        print("\nfrom the window's end through the flows' ends into the tail:\n")
        print(table(result["after_flows"]))
    print(f"run: {summary['timings']}; written {out}")


if __name__ == "__main__":
    main()
