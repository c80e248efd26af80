"""The package's imports follow the data path, and its import graph has no cycles.

Every module of mininet/bbrlab is parsed with `ast` (nothing is imported), each
`import` / `from ... import` anywhere in it (top level or inside a function: a
lazy import is still a dependency) becomes an edge to the package module it
names, relative imports resolved against the module's package. `from . import
x` is an edge to the submodule x when there is one, else to the package
itself; `from .sub import name` is an edge to `sub` (its parent package's
__init__ runs too, but every submodule depends on its package that way and
that is no design cycle). A cycle fails the test, named module by module.

The four subpackages are the stages of the data path (spec -> testbed -> raw traces -> tidy
data) and may import only what lies before them:

    experiment  nothing of the others (the spec, and the testbed facts the others share:
                experiment/testbed.py)
    guest       experiment
    data        experiment (it reads files; it knows no backend and no guest module)
    host        experiment, data (the runner hands raw/ to data/), and guest only from
                host/backends/, where the host starts the guest program

The top-level modules (cli.py, __main__.py) may import any of them. An import across
packages that the table does not allow fails the test, named by file and line.
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


def import_sites(root: pathlib.Path, package: str = PACKAGE) -> list:
    """[(module, imported package module, path, line)] of every import of a package module."""
    modules = modules_of(root, package)
    sites = []
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
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
                    sites.append((name, target, path, node.lineno))
    return sites


def import_graph(root: pathlib.Path, package: str = PACKAGE) -> dict:
    """{module: set of package modules it imports}."""
    graph = {name: set() for name in modules_of(root, package)}
    for name, target, _path, _line in import_sites(root, package):
        graph[name].add(target)
    return graph


# What each subpackage may import of the others (module docstring); the top level may import all.
ALLOWED = {"experiment": set(), "guest": {"experiment"}, "data": {"experiment"},
           "host": {"experiment", "data", "guest"}}
GUEST_STARTERS = "host.backends"      # the only part of host/ that may import guest/


def subpackage(module: str, package: str = PACKAGE) -> str:
    """'host' for bbrlab.host.runner; '' for a top-level module (bbrlab.cli) or the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ALLOWED) else ""


def edge_allowed(module: str, target: str, package: str = PACKAGE) -> bool:
    """Whether `module` may import `target` (ALLOWED, GUEST_STARTERS)."""
    src, dst = subpackage(module, package), subpackage(target, package)
    if not src or not dst or src == dst:
        return True
    if dst not in ALLOWED.get(src, set()):
        return False
    if (src, dst) == ("host", "guest"):
        starter = f"{package}.{GUEST_STARTERS}"
        return module == starter or module.startswith(starter + ".")
    return True


def boundary_violations(root: pathlib.Path, package: str = PACKAGE) -> list:
    """'path:line: module imports target (a X module may not import Y)' for each import across
    subpackages that ALLOWED does not allow."""
    out = []
    for name, target, path, line in import_sites(root, package):
        if not edge_allowed(name, target, package):
            rel = path.relative_to(root)
            out.append(f"{rel}:{line}: {name} imports {target} (a {subpackage(name)}/ module may not import "
                       f"{subpackage(target)}/)")
    return out


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


def test_the_packages_import_only_along_the_data_path():
    graph = import_graph(PACKAGE_ROOT)
    assert {subpackage(m) for m in graph} == {"", "experiment", "guest", "data", "host"}
    violations = boundary_violations(PACKAGE_ROOT)
    assert not violations, "imports across package boundaries:\n" + "\n".join(violations)


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


def test_a_boundary_crossing_is_named_by_file_and_line(tmp_path):
    write(tmp_path, "bbrlab/__init__.py", "")
    write(tmp_path, "bbrlab/cli.py", "from .host import runner\nfrom .guest import driver\n")
    write(tmp_path, "bbrlab/experiment/__init__.py", "")
    write(tmp_path, "bbrlab/experiment/testbed.py", "")
    write(tmp_path, "bbrlab/host/__init__.py", "")
    write(tmp_path, "bbrlab/host/runner.py", "from ..data import tidy\nfrom ..experiment import testbed\n")
    write(tmp_path, "bbrlab/host/resources.py", "def f():\n    from ..guest import traffic\n")
    write(tmp_path, "bbrlab/host/backends/__init__.py", "")
    write(tmp_path, "bbrlab/host/backends/uml.py", "from ...guest import driver\n")
    write(tmp_path, "bbrlab/guest/__init__.py", "")
    write(tmp_path, "bbrlab/guest/driver.py", "import bbrlab.experiment.testbed\n")
    write(tmp_path, "bbrlab/guest/traffic.py", "from ..host import guest_programs\n")
    write(tmp_path, "bbrlab/host/guest_programs.py", "")
    write(tmp_path, "bbrlab/data/__init__.py", "")
    write(tmp_path, "bbrlab/data/tidy.py", "from .. import experiment\nfrom ..host.backends import uml\n")
    write(tmp_path, "bbrlab/experiment/spec.py", "from bbrlab.data import tidy\n")
    assert sorted(boundary_violations(tmp_path)) == [
        "bbrlab/data/tidy.py:2: bbrlab.data.tidy imports bbrlab.host.backends.uml (a data/ module may not import host/)",
        "bbrlab/experiment/spec.py:1: bbrlab.experiment.spec imports bbrlab.data.tidy"
        " (a experiment/ module may not import data/)",
        "bbrlab/guest/traffic.py:1: bbrlab.guest.traffic imports bbrlab.host.guest_programs"
        " (a guest/ module may not import host/)",
        "bbrlab/host/resources.py:2: bbrlab.host.resources imports bbrlab.guest.traffic"
        " (a host/ module may not import guest/)",
    ]


@pytest.mark.parametrize("rev", ["bed07b7"])
def test_the_boundary_check_fails_on_the_tree_before_the_packages_were_separated(tmp_path, rev):
    """The package as it was before experiment/testbed.py: guest imported host and data, data
    imported host and guest, experiment imported host."""
    if not checkout_package(tmp_path, rev):
        pytest.skip(f"revision {rev} not in this clone")
    found = "\n".join(boundary_violations(tmp_path))
    for crossing in ("bbrlab.guest.traffic imports bbrlab.host.guest_programs",
                     "bbrlab.guest.driver imports bbrlab.data.capture",
                     "bbrlab.data.fidelity imports bbrlab.host.backends",
                     "bbrlab.data.capture imports bbrlab.guest.shaping",
                     "bbrlab.experiment.spec imports bbrlab.host.resources"):
        assert crossing in found, crossing
    assert "bbrlab.host.backends.uml imports" not in found      # host/backends/ may import guest/


def checkout_package(tmp_path, rev) -> bool:
    """Write mininet/bbrlab at git revision `rev` under tmp_path; False when the clone lacks it."""
    import subprocess
    repo = pathlib.Path(__file__).resolve().parents[1]
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev, "mininet/bbrlab"],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        return False
    for rel in listing.stdout.split():
        if rel.endswith(".py"):
            text = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{rel}"], capture_output=True,
                                  text=True, check=True).stdout
            write(tmp_path, rel[len("mininet/"):], text)
    return True


@pytest.mark.parametrize("rev", ["e493193"])
def test_the_check_fails_on_the_tree_before_the_cycles_were_broken(tmp_path, rev):
    """The package at the revision before the cycles were broken had two of them."""
    if not checkout_package(tmp_path, rev):
        pytest.skip(f"revision {rev} not in this clone")
    cycle = find_cycle(import_graph(tmp_path))
    assert cycle is not None
