#!/usr/bin/env bash
# Build the User-Mode Linux testbed kernel from Debian's linux-source-6.1.
#
#   kernel/build-uml.sh [BUILD_DIR]        (default: build/kernel)
#
# Produces BUILD_DIR/linux (the UML kernel, an ordinary executable) and keeps
# BUILD_DIR/src prepared for out-of-tree modules (the BBR variants are built
# against exactly this tree). The testbed's own kernel patches
# (kernel/patches/*.patch, e.g. the seeded randomness of reproducible runs) are
# applied to the unpacked source in name order, without fuzz. The build is
# skipped when BUILD_DIR/inputs.sha256 matches the current inputs (source
# tarball, config fragment, patches, this script).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../build/kernel}" && cd "${1:-$here/../build/kernel}" && pwd)
tarball=${LINUX_SOURCE_TARBALL:-$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)}
fragment=$here/uml.config
jobs=${JOBS:-$(nproc)}
patches=("$here"/patches/*.patch)
[ -e "${patches[0]}" ] || patches=()

if [ -z "$tarball" ] || [ ! -r "$tarball" ]; then
  echo "build-uml: kernel source not found: /usr/src/linux-source-6.1.tar.xz" >&2
  echo "build-uml: install it with: apt-get install linux-source-6.1 (or run ./setup.sh)" >&2
  exit 2
fi
for tool in make gcc bc flex bison patch; do
  command -v "$tool" >/dev/null || { echo "build-uml: missing build tool '$tool' (run ./setup.sh)" >&2; exit 2; }
done

source_id=$( { stat -c '%n %s %Y' "$tarball"; [ ${#patches[@]} -eq 0 ] || sha256sum "${patches[@]}" | cut -d' ' -f1; } | sha256sum | cut -d' ' -f1)
inputs=$( { sha256sum "$fragment" "$0" | cut -d' ' -f1; echo "$source_id"; stat -c '%n %s %Y' "$tarball"; } | sha256sum | cut -d' ' -f1)
if [ -x "$out/linux" ] && [ "$(cat "$out/inputs.sha256" 2>/dev/null)" = "$inputs" ]; then
  echo "build-uml: $out/linux is up to date"
  exit 0
fi

start=$(date +%s)
rm -f "$out/linux" "$out/inputs.sha256"
# The unpacked tree is reused if it came from the same tarball with the same patches. If
# only the patches changed, the ones it carries (kept in src.patches/) are reversed and the
# new ones applied, so that make recompiles only what they touch; otherwise it is unpacked
# afresh.
apply_patches() {
  for p in "${patches[@]}"; do
    echo "build-uml: applying $(basename "$p")"
    patch -d "$1" -p1 -F0 -s --no-backup-if-mismatch < "$p" \
      || { echo "build-uml: patch does not apply cleanly: $p" >&2; exit 1; }
  done
  rm -rf "$out/src.patches" && mkdir -p "$out/src.patches"
  [ ${#patches[@]} -eq 0 ] || cp "${patches[@]}" "$out/src.patches/"
}
if [ -f "$out/src/Makefile" ] && [ "$(sed -n 2p "$out/src.id" 2>/dev/null)" != "$source_id" ] \
   && [ "$(sed -n 1p "$out/src.id" 2>/dev/null)" = "$(stat -c '%n %s %Y' "$tarball")" ] && [ -d "$out/src.patches" ]; then
  rm -f "$out/src.id"
  reversed=1
  for p in $(ls -r "$out"/src.patches/*.patch 2>/dev/null); do
    echo "build-uml: reversing $(basename "$p")"
    patch -d "$out/src" -R -p1 -F0 -s --no-backup-if-mismatch < "$p" || { reversed=0; break; }
  done
  if [ "$reversed" = 1 ]; then
    apply_patches "$out/src"
    printf '%s\n%s\n' "$(stat -c '%n %s %Y' "$tarball")" "$source_id" > "$out/src.id"
  fi
fi
if [ ! -f "$out/src/Makefile" ] || [ "$(sed -n 2p "$out/src.id" 2>/dev/null)" != "$source_id" ]; then
  echo "build-uml: unpacking $tarball"
  rm -rf "$out/src" "$out/src.tmp" "$out/src.id"
  mkdir -p "$out/src.tmp"
  tar -xf "$tarball" -C "$out/src.tmp" --strip-components=1
  apply_patches "$out/src.tmp"
  mv "$out/src.tmp" "$out/src"
  printf '%s\n%s\n' "$(stat -c '%n %s %Y' "$tarball")" "$source_id" > "$out/src.id"
fi

cd "$out/src"
echo "build-uml: configuring (defconfig + $(basename "$fragment"))"
make -s ARCH=um defconfig
scripts/kconfig/merge_config.sh -m -O . .config "$fragment" >/dev/null
make -s ARCH=um olddefconfig

# Every option of the fragment must have survived olddefconfig.
missing=0
while IFS= read -r line; do
  case "$line" in
    CONFIG_*=*)
      grep -qx "$line" .config || { echo "build-uml: option not applied: $line" >&2; missing=1; } ;;
    "# CONFIG_"*" is not set")
      opt=${line#\# }; opt=${opt%% *}
      grep -q "^$opt=" .config && { echo "build-uml: option still enabled: $opt" >&2; missing=1; } ;;
  esac
done < "$fragment"
[ "$missing" = 0 ] || exit 1

# A reproducible build: the same source, patches, configuration and compiler give the same
# bytes in any directory, at any time, by any user on any host. Kbuild otherwise writes the
# time, user, host and build count into the kernel's version string (init_utsname(), which
# the guest's random_init_early() mixes into its entropy pool: two builds of one source gave
# other trajectories for the same seed). Debug information, which names the build directory,
# is off (uml.config); the prefix map keeps the directory out of anything else that names a file.
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 1970" KBUILD_BUILD_USER=bbrlab \
       KBUILD_BUILD_HOST=testbed KBUILD_BUILD_VERSION=1
export KCFLAGS="-ffile-prefix-map=$out/src=." KAFLAGS="-ffile-prefix-map=$out/src=."
echo "build-uml: compiling with $jobs jobs (about 5 minutes on 2 cores)"
make -s ARCH=um -j"$jobs" linux modules
make -s ARCH=um modules_prepare
cp linux "$out/linux.tmp" && mv "$out/linux.tmp" "$out/linux"
make -s ARCH=um kernelrelease > "$out/release"
echo "$inputs" > "$out/inputs.sha256"
echo "build-uml: built $out/linux ($(cat "$out/release")) in $(( $(date +%s) - start )) s"
