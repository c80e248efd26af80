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
    figure        the paper's item the spec is for (the experiments table says it too)
    paper         the paper's seed-file name (the experiments table names the paper)
    point_label   the sweep point's human label (the report reads it from point_labels.csv;
                  relabelling a point is not a new run)
    run_key       spec.resolve_run's own digest of the whole job, which includes the above

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

from . import spec

EXCLUDED = frozenset({"description", "figure", "paper", "point_label", "run_key", "backend", "modules", "guest"})


def semantic(job: dict) -> dict:
    """The job without the excluded top-level fields, and without the defaults filled in after
    run keys were in use where they hold their default (spec.without_unkeyed_defaults), so
    those defaults left every run's key as it was."""
    return {k: v for k, v in spec.without_unkeyed_defaults(job).items() if k not in EXCLUDED}


def run_key(job: dict) -> str:
    """The run's content key: 64 hex digits, the same for equal semantic fields in any order."""
    text = json.dumps(semantic(job), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
