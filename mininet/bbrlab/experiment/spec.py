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
reason, before anything is booted. What is checked beyond the schema's
bounds: the file is UTF-8 YAML of at most MAX_SPEC_BYTES with no key given
twice in one mapping; every number anywhere in it is finite (no .nan, .inf);
every profile's overrides give a valid spec, whether or not that profile is
selected, a problem named by its full path (profiles.paper.duration_s); the
runs' seeds stay in the kernel's range (0..2**64-1); a spec has at most
LIMITS["runs"] runs and a run at most LIMITS["flows"] flows (a caller may
raise them: `bbrlab validate/run --max-runs/--max-flows`).
"""
import copy
import hashlib
import itertools
import json
import math
import pathlib
import re

import jsonschema
import yaml

from . import cost, labels, units, variants, yamltext

SCHEMA = yamltext.safe_load((pathlib.Path(__file__).with_name("spec_schema.yaml")).read_text())

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


# Bounds on the work a spec may ask for before anything is expanded or booted: runs per spec
# (sweep points x repetitions, the largest spec of mininet/specs/ has 144) and flows per run (the
# largest has 10). Each run boots one testbed, so a caller who means more raises them knowingly
# (resolve/load's `limits`, the command line's --max-runs and --max-flows).
LIMITS = {"runs": 2000, "flows": 64}
MAX_SPEC_BYTES = 1_000_000      # a spec file; the largest of mininet/specs/ is 7 kB
# The seeds a run hands on (bbrlab.seed=<n> on the kernel command line, netem's loss seeds n + i
# of flow i) are unsigned 64-bit integers in the kernel.
MAX_SEED = 2**64 - 1


class SpecError(ValueError):
    """An experiment spec is invalid; the message names field and reason (`path`: the field as a
    list of keys and 0-based indices, when the problem is one field's)."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


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
    raise SpecError(f"{source}: {_field(path)}: {reason}", list(path))


class _UniqueKeyLoader(yamltext.SafeLoader):
    """The safe loader (yamltext.py) refusing a mapping that gives one key twice (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:
                continue            # an unhashable key: construct_mapping reports it
            if first is None:
                seen[key] = line
            else:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} given twice (lines {first} and {line})", key_node.start_mark)
        return super().construct_mapping(node, deep)


def parse(text, source="spec"):
    """The YAML document of a spec's text (str, or bytes that must be UTF-8): SpecError naming
    `source` for invalid UTF-8, invalid YAML or a key given twice in one mapping."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            line = text[:err.start].count(b"\n") + 1
            raise SpecError(f"{source}: not UTF-8 text: byte 0x{text[err.start]:02x} on line {line}") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        raise SpecError(f"{source}: not valid YAML: {err}") from None


def load(path, profile=None, overrides=None, limits=None) -> dict:
    """Read, profile-merge and validate a spec file; returns the spec dict. `limits`: LIMITS
    raised or lowered ({"runs": n, "flows": n}, either)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise SpecError(f"{path}: no such spec file")
    size = path.stat().st_size
    if size > MAX_SPEC_BYTES:
        raise SpecError(f"{path}: {size} bytes, more than a spec may have ({MAX_SPEC_BYTES})")
    raw = parse(path.read_bytes(), str(path))
    return resolve(raw, source=str(path), profile=profile, overrides=overrides, limits=limits)


def check_finite(value, source="spec", path=()) -> None:
    """SpecError naming the field (its full path) of the first number in `value` (nested mappings
    and lists) that is not finite: YAML's .nan, .inf and -.inf pass every bound of a schema."""
    if isinstance(value, float) and not math.isfinite(value):
        _fail(source, list(path), f"{value} is not a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            check_finite(item, source, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_finite(item, source, (*path, i))


def resolve(raw, source="spec", profile=None, overrides=None, limits=None) -> dict:
    """A spec mapping (`raw`, as read from YAML) merged with the overrides of `profile` (when its
    `profiles` block has one) and then with `overrides`, validated (validate() and point_labels
    against every profile's sweep), with `profiles` removed and `profile` set. Every other
    profile's overrides are validated too (merged without `overrides`), a problem of theirs named
    profiles.<name>.<field>. `raw` is not changed; SpecError naming `source`, the field and the
    reason on the first problem. `limits`: as load()'s."""
    if not isinstance(raw, dict):
        _fail(source, [], "a spec must be a mapping")
    check_finite(raw, source)
    check_finite(overrides or {}, source)
    limits = dict(LIMITS, **(limits or {}))
    spec = copy.deepcopy(raw)
    profiles = spec.pop("profiles", {}) or {}
    if not isinstance(profiles, dict):
        _fail(source, ["profiles"], "must be a mapping of profile name to overrides")
    for name, over in profiles.items():
        if not isinstance(over, dict):
            _fail(source, ["profiles", name], "overrides must be a mapping")
    base = spec
    if profile and profile in profiles:
        spec = deep_merge(spec, profiles[profile])
    if overrides:
        spec = deep_merge(spec, overrides)
    _validate_profile(spec, profiles.get(profile) if profile else None, profile, source, limits, selected=True)
    for name, over in profiles.items():
        if name != profile:
            _validate_profile(deep_merge(base, over), over, name, source, limits)
    _validate_point_labels(spec, raw, profiles, source)
    spec["profile"] = profile
    return spec


def _validate_profile(spec: dict, over, name, source, limits, selected=False) -> None:
    """validate() of one profile's merged spec; a problem in a field the profile's
    overrides `over` give is named profiles.<name>.<field>; another one as validate() names it
    for the selected profile, "in profile <name>" for another."""
    try:
        validate(spec, source, limits)
    except SpecError as err:
        if not over or (selected and not (err.path is not None and _overrides_path(over, err.path))):
            raise
        path = err.path
        reason = str(err)[len(f"{source}: "):] if str(err).startswith(f"{source}: ") else str(err)
        if path is not None and _overrides_path(over, path):
            reason = reason[len(_field(path)) + 2:] if reason.startswith(_field(path) + ": ") else reason
            raise SpecError(f"{source}: {_field(['profiles', name, *path])}: {reason}",
                            ["profiles", name, *path]) from None
        raise SpecError(f"{source}: in profile {name}: {reason}", path) from None


def _overrides_path(over, path) -> bool:
    """Whether the overrides `over` give the field at `path` or a mapping or list holding it."""
    node = over
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list):
            return True           # a list of the overrides replaces the spec's whole list
        else:
            return False
    return True


def run_count(spec: dict) -> int:
    """How many runs a validated spec expands to (before added repetitions): its sweep points
    times its repetitions, without expanding anything."""
    points = 1
    for values in (spec.get("sweep") or {}).values():
        points *= len(values)
    return points * spec.get("repetitions", DEFAULTS["repetitions"])


def check_run_count(spec: dict, source="spec", limits=None, n_runs=None) -> None:
    """SpecError when the spec has more runs than limits["runs"] (LIMITS), saying what they cost."""
    cap = dict(LIMITS, **(limits or {}))["runs"]
    n = run_count(spec) if n_runs is None else n_runs
    if n > cap:
        try:
            per_run = cost.expected_cpu_s({"duration_s": spec["duration_s"], "bottleneck": spec["bottleneck"]})
            spent = f", about {n * per_run / 3600:,.1f} host CPU-hours at {per_run:,.0f} host CPU-s per run"
        except (KeyError, TypeError):
            spent = ""
        _fail(source, ["sweep"] if spec.get("sweep") else ["repetitions"],
              f"{n:,} runs, more than the {cap:,} a spec may have (each run boots one testbed{spent});"
              f" give --max-runs {n} to run them all anyway")


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


def _schema_message(err) -> str:
    """A schema error's message, short whatever the size of the value it is about (jsonschema's
    own message quotes the whole value: a long list would be echoed whole)."""
    instance, limit = err.instance, err.validator_value
    if len(err.message) <= 200:
        return err.message
    if err.validator in ("maxItems", "minItems") and isinstance(instance, list):
        return f"has {len(instance)} items; {'at most' if err.validator == 'maxItems' else 'at least'} {limit} allowed"
    if err.validator in ("maxLength", "minLength") and isinstance(instance, str):
        return f"is {len(instance)} characters long; {'at most' if err.validator == 'maxLength' else 'at least'} {limit} allowed"
    if err.validator in ("maxProperties", "minProperties") and isinstance(instance, dict):
        return f"has {len(instance)} entries; {'at most' if err.validator == 'maxProperties' else 'at least'} {limit} allowed"
    shown = repr(instance)
    message = err.message.replace(shown, f"{shown[:60]}... ({type(instance).__name__} of {len(shown)} characters)")
    return message[:300] + (" ..." if len(message) > 300 else "")


def _bdp_rtt_ms(spec: dict):
    """The RTT a buffer_bdp is counted at: bdp_rtt_ms, else the longest flow's RTT."""
    bn = spec["bottleneck"]
    return bn.get("bdp_rtt_ms", max(f["rtt_ms"] for f in spec["flows"]))


def validate(spec: dict, source="spec", limits=None) -> None:
    """Raise SpecError, naming `source`, the field and the reason, for the first problem of a
    profile-merged spec: the schema (spec_schema.yaml), then the rules a schema cannot express
    (one buffer size, RED's thresholds, whole-millisecond sample intervals, flow times inside the
    run, known congestion controls and their shared module parameters, combinations of fields
    that exclude each other, changes naming existing flows), every number finite, the runs' and
    flows' caps (`limits`, LIMITS), the seeds in the kernel's range, no buffer_bdp counted at an
    RTT of 0, and every sweep value applied."""
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = sorted(validator.iter_errors(spec), key=lambda e: (len(e.path), list(map(str, e.path))))
    if errors:
        err = jsonschema.exceptions.best_match(errors)
        _fail(source, list(err.absolute_path), _schema_message(err))
    check_finite(spec, source)
    limits = dict(LIMITS, **(limits or {}))
    check_run_count(spec, source, limits)
    bn = spec["bottleneck"]
    given = [k for k in ("buffer_bytes", "buffer_pkts", "buffer_bdp") if k in bn]
    if len(given) != 1:
        _fail(source, ["bottleneck"], "give exactly one of buffer_bytes, buffer_pkts, buffer_bdp"
              f" (got {', '.join(given) or 'none'})")
    if "buffer_bdp" in bn and _bdp_rtt_ms(spec) == 0:
        _fail(source, ["bottleneck", "buffer_bdp"], "a multiple of a BDP counted at an RTT of 0 ms (0 bytes):"
              " give bdp_rtt_ms, or the buffer as buffer_bytes or buffer_pkts")
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
    if n_flows > limits["flows"]:
        _fail(source, ["flows"], f"{n_flows} flows (counts included), more than the {limits['flows']} a run may"
              " have (each flow is a sender and a receiver host in one testbed guest);"
              f" give --max-flows {n_flows} to run them anyway")
    last_seed = spec.get("seed", DEFAULTS["seed"]) + spec.get("repetitions", DEFAULTS["repetitions"]) - 1 + n_flows - 1
    if last_seed > MAX_SEED:
        _fail(source, ["seed"], f"{spec.get('seed')}: the runs' seeds (seed + repetition - 1, and + flow - 1 for"
              f" netem's) reach {last_seed}, beyond the kernel's range 0..{MAX_SEED}")
    for i, change in enumerate(spec.get("changes", [])):
        if change["flow"] > n_flows:
            _fail(source, ["changes", i, "flow"], f"there are only {n_flows} flows")
        if change["at_s"] >= duration:
            _fail(source, ["changes", i, "at_s"], f"{change['at_s']} is not before duration_s ({duration})")
        if "rtt_ms" not in change:
            _fail(source, ["changes", i], "names no change (give rtt_ms)")
    bare = _without_sweep(spec)
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
                validate(_assign(bare, key, value), source, limits)
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
    """A copy of obj with the field at `path` set to value: the mappings and lists along the path
    are copied (shallow), everything else is shared with obj (so the cost does not grow with the
    size of the rest of the spec); obj is not changed."""
    parts = _split(path)
    out = copy.copy(obj)
    target = out
    for part in parts[:-1]:
        target[part] = copy.copy(target[part])
        target = target[part]
    target[parts[-1]] = value
    return out


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


def expand(spec: dict, point_repetitions=None, limits=None) -> list:
    """All runs of a validated spec: sweep points x repetitions, resolved. `point_repetitions`
    ({point name: n}, experiment/repetitions.py) gives named points more repetitions than the
    spec's; SpecError for a point the spec does not have or fewer than the spec's, or for more
    runs than limits["runs"] (LIMITS) or seeds beyond MAX_SEED with them."""
    sweep = spec.get("sweep") or {}
    more = dict(point_repetitions or {})
    name = spec.get("name", "spec")
    reps_spec = spec.get("repetitions", DEFAULTS["repetitions"])
    check_run_count(spec, name, limits, run_count(spec) + sum(max(0, n - reps_spec) for n in more.values()))
    n_flows = sum(f.get("count", 1) for f in spec["flows"])
    for point, n in more.items():
        if spec.get("seed", DEFAULTS["seed"]) + n - 1 + n_flows - 1 > MAX_SEED:
            _fail(name, ["seed"], f"with {n} repetitions of point {point} the runs' seeds go beyond the kernel's"
                  f" range 0..{MAX_SEED}")
    overrides = spec.get("point_labels") or {}
    keys = list(sweep)
    runs, seen = [], {}
    for combo in itertools.product(*(sweep[k] for k in keys)):
        assignment = {}
        for key, value in zip(keys, combo):
            assignment.update(_key_assignment(key, value))
        point_spec = copy.deepcopy(_without_sweep(spec))
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
