"""What a cluster job asks for an ns-3 run (resources.mem_mb(job, "ns3")) against the ns-3
program's measured peaks: bench/ns3_memory.py's result, bench/results/ns3-memory-2026-11-26.md
(its raw rows). The expected values are the measurement's, not the model's: every measured run
fits with a margin, the deep points ask more than the measured rate per packet of window
extrapolates to, the budget grows with the buffer and shallow points stay small."""
import json
import pathlib
import sys

import pytest

from bbrlab.experiment import repetitions, units
from bbrlab.host import resources

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import ns3_memory  # noqa: E402

RESULT = REPO / "bench" / "results" / "ns3-memory-2026-11-26.md"
FIG06 = REPO / "mininet" / "specs" / "utsumi2022" / "utsumi2022_fig06_10.yaml"
# The model's part over the measured peak: at least this factor (the runs measured were short,
# 10-50 s; a paper run goes through many loss episodes).
MARGIN = 1.5


def measured_rows() -> list:
    rows = [json.loads(line) for line in RESULT.read_text().splitlines() if line.startswith('{"case"')]
    assert len(rows) >= 4, RESULT
    return rows


def job_of(spec_path, point, duration_s) -> dict:
    jobs = [j for j in repetitions.runs(spec_path, profile="paper", overrides={"duration_s": duration_s})
            if j["point"] == point and j["repetition"] == 1]
    assert len(jobs) == 1, point
    return jobs[0]


def measured_job(row) -> dict:
    spec_path, point, _ = ns3_memory.CASES[row["case"]]
    return job_of(spec_path, point, row["duration_s"])


def fig06_job(rtt_ms, buffer_bdp, cc="bbr") -> dict:
    return job_of(FIG06, f"f2_cc={cc}__f2_module_params=none__f1_rtt_ms={rtt_ms}__f2_rtt_ms={rtt_ms}"
                         f"__buffer_bdp={buffer_bdp}", 600)


def test_every_measured_run_fits_with_a_margin():
    for row in measured_rows():
        job = measured_job(row)
        assert resources.ns3_mem_mb(job) >= MARGIN * row["sim_peak_mb"], row
        assert resources.mem_mb(job, "ns3") >= resources.HOST_SIDE_MB + row["sim_peak_mb"], row
        assert row["host_side_peak_mb"] <= resources.HOST_SIDE_MB, row      # the host side's budget held


def test_the_deep_points_ask_for_what_the_measured_rate_per_packet_extrapolates_to():
    """Utsumi & Hasegawa's deepest points (128 BDP at 40 and 80 ms: W = 64.5 and 129 MB) were not run
    through a loss episode (bench result: a host CPU-minute per simulated second): their budget covers the
    largest measured memory per packet of window over the smallest run's peak, with the margin."""
    rows = measured_rows()
    base = min(r["sim_peak_mb"] for r in rows)
    per_pkt = max((r["sim_peak_mb"] - base) / (units.window_bytes(measured_job(r)) / measured_job(r)["mtu_bytes"])
                  for r in rows)
    assert per_pkt > 0
    for rtt_ms in (40, 80):
        deep = fig06_job(rtt_ms, 128)
        extrapolated = base + per_pkt * units.window_bytes(deep) / deep["mtu_bytes"]
        assert resources.ns3_mem_mb(deep) >= MARGIN * extrapolated
        assert resources.mem_mb(deep, "ns3") >= resources.HOST_SIDE_MB + MARGIN * extrapolated
    # the headline point: 128 MB of buffer at 100 Mbit/s, sockets of 516 MB; the measured rate
    # puts the simulator near 200 MB
    assert resources.mem_mb(fig06_job(80, 128), "ns3") >= 1024


def test_the_budget_grows_with_the_buffer_and_shallow_points_stay_small():
    sims = [resources.ns3_mem_mb(fig06_job(80, bdp)) for bdp in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert sims == sorted(sims) and len(set(sims)) == len(sims)
    asks = [resources.mem_mb(fig06_job(80, bdp), "ns3") for bdp in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert asks == sorted(asks) and asks[-1] > asks[0]
    for bdp in (1, 2, 4):
        for rtt_ms in (40, 80):
            assert resources.mem_mb(fig06_job(rtt_ms, bdp), "ns3") <= resources.HOST_SIDE_MB + 256
    assert all(a % 256 == 0 for a in asks)


@pytest.mark.parametrize("backend,expected", [("uml", 512 + 3072), ("native", 512)])
def test_the_other_backends_are_unchanged(backend, expected):
    """UML: the host side and the guest's 3072 MB at 128 BDP, 80 ms (tests/test_testbed_capabilities.py)."""
    assert resources.mem_mb(fig06_job(80, 128), backend) == expected
