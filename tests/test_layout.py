"""The package's folders follow the data path: experiment -> host -> guest -> data.

mininet/bbrlab/ holds only the command line and four subpackages, each with a docstring that
says what it holds; the guest is started as `python3 -m bbrlab.guest RUN_DIR` and that module
runs the driver."""
import ast
import pathlib
import subprocess
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "mininet" / "bbrlab"
SUBPACKAGES = ("experiment", "host", "guest", "data")
TOP = {"__init__.py", "__main__.py", "cli.py", *SUBPACKAGES}


def test_the_top_holds_only_the_command_line_and_the_four_steps():
    names = {p.name for p in PACKAGE.iterdir() if not p.name.startswith((".", "__pycache__"))
             and not (p.is_dir() and all(q.name == "__pycache__" for q in p.iterdir()))}   # a switched branch's
    assert names - TOP == set(), (f"mininet/bbrlab/ should hold only {sorted(TOP)}; move "
                                  f"{sorted(names - TOP)} into the subpackage of its step")
    assert set(SUBPACKAGES) <= names


def test_each_subpackage_says_what_it_holds_and_imports_nothing():
    for sub in SUBPACKAGES:
        tree = ast.parse((PACKAGE / sub / "__init__.py").read_text())
        doc = ast.get_docstring(tree)
        assert doc and "data path" in doc, f"{sub}/__init__.py: no docstring placing it on the data path"
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert not imports, f"{sub}/__init__.py imports (importing one step must not load the others)"


def test_the_guest_entry_runs_the_driver():
    res = subprocess.run([sys.executable, "-m", "bbrlab.guest", "/nonexistent-run-dir"], capture_output=True,
                         text=True, cwd=PACKAGE.parent, env={"PYTHONPATH": str(PACKAGE.parent)})
    assert res.returncode != 0
    assert "driver.py" in res.stderr and "/nonexistent-run-dir/job.json" in res.stderr, res.stderr
