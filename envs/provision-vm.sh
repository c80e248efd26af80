#!/usr/bin/env bash
# Provisioning of the Vagrant VM (Vagrantfile), as root, in the synced repository:
# kernel headers that match the kernel the experiments run on (the BBR variant
# modules are built against them: kernel/build-variants.sh --kdir
# /lib/modules/$(uname -r)/build), then the same ./setup.sh as everywhere
# (Debian packages of envs/, the .venv).
#
#   envs/provision-vm.sh             do it
#   envs/provision-vm.sh --dry-run   only print the commands (tests/test_vagrant.py)
#
# KERNEL_RELEASE overrides `uname -r`. A Debian kernel has a headers package of
# its own name (linux-headers-6.1.0-18-amd64); when the archive no longer has it
# (a box older than the current point release), the current kernel and its
# headers are installed instead (linux-image-amd64, linux-headers-amd64) and the
# VM must boot into it: the Vagrantfile's provisioner reboots after this script.
set -euo pipefail
cd "$(dirname "$0")/.."
dry=0
[ "${1:-}" = "--dry-run" ] && dry=1
release=${KERNEL_RELEASE:-$(uname -r)}
run() { echo "provision: $*"; [ "$dry" = 1 ] || "$@"; }
install() { run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"; }

if [ -d "/lib/modules/$release/build" ]; then
  echo "provision: kernel headers for $release present"
else
  run apt-get update -q
  if apt-cache show "linux-headers-$release" >/dev/null 2>&1; then
    install "linux-headers-$release"
  else
    echo "provision: no package linux-headers-$release in the archive: installing the current kernel" \
         "and its headers; the experiments need a reboot into it"
    install linux-image-amd64 linux-headers-amd64
  fi
fi
run ./setup.sh
