"""Experiment specs: load, validate, expand.

A spec is a YAML file describing one figure's experiment as data (see
mininet/specs/<paper>/ and docs/specs.md). Loading it

1. deep-merges the overrides of the chosen profile (`profiles: {quick: ...}`),
2. validates the result against spec_schema.yaml and a few rules a schema
   cannot express (exactly one buffer size, flow times inside the run, known
   congestion controls whose module parameters agree across flows, ...),
3. expands sweeps (cartesian product of `sweep` paths), flow `count`s and
   repetitions into fully resolved run specs, one per testbed boot; each
   carries its sweep point's name (`point`) and human label (`point_label`,
   labels.py, or the spec's `point_labels` override).

Every problem is raised as SpecError naming the file, the field and the
reason, before anything is booted.
"""
import copy
import hashlib
import itertools
import json
import pathlib
import re

import jsonschema
import yaml

from . import labels, units, variants

SCHEMA = yaml.safe_load((pathlib.Path(__file__).with_name("spec_schema.yaml")).read_text())

# Every default of a run, in one place: resolve_run() fills each into every run, so the code
# that reads a run (runner, guest, backends, tidy, fidelity) reads job[field] and never
# restates a default. A run's sweep point, repetition, seed, flows' numbers and labels and the
# bottleneck's derived sizes are filled there too.
DEFAULTS = {
    "repetitions": 1,
    "seed": 1,
    "clock": "virtual",         # the deterministic one: a run is a function of its spec and seed
    "sample_interval_s": 0.1,
    "queue_sample_interval_s": 0.05,
    "sender_qdisc": "fq",
    "rtt_on": "ingress",
    "mtu_bytes": 1500,
    "switch": "linuxbridge",
    "offloads": "off",
    "capture": "none",
    "changes": [],
    "delayed_ack": True,
    "snapshot_at_s": None,      # no netlink snapshot
    "access_rate_mbps": None,   # unlimited access links (each flow's own overrides it)
}
BOTTLENECK_DEFAULTS = {"shaper": "tbf", "aqm": {"kind": "droptail"}, "loss_rate": 0}
RED_DEFAULTS = {"ecn": False}   # aqm kind red only
FLOW_DEFAULTS = {"start_s": 0.0, "module_params": {}}   # stop_s: the run's end; access_rate_mbps: the run's
# Defaults that joined after run keys (run_key) were in use: a run that leaves them out is keyed
# without them, so that every earlier run keeps its key (a spec that sets one is keyed with it).
UNKEYED_DEFAULTS = ("delayed_ack", "snapshot_at_s", "access_rate_mbps")
FIDELITY_DEFAULTS = {
    "base_rtt_tolerance_ms": 1.0,   # |measured - configured| base RTT per path
    "rate_tolerance": 0.05,         # |dequeue rate while backlogged / configured - 1|
    "max_cpu_busy": 0.99,           # mean guest CPU busy fraction: above it the guest is saturated
    "max_timer_lateness_ms": 20.0,  # 99th percentile of sampler wake-up lateness
    "capture_max_mean_error_pkts": 1.0,  # mean |sum of captured per-flow backlogs - qdisc backlog|
}


class SpecError(ValueError):
    """An experiment spec is invalid; the message names field and reason."""


def deep_merge(base: dict, over: dict) -> dict:
    """A deep copy of base with over merged in: nested mappings merge key by key, any other value of
    over (lists included) replaces base's. Neither argument is changed."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _field(path) -> str:
    return ".".join(str(p + 1) if isinstance(p, int) else str(p) for p in path) or "(top level)"


def _fail(source, path, reason):
    raise SpecError(f"{source}: {_field(path)}: {reason}")


def load(path, profile=None, overrides=None) -> dict:
    """Read, profile-merge and validate a spec file; returns the spec dict."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise SpecError(f"{path}: no such spec file")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise SpecError(f"{path}: not valid YAML: {err}") from None
    return resolve(raw, source=str(path), profile=profile, overrides=overrides)


