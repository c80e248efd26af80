"""Human labels of sweep points ("BBQ, 20 vs 50 ms", "10 Mbit/s", "RED max 0.33 MB, p 2 %").

A sweep point's name (spec._point_name) is directory-safe and unambiguous but
hard to read: `f1_cc=bbq__f2_cc=bbq__f1_rtt_ms=20__f2_rtt_ms=50`. Its label is
written for people (figure captions, the report's tables) and is generated
from the same sweep assignment at expand time (spec.expand; spec.labels_of
gives a whole spec's):

    point_label(assignment, point_spec)   one point's label

`assignment` is the point's {dotted path: value}, zipped keys already split
into their paths, in sweep order; `point_spec` is the spec with the
assignment applied, which gives the context of a swept field (the other
flows' RTTs for an RTT sweep, the RTT of a counted flow entry). Parts are
joined with ", " in the order their fields first appear in the sweep; a
point without a sweep is labelled "base", like its name.

A spec may override any point's label with `point_labels: {<point name>: <label>}`
(spec.py checks that each name is a point of the spec in some profile).
"""
import re

from . import variants

FLOW_FIELD = re.compile(r"^flows\.(\d+)\.(\w+)(?:\.(\w+))?$")
AQM_FIELDS = ("kind", "min_bytes", "max_bytes", "probability", "ecn")


def num(x) -> str:
    """A number without float noise or trailing zeros: 0.33, 2, 1.25."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    return f"{float(x):.6g}"


def cc_name(cc) -> str:
    """The congestion control's name as the papers write it (its label in variants.yaml)."""
    return variants.label(cc)


def rate_text(mbps) -> str:
    """A rate given in Mbit/s as text: whole Gbit/s as "1 Gbit/s", everything else as "10 Mbit/s"."""
    if mbps >= 1000 and float(mbps) % 1000 == 0:
        return f"{num(mbps / 1000)} Gbit/s"
    return f"{num(mbps)} Mbit/s"


def bytes_text(n) -> str:
    """A byte count as text: "1.5 MB" from 100 000 bytes up, "64 kB" from 1000, else "500 B" (decimal
    units)."""
    if n >= 100_000:
        return f"{num(n / 1e6)} MB"
    if n >= 1000:
        return f"{num(n / 1e3)} kB"
    return f"{num(n)} B"


def param_text(name: str, value) -> str:
    """A variant module parameter by its unit suffix: alpha_pct 150 -> "alpha 1.5"."""
    units = [("_pct", lambda v: num(v / 100)),            # a factor given in percent
             ("_ppm", lambda v: f"{num(v / 1e4)} %"),
             ("_us", lambda v: f"{num(v / 1e3)} ms" if v >= 1000 else f"{num(v)} us"),
             ("_ms", lambda v: f"{num(v)} ms"),
             ("_sec", lambda v: f"{num(v)} s"),
             ("_pkts", lambda v: f"{num(v)} pkts")]
    for suffix, fmt in units:
        if name.endswith(suffix) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"{name[:-len(suffix)].replace('_', ' ')} {fmt(value)}"
    return f"{name.replace('_', ' ')} {num(value)}"


def params_text(params) -> str:
    """A flow's module_params as text, "alpha 1.5, gain 2" (param_text of each, sorted by name); a
    value that is not a mapping is written as num() writes it."""
    if not isinstance(params, dict):
        return num(params)
    return ", ".join(param_text(k, v) for k, v in sorted(params.items()))


def _same_or_vs(values: list) -> str:
    """One text when all flows agree, else "a vs b" in flow order."""
    values = [v for v in values if v]
    if not values:
        return ""
    return values[0] if len(set(values)) == 1 else " vs ".join(values)


def _flow_entries(point_spec) -> list:
    return list((point_spec or {}).get("flows") or [])


# Each kind of swept field: which paths it covers, and how it is written.
def _kind(path: str) -> str:
    m = FLOW_FIELD.match(path)
    if m:
        field = m.group(2)
        if field in ("cc", "rtt_ms", "count", "module_params"):
            return field
        return path
    if path.startswith("bottleneck.aqm"):
        return "aqm"
    if path in ("bottleneck.buffer_bytes", "bottleneck.buffer_pkts", "bottleneck.buffer_bdp"):
        return "buffer"
    return path


def _flow_values(assignment: dict, field: str) -> dict:
    """{flow entry index (1-based): value} of the assignment's flows.<i>.<field>."""
    out = {}
    for path, value in assignment.items():
        m = FLOW_FIELD.match(path)
        if m and m.group(2) == field:
            i = int(m.group(1))
            if m.group(3):      # flows.<i>.module_params.<name>
                out.setdefault(i, {})[m.group(3)] = value
            else:
                out[i] = value
    return dict(sorted(out.items()))


