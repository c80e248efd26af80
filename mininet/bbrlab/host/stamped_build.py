"""Compile a program once, on the host, and again only when what it is built from changes.

Used for the project's own programs that the runs execute: the ns-3 simulation
(backends/ns3_backend.py) and the testbed's C programs (guest_programs.py). The output
sits beside a stamp holding the hash of its inputs (source, headers, compile
command, tool versions: the caller's key); a matching stamp means up to date.
One build at a time per directory (an flock: Snakemake's parallel jobs, or
cluster nodes sharing the repository); the program is compiled to a temporary
name and renamed, so a run never sees a half-written binary.
"""
import fcntl
import os
import pathlib
import subprocess


class BuildError(RuntimeError):
    """The compiler failed; the message names what was built and gives the compiler's last lines."""


def build(output: pathlib.Path, key: str, command, what: str) -> pathlib.Path:
    """Build `output` with `command(tmp_path)` (an argv) unless its stamp holds `key`; the
    compiler runs at the lowest priority. Raises BuildError with the compiler's last lines."""
    output = pathlib.Path(output)
    stamp = output.with_name(output.name + ".stamp")
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output.parent / f".{output.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if output.is_file() and stamp.is_file() and stamp.read_text().strip() == key:
            return output
        tmp = output.with_name(f".{output.name}.{os.getpid()}")
        res = subprocess.run(["nice", "-n", "19", *command(tmp)], capture_output=True, text=True)
        if res.returncode != 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join(res.stderr.strip().splitlines()[-30:])
            raise BuildError(f"cannot compile {what}:\n{tail}")
        tmp.rename(output)
        stamp.write_text(key + "\n")
    return output
