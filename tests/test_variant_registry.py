"""The variant registry (mininet/bbrlab/experiment/variants.yaml) is the only list of the variants.

A variant added to the registry reaches tidy.py (its flag in bit 0 of the bandwidth and what
the bandwidth holds while flagged), fidelity.py (its counters), the ns-3 backend (whether it
runs there), the R labels and the testbed's variant test (its generic exercise) with no other
edit; and no Python or R file of the tree keeps
a list of variant names of its own."""
import ast
import json
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

from bbrlab.experiment import labels, spec, variants
from bbrlab.data import fidelity, tidy
from bbrlab.host.backends import ns3_backend
from conftest import REPO

VARIANTS_R = REPO / "analysis" / "lib" / "variants.R"
# Searched for hand-kept lists: the code that reads the tidy data, runs and analyses.
# Not searched: tests (they name variants to test them), kernel/ (the patches are the
# variants), variants.yaml (the list itself).
CODE_DIRS = ("mininet", "analysis", "bench")
THROWAWAY = {
    "zz_flagged": {"label": "ZZ flagged", "ns3": True, "state_in_bw_bit0": True,
                   "flag_meaning": "a test state", "params": {},
                   "estimate_while_flagged": "a test rate in place of the bandwidth",
                   "counters": {"zz_failures": "connections run as plain BBR (test)"}},
    "zz_plain": {"label": "ZZ-plain", "state_in_bw_bit0": True, "flag_meaning": "another test state",
                 "params": {}},
}


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """A copy of the registry with two throw-away variants, in force for the test."""
    data = yaml.safe_load(variants.DATA.read_text())
    data["variants"].update(THROWAWAY)
    path = tmp_path / "variants.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setattr(variants, "DATA", path)
    return path


def test_throwaway_variant_reaches_tidy(registry):
    """Bit 0 is the flag; while flagged, a variant with estimate_while_flagged reports another
    rate (variant_estimate_mbps), one without keeps BBR's bandwidth."""
    bw = lambda v: {"bw_bytes_per_s": v, "pacing_gain": 1.0, "cwnd_gain": 2.0}
    assert tidy.bbr_bandwidth("zz_flagged", bw(2_500_001)) == {"variant_flag": 1, "variant_estimate_mbps": 20.0}
    assert tidy.bbr_bandwidth("zz_flagged", bw(2_500_000)) == {"variant_flag": 0, "bbr_bw_mbps": 20.0}
    assert tidy.bbr_bandwidth("zz_plain", bw(2_500_001)) == {"variant_flag": 1, "bbr_bw_mbps": 20.0}
    assert "variant_estimate_mbps" in tidy.TCP_COLUMNS


def test_throwaway_variant_reaches_fidelity(registry, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "modules.json").write_text(json.dumps([{"name": "zz_flagged", "parameters": {"zz_failures": "2"}}]))
    job = {"flows": [{"flow": 1, "cc": "zz_flagged"}, {"flow": 2, "cc": "zz_plain"}, {"flow": 3, "cc": "bbr"}]}
    (check,) = fidelity.variant_state_checks(raw, job)
    assert check["subject"] == "module zz_flagged" and check["measured"] == 2 and not check["ok"]
    assert check["unit"] == "connections run as plain BBR (test)"


def test_throwaway_variant_reaches_the_ns3_backend(registry):
    assert "zz_flagged" in ns3_backend.congestion_controls()
    assert "zz_plain" not in ns3_backend.congestion_controls()
    flows = [{"flow": 1, "cc": "zz_flagged", "rtt_ms": 10}, {"flow": 2, "cc": "zz_plain", "rtt_ms": 10}]
    job = spec.complete({"duration_s": 1, "flows": flows, "mtu_bytes": 1500,     # a resolved run's fields
                         "bottleneck": {"aqm": {"kind": "droptail"}, "rate_mbps": 10, "burst_bytes": None}})
    cc_refusals = [r for r in ns3_backend.refusals(job) if ".cc:" in r]
    assert len(cc_refusals) == 1 and cc_refusals[0].startswith("flows.2.cc: 'zz_plain'")


def r_eval(code: str) -> str:
    res = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, cwd=VARIANTS_R.parent)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")
