"""Backend cross-check: which backends this host can run, asked before anything runs.

`snakemake crosscheck` (workflow/rules/crosscheck.smk) runs the experiments whose
config/experiments.csv row names profile `crosscheck` on the uml and on the native backend
and compares them (analysis/crosscheck.R). Before the first job starts, the pipeline's onstart
hook calls `refusal()` for the backends whose runs still have to run; when one
cannot run here it stops with this module's message, naming the side and every
reason, and nothing has run. Runs already complete (e.g. the native side copied
in from another host) are not asked about.

    uml     the testbed kernel is built (build/kernel/linux) or can be built:
            Debian's kernel source and the build tools of kernel/build-uml.sh
    native  backends/native.py's checks (root, netem, fq, tbf, htb, red,
            network namespaces, module loading, the tools)
"""
import os
import pathlib
import shutil

BACKENDS = ("uml", "native")
KERNEL_SOURCE = "/usr/src/linux-source-6.1.tar.xz"
BUILD_TOOLS = ("make", "gcc", "bc", "flex", "bison", "patch")     # what kernel/build-uml.sh requires


def uml_problems(kernel="build/kernel/linux") -> list:
    """Why the uml backend cannot run here ([] when it can): the kernel exists, or its build can run."""
    kernel = pathlib.Path(kernel)
    if kernel.is_file():
        return [] if os.access(kernel, os.X_OK) else [f"testbed kernel {kernel} is not executable by this user"]
    problems = []
    tarball = os.environ.get("LINUX_SOURCE_TARBALL") or KERNEL_SOURCE
    if not os.access(tarball, os.R_OK):
        problems.append(f"testbed kernel not built and its source {tarball} is missing "
                        "(apt-get install linux-source-6.1, or ./setup.sh)")
    problems += [f"testbed kernel not built and build tool '{t}' is missing (./setup.sh)"
                 for t in BUILD_TOOLS if not shutil.which(t)]
    return problems


def native_problems() -> list:
    """What stops the native backend here: native.missing_prerequisites() ([] when nothing)."""
    from .backends import native
    return native.missing_prerequisites()


def problems(backends, kernel="build/kernel/linux") -> dict:
    """{backend: [reasons it cannot run here]} for the backends asked about ([] when it can)."""
    found = {}
    for name in backends:
        if name == "uml":
            found[name] = uml_problems(kernel)
        elif name == "native":
            found[name] = native_problems()
        else:
            found[name] = [f"unknown backend {name!r} (the cross-check compares {' and '.join(BACKENDS)})"]
    return found


def refusal(backends, kernel="build/kernel/linux", found=None):
    """The message that stops the cross-check before anything runs, or None when every
    backend asked about can run here."""
    found = problems(backends, kernel) if found is None else found
    if not any(found.values()):
        return None
    lines = ["backend cross-check: not every backend can run on this host, nothing was run:"]
    for name in sorted(found):
        if found[name]:
            lines.append(f"  {name}: CANNOT run here:")
            lines += [f"    - {reason}" for reason in found[name]]
        else:
            lines.append(f"  {name}: can run here")
    lines += ["run the cross-check where both backends work (a Linux host with these, as root, or the",
              "Vagrant VM: vagrant ssh -c 'cd /vagrant && sudo .venv/bin/snakemake --cores all crosscheck'),",
              "or copy the missing side's finished runs into results/crosscheck/<backend>/runs/ first"]
    return "\n".join(lines)