def _cc_text(assignment, point_spec) -> str:
    return _same_or_vs([cc_name(v) for v in _flow_values(assignment, "cc").values()])


def _params_text(assignment, point_spec) -> str:
    """The swept flows' module_params as text; a flow's that equal a registry preset of its
    congestion control (variants.preset_name) by the preset's name."""
    flows = _flow_entries(point_spec)
    ccs = _flow_values(assignment, "cc")
    texts = []
    for i, params in _flow_values(assignment, "module_params").items():
        cc = ccs.get(i) or (flows[i - 1].get("cc") if flows and i <= len(flows) else None)
        texts.append(variants.preset_name(cc, params) or params_text(params))
    return _same_or_vs(texts)


def _rtt_text(assignment, point_spec) -> str:
    swept = _flow_values(assignment, "rtt_ms")
    flows = _flow_entries(point_spec)
    if flows and all(i <= len(flows) for i in swept):
        rtts = [swept.get(i, f.get("rtt_ms")) for i, f in enumerate(flows, 1)]
    else:
        rtts = list(swept.values())
    if len(rtts) > 1 and len(set(rtts)) == 1:
        return f"{num(rtts[0])} ms"
    return " vs ".join(num(r) for r in rtts) + " ms"


def _count_text(assignment, point_spec) -> str:
    flows = _flow_entries(point_spec)
    counts = _flow_values(assignment, "count")
    if _flow_values(assignment, "rtt_ms"):
        # the RTTs have a part of their own ("40 vs 40 ms"): counts in flow order, "2 vs 3 flows"
        noun = "flow" if list(counts.values()) == [1] else "flows"
        return " vs ".join(num(n) for n in counts.values()) + f" {noun}"
    parts = []
    for i, n in counts.items():
        noun = "flow" if n == 1 else "flows"
        if i <= len(flows) and "rtt_ms" in flows[i - 1]:
            parts.append(f"{num(n)} {noun} of {num(flows[i - 1]['rtt_ms'])} ms")
        else:
            parts.append(f"{num(n)} {noun}")
    return ", ".join(parts)


def _aqm_text(assignment, point_spec) -> str:
    aqm = {}
    for path, value in assignment.items():
        if path == "bottleneck.aqm" and isinstance(value, dict):
            aqm.update(value)
        elif path.startswith("bottleneck.aqm."):
            aqm[path.split(".", 2)[2]] = value
    kind = aqm.get("kind") or (point_spec or {}).get("bottleneck", {}).get("aqm", {}).get("kind", "red")
    if kind == "droptail":
        return "drop-tail"
    parts = []
    if "min_bytes" in aqm:
        parts.append(f"min {bytes_text(aqm['min_bytes'])}")
    if "max_bytes" in aqm:
        parts.append(f"max {bytes_text(aqm['max_bytes'])}")
    if "probability" in aqm:
        parts.append(f"p {num(100 * aqm['probability'])} %")
    if "ecn" in aqm:
        parts.append("ECN" if aqm["ecn"] else "no ECN")
    return "RED" + (" " + ", ".join(parts) if parts else "")


def _buffer_text(assignment, point_spec) -> str:
    for path, value in assignment.items():
        if path == "bottleneck.buffer_bytes":
            return f"buffer {bytes_text(value)}"
        if path == "bottleneck.buffer_pkts":
            return f"buffer {num(value)} pkts"
        if path == "bottleneck.buffer_bdp":
            return f"buffer {num(value)} BDP"
    return ""


def _generic_text(path, value) -> str:
    """Any other field: its short path and value ("rate 10 Mbit/s", "f2 start 5 s")."""
    if path == "bottleneck.rate_mbps":
        return rate_text(value)
    if path == "clock":
        return f"{value} clock"
    short = path.replace("bottleneck.", "").replace("flows.", "f")
    for suffix, unit in (("_ms", " ms"), ("_s", " s"), ("_mbps", " Mbit/s"), ("_bytes", " B"), ("_pkts", " pkts")):
        if short.endswith(suffix):
            return f"{short[:-len(suffix)].replace('_', ' ').replace('.', ' ')} {num(value)}{unit}"
    return f"{short.replace('_', ' ').replace('.', ' ')} {params_text(value)}"


RENDER = {"cc": _cc_text, "module_params": _params_text, "rtt_ms": _rtt_text,
          "count": _count_text, "aqm": _aqm_text, "buffer": _buffer_text}


def point_label(assignment: dict, point_spec: dict = None) -> str:
    """The label of one sweep point (see the module docstring)."""
    if not assignment:
        return "base"
    parts, seen = [], set()
    for path, value in assignment.items():
        kind = _kind(path)
        if kind in seen:
            continue
        seen.add(kind)
        text = RENDER[kind](assignment, point_spec) if kind in RENDER else _generic_text(path, value)
        if text:
            parts.append(text)
    return ", ".join(parts) or "base"