def test_throwaway_variant_reaches_the_r_labels(registry):
    out = r_eval(f'source("variants.R", chdir = TRUE); '
                 f'cat(cc_label(c("zz_flagged", "zz_plain", "bbr", "nosuch"), path = "{registry}"), sep = "|")')
    assert out == "ZZ flagged|ZZ-plain|BBR|NOSUCH"


def test_throwaway_variant_reaches_the_point_labels(registry):
    assert labels.cc_name("zz_flagged") == "ZZ flagged" and labels.cc_name("nosuch") == "nosuch"


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")
def test_r_labels_are_the_registrys():
    """R reads the same file: every congestion control's label."""
    out = r_eval('source("variants.R", chdir = TRUE); l <- cc_labels(); '
                 'cat(paste(names(l), l, sep = "="), sep = "\\n")')
    assert dict(line.split("=", 1) for line in out.splitlines()) == {cc: variants.label(cc) for cc in variants.known()}


def test_registry_fields_are_checked(tmp_path, monkeypatch):
    """A wrong field stops the registry's first reader, naming the field."""
    data = yaml.safe_load(variants.DATA.read_text())
    data["variants"]["bbq"].pop("flag_meaning")
    path = tmp_path / "variants.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setattr(variants, "DATA", path)
    with pytest.raises(ValueError, match=r"variants\.bbq\.flag_meaning"):
        variants.state_in_bw_bit0("bbq")


def test_throwaway_variant_gets_the_generic_testbed_exercise(registry):
    """A variant with no `exercise` is run by tests/kernel/test_variant_modules_uml.py as its flow
    at 20 ms alone, a CUBIC flow from 5 s, for 16 s over a 2-MB buffer (variants.yaml's header)."""
    assert variants.exercise("zz_plain") == {
        "flows": [{"cc": "zz_plain", "rtt_ms": 20}, {"cc": "cubic", "rtt_ms": 20, "start_s": 5}],
        "duration_s": 16, "buffer_bytes": 2_000_000}
    assert variants.exercise("bbr_fca")["duration_s"] == 40 and variants.exercise("bbr2") == {"test": "test_bbr2_uml.py"}
    assert variants.exercise("bbq")["flows"][0]["module_params"] == {"beta_ppm": 500000}


@pytest.mark.parametrize("exercise, field", [
    ({"flows": [{"cc": "bbr", "rtt_ms": 20}]}, r"variants\.bbq\.exercise\.flows: .*first is the variant's \(cc: bbq\)"),
    ({"test": "test_bbr2_uml.py", "duration_s": 10}, r"variants\.bbq\.exercise\.test: alone"),
    ({"seconds": 10}, r"variants\.bbq\.exercise: unknown field 'seconds'"),
    ({"duration_s": 0}, r"variants\.bbq\.exercise\.duration_s: must be a positive integer"),
])
def test_a_wrong_exercise_is_named(tmp_path, monkeypatch, exercise, field):
    data = yaml.safe_load(variants.DATA.read_text())
    data["variants"]["bbq"]["exercise"] = exercise
    path = tmp_path / "variants.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setattr(variants, "DATA", path)
    with pytest.raises(ValueError, match=field):
        variants.names()


def test_ns3_variants_are_built_by_the_program():
    """Each congestion control variants.yaml marks ns3: true has a branch in dumbbell.cc."""
    program = (REPO / "mininet" / "bbrlab" / "host" / "backends" / "ns3" / "dumbbell.cc").read_text()
    for cc in variants.ns3():
        assert f'name == "{cc}"' in program, cc


# ---- no hand-kept lists -------------------------------------------------------------------

