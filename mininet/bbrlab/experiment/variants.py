"""The congestion controls a spec may name and what the project knows of each (variants.yaml).

One source of truth, read by the spec check (spec.py), the host-side module
build (modules.py, kernel/build-variants.sh), the backends, tidy.py, fidelity.py
and (through analysis/lib/variants.R, which reads the same file) the figures. This
module has no dependency on the build or the testbed: it reads variants.yaml and
nothing else. Every function reads the file DATA names when called (cached per
path), so a test may point DATA at a copy.

    built_in()                 congestion controls compiled into the testbed kernel
    names()                    the variants (kernel/variants/<name>.patch)
    known()                    built_in() + names()
    label(cc)                  the name as the papers write it ("BBR-E")
    labels()                   {cc: label} in the file's order, as analysis/lib/variants.R reads them
    ns3()                      the congestion controls the ns-3 backend runs
    state_in_bw_bit0(cc)       whether cc keeps a flag in bit 0 of its bandwidth
    flag_meaning(cc)           what that flag means when set
    estimate_while_flagged(cc) what the bandwidth field holds while the flag is set,
                               None when it stays BBR's bandwidth estimate
    counters(cc)               {read-only module parameter: what it counts}
    exercise(variant)          its testbed exercise: {"flows", "duration_s", "buffer_bytes"}, or
                               {"test": file} for a variant with its own testbed test
    parameters(variant)        {param: {default, min, max, description}}
    param_problems(cc, params) what is wrong with a flow's module_params, as
                               [(param or None, reason)]; [] when nothing is
    c_header(variant)          the RANGED_UINT_PARAM() declarations of the module

Run as a script (system python3; kernel/build-variants.sh does):

    python3 mininet/bbrlab/experiment/variants.py names            one variant name a line
    python3 mininet/bbrlab/experiment/variants.py header NAME      NAME_params.h on stdout
"""
import functools
import pathlib
import sys

if __package__:
    from . import yamltext
else:       # run as a script (above): its folder is the first of sys.path
    import yamltext

DATA = pathlib.Path(__file__).resolve().with_name("variants.yaml")


def _data() -> dict:
    # asked once per socket sample by the tidy step: no new Path object per call when DATA is one
    return _load(DATA if isinstance(DATA, pathlib.Path) else pathlib.Path(DATA))


@functools.lru_cache(maxsize=None)
def _load(path: pathlib.Path) -> dict:
    """The registry at `path`, checked: ValueError naming the first wrong field."""
    data = yamltext.safe_load(path.read_text())
    for section in ("built_in", "variants"):
        for name, entry in data[section].items():
            _check_entry(path, f"{section}.{name}", entry or {})
    for name, entry in data["variants"].items():
        _check_exercise(path, name, entry.get("exercise"))
        for preset, values in (entry.get("presets") or {}).items():
            if not isinstance(values, dict) or not values or any(k not in (entry.get("params") or {}) for k in values):
                raise ValueError(f"{path}: variants.{name}.presets.{preset}: needs a mapping of its own parameters")
        for param, p in (entry.get("params") or {}).items():
            if not (isinstance(p.get("min"), int) and isinstance(p.get("max"), int) and isinstance(p.get("default"), int)
                    and 0 <= p["min"] <= p["default"] <= p["max"] < 2**32):
                raise ValueError(f"{path}: variants.{name}.params.{param}: needs integer min <= default <= max"
                                 " in [0, 2^32)")
    return data


def _check_entry(path, where: str, entry: dict) -> None:
    """The fields every entry may have (variants.yaml's header says what each means)."""
    def bad(field, need):
        raise ValueError(f"{path}: {where}.{field}: {need}")
    if not isinstance(entry.get("label"), str) or not entry["label"]:
        bad("label", "needs the name as the papers write it")
    for flag in ("bbr_modes", "ns3", "state_in_bw_bit0", "phase_in_bw"):
        if not isinstance(entry.get(flag, False), bool):
            bad(flag, "must be true or false")
    if entry.get("state_in_bw_bit0"):
        if not isinstance(entry.get("flag_meaning"), str):
            bad("flag_meaning", "needs what the flag in bit 0 means when set (state_in_bw_bit0 is true)")
    else:
        for field in ("flag_meaning", "estimate_while_flagged"):
            if field in entry:
                bad(field, "only with state_in_bw_bit0: true")
    if not isinstance(entry.get("estimate_while_flagged", ""), str):
        bad("estimate_while_flagged", "must be a text saying what the bandwidth field holds while flagged")
    if not isinstance(entry.get("core_patch", ""), str):
        bad("core_patch", "must name a kernel/patches/<name>.patch (without .patch) the module needs")
    counters_ = entry.get("counters", {})
    if not (isinstance(counters_, dict) and all(isinstance(k, str) and isinstance(v, str) and v
                                                for k, v in counters_.items())):
        bad("counters", "must map each read-only module parameter to what it counts")


