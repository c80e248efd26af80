# The testbed kernel and the BBR variants' modules, each depending on its own content only.
import json
import re

KERNEL_INPUTS = ["kernel/build-uml.sh", "kernel/uml.config"] + sorted(
    str(p) for p in pathlib.Path("kernel/patches").glob("*.patch"))
KERNEL_STAMP = "build/kernel/ready-" + hashlib.sha256(
    b"".join(pathlib.Path(p).read_bytes() for p in KERNEL_INPUTS)).hexdigest()[:16]


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
    log:
        "build/kernel.log",
    shell:
        "JOBS={threads} kernel/build-uml.sh build/kernel > {log} 2>&1 || (tail -30 {log}; exit 1)"


def variant_headers(wildcards):
    """The kernel/variants/*.h files the variant's patch includes (its generated <variant>_params.h
    is not one: it comes from the variant's registry entry, see variant_params_stamp)."""
    patch = pathlib.Path(f"kernel/variants/{wildcards.variant}.patch")
    if not patch.is_file():
        return []   # the rule's patch input names the missing file
    names = re.findall(r'^\+\s*#\s*include\s+"([^"/]+\.h)"', patch.read_text(), re.M)
    return sorted({f"kernel/variants/{n}" for n in names if pathlib.Path(f"kernel/variants/{n}").is_file()})


def variant_params_stamp(wildcards):
    """A stamp named by the content of the variant's parameters in mininet/bbrlab/variants.yaml:
    an edit to another variant's entry (or a new variant) leaves this module alone."""
    params = json.dumps(bbrvariants.parameters(wildcards.variant), sort_keys=True)
    return f"{MODULES}/keys/{wildcards.variant}.params-{hashlib.sha256(params.encode()).hexdigest()[:16]}"


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
    log:
        f"{MODULES}/{{variant}}.log",
    shell:
        "kernel/build-variants.sh {wildcards.variant} > {log} 2>&1 || (tail -30 {log}; exit 1)"