def python_lists(path: pathlib.Path, names: set) -> list:
    """(line, names) of each tuple, list, set or dict literal naming two or more variants
    (as string elements or dict keys)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        hit = {i.value for i in items if isinstance(i, ast.Constant) and i.value in names}
        if len(hit) >= 2:
            found.append((node.lineno, sorted(hit)))
    return found


COLOUR = re.compile(r'^"(#[0-9A-Fa-f]{6}|grey\d*|[a-z]+)"$')


def r_without_comments(text: str) -> str:
    """R source with its comments blanked (strings, with their escapes, kept)."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch == "#":
            j = text.find("\n", i)
            j = len(text) if j < 0 else j
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def r_calls(text: str):
    """(line, arguments) of each c(...) and list(...) call of R source `text`, arguments
    split at top-level commas."""
    code = r_without_comments(text)
    for m in re.finditer(r"\b(c|list)\(", code):
        depth, i, start, args = 1, m.end(), m.end(), []
        while i < len(code) and depth:
            ch = code[i]
            if ch in "\"'`":
                i += 1
                while i < len(code) and code[i] != ch:
                    i += 2 if code[i] == "\\" else 1
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "," and depth == 1:
                args.append(code[start:i].strip())
                start = i + 1
            i += 1
        args.append(code[start:i - 1].strip())
        yield code.count("\n", 0, m.start()) + 1, args


def r_lists(path: pathlib.Path, names: set) -> list:
    """(line, names) of each c()/list() naming two or more variants, by name or label, as
    element names or string elements. A palette (every value a colour) is a figure's choice
    of colours, not a list of the variants, and is not counted."""
    found = []
    for line, args in r_calls(path.read_text()):
        hit, values = set(), []
        for arg in args:
            key, eq, value = arg.partition("=")
            if eq and not value.startswith("="):
                key, value = key.strip().strip("`\"'"), value.strip()
                if key in names:
                    hit.add(key)
            else:
                value = arg
            values.append(value)
            if value.strip("\"'") in names and value[:1] in "\"'":
                hit.add(value.strip("\"'"))
        if len(hit) >= 2 and not all(COLOUR.match(v) for v in values if v):
            found.append((line, sorted(hit)))
    return found


def hand_lists(root: pathlib.Path) -> list:
    names = set(variants.names()) | {variants.label(v) for v in variants.names()}
    found = []
    for d in CODE_DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix == ".py":
                found += [(str(path.relative_to(root)), *h) for h in python_lists(path, names)]
            elif path.suffix == ".R":
                found += [(str(path.relative_to(root)), *h) for h in r_lists(path, names)]
    return found


def test_no_file_keeps_its_own_list_of_variants():
    """A list of two or more variant names (or labels) in the code is a second list of the
    variants: a variant added to the registry would be missing from it."""
    assert hand_lists(REPO) == []


@pytest.mark.parametrize("file, line", [
    ("mininet/bbrlab/data/tidy.py", 'FLAG_IN_BW_BIT0 = ("bbq", "bbr_fca")\n'),
    ("mininet/bbrlab/data/fidelity.py", 'X = {"bbr_fca": 1, "bbq": 2}\n'),
    ("analysis/lib/plot.R", 'CC_NAMES <- c(bbr = "BBR", bbq = "BBQ", bbq_drain = "BBQ_DRAIN")\n'),
    ("analysis/figures/yang2019/common.R", 'YANG <- c("BBQ", "Adaptive-BBR")\n'),
])
def test_the_search_finds_a_readded_list(tmp_path, file, line):
    """The search is not blind: each of these lines, put back into a copy of its file, is found."""
    for d in CODE_DIRS:
        shutil.copytree(REPO / d, tmp_path / d, ignore=shutil.ignore_patterns("__pycache__", "*.o", "build"))
    target = tmp_path / file
    target.write_text(target.read_text() + line)
    found = hand_lists(tmp_path)
    assert [f for f, *_ in found] == [file], found


def test_the_registry_runs_as_kernel_build_variants_sh_runs_it():
    """kernel/build-variants.sh runs variants.py as a script with the system python3 (not as part of
    the package): its names and a parameter header come out as the package reads them."""
    script = REPO / "mininet" / "bbrlab" / "experiment" / "variants.py"
    names = subprocess.run(["python3", str(script), "names"], capture_output=True, text=True, cwd="/")
    assert names.returncode == 0, names.stderr
    assert names.stdout.split() == variants.names()
    header = subprocess.run(["python3", str(script), "header", "bbr2"], capture_output=True, text=True, cwd="/")
    assert header.returncode == 0 and "RANGED_UINT_PARAM(" in header.stdout, header.stderr
