import pytest

from bbrlab.experiment import units


def test_bdp_of_the_bbq_paper_setups():
    # 100 Mbit/s x 50 ms = 625 kB; 10 Mbit/s x 100 ms = 125 kB
    assert units.bdp_bytes(100, 50) == 625_000
    assert units.bdp_bytes(10, 100) == 125_000
    assert units.bdp_bytes(100, 0) == 0


def test_bdp_rejects_nonsense():
    with pytest.raises(ValueError):
        units.bdp_bytes(0, 10)
    with pytest.raises(ValueError):
        units.bdp_bytes(10, -1)


@pytest.mark.parametrize("bottleneck, rtt, expected", [
    ({"rate_mbps": 100, "buffer_bytes": 2_000_000}, 50, 2_000_000),
    ({"rate_mbps": 10, "buffer_bdp": 1.5}, 100, 187_500),       # Tang: 1.5 BDP of 10 Mbit/s x 100 ms
    ({"rate_mbps": 100, "buffer_pkts": 100}, 10, 151_400),      # 100 full frames of 1514 bytes
    ({"rate_mbps": 1, "buffer_bdp": 0.001}, 1, 1514),           # never below one frame
])
def test_buffer_bytes(bottleneck, rtt, expected):
    assert units.buffer_bytes(bottleneck, rtt) == expected


def test_buffer_needs_exactly_one_size():
    with pytest.raises(ValueError, match="exactly one"):
        units.buffer_bytes({"rate_mbps": 1, "buffer_bytes": 3000, "buffer_bdp": 1}, 10)
    with pytest.raises(ValueError, match="none"):
        units.buffer_bytes({"rate_mbps": 1}, 10)


def test_goodput_ceiling_counts_headers():
    # 1448 payload bytes per 1514-byte frame
    assert units.goodput_ceiling_mbps(100) == pytest.approx(95.64, abs=0.01)


def test_burst_at_least_two_frames():
    assert units.burst_bytes(1) == 2 * 1514
    assert units.burst_bytes(100) == 62_500              # 5 ms at 100 Mbit/s
    assert units.burst_bytes(1000, tick_ms=1) == 125_000
