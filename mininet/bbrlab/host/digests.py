"""The SHA-256 of the testbed's binaries, as run.json and the results archive record them.

    sha256_file(path) -> hex digest

A run on the virtual clock is a function of its spec, its seed, the testbed kernel and the
variant modules it loads (docs/clocks-and-fidelity.md): the kernel's and each module's
digest say which builds a run came from. Both are built reproducibly (kernel/build-uml.sh,
kernel/build-variants.sh), so the same sources give the same digests on any machine. A
digest is computed once per file version (path, size, modification time) in a process.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pathlib


@functools.lru_cache(maxsize=64)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_file(path) -> str:
    """The SHA-256 (hex) of the file at path (which must exist)."""
    path = pathlib.Path(path).resolve()
    st = os.stat(path)
    return _sha256(str(path), st.st_size, st.st_mtime_ns)
