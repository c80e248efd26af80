#!/usr/bin/env python3
"""The ns-3 findings docs/ns3-backend.md quotes, measured again in ns-3 alone.

    .venv/bin/python bench/ns3_findings.py [--paper-reps 3] [--ns3-build DIR] [--keep DIR]
        [--out bench/results/ns3-findings-<date>.md]

Each finding is one or more ns-3 runs through the runner (runner.execute, the path of
`bbrlab run --backend ns3`), nothing booted, and a number read from the runs:

- Ma et al.'s Fig. 1 (mininet/specs/ma2019/ma2019_fig01.yaml; quick profile, and the paper
  profile's 120-s runs, --paper-reps of them) and Fig. 13 (ma2019_fig13.yaml, quick
  profile, both points): the flows' steady-state goodput as the claims compute it
  (analysis/lib/metrics.R's ss_goodput_mbps: from 10 s after the last flow starts until the
  first flow stops, the tidy/goodput.csv bins inside that window); Fig. 13's 10-ms flow's
  median packets in flight and smoothed RTT (tidy/tcp.csv);
- Fig. 13's setup with an ACK for every segment (delayed_ack: false), 30 s, goodput 10-30 s;
- the setups of tests/test_ns3_variants.py, read as it reads them from per-ACK records
  (Ns3Backend(cc_trace=True), raw/cc_trace_<i>.csv): BBQ's probe lengths with alpha 5 ms
  and uncapped (alpha above every min_rtt: the project's BBR v1), the 10-ms flow's share
  over seconds 3-8; the same runs 10 s long also give the project's BBR at 10 vs 50 ms
  over seconds 5-10, beside ns-3's TcpBbr and a lone flow of each;
- Adaptive-BBR alone at its default alpha (3 packets) with delayed ACKs on Yang et al.'s
  link (20 Mbit/s, 5 ms, 1000-byte segments): the gain of its Eq. 5 branch, its goodput in
  the run's last second, and the rate samples of its isolated packets at gain 1.25 (the
  gap since the previous ACK against ns-3's sample interval);
- Tang's Fig. 2 (tang/tang_fig02.yaml, quick profile): BBR's whole-run goodput (the
  claims' 0..end window) and CUBIC's steady-state mean queueing delay (ss_qdelay_ms:
  tidy/queue.csv's qdelay_ms over the window);
- the quick profile's plan: how many runs ns-3 accepts (ns3_backend.refusals, the
  Snakefile's filter, over config/experiments.csv's quick experiments); no run.

Writes bench/results/ns3-findings-<date>.md (the table finding | setup | what is measured
and how | value, with the host CPU seconds of the runs) and prints it. About 5 host
CPU-minutes (284 CPU-s in 16 runs on 2026-11-28), half of them the three paper-profile Fig. 1 runs
(about 50 CPU-s each; --paper-reps 0 leaves them out).
--ns3-build: where the ns-3 program is compiled (default build/ns3/). --keep: keep the
runs there (default: a temporary directory, removed).
"""
import argparse
import collections
import csv
import datetime
import pathlib
import statistics
import sys
import tempfile

import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import experiments, repetitions, spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402
from bbrlab.host.backends import ns3_backend  # noqa: E402
from bbrlab.host.backends.ns3_trace import PROBE_BW, UNIT, probes  # noqa: E402
from bbrlab.host.backends.ns3_trace import rows as trace  # noqa: E402
from bench_io import goodput_by_flow, write_text_atomic  # noqa: E402

SPECS = REPO / "mininet" / "specs"
WARMUP_S = 10           # config/quick.yaml's warmup_s: the steady state starts this long after the last start
BBQ_ALPHA_US = 5000     # tests/test_ns3_variants.py's alpha
NO_CAP_US = 10_000_000  # alpha above every min_rtt: BBQ is the project's BBR v1