def resolve(raw, source="spec", profile=None, overrides=None) -> dict:
    """A spec mapping (`raw`, as read from YAML) merged with the overrides of `profile` (when its
    `profiles` block has one) and then with `overrides`, validated (validate() and point_labels
    against every profile's sweep), with `profiles` removed and `profile` set. `raw` is not
    changed; SpecError naming `source`, the field and the reason on the first problem."""
    if not isinstance(raw, dict):
        _fail(source, [], "a spec must be a mapping")
    spec = copy.deepcopy(raw)
    profiles = spec.pop("profiles", {}) or {}
    if not isinstance(profiles, dict):
        _fail(source, ["profiles"], "must be a mapping of profile name to overrides")
    if profile and profile in profiles:
        if not isinstance(profiles[profile], dict):
            _fail(source, ["profiles", profile], "overrides must be a mapping")
        spec = deep_merge(spec, profiles[profile])
    if overrides:
        spec = deep_merge(spec, overrides)
    validate(spec, source)
    _validate_point_labels(spec, raw, profiles, source)
    spec["profile"] = profile
    return spec


def point_names(sweep: dict) -> list:
    """Names of the points of a sweep (as expand() names them), in run order."""
    keys = list(sweep or {})
    names = []
    for combo in itertools.product(*(sweep[k] for k in keys)):
        assignment = {}
        for key, value in zip(keys, combo):
            assignment.update(_key_assignment(key, value))
        names.append(_point_name(assignment))
    return names


def _validate_point_labels(spec: dict, raw: dict, profiles: dict, source) -> None:
    """Every `point_labels` key names a point of the spec's sweep in some profile."""
    overrides = spec.get("point_labels") or {}
    if not overrides:
        return
    base = {k: v for k, v in raw.items() if k != "profiles"}
    known = set()
    for variant in [base] + [deep_merge(base, p) for p in profiles.values() if isinstance(p, dict)]:
        try:
            known.update(point_names(variant.get("sweep") or {}))
        except (TypeError, ValueError):
            pass    # a malformed profile sweep is reported when that profile is loaded
    for name in overrides:
        if name not in known:
            _fail(source, ["point_labels", name], "is not a sweep point of this spec in any profile"
                  f" (points: {', '.join(sorted(known)) or 'none'})")


