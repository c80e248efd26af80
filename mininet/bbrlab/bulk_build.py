"""The flows' two ends (bulk.c) as a static binary, compiled on the host into build/bulk/.

The testbed's guests run it from the host's file system (User-Mode Linux
mounts the host's root; the native backend and the Vagrant VM are the host),
so it is built before a testbed starts (the uml and native backends' check())
and again only when bulk.c or the compile command changes (stamped_build.py).
Static, so that starting it maps one file and touches few pages: in the UML
guest each first touch of a page is a ptrace-handled fault.
"""
import hashlib
import pathlib
import shutil
import subprocess

from . import stamped_build

SOURCE = pathlib.Path(__file__).resolve().with_name("bulk.c")
REPO = SOURCE.parents[2]
BINARY = REPO / "build" / "bulk" / "bulk"
CC = "gcc"
CFLAGS = ["-O2", "-static", "-Wall", "-Wextra", "-Werror"]


class BulkBuildError(RuntimeError):
    pass


def compile_command(output) -> list:
    return [CC, *CFLAGS, "-o", str(output), str(SOURCE)]


def build_key() -> str:
    """Hash of the source, the compile command and the compiler's version."""
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(" ".join(compile_command("OUT")).encode())
    h.update(subprocess.run([CC, "-dumpfullversion"], capture_output=True, text=True).stdout.encode())
    return h.hexdigest()


def build() -> pathlib.Path:
    """The binary, compiled unless up to date; BulkBuildError names what is missing."""
    if not shutil.which(CC):
        raise BulkBuildError(f"C compiler {CC!r} not found, needed for the flows' two ends ({SOURCE.name}):"
                             " apt-get install gcc libc6-dev")
    try:
        return stamped_build.build(BINARY, build_key(), compile_command, f"the traffic tool {SOURCE}")
    except stamped_build.BuildError as err:
        raise BulkBuildError(str(err)) from None