GENERIC_EXERCISE = {"duration_s": 16, "buffer_bytes": 2_000_000}   # and the flows of _generic_flows
EXERCISE_FIELDS = ("flows", "duration_s", "buffer_bytes")


def _generic_flows(variant: str) -> list:
    return [{"cc": variant, "rtt_ms": 20}, {"cc": "cubic", "rtt_ms": 20, "start_s": 5}]


def _check_exercise(path, name: str, exercise) -> None:
    """ValueError naming what is wrong with variants.<name>.exercise (variants.yaml's header)."""
    where = f"{path}: variants.{name}.exercise"
    if exercise is None:
        return
    if not isinstance(exercise, dict) or not exercise:
        raise ValueError(f"{where}: must be a mapping (flows, duration_s, buffer_bytes, or test)")
    if "test" in exercise:
        if set(exercise) != {"test"} or not (isinstance(exercise["test"], str) and exercise["test"].endswith(".py")):
            raise ValueError(f"{where}.test: alone, the file name of the variant's own testbed test (tests/kernel/)")
        return
    unknown = sorted(set(exercise) - set(EXERCISE_FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r} (have {', '.join(EXERCISE_FIELDS)}, or test)")
    for field in ("duration_s", "buffer_bytes"):
        if field in exercise and not (isinstance(exercise[field], int) and exercise[field] > 0):
            raise ValueError(f"{where}.{field}: must be a positive integer")
    flows = exercise.get("flows", _generic_flows(name))
    if not (isinstance(flows, list) and flows and all(isinstance(f, dict) for f in flows)
            and flows[0].get("cc") == name):
        raise ValueError(f"{where}.flows: a list of flows whose first is the variant's (cc: {name})")


def exercise(variant: str) -> dict:
    """The variant's testbed exercise (variants.yaml's header): {"test": file} for a variant with its
    own testbed test, else {"flows": [...], "duration_s": s, "buffer_bytes": n}, the generic
    exercise's values where the entry gives none; KeyError for a name that is not a variant."""
    entry = _data()["variants"][variant]
    given = entry.get("exercise") or {}
    if "test" in given:
        return dict(given)
    return {**GENERIC_EXERCISE, "flows": _generic_flows(variant), **given}


def _entry(cc: str) -> dict:
    return _data()["built_in"].get(cc) or _data()["variants"].get(cc) or {}


def built_in() -> list:
    """The congestion controls compiled into the testbed kernel (variants.yaml built_in), in file
    order; they load no module and take no module parameters."""
    return list(_data()["built_in"])


def used_by(jobs) -> list:
    """The variants (not built-in congestion controls) any flow of these resolved runs uses, sorted."""
    return sorted({f["cc"] for job in jobs for f in job["flows"]} - set(built_in()))


def names() -> list:
    """The variants (variants.yaml variants, one kernel/variants/<name>.patch each), sorted."""
    return sorted(_data()["variants"])


def known() -> list:
    """Every congestion control a spec may name: built_in() then names()."""
    return built_in() + names()


def label(cc: str) -> str:
    """The name as the papers write it ("BBR-E"); an unknown cc is returned as it is."""
    return _entry(cc).get("label", str(cc))


def labels() -> dict:
    """{cc: label} of every built-in congestion control then every variant, in the file's order
    (analysis/lib/variants.R cc_labels() reads the same, in the same order)."""
    return {cc: (entry or {}).get("label") for section in ("built_in", "variants")
            for cc, entry in _data()[section].items()}


def bbr_modes(cc: str) -> bool:
    """Whether cc keeps BBR's gains per mode, so its mode can be read off them."""
    return bool(_entry(cc).get("bbr_modes", False))


def ns3() -> list:
    """The congestion controls the ns-3 backend runs (ns3: true), in known() order."""
    return [cc for cc in known() if _entry(cc).get("ns3", False)]


def state_in_bw_bit0(cc: str) -> bool:
    """Whether cc's module keeps a state flag in bit 0 of the bandwidth it reports
    (tcp.csv variant_flag); False for unknown congestion controls."""
    return bool(_entry(cc).get("state_in_bw_bit0", False))


def flag_meaning(cc: str) -> str:
    """What cc's flag in bit 0 means when it is 1 (only for state_in_bw_bit0(cc))."""
    if not state_in_bw_bit0(cc):
        raise KeyError(f"{cc!r} keeps no flag in bit 0 of its bandwidth")
    return _entry(cc)["flag_meaning"]


def estimate_while_flagged(cc: str):
    """What the bandwidth field holds while cc's flag is 1, when that is not BBR's bandwidth
    estimate (tidy.py then writes it to tcp.csv variant_estimate_mbps); None when it is,
    and for every congestion control without the flag."""
    return _entry(cc).get("estimate_while_flagged") if state_in_bw_bit0(cc) else None


def phase_in_bw(cc: str) -> bool:
    """Whether cc reports its state in bbr_bw_lo's low 3 bits and inflight_hi in bbr_bw_hi
    (bbr2, bbr3: kernel/variants/README.md "What samplers see")."""
    return bool(_entry(cc).get("phase_in_bw", False))


def core_patch(cc: str):
    """The testbed kernel patch (kernel/patches/<name>.patch) cc's module needs, or None."""
    return _entry(cc).get("core_patch")


def counters(cc: str) -> dict:
    """{read-only module parameter: what it counts} for cc's module: connections that did
    not run the variant (fidelity.py's variant_state check wants each to be 0); {} for
    congestion controls without any."""
    return dict(_entry(cc).get("counters") or {})


def parameters(variant: str) -> dict:
    """{name: {default, min, max, description}} of a variant's module parameters (none for built-ins)."""
    entry = _data()["variants"].get(variant)
    return dict((entry or {}).get("params") or {})


def preset_name(cc: str, params) -> str:
    """The name of the registry preset (variants.yaml `presets`) a flow's module_params equal, or ""."""
    if not isinstance(params, dict) or not params:
        return ""
    for name, values in ((_data()["variants"].get(cc) or {}).get("presets") or {}).items():
        if values == params:
            return name
    return ""


def range_text(variant: str, param: str) -> str:
    """The accepted values of a variant's module parameter as text, "an integer in [0, 100]
    (default 50)"; KeyError for an unknown parameter."""
    p = parameters(variant)[param]
    return f"an integer in [{p['min']}, {p['max']}] (default {p['default']})"


def param_problems(cc: str, params: dict) -> list:
    """[(param, reason)] for module_params a flow of congestion control `cc` cannot load with
    (param None: a problem of the whole mapping). The module would refuse the same values."""
    if cc not in known():
        return [(None, f"unknown congestion control {cc!r} (available: {', '.join(known())};"
                       " the list is mininet/bbrlab/experiment/variants.yaml)")]
    if not params:
        return []
    if cc in built_in():
        return [(None, f"{cc} is built into the testbed kernel and has no module parameters")]
    accepted = parameters(cc)
    problems = []
    for name, value in params.items():
        if name not in accepted:
            problems.append((name, f"{cc} has no such module parameter (it has: {', '.join(accepted) or 'none'})"))
            continue
        p = accepted[name]
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append((name, f"{value!r} is not an integer: {cc}'s {name} must be {range_text(cc, name)}"))
        elif not p["min"] <= value <= p["max"]:
            problems.append((name, f"{value} is out of range: {cc}'s {name} must be {range_text(cc, name)}"))
    return problems


def c_header(variant: str) -> str:
    """<variant>_params.h: the module's parameters as variant_param.h's RANGED_UINT_PARAM()."""
    if variant not in names():
        raise KeyError(f"unknown variant {variant!r} (variants: {', '.join(names())})")
    lines = [f"/* {variant}_params.h: generated by kernel/build-variants.sh from",
             " * mininet/bbrlab/experiment/variants.yaml (the one list of the variants' parameters); do not edit. */"]
    for name, p in parameters(variant).items():
        desc = p["description"].replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'RANGED_UINT_PARAM({name}, {p["default"]}, {p["min"]}, {p["max"]},\n\t\t  "{desc}");')
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    """The script's command line (argv without the program name): `names` prints one variant a
    line, `header NAME` writes NAME_params.h (c_header) to stdout, `core-patch NAME` prints the
    kernel patch NAME's module needs (an empty line for none). Returns the exit status: 0,
    1 for an unknown variant (named on stderr), 2 with the usage for anything else."""
    if argv[:1] == ["names"] and len(argv) == 1:
        print("\n".join(names()))
        return 0
    if argv[:1] == ["header"] and len(argv) == 2:
        try:
            sys.stdout.write(c_header(argv[1]))
        except KeyError as err:
            print(f"variants.py: {err.args[0]}", file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["core-patch"] and len(argv) == 2:
        print(core_patch(argv[1]) or "")
        return 0
    print("usage: variants.py names | header NAME | core-patch NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
