"""One reading per word: every claims row whose quoted sentence uses words of the
lexicon (claims/README.md, between the lexicon markers) names every entry whose words
it uses, and reads each as that entry does (metric, kind, op, value, aggregate,
window) unless its `departure` column says why not (an entry the row does not name is
named in its departure).

Pure Python (no R): the lexicon table and the claims CSVs are read as text."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "claims" / "README.md"
CLAIM_FILES = sorted((REPO / "claims").glob("*.csv"))

SHARE_METRICS = {"ss_share_pct", "ss_capacity_share_pct", "ss_share_rtt_pct",
                 "ss_capacity_share_rtt_pct", "win_share_pct", "ss_queue_share_pct",
                 "probe_rtt_queue_share_pct", "probe_rtt_end_queue_share_pct",
                 "probe_rtt_after_share_pct"}
# A sentence that names a time or a phase of the run (then its window is "named").
NAMES_A_TIME = re.compile(r"\d+(\.\d+)?\s*(-?ms\b)?\s*(s|sec|seconds)\b|second|after the|before|"
                          r"during|from \d|at \d|later period|initial|probertt|ramps? up|"
                          r"each cycle|every cycle|start of|eventually|join|quits|drop",
                          re.IGNORECASE)
FIELDS = ("metric", "kind", "op", "value", "aggregate", "window")


def split_row(line: str) -> list[str]:
    """Cells of a markdown table row; `\\|` is a literal bar."""
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def read_lexicon(text: str) -> dict[str, dict[str, str]]:
    body = text.split("<!-- lexicon:begin -->", 1)[1].split("<!-- lexicon:end -->", 1)[0]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    header = split_row(lines[0])
    entries = {}
    for ln in lines[2:]:
        cells = dict(zip(header, split_row(ln)))
        cells["words"] = cells["words"].strip("`")
        entries[cells["entry"]] = cells
    return entries


def allowed(spec: str) -> set[str] | None:
    """None = anything; else the allowed values ("-" = empty, "share" = the share metrics)."""
    if spec == "*":
        return None
    out: set[str] = set()
    for v in spec.split("|"):
        v = v.strip()
        out |= SHARE_METRICS if v == "share" else {"" if v == "-" else v}
    return out


def disagreements(row: dict, entry: dict) -> list[str]:
    """The fields in which `row` reads the word otherwise than `entry`."""
    bad = []
    kind = row["kind"] or "exact"
    for field in FIELDS:
        spec = entry[field]
        got = kind if field == "kind" else row.get(field, "")
        if field == "window":
            ok = {"*": True,
                  "steady": got == "" or bool(NAMES_A_TIME.search(row["text"]))
                  or (got == "0..end" and row.get("min_duration_s", "") != ""),
                  "named": got != "",
                  "steady|named": got == "" or got != ""}.get(spec, got in (allowed(spec) or {got}))
            if spec == "steady|named" and got == "0..end" and not row.get("min_duration_s") \
                    and not NAMES_A_TIME.search(row["text"]):
                ok = False
        elif field == "value":
            ok = spec == "*" or (got != "" and float(got) == float(spec))
        else:
            values = allowed(spec)
            ok = values is None or got in values
        if not ok:
            bad.append(f"{field} {got!r} (entry: {spec})")
    return bad


def lexicon_problems(rows: list[dict], entries: dict) -> list[str]:
    problems = []
    for row in rows:
        matched = {name for name, e in entries.items()
                   if re.search(e["words"], row["text"], re.IGNORECASE)}
        named = [n for n in row.get("lexicon", "").split("+") if n]
        if matched and not named:
            problems.append(f"{row['id']}: the text uses {sorted(matched)} but lexicon is empty")
        departure = row.get("departure", "")
        for m in sorted(matched - set(named)):
            # every word of the text is read by its entry, or the departure says why not
            if named and not re.search(rf"\b{re.escape(m)}\b", departure):
                problems.append(f"{row['id']}: the text also uses {m!r}: name it in lexicon, "
                                f"or say in departure (naming {m!r}) why the row does not follow it")
        for n in named:
            if n not in entries:
                problems.append(f"{row['id']}: no lexicon entry {n!r}")
            elif n not in matched:
                problems.append(f"{row['id']}: names {n!r}, whose words its text does not use")
            elif not row.get("departure"):
                bad = disagreements(row, entries[n])
                if bad:
                    problems.append(f"{row['id']}: reads {n!r} otherwise without a departure: "
                                    + "; ".join(bad))
    return problems


@pytest.fixture(scope="module")
def entries():
    return read_lexicon(README.read_text())


def claims_of(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_lexicon_table_is_complete(entries):
    for word in ("fair", "almost-fair", "dominates", "suppressed", "starves", "around",
                 "at-least", "up-to", "similar", "improves", "converges-at", "quickly",
                 "gradually", "always", "percent-of-bandwidth", "significantly", "slightly"):
        assert word in entries
    for e in entries.values():
        re.compile(e["words"])
        assert e["reading and reason"], e["entry"]


@pytest.mark.parametrize("path", CLAIM_FILES, ids=lambda p: p.stem)
def test_every_row_follows_its_lexicon_entry(path, entries):
    rows = claims_of(path)
    assert rows and "lexicon" in rows[0] and "departure" in rows[0], f"{path.name}: no lexicon columns"
    problems = lexicon_problems(rows, entries)
    assert not problems, "\n".join(problems)


FAIR_ROW = dict(id="m", text="Two flows shared the bandwidth fairly.", metric="ss_jain", kind="bound",
                op=">=", value="0.95", aggregate="", window="", lexicon="fair", departure="",
                min_duration_s="")


@pytest.mark.parametrize("change, fails", [
    ({}, False),
    (dict(metric="ss_share_pct", op=">=", value="40", args="flow = 1"), True),   # "fair" as >= 40 %
    (dict(lexicon=""), True),                                                   # word, no entry
    (dict(value="0.9"), True),
    (dict(metric="ss_share_pct", value="50", kind="", op="", departure="the paper reads a share"), False),
    (dict(lexicon="starves"), True),                                            # entry the text does not use
    (dict(text="Two flows shared the bandwidth fairly, above 0.95."), True),    # also "bound", unnamed
    (dict(text="Two flows shared the bandwidth fairly, above 0.95.", lexicon="fair+bound"), False),
    (dict(text="Two flows shared the bandwidth fairly, above 0.95.",
          departure="bound: the number is the lexicon's own"), False),
])
def test_lexicon_check_catches_other_readings(entries, change, fails):
    assert bool(lexicon_problems([{**FAIR_ROW, **change}], entries)) == fails
