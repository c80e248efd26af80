"""The kernel modules a run loads (host side: builds or finds them).

The testbed kernel has reno, cubic and bbr built in (kernel/uml.config).
Every other congestion control is a BBR variant, kernel/variants/<name>.patch,
built by kernel/build-variants.sh into a loadable module; its module
parameters are global, so every flow of a run that uses it shares one set
(spec.py rejects specs whose flows disagree). Names, parameters and ranges
are listed once, in variants.yaml (variants.py); the functions below that
only name them are kept for the callers of this module.

    known()               congestion controls a spec may name (variants.known)
    parameters(variant)   the module parameters a variant accepts, by name
    needed(jobs)          the variants some runs use
    for_job(job, backend) job["modules"] for the guest (Backend.modules): built (uml)
                          or found (native) .ko files with their parameters
    describe(modules)     name, params and sha256 of each .ko, for run.json
"""
import os
import pathlib
import subprocess

from ..experiment import variants as registry
from . import digests
from .backends.errors import BackendError

REPO = pathlib.Path(__file__).resolve().parents[3]
VARIANTS_DIR = REPO / "kernel" / "variants"
BUILD_SCRIPT = REPO / "kernel" / "build-variants.sh"
MODULES_DIR = REPO / "build" / "modules"


class ModuleError(BackendError):
    """A variant module cannot be built or found for this backend; the message says how to fix it."""


def variants() -> list:
    """The variants' names (the registry's names(), sorted)."""
    return registry.names()


def known() -> list:
    """Every congestion control a spec may name (the registry's known())."""
    return registry.known()


def parameters(variant: str) -> list:
    """Names of the variant's module parameters (variants.yaml)."""
    return list(registry.parameters(variant))


def needed(jobs) -> list:
    """Variants (not built-in congestion controls) used by any flow of these runs."""
    return registry.used_by(jobs)


def params_of(job: dict, variant: str) -> dict:
    """The (validated, hence shared) module parameters of a variant in a run."""
    return next(f["module_params"] for f in job["flows"] if f["cc"] == variant)


def native_dir() -> pathlib.Path:
    """Where modules built for this host's running kernel are: build/modules/<uname release>/."""
    return MODULES_DIR / os.uname().release


def kernel_tree(kernel=None):
    """The kernel/build-uml.sh output directory of a UML kernel binary (its parent, which
    holds src/), or None for the default testbed kernel (build/kernel, modules in build/modules).
    Modules for another kernel tree are built against its src/ into its modules/."""
    if kernel is None:
        return None
    tree = pathlib.Path(kernel).resolve().parent
    if tree == (REPO / "build" / "kernel").resolve() or not (tree / "src").is_dir():
        return None
    return tree


def check_core_patches(names: list, tree=None):
    """Refuse variants whose module needs a kernel patch (variants.yaml core_patch) that the
    testbed kernel tree was not built with (build-uml.sh keeps its patches in src.patches/)."""
    tree = tree or REPO / "build" / "kernel"
    for n in names:
        patch = registry.core_patch(n)
        if patch and not (tree / "src.patches" / f"{patch}.patch").is_file():
            raise ModuleError(
                f"{n} needs the testbed kernel patch kernel/patches/{patch}.patch, which the kernel in "
                f"{tree} was not built with: rebuild it with kernel/build-uml.sh {tree}")


def build(names: list, tree=None) -> pathlib.Path:
    """Build (or find up to date) the testbed modules; returns their directory."""
    check_core_patches(names, tree)
    args = ["--kdir", str(tree / "src"), "--out", str(tree / "modules")] if tree else []
    res = subprocess.run([str(BUILD_SCRIPT), *args, *names], capture_output=True, text=True)
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-30:])
        raise ModuleError(f"cannot build the variant module(s) {', '.join(names)} for the testbed:\n{tail}")
    return tree / "modules" if tree else MODULES_DIR


def find_native(names: list) -> pathlib.Path:
    """The modules built for this host's kernel; says how to build the missing ones."""
    directory = native_dir()
    missing = [n for n in names if not (directory / f"{n}.ko").is_file()]
    if missing:
        raise ModuleError(
            f"variant module(s) {', '.join(missing)} not built for this kernel ({directory} lacks them); build with:\n"
            f"  kernel/build-variants.sh --kdir /lib/modules/$(uname -r)/build --src TCP_BBR_C {' '.join(names)}\n"
            "where TCP_BBR_C is net/ipv4/tcp_bbr.c of the same kernel version (see kernel/variants/README.md)")
    return directory


def for_job(job: dict, backend: str, kernel=None) -> list:
    """[{"name", "path", "params"}] of the variants a run uses, ready for driver.load_modules():
    built for the testbed kernel (backend "uml"; `kernel`: the UML kernel binary the run boots,
    the modules are built against its tree) or found for this host's (any other: "native").
    The backends' Backend.modules call it; ns-3 has none (its program has the variants compiled
    in, backends/ns3/bbr_variants.h, and gets their parameters in raw/ns3.conf). Variants whose
    module needs a testbed kernel patch (variants.yaml core_patch) are refused on "native"."""
    names = needed([job])
    if backend == "native":
        patched = [n for n in names if registry.core_patch(n)]
        if patched:
            raise ModuleError(f"{', '.join(patched)} need(s) the testbed kernel's own TCP patch "
                              f"(kernel/patches/{registry.core_patch(patched[0])}.patch), which a stock "
                              "kernel lacks: run with --backend uml")
    if not names:
        return []
    directory = build(names, kernel_tree(kernel)) if backend == "uml" else find_native(names)
    return [{"name": n, "path": str((directory / f"{n}.ko").resolve()), "params": params_of(job, n)}
            for n in names]


def describe(modules: list) -> list:
    """run.json's record of the loaded modules: name, params, path and the SHA-256 of each .ko
    (which must exist), in the given order."""
    return [{"name": m["name"], "params": m["params"], "path": m["path"],
             "sha256": digests.sha256_file(m["path"])} for m in modules]
