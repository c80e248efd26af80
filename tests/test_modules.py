"""Which modules a run loads, where they come from (mininet/bbrlab/host/modules.py); building and
loading them in the testbed is tested in tests/kernel/."""
import hashlib
import os

import pytest

from bbrlab.experiment import spec
from bbrlab.host import modules
from test_spec import BASE


def job_with(*flows):
    return spec.expand(spec.resolve(dict(BASE, flows=list(flows))))[0]


def test_built_in_congestion_controls_need_no_module():
    job = job_with({"cc": "bbr", "rtt_ms": 10}, {"cc": "cubic", "rtt_ms": 20})
    assert modules.for_job(job, "uml") == [] and modules.for_job(job, "native") == []


def test_native_modules_come_from_the_kernel_release_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(modules, "MODULES_DIR", tmp_path)
    job = job_with({"cc": "bbr_e", "rtt_ms": 10, "module_params": {"alpha_pct": 120}}, {"cc": "bbq", "rtt_ms": 20})
    with pytest.raises(modules.ModuleError) as err:
        modules.for_job(job, "native")
    message = str(err.value)
    assert f"bbq, bbr_e not built for this kernel ({tmp_path / os.uname().release} lacks them)" in message
    assert "kernel/build-variants.sh --kdir /lib/modules/$(uname -r)/build --src TCP_BBR_C bbq bbr_e" in message
    release = tmp_path / os.uname().release
    release.mkdir()
    for name in ("bbq", "bbr_e"):
        (release / f"{name}.ko").write_bytes(name.encode())
    loaded = modules.for_job(job, "native")
    assert loaded == [{"name": "bbq", "path": str(release / "bbq.ko"), "params": {}},
                      {"name": "bbr_e", "path": str(release / "bbr_e.ko"), "params": {"alpha_pct": 120}}]
    assert modules.describe(loaded)[1] == dict(loaded[1], sha256=hashlib.sha256(b"bbr_e").hexdigest())