# tests/test_ns3_variants.py's TWO_FLOWS, 10 s long (its 8 s are the first 8 of these).
TWO_FLOWS = """
name: nf_two
duration_s: 10
sender_qdisc: fq
bottleneck: {rate_mbps: 100, buffer_bytes: 2000000}
flows:
  - {%(cc)s, rtt_ms: 10}
  - {%(cc)s, rtt_ms: 50}
"""
ALONE = """
name: nf_alone
duration_s: 10
sender_qdisc: fq
bottleneck: {rate_mbps: 100, buffer_bytes: 2000000}
flows:
  - {%(cc)s, rtt_ms: 10}
"""
TCPBBR = "cc: bbr"
PROJECT_BBR = f"cc: bbq, module_params: {{alpha_us: {NO_CAP_US}}}"
BBQ_5MS = f"cc: bbq, module_params: {{alpha_us: {BBQ_ALPHA_US}}}"
# Ma et al.'s Fig. 13 link (ma2019_fig13.yaml) with an ACK for every segment, both flows to the end.
FIG13_ACK_EACH = """
name: nf_fig13_ack
duration_s: 30
clock: virtual
sender_qdisc: fq
delayed_ack: false
bottleneck: {rate_mbps: 100, buffer_bytes: 2000000, shaper: tbf, aqm: {kind: droptail}}
flows:
  - {cc: %(cc)s, rtt_ms: 10}
  - {cc: %(cc)s, rtt_ms: 50}
"""
# tests/test_ns3_variants.py's ADAPTIVE_ALONE with the default alpha and delayed ACKs, 8 s.
ADAPTIVE_DELACK = """
name: nf_abbr
duration_s: 8
sender_qdisc: fq
mtu_bytes: 1052
delayed_ack: true
bottleneck: {rate_mbps: 20, buffer_bytes: 5000000}
flows:
  - {cc: adaptive_bbr, rtt_ms: 5}
"""


class Runs:
    """ns-3 runs into one directory, their host CPU seconds summed."""

    def __init__(self, root: pathlib.Path, build_dir):
        self.root, self.build_dir, self.cpu_s, self.invalid = root, build_dir, {}, []

    def run(self, job: dict, name: str, **switches) -> pathlib.Path:
        """The job run into root/name (switches: Ns3Backend's, e.g. cc_trace=True); its directory."""
        dest = self.root / name
        summary = runner.execute(job, dest, "ns3", progress=lambda *_: None, build_dir=self.build_dir, **switches)
        if summary["status"] != "ok":
            raise RuntimeError(f"{name}: {summary['status']} {summary.get('error')}")
        self.cpu_s[name] = summary["timings"]["host_cpu_s"]
        if not summary["fidelity"]["valid"]:
            self.invalid.append(name)
        print(f"  {name}: {self.cpu_s[name]:.1f} host CPU-s", flush=True)
        return dest


def inline_job(text: str) -> dict:
    """The one run of a spec written here (a test's setup)."""
    return spec.expand(spec.resolve(yaml.safe_load(text)))[0]


def spec_jobs(path: pathlib.Path, profile: str, reps: int) -> list:
    """A project spec's runs in a profile, as `bbrlab run --profile` makes them, repetitions 1..reps."""
    return [j for j in repetitions.runs(path, profile=profile) if j["repetition"] <= reps]


def steady_window(job: dict) -> tuple:
    """metrics.R's steady_window: from WARMUP_S after the last start until the first stop (else the end)."""
    stops = [f["stop_s"] if f.get("stop_s") is not None else job["duration_s"] for f in job["flows"]]
    return max(f["start_s"] for f in job["flows"]) + WARMUP_S, min(stops)


def ss_goodput(run_dir: pathlib.Path, t0: float, t1: float) -> dict:
    """Mbit/s per flow over the goodput bins inside [t0, t1] (metrics.R's in_window_bins)."""
    sums, secs = collections.Counter(), collections.Counter()
    with open(run_dir / "tidy" / "goodput.csv") as f:
        for r in csv.DictReader(f):
            end, length = float(r["t_s"]), float(r["interval_s"])
            if end - length >= t0 - 1e-6 and end <= t1 + 1e-6:
                sums[r["flow"]] += int(r["bytes"])
                secs[r["flow"]] += length
    return {k: sums[k] * 8 / secs[k] / 1e6 for k in sums}


