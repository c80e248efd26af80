"""One list of the variants and their module parameters (mininet/bbrlab/experiment/variants.yaml): the spec
check, the module build and the module's own range check all come from it, and a spec with a
parameter the module would refuse fails `bbrlab validate`, before anything boots."""
import pathlib
import re
import subprocess
import sys

import pytest

from bbrlab.experiment import spec, variants
from conftest import REPO, cli, write_spec
from test_spec import BASE

PATCHES = REPO / "kernel" / "variants"


def error_of(raw) -> str:
    with pytest.raises(spec.SpecError) as err:
        spec.resolve(raw, source="t.yaml")
    return str(err.value)


def test_every_variant_has_a_patch_and_every_patch_is_listed():
    assert variants.names() == sorted(p.stem for p in PATCHES.glob("*.patch"))
    assert not set(variants.names()) & set(variants.built_in())
    assert variants.built_in() == ["reno", "cubic", "bbr"]


def test_patches_take_their_parameters_from_the_list():
    """No patch declares a parameter itself: each includes the header the build writes from the list,
    exactly when the list gives it parameters."""
    for name in variants.names():
        text = (PATCHES / f"{name}.patch").read_text()
        assert "RANGED_UINT_PARAM(" not in text, name
        assert (f'+#include "{name}_params.h"' in text) == bool(variants.parameters(name)), name


def test_generated_header_declares_each_parameter_with_its_range():
    header = variants.c_header("bbq")
    assert 'RANGED_UINT_PARAM(alpha_us, 3000, 1, 10000000,\n\t\t  "BBQ: cap on the probing' in header
    assert "RANGED_UINT_PARAM(beta_ppm, 8000, 0, 1000000," in header
    assert header.count("RANGED_UINT_PARAM(") == 2
    assert "RANGED_UINT_PARAM" not in variants.c_header("bbq_drain")
    script = [sys.executable, str(REPO / "mininet" / "bbrlab" / "experiment" / "variants.py")]
    res = subprocess.run(script + ["header", "bbr_e"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == variants.c_header("bbr_e")
    res = subprocess.run(script + ["header", "nosuch"], capture_output=True, text=True)
    assert res.returncode == 1 and "unknown variant 'nosuch'" in res.stderr
    res = subprocess.run(script + ["names"], capture_output=True, text=True)
    assert res.stdout.split() == variants.names()


def test_spec_layer_does_not_import_the_build():
    """spec.py learns the congestion controls from the list, not from the host-side build module."""
    code = "import sys, bbrlab.experiment.spec; print('bbrlab.host.modules' in sys.modules, 'bbrlab.host.backends' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO / "mininet"), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False"]


def flows_with(cc, params):
    return [{"cc": cc, "rtt_ms": 10, "module_params": params}, {"cc": "bbr", "rtt_ms": 50}]


@pytest.mark.parametrize("cc, params, field, reason", [
    ("bbq", {"alpha_us": -3}, "flows.1.module_params.alpha_us",
     "flow 1 (bbq): -3 is out of range: bbq's alpha_us must be an integer in [1, 10000000] (default 3000)"),
    ("bbq", {"alpha_us": 0}, "flows.1.module_params.alpha_us", "0 is out of range"),
    ("bbq", {"beta_ppm": 1_000_001}, "flows.1.module_params.beta_ppm",
     "must be an integer in [0, 1000000] (default 8000)"),
    ("bbr_e", {"alpha_pct": 100}, "flows.1.module_params.alpha_pct",
     "flow 1 (bbr_e): 100 is out of range: bbr_e's alpha_pct must be an integer in [101, 400] (default 150)"),
    ("bbr_e", {"alpha_pct": 1.5}, "flows.1.module_params.alpha_pct", "1.5 is not an integer"),
    ("bbr_e", {"algorithm": "2"}, "flows.1.module_params.algorithm", "'2' is not an integer"),
    ("bbr_e", {"algorithm": True}, "flows.1.module_params.algorithm", "True is not an integer"),
    ("adaptive_bbr", {"min_rtt_win_sec": 0}, "flows.1.module_params.min_rtt_win_sec",
     "must be an integer in [1, 3600] (default 150)"),
    ("bbr_fca", {"recent_pct": 99}, "flows.1.module_params.recent_pct", "in [100, 100000]"),
])
def test_out_of_range_parameters_fail_validation(cc, params, field, reason):
    message = error_of(dict(BASE, flows=flows_with(cc, params)))
    assert message.startswith(f"t.yaml: {field}: "), message
    assert reason in message


def test_every_parameter_accepts_its_bounds_and_rejects_beyond():
    for cc in variants.names():
        for name, p in variants.parameters(cc).items():
            for value in (p["min"], p["default"], p["max"]):
                assert spec.resolve(dict(BASE, flows=flows_with(cc, {name: value})))
            for value in (p["min"] - 1, p["max"] + 1):
                assert f"{cc}'s {name} must be an integer in [{p['min']}, {p['max']}]" in \
                    error_of(dict(BASE, flows=flows_with(cc, {name: value})))


def test_out_of_range_sweep_value_names_the_value():
    raw = dict(BASE, flows=flows_with("bbq", {"alpha_us": 3000}),
               sweep={"flows.1.module_params.alpha_us": [3000, 20_000_000]})
    message = error_of(raw)
    assert "sweep.flows.1.module_params.alpha_us = 20000000: flows.1.module_params.alpha_us: flow 1 (bbq):" \
        in message and "[1, 10000000]" in message


def test_validate_command_rejects_before_boot(tmp_path):
    text = """
name: bad
duration_s: 10
bottleneck: {rate_mbps: 10, buffer_bytes: 100000}
flows:
  - {cc: bbq, rtt_ms: 10, module_params: {alpha_us: -3}}
"""
    path = write_spec(tmp_path / "bad.yaml", text)
    res = cli("validate", path, "--profile", "quick")
    assert res.returncode == 2
    assert re.search(rf"{re.escape(str(path))}: flows\.1\.module_params\.alpha_us: flow 1 \(bbq\): -3 is out of"
                     r" range: bbq's alpha_us must be an integer in \[1, 10000000\]", res.stderr), res.stderr
    res = cli("run", path, "--out", tmp_path / "out", "--kernel", tmp_path / "no-kernel")
    assert res.returncode == 2 and "alpha_us" in res.stderr and not (tmp_path / "out").exists()


def test_list_is_well_formed():
    for cc in variants.names():
        for name, p in variants.parameters(cc).items():
            assert re.fullmatch(r"[a-z][a-z0-9_]*", name) and p["description"], (cc, name)
            assert 0 <= p["min"] <= p["default"] <= p["max"] < 2**32, (cc, name)
    assert variants.label("bbr_e") == "BBR-E" and variants.label("cubic") == "CUBIC"
