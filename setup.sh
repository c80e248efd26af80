#!/usr/bin/env bash
# One-time (idempotent) set-up on Debian 12: Debian packages from
# envs/debian-packages.txt, then a Python venv (.venv) with
# envs/requirements.txt. Uses sudo for apt-get when not run as root.
# The testbed kernel is not built here: the pipeline (or the tests) build it
# on first use into build/kernel/.
set -euo pipefail
cd "$(dirname "$0")"

packages=$(grep -v '^\s*#' envs/debian-packages.txt | awk 'NF {print $1}')
missing=()
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages present"
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "setup: creating .venv"
  rm -rf .venv
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
# (re)install when envs/requirements.txt changed since the last install
stamp=.venv/requirements.sha256
if ! .venv/bin/python -c 'import snakemake, pytest' 2>/dev/null \
   || [ "$(cat "$stamp" 2>/dev/null)" != "$(sha256sum envs/requirements.txt | cut -d' ' -f1)" ]; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -r envs/requirements.txt
  sha256sum envs/requirements.txt | cut -d' ' -f1 > "$stamp"
fi
echo "setup: done"
