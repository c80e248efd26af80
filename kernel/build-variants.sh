#!/usr/bin/env bash
# Build the BBR variants (kernel/variants/*.patch) as loadable modules.
#
#   kernel/build-variants.sh [--kdir DIR] [--src FILE] [--out DIR] [--check]
#                            [VARIANT...]
#
# Each variant is a patch against the kernel's own net/ipv4/tcp_bbr.c. The
# script copies tcp_bbr.c from the kernel tree the modules are built against,
# applies the patch (no fuzz; a hunk that does not apply fails the build and
# is named), adds the variant's headers and builds OUT/<variant>.ko. The
# variants and their module parameters (names, ranges, defaults) are listed
# once, in mininet/bbrlab/experiment/variants.yaml: the script writes each module's
# <variant>_params.h from it (mininet/bbrlab/experiment/variants.py, python3 with
# PyYAML), so the module checks the same ranges as the spec check. On the
# testbed (UML) tree any compiler or modpost warning fails the build; on
# others, warnings in the variant's own files do.
#
#   --kdir DIR  kernel build tree. Default: build/kernel/src, the User-Mode
#               Linux testbed tree prepared by kernel/build-uml.sh. For a
#               native host or VM: --kdir /lib/modules/$(uname -r)/build
#               (ARCH=um is used only when DIR/.config has CONFIG_UML=y).
#   --src FILE  tcp_bbr.c to patch. Default: DIR/net/ipv4/tcp_bbr.c. A headers
#               package has no sources: pass the tcp_bbr.c of the same kernel
#               version (e.g. from the distribution's linux-source package).
#   --out DIR   where the .ko files go. Default: build/modules for the default
#               tree, build/modules/<kernel release> for any other tree.
#   --check     only check that the patches apply; build nothing.
#   VARIANT     variant names (default: every variant of variants.yaml).
#
# A module is rebuilt only when its inputs change (tcp_bbr.c, patch, headers,
# its parameters in variants.yaml, this script, the tree's .config, kernel
# release and Module.symvers); the digest is kept in OUT/<variant>.inputs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
variants_dir=$here/variants
registry=$root/mininet/bbrlab/experiment/variants.py
python=${PYTHON:-python3}
kdir= src= out= check=0
names=()

die() { echo "build-variants: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --kdir) [ $# -ge 2 ] || die "--kdir needs a directory"; kdir=$2; shift 2 ;;
    --src) [ $# -ge 2 ] || die "--src needs a file"; src=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option: $1" ;;
    *) names+=("$1"); shift ;;
  esac
done

