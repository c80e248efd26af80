"""Repetitions added to sweep points by the paper profile's rule (docs/paper-profile.md).

The table config/added_repetitions.csv has one row per point that a round of the rule gave
more seeds:

    profile      the profile whose runs it adds to (paper)
    experiment   a row of config/experiments.csv
    point        the sweep point's name (results/<profile>/runs/<experiment>/<point>/)
    repetitions  the point's repetitions after the round (3 more per round: 6, then 9)
    round        1 or 2
    claims       the marginal claims that marked the point, ";"-separated

    runs(path, profile)            a spec file's resolved runs with the added repetitions:
                                   what every planner (pipeline, CLI, estimates) expands
    added(profile)                 {experiment: {point: repetitions}}; TableError on a bad row
    next_round(claims_rows, profile, base)
                                   the rows one more round of the rule adds, from the claims
                                   tables' rows (analysis/claims.R's CSV: strength, verdict,
                                   points_read), each point with its own round number; a point
                                   that has had LAST_ROUND rounds is left out (exhausted())
    write(rows, profile)           append rows to the table (atomically)

A run keeps its key when its point gains repetitions (runkey.py leaves `repetitions` out), so
the points' earlier runs stay current in the results archive.
"""
from __future__ import annotations

import csv
import os
import pathlib

from . import spec

REPO = pathlib.Path(__file__).resolve().parents[3]
TABLE = "config/added_repetitions.csv"
COLUMNS = ("profile", "experiment", "point", "repetitions", "round", "claims")
STEP = 3            # seeds added to a marked point per round
LAST_ROUND = 2      # at most two rounds: no point gets more than base + 2 * STEP repetitions


class TableError(ValueError):
    """config/added_repetitions.csv is malformed; the message names the row and column."""


def _rows(root=REPO) -> list:
    path = pathlib.Path(root) / TABLE
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise TableError(f"{TABLE}: columns must be {','.join(COLUMNS)}, got {','.join(reader.fieldnames or [])}")
        rows = list(reader)
    for i, row in enumerate(rows, 2):
        for col in ("repetitions", "round"):
            if not row[col].isdigit() or int(row[col]) < 1:
                raise TableError(f"{TABLE} line {i}: {col} must be a positive integer, got {row[col]!r}")
    return rows


def added(profile, root=REPO) -> dict:
    """{experiment: {point: repetitions}} of a profile (the highest round's count per point)."""
    out = {}
    for row in _rows(root):
        if row["profile"] == profile:
            points = out.setdefault(row["experiment"], {})
            points[row["point"]] = max(points.get(row["point"], 0), int(row["repetitions"]))
    return out


def runs(path, profile=None, overrides=None, root=REPO, limits=None) -> list:
    """The resolved runs of a spec file in a profile, with the points' added repetitions.
    `limits`: spec.LIMITS raised or lowered (spec.load)."""
    loaded = spec.load(path, profile=profile, overrides=overrides, limits=limits)
    return spec.expand(loaded, added(profile, root).get(loaded["name"]) if profile else None, limits)


def next_round(claims_rows, profile, base_repetitions, root=REPO) -> list:
    """The table rows one more round adds: every point read by a marginal claim (verdict not
    'not run'), at its current repetitions + STEP, with its own round number (its earlier rounds
    + 1: each paper's claims run their rounds when that paper's runs are complete). A point that
    has had LAST_ROUND rounds is not marked again (exhausted() names them). `base_repetitions` is
    {experiment: the spec's repetitions in the profile}."""
    rounds = {}
    for r in _rows(root):
        if r["profile"] == profile:
            key = (r["experiment"], r["point"])
            rounds[key] = max(rounds.get(key, 0), int(r["round"]))
    current = added(profile, root)
    out = []
    for (e, p), ids in sorted(marked_points(claims_rows).items()):
        if rounds.get((e, p), 0) >= LAST_ROUND:
            continue
        out.append({"profile": profile, "experiment": e, "point": p,
                    "repetitions": current.get(e, {}).get(p, base_repetitions[e]) + STEP,
                    "round": rounds.get((e, p), 0) + 1, "claims": ";".join(sorted(set(ids)))})
    return out


def marked_points(claims_rows) -> dict:
    """{(experiment, point): [claim ids]}: the points the marginal claims (verdict not 'not run') read."""
    marks = {}
    for row in claims_rows:
        if row["strength"] != "marginal" or row["verdict"] == "not run":
            continue
        for item in filter(None, row["points_read"].split(";")):
            experiment, point = item.split("/", 1)
            marks.setdefault((experiment, point), []).append(row["id"])
    return marks


def exhausted(claims_rows, profile, root=REPO) -> list:
    """The points marked by marginal claims that have had LAST_ROUND rounds already."""
    rounds = {}
    for r in _rows(root):
        if r["profile"] == profile:
            key = (r["experiment"], r["point"])
            rounds[key] = max(rounds.get(key, 0), int(r["round"]))
    return sorted(k for k in marked_points(claims_rows) if rounds.get(k, 0) >= LAST_ROUND)


def write(rows, root=REPO) -> None:
    """Append rows to the table, atomically (a temporary file renamed over it)."""
    path = pathlib.Path(root) / TABLE
    old = _rows(root)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(old + list(rows))
    os.replace(tmp, path)