def tcp_median(run_dir: pathlib.Path, flow: int, column: str, t0: float, t1: float) -> float:
    """The median of a tidy/tcp.csv column over a flow's socket samples in [t0, t1]."""
    with open(run_dir / "tidy" / "tcp.csv") as f:
        values = [float(r[column]) for r in csv.DictReader(f)
                  if r["flow"] == str(flow) and t0 <= float(r["t_s"]) <= t1 and r[column] not in ("", "NA")]
    return statistics.median(values)


def mean_qdelay(run_dir: pathlib.Path, t0: float, t1: float) -> float:
    """ms: metrics.R's ss_qdelay_ms, the mean of tidy/queue.csv's qdelay_ms over the window."""
    with open(run_dir / "tidy" / "queue.csv") as f:
        values = [float(r["qdelay_ms"]) for r in csv.DictReader(f)
                  if t0 - 1e-6 <= float(r["t_s"]) <= t1 + 1e-6 and r["qdelay_ms"] not in ("", "NA")]
    return statistics.mean(values)


def ms_range(values: list) -> str:
    """Seconds as a range of milliseconds ("5.0-5.3", or one value)."""
    lo, hi = min(values) * 1e3, max(values) * 1e3
    return f"{lo:.1f}" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}"


def mbps_pair(rates: dict) -> str:
    """Flows 1 and 2's Mbit/s as "a / b"."""
    return f"{rates['1']:.2f} / {rates['2']:.2f}"


# ------------------------------------------------------------------ the findings, one function each

def ma_fig01(runs: Runs, paper_reps: int) -> list:
    """Ma et al.'s Fig. 1 in ns-3, quick profile and paper_reps paper-profile runs: steady-state goodput."""
    path = SPECS / "ma2019" / "ma2019_fig01.yaml"
    rows = []
    for profile, reps in (("quick", 1), ("paper", paper_reps)):
        if reps < 1:
            continue
        values = []
        for job in spec_jobs(path, profile, reps=reps):
            run_dir = runs.run(job, f"fig01-{profile}-rep{job['repetition']}")
            values.append((job, ss_goodput(run_dir, *steady_window(job))))
        t0, t1 = steady_window(values[0][0])
        per_rep = "; ".join(f"rep {j['repetition']}: {mbps_pair(g)}" for j, g in values)
        mean = statistics.mean(g["1"] for _, g in values)
        rows.append(("Ma Fig. 1 in ns-3 (`TcpBbr`): the 10-ms flow's goodput",
                     f"`ma2019_fig01.yaml`, {profile} profile ({values[0][0]['duration_s']:g} s), "
                     + ("one run" if len(values) == 1 else f"{len(values)} runs (seeds 1-{len(values)})"),
                     f"steady-state goodput (ss_goodput_mbps, {t0:g}-{t1:g} s), 10-ms / 50-ms flow, Mbit/s",
                     per_rep + (f"; 10-ms flow mean {mean:.2f}" if len(values) > 1 else "")))
    return rows


