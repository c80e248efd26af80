"""Spec validation and expansion: every error names the field and the reason."""
import json
import pathlib

import pytest
import yaml

from bbrlab.experiment import runkey, spec, variants
from bbrlab.host import modules

REPO = pathlib.Path(__file__).resolve().parents[1]
BASE = {"name": "t", "duration_s": 30, "bottleneck": {"rate_mbps": 100, "buffer_bytes": 2_000_000},
        "flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "bbr", "rtt_ms": 50, "start_s": 5}]}


def resolve(**changes):
    raw = spec.deep_merge(BASE, changes)
    return spec.resolve(raw, source="t.yaml")


def error_of(raw) -> str:
    with pytest.raises(spec.SpecError) as err:
        spec.resolve(raw, source="t.yaml")
    return str(err.value)


def test_all_shipped_specs_are_valid():
    specs = sorted((REPO / "mininet" / "specs").glob("*/*.yaml"))
    assert specs
    for path in specs:
        for profile in ("quick", "paper"):
            assert spec.expand(spec.load(path, profile=profile))


def test_defaults_and_derived_values():
    (run,) = spec.expand(resolve())
    assert run["sender_qdisc"] == "fq" and run["clock"] == "virtual" and run["rtt_on"] == "ingress"
    assert run["bottleneck"]["shaper"] == "tbf" and run["bottleneck"]["aqm"] == {"kind": "droptail"}
    assert run["bottleneck"]["buffer_bytes_resolved"] == 2_000_000
    assert [f["flow"] for f in run["flows"]] == [1, 2]
    assert run["flows"][0]["stop_s"] == 30 and run["flows"][1]["start_s"] == 5
    assert run["fidelity"]["base_rtt_tolerance_ms"] == 1.0


# The fields of a resolved run that a spec may leave out and the run still has (every default
# filled once, by spec.resolve_run): the schema's properties minus what only a spec file has
# (sweep, profiles, point_labels), its free-text metadata and the one-of buffer sizes.
SPEC_ONLY = {"sweep", "profiles", "point_labels", "description", "paper", "items"}
BUFFER_SIZES = {"buffer_bytes", "buffer_pkts", "buffer_bdp"}
MINIMAL = {"name": "m", "duration_s": 10, "bottleneck": {"rate_mbps": 10, "buffer_bytes": 100_000},
           "flows": [{"cc": "bbr", "rtt_ms": 20}]}


def test_a_minimal_spec_expands_to_a_run_with_every_field():
    (run,) = spec.expand(spec.resolve(MINIMAL))
    props = spec.SCHEMA["properties"]
    assert set(props) - SPEC_ONLY <= set(run), set(props) - SPEC_ONLY - set(run)
    bn_props = props["bottleneck"]["properties"]
    assert set(bn_props) - BUFFER_SIZES <= set(run["bottleneck"]), set(bn_props) - BUFFER_SIZES - set(run["bottleneck"])
    flow_props = set(props["flows"]["items"]["properties"]) - {"count"}
    assert all(flow_props <= set(f) for f in run["flows"]), flow_props - set(run["flows"][0])
    assert set(props["fidelity"]["properties"]) <= set(run["fidelity"])
    assert run["delayed_ack"] is True and run["snapshot_at_s"] is None and run["access_rate_mbps"] is None
    assert run["bottleneck"]["loss_rate"] == 0 and run["flows"][0]["access_rate_mbps"] is None
    assert run["capture"] == "none" and run["switch"] == "linuxbridge" and run["offloads"] == "off"
    assert run["profile"] is None and run["point_label"] == "base"


def test_red_gets_its_ecn_default_and_droptail_no_parameters():
    red = {"kind": "red", "min_bytes": 30000, "max_bytes": 90000, "probability": 0.1}
    (run,) = spec.expand(spec.resolve(spec.deep_merge(MINIMAL, {"bottleneck": {"aqm": red}})))
    assert run["bottleneck"]["aqm"] == dict(red, ecn=False)
    (run,) = spec.expand(spec.resolve(MINIMAL))
    assert run["bottleneck"]["aqm"] == {"kind": "droptail"}


def test_a_spec_without_clock_runs_on_the_virtual_clock():
    (run,) = spec.expand(spec.resolve(MINIMAL))
    assert run["clock"] == "virtual"
    (run,) = spec.expand(spec.resolve(dict(MINIMAL, clock="real")))
    assert run["clock"] == "real"


def test_an_access_rate_of_the_run_reaches_every_flow_unless_the_flow_has_its_own():
    raw = dict(MINIMAL, access_rate_mbps=50, flows=[{"cc": "bbr", "rtt_ms": 20},
                                                    {"cc": "bbr", "rtt_ms": 20, "access_rate_mbps": 5}])
    (run,) = spec.expand(spec.resolve(raw))
    assert [f["access_rate_mbps"] for f in run["flows"]] == [50, 5]


# Content keys (runkey.run_key) of shipped specs' paper-profile runs as the archive recorded them
# (data/paper/manifest.csv) when the runs were made, before the later defaults (delayed_ack,
# snapshot_at_s, access_rate_mbps, bottleneck.loss_rate, aqm.ecn) and the renamed documentation
# fields (paper: the key, items:) joined: none of them may change a run's key.
EARLIER_RUN_KEYS = {
    ("ma2019/ma2019_fig01", "paper", "base"): "c7099a92aca29c6e40c0d3acff2e54885478e9ea02edf105ceef30949bab45e7",
    ("tang/tang_table2", "paper", "f1_cc=bbr__loss_rate=0_0001"):
        "b3dda2a65a8bfea27447aee16195bfd83632dc7b421c91e5cdb1e905a6a15a3a",
    ("ma2019/ma2019_fig04", "paper", "aqm_max_bytes=500000__aqm_probability=0_02"):
        "2bcaf369392d3ddf55440fb162f8f3acf251118f86be22c16bd6d7ece112c0a5",
}


@pytest.mark.parametrize("where", EARLIER_RUN_KEYS)
def test_defaults_added_later_leave_the_run_key_alone(where):
    path, profile, point = where
    runs = spec.expand(spec.load(REPO / "mininet" / "specs" / f"{path}.yaml", profile=profile))
    run = next(r for r in runs if r["point"] == point and r["repetition"] == 1)
    assert runkey.run_key(run) == EARLIER_RUN_KEYS[where]


def test_a_spec_recorded_before_the_rename_to_items_keeps_its_run_key(fixtures):
    """run.json of a run archived before `figure:` became `items:` records its spec with `figure`
    (and `paper` as the seed file's name); the key of that recorded spec must still be the key the
    run recorded, which `bbrlab archive verify` checks for every entry."""
    recorded = json.loads((fixtures / "spec_recorded_before_items.json").read_text())
    assert "figure" in recorded["spec"] and "items" not in recorded["spec"]
    assert runkey.run_key(recorded["spec"]) == recorded["run_key"]
    renamed = dict(recorded["spec"], items=recorded["spec"]["figure"])
    del renamed["figure"]
    assert runkey.run_key(renamed) == recorded["run_key"]


def test_a_spec_that_sets_a_later_default_is_keyed_with_it():
    (run,) = spec.expand(spec.resolve(MINIMAL))
    (explicit,) = spec.expand(spec.resolve(dict(MINIMAL, delayed_ack=False)))
    assert explicit["run_key"] != run["run_key"]


def test_complete_fills_an_earlier_revisions_run_and_keeps_what_it_has():
    (run,) = spec.expand(spec.resolve(dict(MINIMAL, delayed_ack=False)))
    old = {k: v for k, v in run.items() if k not in ("delayed_ack", "snapshot_at_s", "capture")}
    old["bottleneck"] = {k: v for k, v in run["bottleneck"].items() if k != "loss_rate"}
    done = spec.complete(old)
    assert done["capture"] == "none" and done["bottleneck"]["loss_rate"] == 0 and done["delayed_ack"] is True
    assert spec.complete(dict(run))["delayed_ack"] is False


def test_buffer_in_bdp_uses_largest_rtt_unless_given():
    raw = dict(BASE, bottleneck={"rate_mbps": 100, "buffer_bdp": 2})
    (run,) = spec.expand(spec.resolve(raw))
    assert run["bottleneck"]["buffer_bytes_resolved"] == 2 * 625_000
    raw = dict(BASE, bottleneck={"rate_mbps": 100, "buffer_bdp": 2, "bdp_rtt_ms": 10})
    (run,) = spec.expand(spec.resolve(raw))
    assert run["bottleneck"]["buffer_bytes_resolved"] == 250_000


def test_profile_overrides_and_repetitions():
    raw = dict(BASE, profiles={"quick": {"duration_s": 12}, "paper": {"repetitions": 3}})
    quick = spec.expand(spec.resolve(raw, profile="quick"))
    paper = spec.expand(spec.resolve(raw, profile="paper"))
    assert [r["duration_s"] for r in quick] == [12]
    assert [(r["repetition"], r["seed"]) for r in paper] == [(1, 1), (2, 2), (3, 3)]
    assert len({r["run_key"] for r in paper}) == 3


def test_sweep_is_a_cartesian_product_with_named_points():
    raw = dict(BASE, sweep={"bottleneck.rate_mbps": [10, 100], "flows.2.rtt_ms": [20, 40]})
    runs = spec.expand(spec.resolve(raw))
    assert len(runs) == 4
    points = {r["point"]: r for r in runs}
    assert "rate_mbps=10__f2_rtt_ms=40" in points
    run = points["rate_mbps=10__f2_rtt_ms=40"]
    assert run["bottleneck"]["rate_mbps"] == 10 and run["flows"][1]["rtt_ms"] == 40


def test_flow_count_expands():
    raw = dict(BASE, flows=[{"cc": "bbr", "rtt_ms": 50}, {"cc": "cubic", "rtt_ms": 10, "count": 3}])
    (run,) = spec.expand(spec.resolve(raw))
    assert [(f["flow"], f["cc"]) for f in run["flows"]] == [(1, "bbr"), (2, "cubic"), (3, "cubic"), (4, "cubic")]


@pytest.mark.parametrize("change, field, reason", [
    ({"duration_s": -1}, "duration_s", "less than or equal to the minimum"),
    ({"bottleneck": {"rate_mbps": "fast", "buffer_bytes": 1}}, "bottleneck.rate_mbps", "not of type 'number'"),
    ({"bottleneck": {"rate_mbps": 100}}, "bottleneck", "exactly one of buffer_bytes"),
    ({"flows": []}, "flows", "is too short"),
    ({"flows": [{"cc": "bbr"}]}, "flows.1", "'rtt_ms' is a required property"),
    ({"flows": [{"cc": "bbr", "rtt_ms": 10, "start_s": 40}]}, "flows.1.start_s", "not before duration_s"),
    ({"flows": [{"cc": "bbr", "rtt_ms": 10, "start_s": 5, "stop_s": 5}]}, "flows.1.stop_s", "must be after start_s"),
    ({"flows": [{"cc": "BBR!", "rtt_ms": 10}]}, "flows.1.cc", "does not match"),
    ({"rtt": 5}, "(top level)", "Additional properties are not allowed ('rtt' was unexpected)"),
    ({"changes": [{"at_s": 1, "flow": 9, "rtt_ms": 5}]}, "changes.1.flow", "only 2 flows"),
    ({"changes": [{"at_s": 1, "flow": 1}]}, "changes.1", "names no change"),
    ({"sweep": {"bottleneck.nope": [1]}}, "sweep.bottleneck.nope", "does not name a field"),
    ({"clock": "fast"}, "clock", "is not one of"),
    ({"switch": "openvswitch"}, "switch", "'openvswitch' is not one of ['ovs', 'linuxbridge']"),
    ({"flows": [{"cc": "nosuch", "rtt_ms": 10}]}, "flows.1.cc",
     "unknown congestion control 'nosuch' (available: reno, cubic, bbr, " + ", ".join(variants.names()) + ";"),
    ({"flows": [{"cc": "bbq", "rtt_ms": 10, "module_params": {"alpha_us": 2000}}, {"cc": "bbq", "rtt_ms": 50}]},
     "flows.2.module_params", "differs from flows.1.module_params ({'alpha_us': 2000}): module parameters are global"),
    ({"flows": [{"cc": "bbr", "rtt_ms": 10, "module_params": {"alpha_us": 1}}]}, "flows.1.module_params",
     "bbr is built into the testbed kernel and has no module parameters"),
    ({"flows": [{"cc": "bbq", "rtt_ms": 10, "module_params": {"alpha": 1}}]}, "flows.1.module_params.alpha",
     "bbq has no such module parameter (it has: alpha_us, beta_ppm)"),
])
def test_invalid_specs_name_field_and_reason(change, field, reason):
    raw = dict(BASE, **change)
    message = error_of(raw)
    assert message.startswith(f"t.yaml: {field}: "), message
    assert reason in message


def test_red_needs_consistent_thresholds():
    bn = {"rate_mbps": 100, "buffer_bytes": 2_000_000, "aqm": {"kind": "red", "min_bytes": 5000, "max_bytes": 1000,
                                                               "probability": 0.1}}
    assert "bottleneck.aqm.min_bytes: must be smaller than max_bytes" in error_of(dict(BASE, bottleneck=bn))
    bn["aqm"] = {"kind": "red", "min_bytes": 1000}
    assert "bottleneck.aqm.max_bytes: required when kind is red" in error_of(dict(BASE, bottleneck=bn))


def test_bad_sweep_value_is_reported_with_its_value():
    message = error_of(dict(BASE, sweep={"bottleneck.rate_mbps": [10, -5]}))
    assert "sweep.bottleneck.rate_mbps = -5" in message


def test_load_reports_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(spec.SpecError, match="no such spec file"):
        spec.load(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(spec.SpecError, match="not valid YAML"):
        spec.load(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text(yaml.safe_dump([1, 2]))
    with pytest.raises(spec.SpecError, match="must be a mapping"):
        spec.load(listy)


def test_variant_flows_share_module_parameters():
    params = {"alpha_us": 2000, "beta_ppm": 5000}
    raw = dict(BASE, flows=[{"cc": "bbq", "rtt_ms": 10, "module_params": params, "count": 2},
                            {"cc": "bbq", "rtt_ms": 50, "module_params": dict(params)},
                            {"cc": "bbr_e", "rtt_ms": 20}, {"cc": "cubic", "rtt_ms": 20}])
    (run,) = spec.expand(spec.resolve(raw))
    assert [f["module_params"] for f in run["flows"]] == [params] * 3 + [{}, {}]
    assert modules.needed([run]) == ["bbq", "bbr_e"]
    assert modules.params_of(run, "bbq") == params and modules.params_of(run, "bbr_e") == {}


def test_sweep_over_congestion_controls_needs_every_variant():
    raw = dict(BASE, sweep={"flows.2.cc": ["bbr", "bbq_drain", "bbr_fca"]})
    assert modules.needed(spec.expand(spec.resolve(raw))) == ["bbq_drain", "bbr_fca"]
    flows = [{"cc": "bbq", "rtt_ms": rtt, "module_params": {"beta_ppm": 8000}} for rtt in (10, 50)]
    message = error_of(dict(BASE, flows=flows, sweep={"flows.2.module_params.beta_ppm": [8000, 1]}))
    assert "sweep.flows.2.module_params.beta_ppm = 1: flows.2.module_params: {'beta_ppm': 1} differs" in message


def test_variant_parameters_come_from_the_list():
    assert modules.parameters("bbr_e") == ["alpha_pct", "algorithm", "extra_acked_cwnd"]
    assert modules.parameters("bbq_drain") == []
    # the modules the host builds are the registry's variants, each a kernel/variants/<name>.patch
    patches = pathlib.Path(__file__).resolve().parents[1] / "kernel" / "variants"
    assert sorted(modules.variants()) == sorted(p.stem for p in patches.glob("*.patch"))
    assert len(modules.variants()) >= 7


def test_zipped_sweep_key_sets_paths_together():
    raw = dict(BASE, sweep={"flows.1.rtt_ms+flows.2.rtt_ms": [[5, 10], [200, 300]],
                            "bottleneck.rate_mbps": [10, 100]})
    runs = spec.expand(spec.resolve(raw))
    pairs = sorted((r["flows"][0]["rtt_ms"], r["flows"][1]["rtt_ms"], r["bottleneck"]["rate_mbps"]) for r in runs)
    assert pairs == [(5, 10, 10), (5, 10, 100), (200, 300, 10), (200, 300, 100)]
    assert "f1_rtt_ms=200__f2_rtt_ms=300__rate_mbps=10" in {r["point"] for r in runs}


def test_zipped_sweep_values_must_match_the_paths():
    message = error_of(dict(BASE, sweep={"flows.1.rtt_ms+flows.2.rtt_ms": [[5, 10], [20]]}))
    assert "sweep.flows.1.rtt_ms+flows.2.rtt_ms" in message and "not a list of 2 values" in message
    message = error_of(dict(BASE, sweep={"flows.1.rtt_ms+flows.9.rtt_ms": [[5, 10]]}))
    assert "flows.9.rtt_ms does not name a field" in message


def test_socket_and_queue_intervals_each_keep_their_own_spacing():
    """The sampler samples sockets every sample_interval_s and the queue every queue_sample_interval_s,
    also when one is not a multiple of the other (20-ms sockets beside the 50-ms default queue
    interval: both on a 10-ms grid, not the sockets rounded to the queue's 50 ms)."""
    from bbrlab.guest import driver as guest
    grid = lambda **kw: guest.sampler_grid(spec.expand(resolve(**kw))[0])
    assert grid(sample_interval_s=0.02) == (0.01, 2, 5)
    assert grid() == (0.05, 2, 1)                                   # the defaults: 0.1 and 0.05
    assert grid(sample_interval_s=0.01, queue_sample_interval_s=0.01) == (0.01, 1, 1)
    assert grid(sample_interval_s=0.03, queue_sample_interval_s=0.02) == (0.01, 3, 2)


def test_sample_intervals_are_whole_milliseconds():
    assert "sample_interval_s: 0.0125 is not a whole number of milliseconds" in error_of(
        spec.deep_merge(BASE, {"sample_interval_s": 0.0125}))


def test_the_content_key_ignores_the_later_defaults_at_their_default_values():
    """runkey.run_key (the pipeline's key) of a run is the key of the same run as resolved
    before delayed_ack, snapshot_at_s, access_rate_mbps, loss_rate and red's ecn were filled in;
    a value other than the default still counts."""
    from bbrlab.experiment import runkey
    red = {"kind": "red", "min_bytes": 30000, "max_bytes": 90000, "probability": 0.1}
    (run,) = spec.expand(spec.resolve(spec.deep_merge(MINIMAL, {"bottleneck": {"aqm": red}})))
    earlier = {k: v for k, v in run.items() if k not in ("delayed_ack", "snapshot_at_s", "access_rate_mbps")}
    earlier["bottleneck"] = {k: v for k, v in run["bottleneck"].items() if k != "loss_rate"}
    earlier["bottleneck"]["aqm"] = red
    earlier["flows"] = [{k: v for k, v in f.items() if k != "access_rate_mbps"} for f in run["flows"]]
    assert runkey.run_key(run) == runkey.run_key(earlier)
    for changed in (dict(run, delayed_ack=False), dict(run, snapshot_at_s=1.0),
                    dict(run, bottleneck=dict(run["bottleneck"], loss_rate=0.01))):
        assert runkey.run_key(changed) != runkey.run_key(run)
