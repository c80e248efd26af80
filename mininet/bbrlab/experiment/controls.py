"""The control runs of the shortened-transfer rule (docs/specs.md, "Transfer length").

A spec's paper profile may run a shorter transfer than the paper's only where control
runs show that the shorter one gives the same answer. The control points are data,
mininet/specs/utsumi2022/transfer_length_controls.csv (TABLE), one row per point:

    experiment   a row of config/experiments.csv
    point        a point selector: conditions "key=value" joined by "&" (as the claims
                 tables' selectors, analysis/lib/verdict.R), matched against the point's name
    why          why this point converges slowest (prose)

A control run is the paper profile's run of a control point at the spec's own top-level
`duration_s` (the paper's transfer, 6000 s for Utsumi & Hasegawa) whatever its paper profile
runs, seeds 1..SEEDS. Its resolved run spec is the paper-profile run's with only `duration_s`
set back, so while the spec runs the paper's length a control run *is* the paper-profile run
of that point (the same run key) and lives in the paper profile's archive, data/paper; when
the rule shortens the spec, the spec's control runs keep their keys and move to the controls
archive, ARCHIVE (`bbrlab archive move`), where they stay current. The pipeline runs a missing
control run into results/paper-controls/runs/ (rule control_run, workflow/rules/controls.smk).

    rows(root)                       the table's rows; ControlsError on a malformed row
    paper_length(path)               a spec file's own top-level duration_s (the paper's transfer)
    full_length_runs(path, profile)  a spec file's runs in a profile at the spec's own duration_s
    jobs(root)                       every control run, resolved: [(row, job)], table order
    point_matches(point, selector)   whether a sweep point's name matches a selector
"""
from __future__ import annotations

import csv
import operator
import pathlib
import re

from . import experiments, repetitions, yamltext

REPO = pathlib.Path(__file__).resolve().parents[3]
TABLE = "mininet/specs/utsumi2022/transfer_length_controls.csv"
COLUMNS = ("experiment", "point", "why")
PROFILE = "paper"           # the profile whose runs the controls are, at the paper's length
SEEDS = 3                   # repetitions 1..SEEDS of every control point
ARCHIVE = "data/paper-controls"
TREE = "results/paper-controls"

_CONDITION = re.compile(r"^([A-Za-z0-9_]+)\s*(<=|>=|!=|=|<|>)\s*([^<>=!]+)$")
_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


class ControlsError(ValueError):
    """The controls table is malformed or names what does not exist; the message says which row."""


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def point_matches(point: str, selector: str) -> bool:
    """Whether the point named `point` ("k=v__k=v", spec.expand's names) meets every condition of
    `selector` ("k=v&k>=v"; numbers compare as numbers; a key the point lacks fails)."""
    conditions = [c.strip() for c in re.split(r"__|&", selector)]
    values = dict(part.split("=", 1) for part in point.split("__") if "=" in part)
    for cond in conditions:
        m = _CONDITION.match(cond)
        if not m:
            raise ControlsError(f"point selector {selector!r}: {cond!r} is not a condition like buffer_bdp=128")
        key, op, want = m.group(1), m.group(2), m.group(3).strip()
        if key not in values:
            return False
        a, b = _number(values[key]), _number(want)
        if a is None or b is None:
            if op not in ("=", "!="):
                raise ControlsError(f"point selector {selector!r}: cannot order non-numbers ({cond})")
            a, b = values[key], want
        if not _OPS[op](a, b):
            return False
    return True


def rows(root=REPO) -> list:
    """The table's rows (dicts of COLUMNS), each naming an experiment of the experiments table."""
    path = pathlib.Path(root) / TABLE
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ControlsError(f"{TABLE}: columns must be {','.join(COLUMNS)}, got {','.join(reader.fieldnames or [])}")
        out = list(reader)
    known = experiments.load(root)[0]
    for i, row in enumerate(out, 2):
        if row["experiment"] not in known:
            raise ControlsError(f"{TABLE} line {i}: {row['experiment']!r} is not an experiment of {experiments.TABLE}")
    return out


def paper_length(path) -> float:
    """A spec file's own top-level duration_s: the paper's transfer, before any profile's."""
    path = pathlib.Path(path)
    raw = yamltext.safe_load(path.read_text()) if path.is_file() else None
    if not isinstance(raw, dict) or "duration_s" not in raw:
        raise ControlsError(f"{path}: no top-level duration_s, so no paper's length to control against")
    return raw["duration_s"]


def full_length_runs(path, profile=PROFILE, root=REPO) -> list:
    """A spec file's runs in `profile` with the spec's own top-level duration_s (the paper's
    transfer) in place of any the profile sets; everything else as the profile resolves it."""
    return repetitions.runs(path, profile=profile, overrides={"duration_s": paper_length(path)}, root=root)


def jobs(root=REPO) -> list:
    """[(row, job)] of every control run: each row's matching points of its experiment,
    repetitions 1..SEEDS, at the paper's length. A row matching no point is an error."""
    root = pathlib.Path(root)
    exps = experiments.load(root)[0]
    out = []
    for i, row in enumerate(rows(root), 2):
        runs = full_length_runs(root / exps[row["experiment"]].spec, root=root)
        matched = [j for j in runs if point_matches(j["point"], row["point"]) and int(j["repetition"]) <= SEEDS]
        if not matched:
            raise ControlsError(f"{TABLE} line {i}: {row['point']!r} matches no point of {row['experiment']} "
                                f"in the {PROFILE} profile")
        out += [(row, j) for j in matched]
    return out

