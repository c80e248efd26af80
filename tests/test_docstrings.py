"""Every public function, class and method of mininet/bbrlab states its contract.

Each module is parsed with `ast` (nothing is imported). Public means: a module-level
function or class, or a method of a public class, whose name does not start with `_`,
in a module whose own name does not start with a single `_` (`__init__` and `__main__`
count as public). Nested functions are implementation detail and not checked. The test
fails naming every public definition without a docstring, as `path:line qualified.name`.
"""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "mininet" / "bbrlab"
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def public(name: str) -> bool:
    return not name.startswith("_")


def undocumented_in(tree: ast.Module) -> list:
    """[(line, qualified name)] of the public definitions in `tree` without a docstring."""
    missing = []

    def visit(body, prefix):
        for node in body:
            if not isinstance(node, DEFS) or not public(node.name):
                continue
            name = prefix + node.name
            if not ast.get_docstring(node):
                missing.append((node.lineno, name))
            if isinstance(node, ast.ClassDef):
                visit(node.body, name + ".")          # methods and nested classes of a public class

    visit(tree.body, "")
    return missing


def undocumented(package: pathlib.Path = PACKAGE) -> list:
    """["path:line name"] for every public definition of the package without a docstring."""
    out = []
    for path in sorted(package.rglob("*.py")):
        stem = path.stem
        if stem.startswith("_") and not (stem.startswith("__") and stem.endswith("__")):
            continue                                  # a private module
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, name in undocumented_in(tree):
            out.append(f"{path.relative_to(package.parent)}:{line} {name}")
    return out


def test_the_checker_sees_what_it_should():
    tree = ast.parse(
        "def f():\n    pass\n"
        "def _g():\n    pass\n"
        "class C:\n    def m(self):\n        pass\n    def _p(self):\n        pass\n"
        "    def __init__(self):\n        pass\n"
        "class _D:\n    def m(self):\n        pass\n"
        "def h():\n    '''Contract.'''\n    def inner():\n        pass\n")
    assert [name for _, name in undocumented_in(tree)] == ["f", "C", "C.m"]


def test_every_public_definition_has_a_docstring():
    missing = undocumented()
    assert not missing, (f"{len(missing)} public functions, classes or methods of mininet/bbrlab have no "
                         "docstring (state the contract: what it takes, returns or writes, raises):\n  "
                         + "\n  ".join(missing))