# Names first: a misspelt variant is reported before anything else is looked at.
known=$("$python" "$registry" names) || die "cannot read the variants from mininet/bbrlab/experiment/variants.yaml"
explicit=1
if [ ${#names[@]} -eq 0 ]; then
  mapfile -t names <<<"$known"
  explicit=0
fi
for name in "${names[@]}"; do
  grep -qx -- "$name" <<<"$known" ||
    die "unknown variant '$name' (not in mininet/bbrlab/experiment/variants.yaml; variants: $(paste -sd' ' <<<"$known"))"
  [ -r "$variants_dir/$name.patch" ] || die "variant '$name' has no patch $variants_dir/$name.patch"
done

default_tree=0
if [ -z "$kdir" ]; then kdir=$root/build/kernel/src; default_tree=1; fi
[ -n "$src" ] || src=$kdir/net/ipv4/tcp_bbr.c
[ -r "$src" ] || die "no tcp_bbr.c at $src (build the testbed kernel with kernel/build-uml.sh, or pass --src)"

# Apply PATCH to FILE (or only check it with --dry-run) with no fuzz. On
# failure print patch's output and name every failed hunk by its header.
apply_patch() {  # patch file [--dry-run]
  local patchfile=$1 file=$2 msg rc=0
  msg=$(patch --fuzz=0 --forward --batch --no-backup-if-mismatch -r - \
          ${3:-} "$file" -i "$patchfile" 2>&1) || rc=$?
  if [ $rc -ne 0 ] || grep -q 'with fuzz' <<<"$msg"; then
    {
      echo "build-variants: $(basename "$patchfile") does not apply to $src:"
      grep -o 'Hunk #[0-9]* [A-Z]*[^.]*' <<<"$msg" | grep -v succeeded |
        while read -r _ num rest; do
          n=${num#\#}
          hdr=$(grep '^@@ ' "$patchfile" | sed -n "${n}p")
          echo "  hunk #$n ($hdr): $rest"
        done
      echo "patch output:"
      sed 's/^/  /' <<<"$msg"
    } >&2
    return 1
  fi
  grep -q 'offset' <<<"$msg" && echo "build-variants: note: $(basename "$patchfile"): $(grep -o 'Hunk #[0-9]* succeeded at [0-9]* (offset[^)]*)' <<<"$msg" | paste -sd ';' -)"
  return 0
}

# Check every patch first, so a mismatch fails before anything is built.
failed=0
for name in "${names[@]}"; do
  apply_patch "$variants_dir/$name.patch" "$src" --dry-run || failed=1
done
[ $failed -eq 0 ] || die "kernel source and patches do not match; nothing built"
if [ $check -eq 1 ]; then
  echo "build-variants: ${names[*]}: patches apply to $src"
  exit 0
fi

[ -f "$kdir/Makefile" ] && [ -f "$kdir/.config" ] ||
  die "no prepared kernel tree at $kdir (run kernel/build-uml.sh, or pass --kdir)"
[ -f "$kdir/Module.symvers" ] ||
  die "$kdir has no Module.symvers: build the kernel (or install its headers) first"
# Variants whose module needs a testbed kernel patch (variants.yaml core_patch) build only
# against a tree that kernel/build-uml.sh built with it (it keeps its patches in
# ../src.patches/). Named on the command line they fail; in "every variant" they are skipped.
built_names=()
for name in "${names[@]}"; do
  core=$("$python" "$registry" core-patch "$name") || die "cannot read the variants"
  if [ -n "$core" ] && [ ! -f "$kdir/../src.patches/$core.patch" ]; then
    msg="$name needs the kernel patch kernel/patches/$core.patch, which $kdir was not built with (rebuild it with kernel/build-uml.sh)"
    [ $explicit -eq 1 ] && die "$msg"
    echo "build-variants: skipping $msg"
    continue
  fi
  built_names+=("$name")
done
names=("${built_names[@]}")
arch=()
grep -qx 'CONFIG_UML=y' "$kdir/.config" && arch=(ARCH=um)
release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || echo unknown)
if [ -z "$out" ]; then
  if [ $default_tree -eq 1 ]; then out=$root/build/modules; else out=$root/build/modules/$release; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

tree_digest=$( { echo "${arch[*]:-native} $release"; cat "$kdir/.config" "$kdir/Module.symvers" "$0"; } |
               sha256sum | cut -d' ' -f1)

for name in "${names[@]}"; do
  patchfile=$variants_dir/$name.patch
  params_h=$("$python" "$registry" header "$name") || die "$name: cannot write ${name}_params.h"
  inputs=$( { echo "$tree_digest"; cat "$src" "$patchfile" "$variants_dir"/*.h; echo "$params_h"; } |
            sha256sum | cut -d' ' -f1)
  if [ -f "$out/$name.ko" ] && [ "$(cat "$out/$name.inputs" 2>/dev/null)" = "$inputs" ]; then
    echo "build-variants: $name.ko is up to date"
    continue
  fi
  work=$out/.work/$name
  rm -rf "$work" && mkdir -p "$work"
  cp "$src" "$work/$name.c"
  apply_patch "$patchfile" "$work/$name.c" >/dev/null || die "$name: patch failed"
  cp "$variants_dir"/*.h "$work/"
  printf '%s\n' "$params_h" > "$work/${name}_params.h"
  echo "obj-m := $name.o" > "$work/Kbuild"
  # The build directory stays out of the module (its file names, debug information): the same
  # sources give the same .ko in any checkout.
  echo "ccflags-y := -ffile-prefix-map=$work=." >> "$work/Kbuild"
  [ ${#arch[@]} -eq 0 ] || echo "ccflags-y += -Werror" >> "$work/Kbuild"
  echo "build-variants: building $name.ko against $kdir${arch:+ (${arch[*]})}"
  rm -f "$out/$name.ko" "$out/$name.inputs"
  if ! log=$(make -C "$kdir" "${arch[@]}" M="$work" modules 2>&1); then
    echo "$log" >&2
    die "$name: compilation failed"
  fi
  # The testbed (UML) tree must build without any warning; on other trees
  # (other compilers) only warnings in the variant's own files fail the build.
  if [ ${#arch[@]} -ne 0 ]; then
    grep -i 'warning' <<<"$log" >&2 && die "$name: the build printed warnings (above)"
  else
    grep -i 'warning' <<<"$log" >&2 || true
    grep -E "($name\.c|_math\.h|_params?\.h):[0-9]+:[0-9]+: warning" <<<"$log" >/dev/null &&
      die "$name: warnings in the variant's sources (above)"
  fi
  cp "$work/$name.ko" "$out/$name.ko.tmp" && mv "$out/$name.ko.tmp" "$out/$name.ko"
  echo "$inputs" > "$out/$name.inputs"
  echo "build-variants: built $out/$name.ko"
done
