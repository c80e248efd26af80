# The testbed kernel and the BBR variants' modules, each depending on its own content only
# (KERNEL_STAMP, variant_headers, variant_params_stamp: common.smk).

# Above every run's priority (a run's is its expected host CPU-seconds, runs.smk): builds go first.
BUILD_PRIORITY = 10**9


rule kernel:
    """User-Mode Linux testbed kernel (kernel/build-uml.sh skips an up-to-date build).

    Its output is a stamp named after the content of its inputs, not the kernel
    binary: Snakemake deletes a rule's output before re-running it, and a fresh
    checkout's newer file times would re-run the rule and remove a kernel that
    running guests (or another checkout sharing build/) are using. The stamp's
    name changes only when the inputs' content does; the script then rebuilds."""
    input:
        [ancient(p) for p in KERNEL_INPUTS],
    output:
        touch(KERNEL_STAMP),
    threads: workflow.cores
    # First of all: every run waits for it, and a job that needs every core is never started while
    # single-core jobs (the reference evaluation) keep one core busy: measured 2026-11-28, the kernel
    # rule waited over 5 minutes with one core idle (bench/results/main-job-2026-11-28.md).
    priority: BUILD_PRIORITY
    log:
        "build/kernel.log",
    shell:
        # Under the build directory's lock (as tests/conftest.py's kernel fixture): one build at a time.
        "mkdir -p build/kernel && JOBS={threads} flock build/kernel/.build.lock kernel/build-uml.sh build/kernel "
        "> {log} 2>&1 || (tail -30 {log}; exit 1)"


rule variant_params:
    """The content stamp of a variant's registry parameters (variant_params_stamp)."""
    output:
        touch(f"{MODULES}/keys/{{variant}}.params-{{key}}"),
    wildcard_constraints:
        variant="[a-z0-9_]+",
        key="[0-9a-f]{16}",
    log:
        f"{MODULES}/keys/{{variant}}.params-{{key}}.log",
    localrule: True
    shell:
        "true > {log}"


rule variant_module:
    """A BBR variant as a loadable module for the testbed kernel (kernel/build-variants.sh):
    rebuilt when its own patch, the headers that patch includes or its parameters change."""
    input:
        KERNEL_STAMP,
        "kernel/build-variants.sh",
        "kernel/variants/{variant}.patch",
        variant_headers,
        variant_params_stamp,
    output:
        f"{MODULES}/{{variant}}.ko",
    wildcard_constraints:
        variant="[a-z0-9_]+",
    priority: BUILD_PRIORITY    # the runs that load it wait for it
    log:
        f"{MODULES}/{{variant}}.log",
    shell:
        "kernel/build-variants.sh {wildcards.variant} > {log} 2>&1 || (tail -30 {log}; exit 1)"
