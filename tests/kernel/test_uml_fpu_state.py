"""The testbed kernel keeps guest processes' vector registers, on any host CPU.

User-Mode Linux puts each guest process's FPU state back into the host process that runs it at
every switch (PTRACE_SETREGSET of NT_X86_XSTATE). The host takes that only with a whole XSAVE area
of its own size; Linux 6.1's UML sends a fixed 2696 bytes, so on a host CPU with a larger area
(AMX: 11008 bytes, measured 2026-11-29) the first guest process died and the guest panicked
before any run could start (kernel/patches/uml-host-xstate.patch says why and what changed).

This test boots the testbed kernel with a test-only init (fpstate/fpstate.c, built static here):
two guest processes each load their own pattern into every vector register the CPU has (zmm0-31
with AVX-512, the whole XSAVE area up to PKRU), enter the kernel, let the other run, and compare
on return, 2000 times each. The reference is the architecture's: a register holds what was
loaded into it until the program changes it. Every register must come back, and both workers
must exit normally.

Mutations tried (2026-11-29, on an Intel Xeon with AVX-512 and AMX, host Linux 6.18):
- the testbed kernel without the patch: the guest panics at its first process ("ptrace set fp
  regs failed, errno = 14"): this test fails (no result line);
- the patch copying only the first 832 bytes of the thread's state (the legacy area, the XSAVE
  header and AVX's upper halves) into the host-sized buffer: the AVX-512 registers come back
  zero and this test fails with mismatched registers
  (bench/results/uml-host-xstate-2026-11-29.md).

BBRLAB_TEST_KERNEL=<path> runs it against another kernel binary.
"""
import os
import pathlib
import re
import subprocess

SOURCE = pathlib.Path(__file__).with_name("fpstate") / "fpstate.c"
RESULT = re.compile(r"fpstate: (\w+) (\d+) rounds, (\d+) mismatched registers, (\d+) workers crashed")


def boot_fpstate(kernel: pathlib.Path, tmp_path: pathlib.Path) -> str:
    """Build fpstate.c, boot the kernel with it as init (real clock, 64 MB) and return the console."""
    program = tmp_path / "fpstate"
    subprocess.run(["gcc", "-O2", "-static", "-Wall", "-Wextra", "-Werror", "-o", str(program), str(SOURCE)],
                   check=True, capture_output=True, text=True)
    uml_dir = tmp_path / "uml"
    uml_dir.mkdir()
    res = subprocess.run([str(kernel), "mem=64M", "root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
                          f"init={program}", "con0=null,fd:1", "con=null", "ssl=null", f"uml_dir={uml_dir}",
                          "umid=fpstate"], capture_output=True, text=True, errors="replace", timeout=120,
                         cwd=tmp_path)
    return res.stdout + res.stderr


def test_guest_processes_keep_every_vector_register_across_switches(kernel, tmp_path):
    kernel = pathlib.Path(os.environ.get("BBRLAB_TEST_KERNEL", kernel))
    console = boot_fpstate(kernel, tmp_path)
    found = RESULT.search(console)
    assert found, "the guest gave no fpstate result (it panicked?):\n" + "\n".join(
        line for line in console.splitlines() if "panic" in line or "fp regs" in line or "fpstate" in line)
    isa, rounds, mismatched, crashed = found.group(1), int(found.group(2)), int(found.group(3)), int(found.group(4))
    assert rounds == 2000
    assert crashed == 0, f"{crashed} of 2 workers did not exit normally ({isa})"
    assert mismatched == 0, f"{mismatched} vector registers ({isa}) changed across a switch"
