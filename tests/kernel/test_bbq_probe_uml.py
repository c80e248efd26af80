"""BBQ in the testbed: while a queue persists its ProbeBW probing phases (pacing gain 1.25) last
about alpha, not one min_rtt as BBR's do (Ma et al., Sec. V-B: rho = min(MinRTT, alpha)).

One 8-s run on the virtual clock: a BBQ flow (alpha = 30 ms) and a BBR flow, both 100-ms RTT, share
10 Mbit/s with a 2.4-BDP buffer, so a standing queue forms once both are in ProbeBW. The sender
sockets are sampled every 10 ms; a probing phase is a stretch of consecutive samples with pacing
gain 1.25, its length the stretch's sample count times 10 ms (so within 10 ms either way). alpha
is 30 ms rather than the paper's 3 ms so that a capped phase spans a few samples."""
import csv
import json
import statistics

import pytest

from conftest import cli, write_spec

INTERVAL_S = 0.01
ALPHA_MS = 30
RTT_MS = 100
STEADY = (2.0, 8.0)           # after both flows' start-up
SPEC = f"""
name: bbq_probe
duration_s: 8
clock: virtual
sample_interval_s: {INTERVAL_S}
queue_sample_interval_s: {INTERVAL_S}   # the socket sampler runs on the queue sampler's tick
bottleneck: {{rate_mbps: 10, buffer_bytes: 300000}}
flows:
  - {{cc: bbq, rtt_ms: {RTT_MS}, module_params: {{alpha_us: {ALPHA_MS * 1000}}}}}
  - {{cc: bbr, rtt_ms: {RTT_MS}}}
"""


def probe_phases(rows):
    """[(samples, all flagged)] of each stretch of consecutive pacing-gain-1.25 samples that lies
    wholly inside the window (a stretch cut by the window's edges is dropped)."""
    phases, current = [], []
    for r in rows + [None]:
        if r is not None and r["bbr_pacing_gain"] == "1.25":
            current.append(r)
            continue
        if current and current[0] is not rows[0]:
            phases.append((len(current), all(c["variant_flag"] == "1" for c in current)))
        current = []
    if phases and rows and rows[-1]["bbr_pacing_gain"] == "1.25":
        phases.pop()
    return phases


@pytest.fixture(scope="module")
def run(kernel, tmp_path_factory):
    out = tmp_path_factory.mktemp("bbq_probe")
    res = cli("run", write_spec(out / "spec.yaml", SPEC), "--out", out, "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = out / "bbq_probe" / "base" / "rep1"
    with open(run_dir / "tidy" / "tcp.csv") as f:
        rows = [r for r in csv.DictReader(f) if STEADY[0] < float(r["t_s"]) <= STEADY[1]]
    return json.loads((run_dir / "run.json").read_text()), rows


def test_bbq_probes_for_alpha_while_a_queue_persists(run):
    summary, rows = run
    assert summary["fidelity"]["valid"], summary["fidelity"]
    bbq = [r for r in rows if r["flow"] == "1"]
    bbr = [r for r in rows if r["flow"] == "2"]
    gaps = [float(b["t_s"]) - float(a["t_s"]) for a, b in zip(bbq, bbq[1:])]
    assert statistics.median(gaps) <= 1.5 * INTERVAL_S, statistics.median(gaps)
    # a queue persists: the BBQ flow sees it in most samples
    assert sum(r["variant_flag"] == "1" for r in bbq) >= 0.8 * len(bbq)
    capped = [n * INTERVAL_S * 1000 for n, flagged in probe_phases(bbq) if flagged]
    plain = [n * INTERVAL_S * 1000 for n, _ in probe_phases(bbr)]
    min_rtt = statistics.median(float(r["bbr_min_rtt_ms"]) for r in bbq)
    print(f"BBQ probing phases (ms): {capped}; BBR's: {plain}; min_rtt {min_rtt:.1f} ms")
    assert len(capped) >= 3 and len(plain) >= 3, (capped, plain)
    # about alpha (within one sample either way, plus the time to the ACK that ends it) ...
    assert ALPHA_MS - 10 <= statistics.median(capped) <= ALPHA_MS + 20, (capped, min_rtt)
    # ... and not one min_rtt, which is how long the BBR flow's phases last
    assert statistics.median(plain) >= 0.8 * min_rtt and max(capped) < 0.8 * min_rtt, (capped, plain, min_rtt)
