"""kernel/build-variants.sh: patches against the kernel's tcp_bbr.c, failures that name the hunk, and
modules built against the testbed tree (build/kernel/src, ARCH=um) with no warnings."""
import pathlib
import re
import subprocess
import tarfile

import pytest

from bbrlab.experiment import variants

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "kernel" / "build-variants.sh"
VARIANTS = variants.names()
TREE_SRC = REPO / "build" / "kernel" / "src" / "net" / "ipv4" / "tcp_bbr.c"
TARBALL = pathlib.Path("/usr/src/linux-source-6.1.tar.xz")
MODULES = REPO / "build" / "modules"


def run(*args):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def tcp_bbr_c(tmp_path_factory):
    """The kernel's tcp_bbr.c: from the testbed tree, else from Debian's linux-source-6.1."""
    if TREE_SRC.exists():
        return TREE_SRC.read_text()
    if TARBALL.exists():
        with tarfile.open(TARBALL) as tf:
            return tf.extractfile("linux-source-6.1/net/ipv4/tcp_bbr.c").read().decode()
    pytest.skip("no tcp_bbr.c: build/kernel/src is not unpacked and linux-source-6.1 is not installed")


def hunks(variant):
    """[(number, header, body)] of a variant's patch, numbered as patch(1) numbers them."""
    text = (REPO / "kernel" / "variants" / f"{variant}.patch").read_text()
    parts = re.split(r"^(@@ .*)$", text, flags=re.M)
    return [(i + 1, parts[2 * i + 1], parts[2 * i + 2]) for i in range(len(parts) // 2)]


def test_variants_present():
    assert set(VARIANTS) >= {"bbq", "bbq_drain", "bbr_e", "adaptive_bbr", "bbr_fca"}


def test_patches_apply_to_kernel_source(tcp_bbr_c, tmp_path):
    src = tmp_path / "tcp_bbr.c"
    src.write_text(tcp_bbr_c)
    res = run("--check", "--src", src)
    assert res.returncode == 0, res.stderr
    assert "patches apply" in res.stdout


def fresh_clone(tmp_path) -> pathlib.Path:
    """What --check needs of a fresh clone (the script, the patches, the registry and the YAML loader it
    imports), with no build/."""
    import shutil
    shutil.copytree(REPO / "kernel", tmp_path / "kernel", ignore=shutil.ignore_patterns("tests"))
    for name in ("variants.py", "variants.yaml", "yamltext.py"):
        (tmp_path / "mininet" / "bbrlab" / "experiment").mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "mininet" / "bbrlab" / "experiment" / name, tmp_path / "mininet" / "bbrlab" / "experiment")
    return tmp_path


@pytest.mark.skipif(not TARBALL.exists(), reason="linux-source-6.1 is not installed")
def test_check_works_in_a_fresh_clone_from_the_kernel_source(tmp_path):
    """Without build/kernel/src and without --src, --check reads tcp_bbr.c from the tarball the
    testbed kernel is built from; a patch that does not apply to it still fails, naming its hunk."""
    clone = fresh_clone(tmp_path)
    script = clone / "kernel" / "build-variants.sh"
    res = subprocess.run([str(script), "--check", "bbq"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "bbq: patches apply to" in res.stdout and str(TARBALL) in res.stdout
    patch = clone / "kernel" / "variants" / "bbq.patch"
    text = patch.read_text()
    assert text.count("-\t\treturn is_full_length &&\n") == 1
    patch.write_text(text.replace("-\t\treturn is_full_length &&\n", "-\t\treturn is_full_length ||\n"))
    res = subprocess.run([str(script), "--check", "bbq"], capture_output=True, text=True, timeout=600)
    assert res.returncode != 0 and "bbq.patch does not apply" in res.stderr and "hunk #" in res.stderr, res.stderr


def test_altered_source_fails_naming_the_hunk(tcp_bbr_c, tmp_path):
    """A tcp_bbr.c that differs inside a hunk's context fails the build, naming patch, hunk and file."""
    line = "\t\treturn is_full_length &&\n"       # the probe's exit in bbr_is_next_cycle_phase
    assert tcp_bbr_c.count(line) == 1
    src = tmp_path / "tcp_bbr.c"
    src.write_text(tcp_bbr_c.replace(line, "\t\treturn is_full_length ||\n"))
    (num, header, _), = [h for h in hunks("bbq") if "-" + line in h[2]]
    res = run("--src", src, "--out", tmp_path / "out", "bbq")
    assert res.returncode != 0
    assert "bbq.patch does not apply" in res.stderr and str(src) in res.stderr
    assert f"hunk #{num} ({header})" in res.stderr and "bbr_is_next_cycle_phase" in header
    assert "patch output:" in res.stderr and f"Hunk #{num} FAILED" in res.stderr
    assert not list((tmp_path / "out").glob("*.ko"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_patch_rejects_a_changed_context(tcp_bbr_c, tmp_path, variant):
    """Renaming the kernel's congestion control (a line every patch touches) fails each variant's build."""
    src = tmp_path / "tcp_bbr.c"
    src.write_text(tcp_bbr_c.replace('.name\t\t= "bbr",', '.name\t\t= "bbr2",'))
    (num, header, _), = [h for h in hunks(variant) if '-\t.name\t\t= "bbr",' in h[2]]
    res = run("--src", src, "--out", tmp_path / "out", variant)
    assert res.returncode != 0
    assert f"{variant}.patch does not apply" in res.stderr and f"hunk #{num} ({header})" in res.stderr


def test_already_patched_source_is_rejected(tcp_bbr_c, tmp_path):
    """Applying a variant to a source that already carries it fails instead of building something else."""
    src = tmp_path / "tcp_bbr.c"
    src.write_text(tcp_bbr_c)
    subprocess.run(["patch", "-s", str(src), "-i", str(REPO / "kernel" / "variants" / "bbr_e.patch")], check=True)
    res = run("--check", "--src", src, "bbr_e")
    assert res.returncode != 0 and "bbr_e.patch does not apply" in res.stderr


def test_unknown_variant_is_an_error():
    res = run("--check", "no_such_variant")
    assert res.returncode != 0 and "unknown variant 'no_such_variant' (not in mininet/bbrlab/experiment/variants.yaml" \
        in res.stderr


@pytest.fixture(scope="module")
def built(kernel):
    """Build every module against the testbed tree (built by the `kernel` fixture) with the script,
    as the runner does."""
    res = run()
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}"
    return res


def modinfo(ko):
    """Key/value pairs of a module's .modinfo section."""
    out = subprocess.run(["objcopy", "-O", "binary", "--only-section=.modinfo", str(ko), "/dev/stdout"],
                         capture_output=True, check=True).stdout
    return [kv.decode().split("=", 1) for kv in out.split(b"\0") if b"=" in kv]


def test_modules_build_against_testbed_tree(built):
    assert "warning" not in (built.stdout + built.stderr).lower()
    release = (REPO / "build" / "kernel" / "release").read_text().strip()
    for v in VARIANTS:
        ko = MODULES / f"{v}.ko"
        assert ko.exists(), v
        info = modinfo(ko)
        assert ["name", v] in info
        assert any(k == "vermagic" and val.startswith(release + " ") for k, val in info), v
        # the parameters, ranges and defaults of mininet/bbrlab/experiment/variants.yaml, as the module declares them
        want = {f"{n}:{p['description']} ({p['min']}..{p['max']}, default {p['default']})"
                for n, p in variants.parameters(v).items()}
        assert {val for k, val in info if k == "parm"} == want, v


def test_rebuild_is_skipped_when_inputs_are_unchanged(built):
    before = {v: (MODULES / f"{v}.ko").stat().st_mtime_ns for v in VARIANTS}
    res = run()
    assert res.returncode == 0, res.stderr
    for v in VARIANTS:
        assert f"{v}.ko is up to date" in res.stdout
        assert (MODULES / f"{v}.ko").stat().st_mtime_ns == before[v]


def test_modules_build_against_native_headers(tcp_bbr_c, tmp_path):
    """The --kdir mode for a native host or VM, tried on Debian's linux-headers-*-amd64 when installed."""
    trees = sorted(p for p in pathlib.Path("/usr/src").glob("linux-headers-6.1*") if (p / "Module.symvers").exists())
    if not trees:
        pytest.skip("no native 6.1 kernel headers (apt-get install linux-headers-amd64) to build against")
    src = tmp_path / "tcp_bbr.c"
    src.write_text(tcp_bbr_c)
    res = run("--kdir", trees[-1], "--src", src, "--out", tmp_path / "out")
    assert res.returncode == 0, f"{res.stdout}\n{res.stderr}"
    assert "ARCH=um" not in res.stdout
    for v in VARIANTS:
        assert ["name", v] in modinfo(tmp_path / "out" / f"{v}.ko")