def bbq_and_project_bbr(runs: Runs) -> list:
    """tests/test_ns3_variants.py's two-flow setup: BBQ's probes and share; the project's BBR and TcpBbr."""
    capped = runs.run(inline_job(TWO_FLOWS % {"cc": BBQ_5MS}), "bbq-alpha5ms", cc_trace=True)
    job = inline_job(TWO_FLOWS % {"cc": PROJECT_BBR})
    uncapped = runs.run(job, "bbq-uncapped", cc_trace=True)
    tcpbbr = runs.run(inline_job(TWO_FLOWS % {"cc": TCPBBR}), "tcpbbr-two")
    alone = {name: runs.run(inline_job(ALONE % {"cc": cc}), f"alone-{name}")
             for name, cc in (("project", PROJECT_BBR), ("tcpbbr", TCPBBR))}
    lead = ns3_backend.lead_s(job)
    # tests/test_ns3_variants.py: the 50-ms flow's probes after lead + 2 s of its 8-s run
    in_test = lambda p: lead + 2 < p[0] < lead + 8  # noqa: E731
    capped_probes = [p[1] for p in probes(trace(capped, 2)) if p[2] and in_test(p)]
    uncapped_probes = [p[1] for p in probes(trace(uncapped, 2)) if in_test(p)]
    shares = {}
    for name, run_dir in (("alpha 5 ms", capped), ("uncapped", uncapped)):
        rates = goodput_by_flow(run_dir, 3, 8)
        shares[name] = rates["1"] / sum(rates.values())
    two = {name: goodput_by_flow(d, 5, 10) for name, d in (("project", uncapped), ("tcpbbr", tcpbbr))}
    lone = {name: goodput_by_flow(d, 5, 10)["1"] for name, d in alone.items()}
    setup = "100 Mbit/s, 2 MB, fq, 10-ms and 50-ms flows from 0 s (tests/test_ns3_variants.py's TWO_FLOWS, 10 s)"
    return [
        ("BBQ's probe length while a queue persists", setup + ", `bbq` alpha_us 5000 and 10 000 000",
         "the 50-ms flow's probing periods (PROBE_BW, gain > 1) in its per-ACK records, started 2-8 s after "
         "time zero; alpha 5 ms: those ending with the queue flag set",
         f"alpha 5 ms: {ms_range(capped_probes)} ms ({len(capped_probes)} probes); uncapped: "
         f"{ms_range(uncapped_probes)} ms ({len(uncapped_probes)})"),
        ("BBQ's effect on the 10-ms flow's share", "the same two runs",
         "10-ms flow's goodput / both flows' (bins ending in 3-8 s)",
         f"alpha 5 ms: {shares['alpha 5 ms']:.3f}; uncapped: {shares['uncapped']:.3f}"),
        ("the project's BBR against `TcpBbr`, alone", "one 10-ms flow, 100 Mbit/s, 2 MB, fq, 10 s",
         "goodput, bins ending in 5-10 s, Mbit/s",
         f"project's BBR {lone['project']:.2f}; `TcpBbr` {lone['tcpbbr']:.2f}"),
        ("the project's BBR against `TcpBbr`, 10 vs 50 ms", setup + ", project's BBR (`bbq` uncapped) or `TcpBbr`",
         "10-ms / 50-ms flow's goodput, bins ending in 5-10 s, Mbit/s",
         f"project's BBR {mbps_pair(two['project'])}; `TcpBbr` {mbps_pair(two['tcpbbr'])}"),
    ]


def ma_fig13(runs: Runs) -> list:
    """Ma et al.'s Fig. 13 in ns-3 (quick profile, both points) and its setup with an ACK per segment."""
    path = SPECS / "ma2019" / "ma2019_fig13.yaml"
    cells, held = [], []
    for job in spec_jobs(path, "quick", reps=1):
        run_dir = runs.run(job, f"fig13-{job['point']}")
        t0, t1 = steady_window(job)
        name = "`TcpBbr`" if job["flows"][0]["cc"] == "bbr" else "BBQ"
        cells.append(f"{name} {mbps_pair(ss_goodput(run_dir, t0, t1))}")
        held.append(f"{name} in flight {tcp_median(run_dir, 1, 'inflight_pkts', 30, t1):g}, "
                    f"RTT {tcp_median(run_dir, 1, 'rtt_ms', 30, t1):.1f} ms")
    rows = [("Ma Fig. 13 in ns-3: the 10-ms flow starves", "`ma2019_fig13.yaml`, quick profile (80 s; the 10-ms flow "
             "stops at 70 s), both points, BBQ at its default alpha 3 ms",
             f"steady-state goodput (ss_goodput_mbps, {t0:g}-{t1:g} s), 10-ms / 50-ms flow, Mbit/s", "; ".join(cells)),
            ("... at about one packet in flight, its RTT the delayed-ACK timer's", "the same runs",
             f"the 10-ms flow's median packets in flight and smoothed RTT, socket samples 30-{t1:g} s "
             "(tidy/tcp.csv; path 10 ms, receiver's delayed-ACK timer 40 ms)", "; ".join(held))]
    def ack_each(cc: str, name: str) -> str:
        run_dir = runs.run(inline_job(FIG13_ACK_EACH % {"cc": cc}), f"fig13-ack-each-{cc}")
        return f"{name} {mbps_pair(goodput_by_flow(run_dir, 10, 30))}"

    cells = [ack_each("bbq", "BBQ"), ack_each("bbr", "`TcpBbr`")]
    rows.append(("Ma Fig. 13 with an ACK for every segment", "Fig. 13's link, 10-ms and 50-ms flows from 0 s, "
                 "`delayed_ack: false`, 30 s", "10-ms / 50-ms flow's goodput, bins ending in 10-30 s, Mbit/s",
                 "; ".join(cells)))
    return rows


