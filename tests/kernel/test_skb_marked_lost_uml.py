"""The testbed kernel's per-lost-packet operation (kernel/patches/20-tcp-skb-marked-lost.patch),
checked from inside the kernel while a flow loses packets.

The patch's contract, from its header: tcp_notify_skb_loss_event() calls the congestion
control's skb_marked_lost(sk, skb) for every packet marked lost (RACK, tcp_mark_head_lost(), an
RTO's tcp_timeout_mark_lost(), a retransmission lost again), right after tp->lost has counted
it. bbr2/bbr3/bbr2_v2alpha/bbr2plus rely on both halves: their lost-packet handling reads the
loss since the packet's transmission as tp->lost - tx.lost (the drafts' C.lost - P.lost), which
must include the packet itself.

The host glue tests (test_bbr2_glue.py) call the modules' operation the way the patch does; this
test checks the kernel side. It builds a small test-only congestion control (lostprobe/lostprobe.c:
Reno with the operation; not a variant, not in the registry) against the kernel's tree, runs one
Reno-like flow through a 5 %-loss bottleneck (each loss marked by whichever path finds it), and reads the
probe's counters: at every call the growth of tp->lost since the socket's init must equal the
pcounts of the skbs of its calls, this call's included.

Mutation tried (2026-11-29): the call moved before `tp->lost += tcp_skb_pcount(skb)` in the patch
(a kernel built from it in a scratch tree): all 102 calls mismatched and this test failed
(bench/results/kernel-hook-mutation-2026-11-29.md). A first version of the probe, which compared
tp->lost's step between two calls with the second skb's pcount, caught it at 2 of 102 calls
only (a one-packet skb hides a one-call shift).

BBRLAB_TEST_KERNEL=<tree>/linux runs it against another kernel tree built by
kernel/build-uml.sh <tree> (the probe is then built against <tree>/src).
"""
import json
import os
import pathlib
import subprocess

import pytest

from bbrlab.experiment import runkey, spec
from bbrlab.host import runner
from bbrlab.host.backends import uml

HOOK_PATCH = "20-tcp-skb-marked-lost.patch"
PROBE_SOURCE = pathlib.Path(__file__).with_name("lostprobe") / "lostprobe.c"
LOSSY = {"name": "skb_marked_lost", "duration_s": 10, "clock": "virtual",
         "bottleneck": {"rate_mbps": 10, "buffer_bdp": 1, "loss_rate": 0.05},
         "flows": [{"cc": "reno", "rtt_ms": 20}]}


@pytest.fixture(scope="module")
def hook_kernel(request):
    """The kernel binary to boot (BBRLAB_TEST_KERNEL or the testbed kernel), skipped when its tree
    was built without the patch."""
    path = os.environ.get("BBRLAB_TEST_KERNEL")
    path = pathlib.Path(path) if path else request.getfixturevalue("kernel")
    if not (pathlib.Path(path).resolve().parent / "src.patches" / HOOK_PATCH).is_file():
        pytest.skip(f"the kernel {path} was built without kernel/patches/{HOOK_PATCH}: rebuild it")
    return pathlib.Path(path)


@pytest.fixture(scope="module")
def probe_module(hook_kernel, tmp_path_factory):
    """lostprobe.ko built against the kernel's tree (warnings are errors, as for the variants)."""
    work = tmp_path_factory.mktemp("lostprobe")
    (work / "lostprobe.c").write_text(PROBE_SOURCE.read_text())
    (work / "Kbuild").write_text("obj-m := lostprobe.o\nccflags-y := -Werror\n")
    tree = hook_kernel.resolve().parent / "src"
    res = subprocess.run(["make", "-C", str(tree), "ARCH=um", f"M={work}", "modules"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return work / "lostprobe.ko"


class ProbeBackend(uml.UmlBackend):
    """The UML backend loading the probe instead of the registry's modules."""

    def __init__(self, ko, **kwargs):
        super().__init__(**kwargs)
        self.ko = ko

    def modules(self, job):
        return [{"name": "lostprobe", "path": str(self.ko), "params": {}}]


def test_the_kernel_calls_skb_marked_lost_once_per_lost_packet_after_counting_it(hook_kernel, probe_module,
                                                                                 tmp_path, monkeypatch):
    job = spec.expand(spec.resolve(LOSSY))[0]
    job["flows"][0]["cc"] = "lostprobe"          # the spec check knows only the registry's names
    monkeypatch.setattr(runkey, "modules_key", lambda job, **kw: "")   # no variant sources to hash
    backend = ProbeBackend(probe_module, kernel=str(hook_kernel))
    backend.check()
    summary = runner.execute(job, tmp_path / "run", backend=backend, progress=lambda *a: None)
    assert summary["status"] == "ok", summary.get("error")
    assert "lostprobe" in summary["testbed"]["congestion_controls"]
    [state] = json.loads((tmp_path / "run" / "raw" / "modules.json").read_text())
    counters = {k: int(v) for k, v in state["parameters"].items()}
    # 5 % loss: Reno's rate is about MSS/RTT x 1.22/sqrt(0.05), 3.2 Mbit/s, some 2700 packets in 10 s,
    # about 130 of them lost (measured: 102 calls).
    assert counters["calls"] >= 50, counters
    assert counters["lost_packets"] >= counters["calls"], counters
    assert counters["mismatches"] == 0, (
        f"{counters['mismatches']} of {counters['calls']} calls found tp->lost's growth since init unequal "
        f"to the pcounts of the calls: the operation is called before tp->lost counts the packet, twice, "
        f"or not for every marking ({counters})")
