"""The project's C programs that run in the testbed, compiled on the host into build/bin/.

    bulk         the flows' two ends (bulk.c): every flow's sender and receiver
    guest_init   PID 1 of the User-Mode Linux guest (guest_init.c)

The guests run them from the host's file system (User-Mode Linux mounts the
host's root; the native backend and the Vagrant VM are the host), so they are
built before a testbed starts (the uml and native backends' check()) and
again only when a source or the compile command changes (stamped_build.py).
Static, so that starting one maps one file and touches few pages: in the UML
guest each first touch of a page and each system call is a ptrace stop, and a
Python interpreter's start cost about one host CPU-second
(bench/results/revision-ab-2026-11-24-bulk-*.md).
"""
import functools
import pathlib
import subprocess

from . import stamped_build

from ..experiment.testbed import BIN_DIR, binary  # noqa: F401  where each program is: a testbed fact

# hashlib and shutil are imported where a build needs them: hashlib loads OpenSSL and shutil the
# compression libraries, and a process that only asks binary() needs neither.

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
REPO = PACKAGE_DIR.parents[1]
SOURCES = {"bulk": PACKAGE_DIR / "guest" / "bulk.c", "guest_init": PACKAGE_DIR / "guest" / "guest_init.c"}
CC = "gcc"
CFLAGS = ["-O2", "-static", "-Wall", "-Wextra", "-Werror"]


class ProgramBuildError(RuntimeError):
    """A guest program cannot be built: no C compiler, or the compiler failed (its last lines in the
    message)."""


def compile_command(name: str):
    """The compile command of program `name` as a function of the output path (the argv
    stamped_build.build runs); KeyError for a name not in SOURCES."""
    return lambda output: [CC, *CFLAGS, "-o", str(output), str(SOURCES[name])]


@functools.lru_cache(maxsize=None)
def compiler_version(cc: str) -> str:
    """The compiler's version, asked once per process (every backend check() builds the programs)."""
    return subprocess.run([cc, "-dumpfullversion"], capture_output=True, text=True).stdout


def build_key(name: str) -> str:
    """Hash of the source, the compile command and the compiler's version."""
    import hashlib  # pylint: disable=import-outside-toplevel
    h = hashlib.sha256(SOURCES[name].read_bytes())
    h.update(" ".join(compile_command(name)("OUT")).encode())
    h.update(compiler_version(CC).encode())
    return h.hexdigest()


def build(name: str) -> pathlib.Path:
    """Program `name`, compiled unless up to date; ProgramBuildError names what is missing."""
    import shutil  # pylint: disable=import-outside-toplevel
    if not shutil.which(CC):
        raise ProgramBuildError(f"C compiler {CC!r} not found, needed for the testbed's {name}"
                                f" ({SOURCES[name].name}): apt-get install gcc libc6-dev")
    try:
        return stamped_build.build(binary(name), build_key(name), compile_command(name),
                                   f"the testbed's {name} ({SOURCES[name]})")
    except stamped_build.BuildError as err:
        raise ProgramBuildError(str(err)) from None
