"""The content key of one resolved run: what the pipeline reruns a run for.

    run_key(job) -> str    sha256 (hex) of the canonical JSON of the run's semantic fields

`job` is one resolved run spec as spec.expand() returns it (one point, one repetition,
defaults filled in). Two jobs with the same key run the same experiment: the pipeline
(workflow/rules/runs.smk) names a stamp file after the key and makes the run depend on it,
so a changed resolved run reruns that run and nothing else, and an edit that leaves every
resolved run as it was (a comment, a description, another point's parameters) reruns none.

Top-level fields left out, because they document a run and change nothing a
flow sees or the analysis reads from the run's data:

    description   the spec's prose
    items         the paper's items the spec is for (the experiments table says it too)
    figure        the name `items` had until 2026-11-28: the specs that runs archived before
                  then recorded in their run.json carry it, and `bbrlab archive verify` keys them
    paper         the paper's key (the experiments table names the paper)
    point_label   the sweep point's human label (the report reads it from point_labels.csv;
                  relabelling a point is not a new run)
    run_key       spec.resolve_run's own digest of the whole job, which includes the above
    repetitions   how many runs the point has: a run is its point, its repetition index and
                  its seed (all keyed), so that adding seeds to a point (more repetitions)
                  keeps the runs it already has current

and three fields the runner adds when it runs the job (runner.execute), so that the key it
records in run.json ("run_key") is the pipeline's:

    backend       the results tree's (each backend has its own tree)
    modules       the variant modules loaded (the run's rule depends on their files)
    guest         how the guest treats its kernel (Backend.guest_options: follows from backend)

Comments in a spec file never reach the job. Everything else enters the key, including the
profile, the seed, every flow's label (the analysis prints it) and the fidelity limits.
"""
from __future__ import annotations

import hashlib
import json
import pathlib
import re

from . import spec, variants

EXCLUDED = frozenset({"description", "items", "figure", "paper", "point_label", "run_key", "repetitions",
                      "backend", "modules", "guest"})


def semantic(job: dict) -> dict:
    """The job without the excluded top-level fields, and without the defaults filled in after
    run keys were in use where they hold their default (spec.without_unkeyed_defaults), so
    those defaults left every run's key as it was."""
    return {k: v for k, v in spec.without_unkeyed_defaults(job).items() if k not in EXCLUDED}


def run_key(job: dict) -> str:
    """The run's content key: 64 hex digits, the same for equal semantic fields in any order."""
    text = json.dumps(semantic(job), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


# ---- the source of the variant modules a run loads ----

VARIANTS_DIR = pathlib.Path(__file__).resolve().parents[3] / "kernel" / "variants"
_INCLUDE = re.compile(r'^\+\s*#\s*include\s+"([\w.-]+\.h)"', re.M)


def variant_headers(variant: str, variants_dir=VARIANTS_DIR) -> list:
    """The kernel/variants/*.h files a variant's patch includes (its generated <variant>_params.h
    is not one: it comes from the registry entry), sorted; [] when the patch is missing."""
    variants_dir = pathlib.Path(variants_dir)
    patch = variants_dir / f"{variant}.patch"
    if not patch.is_file():
        return []
    return sorted({variants_dir / n for n in _INCLUDE.findall(patch.read_text()) if (variants_dir / n).is_file()})


_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_HUNK_HEADER = re.compile(r"^@@ [^\n]*$", re.M)


def code_only(text: str) -> str:
    """C source or a patch of it without what cannot change the compiled module: comments, hunk
    headers (their line numbers move with comment lines), blank lines and runs of white space.
    A comment spanning patch lines takes their '+' prefixes with it, on every side alike."""
    text = _HUNK_HEADER.sub("", _C_COMMENT.sub(" ", text))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line.strip("+- "))


def module_source_key(variant: str, variants_dir=VARIANTS_DIR) -> str:
    """sha256 (hex) of what a variant module is built from in this repository: its patch, the
    headers the patch includes and its parameters in the registry, each as code_only() reads it,
    so that a comment-only edit (a corrected explanation) leaves archived runs current. (The
    kernel's own tcp_bbr.c it patches comes with the testbed kernel, recorded separately in
    run.json's testbed.)"""
    variants_dir = pathlib.Path(variants_dir)
    h = hashlib.sha256()
    for path in [variants_dir / f"{variant}.patch", *variant_headers(variant, variants_dir)]:
        h.update(path.name.encode() + b"\0" + code_only(path.read_text()).encode() + b"\0")
    h.update(json.dumps(variants.parameters(variant), sort_keys=True).encode())
    return h.hexdigest()


def modules_key(job: dict, variants_dir=VARIANTS_DIR) -> str:
    """One digest of the sources of every variant module the run loads ("" when it loads none):
    with run_key, what makes an archived run current (bbrlab/data/archive.py)."""
    names = variants.used_by([job])
    if not names:
        return ""
    text = ";".join(f"{n}={module_source_key(n, variants_dir)}" for n in names)
    return hashlib.sha256(text.encode()).hexdigest()
