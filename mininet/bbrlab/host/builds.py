"""This checkout's testbed builds, by digest: what archived runs are compared with.

    current_digests(kernel=None) -> (kernel sha256 or None, {module name: sha256})

The kernel is $BBRLAB_KERNEL or build/kernel/linux; the modules are the variant modules
built for it (build/modules/*.ko, kernel/build-variants.sh). Nothing is built here: a
kernel not yet built gives None, a module not yet built is left out.
"""
from __future__ import annotations

import os
import pathlib

from . import digests
from .backends.uml import DEFAULT_KERNEL
from .modules import MODULES_DIR


def current_digests(kernel=None, modules_dir=MODULES_DIR):
    """(sha256 of the testbed kernel, or None when it is not built; {module name: sha256} of the
    .ko files in modules_dir). kernel: the binary (default $BBRLAB_KERNEL, else build/kernel/linux)."""
    kernel = pathlib.Path(kernel or os.environ.get("BBRLAB_KERNEL", DEFAULT_KERNEL))
    kernel_sha = digests.sha256_file(kernel) if kernel.is_file() else None
    modules = {p.stem: digests.sha256_file(p) for p in sorted(pathlib.Path(modules_dir).glob("*.ko"))}
    return kernel_sha, modules
