"""What validation refuses beyond the schema's bounds (experiment/spec.py): numbers that are not
finite, seeds outside the kernel's range, duplicate keys, bytes that are not UTF-8, a bad override
in any profile, RTT 0 under buffer_bdp, too many runs or flows, oversized lists; and that every
shipped spec still resolves to the runs, with the keys, it had before these checks."""
import hashlib
import json
import pathlib
import time

import pytest

from bbrlab.experiment import runkey, spec

REPO = pathlib.Path(__file__).resolve().parents[1]
BASE = {"name": "t", "duration_s": 30, "bottleneck": {"rate_mbps": 100, "buffer_bytes": 2_000_000},
        "flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "bbr", "rtt_ms": 50, "start_s": 5}]}


def error_of(raw, **kw) -> str:
    with pytest.raises(spec.SpecError) as err:
        spec.resolve(raw, source="t.yaml", **kw)
    return str(err.value)


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("change, field", [
    ({"duration_s": NAN}, "duration_s"),
    ({"duration_s": INF}, "duration_s"),
    ({"bottleneck": {"rate_mbps": NAN, "buffer_bytes": 2_000_000}}, "bottleneck.rate_mbps"),
    ({"bottleneck": {"rate_mbps": 100, "buffer_bdp": NAN}}, "bottleneck.buffer_bdp"),
    ({"bottleneck": {"rate_mbps": 100, "buffer_bytes": 2_000_000, "loss_rate": NAN}}, "bottleneck.loss_rate"),
    ({"access_rate_mbps": -INF}, "access_rate_mbps"),
    ({"flows": [{"cc": "bbr", "rtt_ms": NAN}]}, "flows.1.rtt_ms"),
    ({"flows": [{"cc": "bbr", "rtt_ms": 10, "start_s": INF}]}, "flows.1.start_s"),
    ({"fidelity": {"rate_tolerance": NAN}}, "fidelity.rate_tolerance"),
    ({"sweep": {"bottleneck.rate_mbps": [10, NAN]}}, "sweep.bottleneck.rate_mbps.2"),
    ({"profiles": {"paper": {"duration_s": NAN}}}, "profiles.paper.duration_s"),
])
def test_numbers_that_are_not_finite_are_refused_naming_the_field(change, field):
    message = error_of(dict(BASE, **change))
    assert message.startswith(f"t.yaml: {field}: "), message
    assert "not a finite number" in message


def test_a_nan_override_from_the_command_line_is_refused():
    assert "duration_s: nan is not a finite number" in error_of(dict(BASE), overrides={"duration_s": NAN})


def test_seeds_stay_in_the_kernels_range():
    top = 2**64 - 1
    assert "seed" in error_of(dict(BASE, seed=2**64)).split(": ")[1]
    # seed + repetition - 1 and netem's seed + flow - 1 must fit as well
    assert "beyond the kernel's range" in error_of(dict(BASE, seed=top))
    assert "beyond the kernel's range" in error_of(dict(BASE, seed=top - 1, repetitions=2))
    runs = spec.expand(spec.resolve(dict(BASE, seed=top - 2, repetitions=2), source="t.yaml"))
    assert [r["seed"] for r in runs] == [top - 2, top - 1]
    # added repetitions (expand's point_repetitions) are held to it too
    loaded = spec.resolve(dict(BASE, seed=top - 2), source="t.yaml")
    with pytest.raises(spec.SpecError, match="beyond the kernel's range"):
        spec.expand(loaded, {"base": 3})


def test_duplicate_keys_and_bytes_that_are_not_utf8_are_refused(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("name: t\nduration_s: 30\nduration_s: 60\n")
    with pytest.raises(spec.SpecError, match=r"key 'duration_s' given twice \(lines 2 and 3\)"):
        spec.load(path)
    path.write_text("name: t\nbottleneck: {rate_mbps: 1, rate_mbps: 2}\n")
    with pytest.raises(spec.SpecError, match="key 'rate_mbps' given twice"):
        spec.load(path)
    path.write_bytes(b"name: t\ndescription: caf\xe9\n")
    with pytest.raises(spec.SpecError, match=r"not UTF-8 text: byte 0xe9 on line 2"):
        spec.load(path)


def test_a_spec_file_larger_than_the_limit_is_not_read(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * spec.MAX_SPEC_BYTES + "\n")
    with pytest.raises(spec.SpecError, match="more than a spec may have"):
        spec.load(path)


def test_every_profiles_overrides_are_validated_named_by_their_full_path():
    raw = dict(BASE, profiles={"quick": {"duration_s": 10}, "paper": {"duration_s": -5}})
    for profile in ("quick", "paper", None):
        message = error_of(raw, profile=profile)
        assert message.startswith("t.yaml: profiles.paper.duration_s: "), message
    raw = dict(BASE, profiles={"paper": {"flows": [{"cc": "bbr", "rtt_ms": 10, "stop_s": 40}]}})
    assert error_of(raw, profile="quick").startswith("t.yaml: profiles.paper.flows.1.stop_s: 40 is after")
    # a problem the override does not give is said to be in that profile
    raw = dict(BASE, profiles={"paper": {"duration_s": 4}})
    assert error_of(raw).startswith("t.yaml: in profile paper: flows.2.start_s: 5 is not before")
    # the selected profile's override fixing the base is fine
    assert spec.resolve(dict(BASE, profiles={"quick": {"duration_s": 20}}), profile="quick")["duration_s"] == 20


def test_rtt_0_under_buffer_bdp_is_refused_unless_the_bdp_rtt_is_given():
    raw = dict(BASE, bottleneck={"rate_mbps": 100, "buffer_bdp": 2}, flows=[{"cc": "bbr", "rtt_ms": 0}])
    assert error_of(raw).startswith("t.yaml: bottleneck.buffer_bdp: a multiple of a BDP counted at an RTT of 0 ms")
    raw["bottleneck"] = {"rate_mbps": 100, "buffer_bdp": 2, "bdp_rtt_ms": 20}
    (run,) = spec.expand(spec.resolve(raw))
    assert run["bottleneck"]["buffer_bytes_resolved"] == 2 * 100_000_000 // 8 * 20 // 1000
    # a swept RTT of 0 is caught at its sweep value
    raw = dict(BASE, bottleneck={"rate_mbps": 100, "buffer_bdp": 2}, flows=[{"cc": "bbr", "rtt_ms": 10}],
               sweep={"flows.1.rtt_ms": [10, 0]})
    assert "sweep.flows.1.rtt_ms = 0: bottleneck.buffer_bdp" in error_of(raw)


def test_runs_per_spec_and_flows_per_run_are_capped_with_a_way_past():
    sweep = {"bottleneck.rate_mbps": list(range(1, 51)), "flows.1.rtt_ms": list(range(1, 51)),
             "flows.2.rtt_ms": list(range(1, 51))}
    message = error_of(dict(BASE, sweep=sweep))
    assert "125,000 runs, more than the 2,000 a spec may have" in message and "--max-runs 125000" in message
    assert "host CPU-hours" in message
    small = dict(BASE, sweep={"bottleneck.rate_mbps": [10, 20, 30]}, repetitions=2)
    assert "6 runs, more than the 5" in error_of(small, limits={"runs": 5})
    assert len(spec.expand(spec.resolve(small, limits={"runs": 6}))) == 6
    # added repetitions count too
    with pytest.raises(spec.SpecError, match="7 runs, more than the 6"):
        spec.expand(spec.resolve(small, limits={"runs": 6}), {"bottleneck.rate_mbps=10": 3}, {"runs": 6})
    many = dict(BASE, flows=[{"cc": "bbr", "rtt_ms": 10, "count": 64}] * 2)
    message = error_of(many)
    assert message.startswith("t.yaml: flows: 128 flows (counts included), more than the 64") and "--max-flows 128" in message
    assert len(spec.expand(spec.resolve(many, limits={"flows": 128}))[0]["flows"]) == 128
    # an unselected profile's huge sweep is refused, not expanded (point_labels reads every profile's points)
    raw = dict(BASE, point_labels={"base": "x"}, profiles={"paper": {"sweep": sweep}})
    assert "profiles.paper.sweep: 125,000 runs" in error_of(raw, profile="quick")


def test_an_oversized_list_gets_a_short_message():
    message = error_of(dict(BASE, flows=[{"cc": "bbr", "rtt_ms": 10}] * 5000))
    assert message == "t.yaml: flows: has 5000 items; at most 64 allowed"


def test_sweep_validation_and_expansion_copy_the_sweep_a_fixed_number_of_times(monkeypatch):
    """Each sweep value deep-copied the whole spec, sweep included (quadratic: 3 000 points took
    3.7 s, 100 000 never finished): the number of deep copies of anything holding the sweep must
    not grow with the number of points."""
    import copy as copy_module
    import types

    def copies_of_the_sweep(n):
        count = [0]

        def deepcopy(obj, memo=None):
            if isinstance(obj, dict) and "sweep" in obj:
                count[0] += 1
            return copy_module.deepcopy(obj, memo)
        monkeypatch.setattr(spec, "copy", types.SimpleNamespace(deepcopy=deepcopy, copy=copy_module.copy))
        raw = dict(BASE, sweep={"bottleneck.rate_mbps": [1 + i / 1000 for i in range(n)]})
        runs = spec.expand(spec.resolve(raw, limits={"runs": n}), limits={"runs": n})
        assert len(runs) == n
        return count[0]
    assert copies_of_the_sweep(10) == copies_of_the_sweep(500) <= 2


FIXTURE = REPO / "tests" / "fixtures" / "run_keys.json"


def test_shipped_specs_keep_their_run_keys():
    """The run keys (spec.resolve_run's and runkey.run_key) of every run of every shipped spec, in
    the quick and paper profiles, as computed before these checks were added (the fixture), for
    each spec file that is unchanged since: validation refuses more, but resolves a valid spec as
    before."""
    recorded = json.loads(FIXTURE.read_text())
    compared = 0
    for name, entry in recorded.items():
        path = REPO / "mininet" / "specs" / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != entry["spec_sha256"]:
            continue                # the spec changed since: its keys may too
        keys = {}
        for profile in ("quick", "paper"):
            for run in spec.expand(spec.load(path, profile=profile)):
                keys[f"{profile}:{run['point']}/rep{run['repetition']}"] = \
                    f"{run['run_key']} {runkey.run_key(run)[:16]}"
        assert keys == entry["runs"], name
        compared += 1
    assert compared >= len(recorded) // 2, f"only {compared} of {len(recorded)} specs unchanged: refresh the fixture"


def test_the_command_line_raises_the_caps_and_warns_of_a_spec_named_like_an_experiment(tmp_path, capsys):
    from bbrlab import cli
    path = tmp_path / "many.yaml"
    path.write_text(json.dumps(dict(BASE, sweep={"bottleneck.rate_mbps": list(range(1, 31))})))
    assert cli.main(["validate", str(path), "--max-runs", "29"]) == 2
    assert "30 runs, more than the 29 a spec may have" in capsys.readouterr().err
    assert cli.main(["validate", str(path), "--max-runs", "30"]) == 0
    assert "ok, 30 run(s)" in capsys.readouterr().out
    assert cli.main(["validate", str(path), "--max-flows", "1"]) == 2
    assert "2 flows (counts included), more than the 1" in capsys.readouterr().err
    copy = tmp_path / "copy.yaml"
    copy.write_bytes((REPO / "mininet" / "specs" / "tang" / "tang_fig02.yaml").read_bytes())
    assert cli.main(["validate", str(copy), str(REPO / "mininet" / "specs" / "tang" / "tang_fig02.yaml")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {copy} is named 'tang_fig02', like the experiment of mininet/specs/tang/tang_fig02.yaml" in err
    assert err.count("warning") == 1