def validate(spec: dict, source="spec") -> None:
    """Raise SpecError, naming `source`, the field and the reason, for the first problem of a
    profile-merged spec: the schema (spec_schema.yaml), then the rules a schema cannot express
    (one buffer size, RED's thresholds, whole-millisecond sample intervals, flow times inside the
    run, known congestion controls and their shared module parameters, combinations of fields
    that exclude each other, changes naming existing flows) and every sweep value applied."""
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = sorted(validator.iter_errors(spec), key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        err = jsonschema.exceptions.best_match(errors)
        _fail(source, list(err.absolute_path), err.message)
    bn = spec["bottleneck"]
    given = [k for k in ("buffer_bytes", "buffer_pkts", "buffer_bdp") if k in bn]
    if len(given) != 1:
        _fail(source, ["bottleneck"], "give exactly one of buffer_bytes, buffer_pkts, buffer_bdp"
              f" (got {', '.join(given) or 'none'})")
    aqm = bn.get("aqm", {"kind": "droptail"})
    if aqm["kind"] == "red":
        for key in ("min_bytes", "max_bytes", "probability"):
            if key not in aqm:
                _fail(source, ["bottleneck", "aqm", key], "required when kind is red")
        if aqm["min_bytes"] >= aqm["max_bytes"]:
            _fail(source, ["bottleneck", "aqm", "min_bytes"], "must be smaller than max_bytes")
    elif set(aqm) - {"kind"}:
        _fail(source, ["bottleneck", "aqm"], f"droptail takes no parameters (got {sorted(set(aqm) - {'kind'})})")
    for key in ("sample_interval_s", "queue_sample_interval_s"):
        if key in spec and abs(spec[key] * 1000 - round(spec[key] * 1000)) > 1e-6:
            _fail(source, [key], f"{spec[key]} is not a whole number of milliseconds (the sampler's grid"
                  " is the largest whole millisecond dividing both sample intervals)")
    duration = spec["duration_s"]
    for i, flow in enumerate(spec["flows"]):
        start, stop = flow.get("start_s", 0), flow.get("stop_s", duration)
        if start >= duration:
            _fail(source, ["flows", i, "start_s"], f"{start} is not before duration_s ({duration})")
        if stop <= start:
            _fail(source, ["flows", i, "stop_s"], f"{stop} must be after start_s ({start})")
        if stop > duration:
            _fail(source, ["flows", i, "stop_s"], f"{stop} is after duration_s ({duration})")
    _validate_congestion_controls(spec, source)
    if spec.get("rtt_on") == "sender" and spec.get("sender_qdisc", "fq") != "none":
        _fail(source, ["sender_qdisc"], "must be none when rtt_on is sender (netem takes the sender's root qdisc)")
    if spec.get("capture") == "bottleneck" and spec.get("offloads") == "on":
        _fail(source, ["capture"], "needs offloads: off (with segmentation offloads a captured frame"
              " is not a packet of the bottleneck queue)")
    if spec.get("rtt_on") == "sender":
        for path in [["access_rate_mbps"]] * ("access_rate_mbps" in spec) + [
                ["flows", i, "access_rate_mbps"] for i, f in enumerate(spec["flows"]) if "access_rate_mbps" in f]:
            _fail(source, path, "needs rtt_on other than sender (the access shaper takes the sender's root qdisc)")
    if bn.get("loss_rate") and spec.get("rtt_on") == "data":
        _fail(source, ["bottleneck", "loss_rate"], "needs rtt_on other than data (the loss netem takes the"
              " receiver-side port's root qdisc)")
    n_flows = sum(f.get("count", 1) for f in spec["flows"])
    for i, change in enumerate(spec.get("changes", [])):
        if change["flow"] > n_flows:
            _fail(source, ["changes", i, "flow"], f"there are only {n_flows} flows")
        if change["at_s"] >= duration:
            _fail(source, ["changes", i, "at_s"], f"{change['at_s']} is not before duration_s ({duration})")
        if "rtt_ms" not in change:
            _fail(source, ["changes", i], "names no change (give rtt_ms)")
    for key, values in (spec.get("sweep") or {}).items():
        paths = _sweep_paths(key)
        for path in paths:
            try:
                _get_path(spec, path)
            except (KeyError, IndexError, TypeError, ValueError):
                _fail(source, ["sweep", key], f"{path} does not name a field of the spec")
        for value in values:
            if len(paths) > 1 and (not isinstance(value, list) or len(value) != len(paths)):
                _fail(source, ["sweep", key], f"{value!r} is not a list of {len(paths)} values, one per path")
            try:
                validate(_without_sweep(_assign(spec, key, value)), source)
            except SpecError as err:
                raise SpecError(f"{source}: sweep.{key} = {value!r}: {str(err).split(': ', 1)[1]}") from None


def _sweep_paths(key: str) -> list:
    """A sweep key names one dotted path, or several joined by '+' (set together, zipped)."""
    return key.split("+")


def _key_assignment(key: str, value) -> dict:
    """{path: value} of one sweep key's value (a zipped key's value lists one value per path)."""
    paths = _sweep_paths(key)
    return dict(zip(paths, value)) if len(paths) > 1 else {key: value}


def _assign(spec, key, value):
    for path, v in _key_assignment(key, value).items():
        spec = _set_path(spec, path, v)
    return spec


def _validate_congestion_controls(spec: dict, source) -> None:
    """Every cc is known (variants.yaml); its module parameters exist, are in their ranges and,
    being global per module, agree across flows."""
    first = {}
    for i, flow in enumerate(spec["flows"]):
        cc, params = flow["cc"], flow.get("module_params", {})
        for param, reason in variants.param_problems(cc, params):
            if param is None:
                _fail(source, ["flows", i, "cc" if cc not in variants.known() else "module_params"], reason)
            _fail(source, ["flows", i, "module_params", param], f"flow {i + 1} ({cc}): {reason}")
        j = first.setdefault(cc, i)
        other = spec["flows"][j].get("module_params", {})
        if params != other:
            _fail(source, ["flows", i, "module_params"], f"{params} differs from flows.{j + 1}.module_params ({other}):"
                  f" module parameters are global, so all {cc} flows must give the same ones")


def _without_sweep(spec):
    spec = dict(spec)
    spec.pop("sweep", None)
    spec.pop("point_labels", None)
    return spec


def _split(path: str):
    return [int(p) - 1 if p.isdigit() else p for p in path.split(".")]


def _get_path(obj, path: str):
    for part in _split(path):
        obj = obj[part]
    return obj


def _set_path(obj, path: str, value):
    obj = copy.deepcopy(obj)
    parts = _split(path)
    target = obj
    for part in parts[:-1]:
        target = target[part]
    target[parts[-1]] = value
    return obj


def _point_value(value) -> str:
    if isinstance(value, dict):
        return "_".join(f"{k}-{_point_value(v)}" for k, v in sorted(value.items())) or "none"
    return str(value)


def _point_name(assignment: dict) -> str:
    """A directory-safe name of a sweep point: `rate_mbps=10__f2_rtt_ms=30`."""
    if not assignment:
        return "base"
    parts = []
    for key, value in assignment.items():
        short = key.replace("bottleneck.", "").replace("flows.", "f")
        parts.append(re.sub(r"[^A-Za-z0-9_=-]", "_", f"{short}={_point_value(value)}"))
    return "__".join(parts)


def expand(spec: dict, point_repetitions=None) -> list:
    """All runs of a validated spec: sweep points x repetitions, resolved. `point_repetitions`
    ({point name: n}, experiment/repetitions.py) gives named points more repetitions than the
    spec's; SpecError for a point the spec does not have or fewer than the spec's."""
    sweep = spec.get("sweep") or {}
    more = dict(point_repetitions or {})
    overrides = spec.get("point_labels") or {}
    keys = list(sweep)
    runs, seen = [], {}
    for combo in itertools.product(*(sweep[k] for k in keys)):
        assignment = {}
        for key, value in zip(keys, combo):
            assignment.update(_key_assignment(key, value))
        point_spec = _without_sweep(spec)
        for key, value in assignment.items():
            point_spec = _set_path(point_spec, key, value)
        point = _point_name(assignment)
        label = overrides.get(point) or labels.point_label(assignment, point_spec)
        if seen.setdefault(label, point) != point:
            raise SpecError(f"{spec.get('name', 'spec')}: points {seen[label]} and {point} have the same label"
                            f" {label!r}: give one of them its own in point_labels")
        reps = deep_merge(DEFAULTS, point_spec)["repetitions"]
        if point in more:
            if more[point] < reps:
                raise SpecError(f"{spec.get('name', 'spec')}: point {point}: {more.pop(point)} added"
                                f" repetitions are fewer than the spec's {reps}")
            reps = more.pop(point)
            point_spec = dict(point_spec, repetitions=reps)
        for rep in range(1, reps + 1):
            runs.append(resolve_run(point_spec, point, rep, assignment, label))
    if more:
        raise SpecError(f"{spec.get('name', 'spec')}: added repetitions name points it does not have:"
                        f" {', '.join(sorted(more))}")
    return runs


def labels_of(spec: dict) -> dict:
    """{point name: label} of every point of a validated spec (point_labels applied, labels.py
    otherwise), in run order."""
    out = {}
    for job in expand(spec):
        out.setdefault(job["point"], job["point_label"])
    return out


def resolve_run(spec: dict, point: str, repetition: int, assignment=None, label=None) -> dict:
    """Fill defaults and derived quantities into one run's spec.

    The point's label does not enter run_key: relabelling a point is not a new run."""
    keyed = {k: v for k, v in DEFAULTS.items() if k not in UNKEYED_DEFAULTS}
    run = deep_merge(keyed, spec)
    run["bottleneck"] = deep_merge({k: v for k, v in BOTTLENECK_DEFAULTS.items() if k != "loss_rate"},
                                   spec["bottleneck"])
    run["fidelity"] = deep_merge(FIDELITY_DEFAULTS, spec.get("fidelity", {}))
    run["point"] = point
    run["sweep_values"] = assignment or {}
    run["repetition"] = repetition
    run["seed"] = run["seed"] + repetition - 1
    flows = []
    for entry in spec["flows"]:
        for _ in range(entry.get("count", 1)):
            flow = {k: v for k, v in entry.items() if k != "count"}
            flow.setdefault("start_s", FLOW_DEFAULTS["start_s"])
            flow.setdefault("stop_s", spec["duration_s"])
            flow.setdefault("module_params", copy.deepcopy(FLOW_DEFAULTS["module_params"]))
            if "access_rate_mbps" in spec:
                flow.setdefault("access_rate_mbps", spec["access_rate_mbps"])
            flow["flow"] = len(flows) + 1
            flow.setdefault("label", f"{flow['rtt_ms']:g} ms {flow['cc']}")
            flows.append(flow)
    run["flows"] = flows
    bn = run["bottleneck"]
    bn.setdefault("bdp_rtt_ms", max(f["rtt_ms"] for f in flows))
    mtu = run["mtu_bytes"]
    bn["buffer_bytes_resolved"] = units.buffer_bytes(bn, bn["bdp_rtt_ms"], mtu)
    bn.setdefault("burst_bytes", units.burst_bytes(bn["rate_mbps"], mtu))
    run["run_key"] = hashlib.sha256(json.dumps(run, sort_keys=True).encode()).hexdigest()[:12]
    run["point_label"] = label or point
    return complete(run)


def without_unkeyed_defaults(run: dict) -> dict:
    """A copy of a resolved run without the defaults that joined after run keys were in use
    (UNKEYED_DEFAULTS, bottleneck.loss_rate, red's aqm.ecn, each flow's access_rate_mbps) where
    they hold their default value: what a content key hashes, so that a run keeps the key it had
    before those defaults were filled in (runkey.py)."""
    out = {k: v for k, v in run.items() if not (k in UNKEYED_DEFAULTS and v == DEFAULTS[k])}
    if "bottleneck" in run:
        bn = {k: v for k, v in run["bottleneck"].items()
              if not (k == "loss_rate" and v == BOTTLENECK_DEFAULTS["loss_rate"])}
        if isinstance(bn.get("aqm"), dict) and bn["aqm"].get("ecn") is RED_DEFAULTS["ecn"]:
            bn["aqm"] = {k: v for k, v in bn["aqm"].items() if k != "ecn"}
        out["bottleneck"] = bn
    if "flows" in run:
        out["flows"] = [{k: v for k, v in f.items() if not (k == "access_rate_mbps" and v is None)}
                        for f in run["flows"]]
    return out


def complete(run: dict) -> dict:
    """Fill into a resolved run (in place; also returned) every default it lacks: the unkeyed ones
    of resolve_run, and, for a run resolved by an earlier revision (retidy of its run.json), any
    default added since. A field already present is left alone."""
    for key, value in DEFAULTS.items():
        run.setdefault(key, copy.deepcopy(value))
    bn = run["bottleneck"]
    for key, value in BOTTLENECK_DEFAULTS.items():
        bn.setdefault(key, copy.deepcopy(value))
    if bn["aqm"]["kind"] == "red":
        for key, value in RED_DEFAULTS.items():
            bn["aqm"].setdefault(key, value)
    for flow in run["flows"]:
        for key, value in FLOW_DEFAULTS.items():
            flow.setdefault(key, copy.deepcopy(value))
        flow.setdefault("stop_s", run["duration_s"])
        flow.setdefault("access_rate_mbps", run["access_rate_mbps"])
    run.setdefault("point_label", run.get("point", "base"))
    return run
    return run