def adaptive_alone(runs: Runs) -> list:
    """Adaptive-BBR alone at alpha 3 with delayed ACKs: its gain, its decay and its isolated samples."""
    job = inline_job(ADAPTIVE_DELACK)
    run_dir = runs.run(job, "abbr-alpha3-delack", cc_trace=True)
    lead = ns3_backend.lead_s(job)
    rows = trace(run_dir, 1)
    eq5 = [int(r["pacing_gain"]) / UNIT for r in rows if r["mode"] == PROBE_BW and r["q_256"]
           and int(r["q_256"]) >= UNIT]
    below = sum(g < 1 for g in eq5)
    last_s = goodput_by_flow(run_dir, job["duration_s"] - 1, job["duration_s"])["1"]
    isolated = [(float(r["t_s"]) - float(p["t_s"]), int(r["ns3_interval_us"]) / 1e6,
                 int(r["linux_interval_us"]) / 1e6)
                for p, r in zip(rows, rows[1:])
                if r["mode"] == PROBE_BW and int(r["pacing_gain"]) == 320 and float(r["t_s"]) > lead + 3
                and r["delivered_pkts"] == "1.000" and r["inflight"] == "0" and int(r["ns3_interval_us"]) > 0]
    gap, ns3, linux = (statistics.median(x[i] for x in isolated) for i in range(3))
    ratio = statistics.median(x[1] / x[0] for x in isolated)
    beyond_gap = statistics.median(x[1] - x[0] for x in isolated)
    setup = ("one `adaptive_bbr` flow, alpha 3 packets (default), 20 Mbit/s, 5 ms, 1000-byte segments, "
             "5 MB buffer, fq, delayed ACKs, 8 s")
    return [
        ("Adaptive-BBR alone at alpha 3 with delayed ACKs: its rate decays", setup,
         "PROBE_BW gains where Q >= 1 packet (Eq. 5's branch), per-ACK records; goodput in the run's last second",
         f"gain median {statistics.median(eq5):.3f} over {len(eq5)} ACKs ({below} below 1); "
         f"goodput {last_s:.3f} Mbit/s over {job['duration_s'] - 1:g}-{job['duration_s']:g} s"),
        ("... its isolated packets' rate samples at gain 1.25", "the same run",
         "PROBE_BW ACKs at gain 1.25 delivering one packet with none left in flight, after 3 s: median gap "
         "since the previous ACK, ns-3's sample interval, interval - gap, Linux's interval for the same ACK "
         "(the packet's RTT), interval / gap",
         f"{len(isolated)} samples: gap {gap * 1e3:.1f} ms, ns-3 interval {ns3 * 1e3:.1f} ms, interval - gap "
         f"{beyond_gap * 1e3:.1f} ms, Linux's {linux * 1e3:.1f} ms; interval / gap {ratio:.2f}"),
    ]


