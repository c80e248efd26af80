"""The experiments table (config/experiments.csv) and the papers table (paper/papers.csv).

One row per experiment says where everything of it is; nothing is found by name:

    experiment  the spec's `name` and the run directory (results/<profile>/runs/<experiment>/)
    paper       the paper's key (a row of paper/papers.csv); empty for an experiment that
                belongs to no paper (the backend cross-check's; the report part on BBR's
                successors, whose rows keep their figure and section)
    items       the paper's figures and tables the experiment regenerates, "; "-separated
                ("Fig. 4; Table I"); empty when it regenerates none
    profiles    the pipeline profiles that run it, space-separated (quick, paper, crosscheck)
    spec        its spec file (mininet/specs/...)
    figure      its figure script (analysis/figures/...); required when `paper` is set
    section     the report part that shows it (paper/sections/<paper>.tex); required with `paper`

One row per paper in paper/papers.csv: key, citation, title, seed (its file in the papers'
folder) and claims (its claims file, claims/<key>.csv).

    load(root)                     (experiments {name: Experiment}, papers {key: Paper});
                                   TableError on a malformed table
    problems(root, exps, papers)   what stops the plan: a listed experiment whose spec, figure
                                   script, section or paper's claims file is missing, and a spec
                                   or figure script in the tree that no row lists
    of_profile(exps, profile)      the experiments a profile runs, in table order
    claims_experiments(path)       the experiments a claims file's rows name (experiment and
                                   ref_experiment columns)

A figure script is any .R file below analysis/figures/ except the papers' shared helpers,
named common.R.
"""
from __future__ import annotations

import csv
import dataclasses
import pathlib

from . import yamltext

TABLE = "config/experiments.csv"
PAPERS = "paper/papers.csv"
SPECS_DIR = "mininet/specs"
FIGURES_DIR = "analysis/figures"
HELPER_SCRIPTS = {"common.R"}
COLUMNS = ("experiment", "paper", "items", "profiles", "spec", "figure", "section")
PAPER_COLUMNS = ("key", "citation", "title", "seed", "claims")


class TableError(ValueError):
    """The experiments or papers table is malformed; the message names file, row and column."""


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One row of the experiments table (config/experiments.csv), as load() checked it: name, paper
    key ("" for none), items and profiles as tuples, and the spec, figure script and report section
    as paths relative to the tree's root (figure and section "" only when paper is "")."""
    name: str
    paper: str
    items: tuple
    profiles: tuple
    spec: str
    figure: str
    section: str


@dataclasses.dataclass(frozen=True)
class Paper:
    """One row of the papers table (paper/papers.csv): key, citation, title, seed (its file in the
    papers' folder) and claims (its claims file), as strings."""
    key: str
    citation: str
    title: str
    seed: str
    claims: str


def _rows(path: pathlib.Path, columns) -> list:
    if not path.is_file():
        raise TableError(f"{path}: no such file")
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise TableError(f"{path}: no column {', '.join(missing)} (columns: {', '.join(columns)})")
        return [(n, {k: (v or "").strip() for k, v in row.items()}) for n, row in enumerate(reader, start=2)]


def load(root=".") -> tuple:
    """Both tables of the tree at `root`: ({name: Experiment}, {key: Paper}), in file order."""
    root = pathlib.Path(root)
    papers = {}
    for line, row in _rows(root / PAPERS, PAPER_COLUMNS):
        if not row["key"]:
            raise TableError(f"{PAPERS} line {line}: empty key")
        if row["key"] in papers:
            raise TableError(f"{PAPERS} line {line}: paper {row['key']} listed twice")
        papers[row["key"]] = Paper(**{c: row[c] for c in PAPER_COLUMNS})
    experiments = {}
    for line, row in _rows(root / TABLE, COLUMNS):
        name = row["experiment"]
        where = f"{TABLE} line {line} ({name or 'no name'})"
        if not name:
            raise TableError(f"{where}: empty experiment name")
        if name in experiments:
            raise TableError(f"{where}: experiment listed twice")
        if row["paper"] and row["paper"] not in papers:
            raise TableError(f"{where}: paper {row['paper']!r} is not in {PAPERS} (papers: {', '.join(papers)})")
        for col in ("spec", "profiles") + (("figure", "section") if row["paper"] else ()):
            if not row[col]:
                raise TableError(f"{where}: empty column {col}")
        experiments[name] = Experiment(
            name=name, paper=row["paper"],
            items=tuple(i.strip() for i in row["items"].split(";") if i.strip()),
            profiles=tuple(row["profiles"].split()), spec=row["spec"], figure=row["figure"],
            section=row["section"])
    return experiments, papers


def of_profile(experiments: dict, profile: str) -> list:
    """The experiments whose profiles include `profile`, in table order; [] for a profile none lists."""
    return [e for e in experiments.values() if profile in e.profiles]


def claims_experiments(path) -> list:
    """The experiments named by a claims file's rows (experiment, ref_experiment), sorted."""
    with pathlib.Path(path).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return sorted({r.get(c) or "" for r in rows for c in ("experiment", "ref_experiment")} - {""})


def problems(root, experiments: dict, papers: dict) -> list:
    """What stops the plan, one sentence each naming the experiment and the file; [] when nothing."""
    root = pathlib.Path(root)
    out = []
    for e in experiments.values():
        for what, rel in (("spec", e.spec), ("figure script", e.figure), ("report section", e.section)):
            if rel and not (root / rel).is_file():
                out.append(f"experiment {e.name}: its {what} {rel} does not exist ({TABLE})")
        if e.paper and not (root / papers[e.paper].claims).is_file():
            out.append(f"experiment {e.name}: the claims file {papers[e.paper].claims} of paper {e.paper}"
                       f" does not exist ({PAPERS})")
        # The spec's `paper:` (for a reader of the spec) must name the row's paper by its key.
        if e.paper and (root / e.spec).is_file():
            said = (yamltext.safe_load((root / e.spec).read_text()) or {}).get("paper")
            if said is not None and str(said) != e.paper:
                out.append(f"experiment {e.name}: its spec {e.spec} says paper: {said}, but its row's paper"
                           f" is {e.paper} ({TABLE}; the keys: {PAPERS})")
    listed_specs = {e.spec for e in experiments.values()}
    listed_figures = {e.figure for e in experiments.values() if e.figure}
    for path in sorted((root / SPECS_DIR).rglob("*.yaml")):
        rel = path.relative_to(root).as_posix()
        if rel not in listed_specs:
            out.append(f"spec {rel} is not listed in {TABLE}: add a row for it (or remove the file)")
    for path in sorted((root / FIGURES_DIR).rglob("*.R")):
        rel = path.relative_to(root).as_posix()
        if path.name not in HELPER_SCRIPTS and rel not in listed_figures:
            out.append(f"figure script {rel} is not listed in {TABLE}: add it to its experiment's row"
                       " (or remove the file)")
    return out
