"""bbr2/bbr3 state in the tidy data: the module's encoding (kernel/variants/README.md "What
samplers see": state in bbr_bw_lo's low 3 bits, inflight_hi in bbr_bw_hi) read back by tidy.py."""
import pytest

from bbrlab.data import tidy
from bbrlab.experiment import variants
from bbrlab.guest import netlink

STATES = ["startup", "drain", "probe_bw_down", "probe_bw_cruise", "probe_bw_refill", "probe_bw_up", "probe_rtt"]


def info(bw_bytes_per_s, state, inflight_hi):
    """struct tcp_bbr_info as the module fills it, decoded as the samplers decode it."""
    import struct
    lo = (bw_bytes_per_s & ~7) | state
    return netlink.decode_bbr_info(struct.pack("=5I", lo, inflight_hi, 40000, 230, 512))


@pytest.mark.parametrize("code,name", list(enumerate(STATES)))
def test_state_and_bounds_are_read_back(code, name):
    fields = tidy.bbr2_fields(info(2_500_000, code, 123))
    assert fields == {"state": name, "bbr_bw_mbps": round((2_500_000 & ~7) * 8 / 1e6, 4),
                      "bbr_inflight_hi_pkts": 123}


def test_no_inflight_hi_yet_is_empty():
    assert tidy.bbr2_fields(info(1_000_000, 3, 0xFFFFFFFF))["bbr_inflight_hi_pkts"] is None


def test_only_the_bbr2_family_uses_the_encoding():
    family = ["bbr2", "bbr2_v2alpha", "bbr2plus", "bbr3"]
    assert [cc for cc in variants.known() if variants.phase_in_bw(cc)] == family
    assert [cc for cc in variants.known() if variants.core_patch(cc)] == family
    assert "bbr_inflight_hi_pkts" == tidy.TCP_COLUMNS[-1]


def test_native_backend_refuses_bbr2_before_anything_runs():
    from bbrlab.host import modules
    job = {"flows": [{"cc": "bbr2", "module_params": {}}, {"cc": "cubic"}]}
    with pytest.raises(modules.ModuleError, match="10-tcp-rate-tx-in-flight.patch"):
        modules.for_job(job, "native")


def test_kernel_tree_without_the_core_patch_is_refused(tmp_path):
    from bbrlab.host import modules
    (tmp_path / "src.patches").mkdir()
    with pytest.raises(modules.ModuleError, match="was not built with: rebuild it with kernel/build-uml.sh"):
        modules.check_core_patches(["bbq", "bbr3"], tmp_path)
    (tmp_path / "src.patches" / "10-tcp-rate-tx-in-flight.patch").write_text("")
    modules.check_core_patches(["bbq", "bbr3"], tmp_path)
