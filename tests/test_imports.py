"""The package's import graph has no cycles (issue 23).

Every module of mininet/bbrlab is parsed with `ast` (nothing is imported), each
`import` / `from ... import` anywhere in it (top level or inside a function: a
lazy import is still a dependency) becomes an edge to the package module it
names, relative imports resolved against the module's package. `from . import
x` is an edge to the submodule x when there is one, else to the package
itself; `from .sub import name` is an edge to `sub` (its parent package's
__init__ runs too, but every submodule depends on its package that way and
that is no design cycle). A cycle fails the test, named module by module.
"""
import ast
import pathlib

import pytest

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[1] / "mininet"
PACKAGE = "bbrlab"


def modules_of(root: pathlib.Path, package: str) -> dict:
    """{dotted module name: path} of every .py file of the package."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: pathlib.Path, package: str = PACKAGE) -> dict:
    """{module: set of package modules it imports}."""
    modules = modules_of(root, package)
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                targets = []
                for alias in node.names:
                    sub = f"{stem}.{alias.name}"
                    targets.append(sub if sub in modules else stem)
            else:
                continue
            for target in targets:
                # `import a.b.c` depends on the deepest package module it names
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def find_cycle(graph: dict):
    """One cycle as a list of modules [a, b, ..., a], or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE_ROOT)
    assert len(graph) > 20 and "bbrlab.host.runner" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_lazy_relative_cycle_is_found(tmp_path):
    """The shape of the former spec <-> labels cycle: a top-level import one way, an import
    inside a function the other way."""
    write(tmp_path, "bbrlab/__init__.py", "")
    write(tmp_path, "bbrlab/experiment/spec.py", "from . import labels, units\n")
    write(tmp_path, "bbrlab/experiment/units.py", "import os\n")
    write(tmp_path, "bbrlab/experiment/labels.py", "def f():\n    from . import spec as specmod\n")
    assert find_cycle(import_graph(tmp_path)) == ["bbrlab.experiment.labels", "bbrlab.experiment.spec", "bbrlab.experiment.labels"]


def test_a_cycle_through_a_subpackage_is_found(tmp_path):
    """The shape of the former runner -> backends -> native -> cleanup -> modules -> backends."""
    write(tmp_path, "bbrlab/__init__.py", "")
    write(tmp_path, "bbrlab/host/runner.py", "from . import backends\n")
    write(tmp_path, "bbrlab/host/backends/__init__.py", "def get():\n    from .native import N\n")
    write(tmp_path, "bbrlab/host/backends/native.py", "from .. import cleanup\n")
    write(tmp_path, "bbrlab/host/cleanup.py", "import bbrlab.host.modules\n")
    write(tmp_path, "bbrlab/host/modules.py", "from .backends import BackendError\n")
    cycle = find_cycle(import_graph(tmp_path))
    assert cycle is not None and set(cycle) == {"bbrlab.host.backends", "bbrlab.host.backends.native", "bbrlab.host.cleanup",
                                                "bbrlab.host.modules"}


def test_no_cycle_in_an_acyclic_tree(tmp_path):
    write(tmp_path, "bbrlab/__init__.py", "")
    write(tmp_path, "bbrlab/host/backends/__init__.py", "from .base import Backend\n")
    write(tmp_path, "bbrlab/host/backends/base.py", "from .errors import E\nfrom .. import units\n")
    write(tmp_path, "bbrlab/host/backends/errors.py", "")
    write(tmp_path, "bbrlab/experiment/units.py", "")
    assert find_cycle(import_graph(tmp_path)) is None


@pytest.mark.parametrize("rev", ["e493193"])
def test_the_check_fails_on_the_tree_before_the_cycles_were_broken(tmp_path, rev):
    """Today's package at the revision before this change had the two cycles of issue 23."""
    import subprocess
    repo = pathlib.Path(__file__).resolve().parents[1]
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev, "mininet/bbrlab"],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        pytest.skip(f"revision {rev} not in this clone")
    for rel in listing.stdout.split():
        if rel.endswith(".py"):
            text = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{rel}"], capture_output=True,
                                  text=True, check=True).stdout
            write(tmp_path, rel[len("mininet/"):], text)
    cycle = find_cycle(import_graph(tmp_path))
    assert cycle is not None