def tang_fig02(runs: Runs) -> list:
    """Tang's Fig. 2 in ns-3 (quick profile): BBR's collapse, CUBIC's queue."""
    path = SPECS / "tang" / "tang_fig02.yaml"
    jobs = {j["flows"][0]["cc"]: j for j in spec_jobs(path, "quick", reps=1)}
    bbr = runs.run(jobs["bbr"], "tang-fig02-bbr")
    cubic = runs.run(jobs["cubic"], "tang-fig02-cubic")
    end = jobs["bbr"]["duration_s"]
    whole = ss_goodput(bbr, 0, end)["1"]
    late = ss_goodput(bbr, 20, end)["1"]
    t0, t1 = steady_window(jobs["cubic"])
    return [("Tang's lone BBR flow collapses (`TcpBbr`)",
             f"`tang_fig02.yaml`, quick profile ({end:g} s), point f1_cc=bbr",
             "goodput over the whole run (the claims' 0..end) and over 20 s to the end, Mbit/s",
             f"{whole:.2f} (0-{end:g} s); {late:.3f} (20-{end:g} s)"),
            ("ns-3's CUBIC queue at 1.5 BDP", "the same spec, point f1_cc=cubic",
             f"mean queueing delay (ss_qdelay_ms: tidy/queue.csv, {t0:g}-{t1:g} s)",
             f"{mean_qdelay(cubic, t0, t1):.0f} ms")]


def refusal_kind(why: list) -> str:
    """What a refused run asks first: the congestion control ns-3 lacks, else the field's name."""
    field, _, message = why[0].partition(": ")
    if field.endswith(".cc"):
        return message.split("'")[1]
    return field.split(".")[-1]


def quick_plan() -> list:
    """How many of the quick profile's runs ns-3 accepts, and what the others ask (no run)."""
    exps, _ = experiments.load(REPO)
    total, refused = 0, collections.Counter()
    for exp in experiments.of_profile(exps, "quick"):
        for job in repetitions.runs(REPO / exp.spec, profile="quick"):
            total += 1
            why = ns3_backend.refusals(job)
            if why:
                refused[refusal_kind(why)] += 1
    parts = ", ".join(f"{n} {kind}" for kind, n in refused.most_common())
    return [("runs of the quick profile ns-3 accepts", "config/experiments.csv's quick experiments, "
             "`repetitions.runs(spec, profile='quick')`",
             "ns3_backend.refusals per run (the Snakefile's filter); a refused run counted by its first refusal",
             f"{total - sum(refused.values())} of {total}; refused {sum(refused.values())}: {parts}")]


def header(args, runs: Runs) -> list:
    """The record's title and the line saying how it was made and what it cost."""
    longest = sorted(runs.cpu_s.items(), key=lambda item: -item[1])[:3]
    valid = "all valid (run.json's fidelity verdict)" if not runs.invalid else f"invalid: {', '.join(runs.invalid)}"
    return [f"# ns-3 findings of docs/ns3-backend.md, measured again ({datetime.date.today()})", "",
            f"`bench/ns3_findings.py --paper-reps {args.paper_reps}`: ns-3 {ns3_backend.ns3_version()} alone "
            "(runner.execute, backend ns3, the ns-3 rules: `cc: bbr` is ns-3's `TcpBbr`, the variants the "
            f"project's BBR v1), seed 1 unless said. {len(runs.cpu_s)} runs, {valid}, "
            f"{sum(runs.cpu_s.values()):.0f} host CPU-s (the longest: "
            f"{', '.join(f'{name} {cpu:.0f}' for name, cpu in longest)}).", ""]


def main():
    """Runs every finding, writes the record and prints it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper-reps", type=int, default=3,
                        help="paper-profile runs of Ma et al.'s Fig. 1 (120 s each; 0: none)")
    parser.add_argument("--ns3-build", help="where the ns-3 program is compiled (default build/ns3/)")
    parser.add_argument("--keep", help="keep the runs in this directory")
    parser.add_argument("--out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(args.keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        runs = Runs(root, args.ns3_build)
        ns3_backend.Ns3Backend(build_dir=args.ns3_build).build()   # compiled before the runs are timed
        rows = (quick_plan() + ma_fig01(runs, args.paper_reps) + bbq_and_project_bbr(runs) + ma_fig13(runs)
                + adaptive_alone(runs) + tang_fig02(runs))
    lines = header(args, runs) + ["| finding | setup | what is measured and how | value |", "|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"ns3-findings-{datetime.date.today()}.md")
    write_text_atomic(out, text)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
