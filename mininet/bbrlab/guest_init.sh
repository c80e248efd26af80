#!/bin/sh
# PID 1 of the User-Mode Linux testbed guest.
#
# The host's root file system is the guest's root (hostfs, read-only); this
# script gives the guest private writable directories (tmpfs), mounts the
# run directory of the host read-write at /mnt/run and the whole host root
# again, read-only, at /mnt/host (so host paths under the directories that
# tmpfs hides, such as /tmp, stay reachable), runs the experiment
# (bbrlab.guest) and powers the guest off. Its exit status reaches the host
# through /mnt/run/guest_exit. Arguments come from the kernel command line
# as environment variables: BBRLAB_RUN (host path of the run directory) and
# BBRLAB_PYTHONPATH (host path holding the bbrlab package), and in a seeded
# run BBRLAB_PYTHONHASHSEED (from the run's seed, backends/uml.py), which
# fixes the hash seed of every Python process of the guest.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8
# Mininet's node.py imports distutils.version. With Debian's python3-setuptools
# installed, its distutils-precedence.pth hands that import to setuptools, which
# then imports setuptools.dist, pkg_resources and pyparsing: 4.1 of the 6.1 s the
# driver's imports took in the guest (real clock, bench/setup_profile.py). The
# standard library's distutils (python3-distutils) has the same StrictVersion.
export SETUPTOOLS_USE_DISTUTILS=stdlib
if [ -n "$BBRLAB_PYTHONHASHSEED" ]; then export PYTHONHASHSEED="$BBRLAB_PYTHONHASHSEED"; fi
mount -t proc proc /proc
mount -t sysfs sysfs /sys
grep -q " /dev devtmpfs" /proc/mounts || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
[ -e /dev/ptmx ] || ln -s pts/ptmx /dev/ptmx
mount -t tmpfs tmpfs /dev/shm
for d in /tmp /run /var/tmp /var/log /var/lib/openvswitch /etc/openvswitch /mnt; do
  mount -t tmpfs -o mode=1777 tmpfs "$d"
done
[ -L /var/run ] || mount -t tmpfs tmpfs /var/run
mkdir -p /run/openvswitch /var/log/openvswitch /mnt/run /mnt/host /run/netns
mount -t hostfs -o "$BBRLAB_RUN" hostfs /mnt/run
mount -r -t hostfs -o / hostfs /mnt/host
hostname testbed
ip link set lo up

echo "bbrlab-guest: booted, kernel $(uname -r)"
PYTHONPATH="/mnt/host$BBRLAB_PYTHONPATH" BBRLAB_HOST_ROOT=/mnt/host /usr/bin/python3 -m bbrlab.guest /mnt/run
rc=$?
echo "$rc" > /mnt/run/guest_exit.tmp && mv /mnt/run/guest_exit.tmp /mnt/run/guest_exit
echo "bbrlab-guest: experiment exited with status $rc"
sync
/usr/bin/python3 -c 'import ctypes; ctypes.CDLL(None).reboot(0x4321FEDC)'
# Only reached if power-off failed: let the kernel halt on init's exit.
exit "$rc"
