#!/usr/bin/env bash
# Installs the Debian 12 packages Strata needs to build, test and run, if any
# are missing. Sourced by scripts/up and scripts/test; safe to run repeatedly.
set -euo pipefail

STRATA_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost-dev libboost-filesystem-dev libboost-program-options-dev
  librocksdb-dev libleveldb-dev libcapnp-dev capnproto libssl-dev
  catch2 libfuse3-dev liburing-dev libisal-dev libxxhash-dev
  libfmt-dev libspdlog-dev libcli11-dev libgoogle-perftools-dev
  xfsprogs btrfs-progs util-linux fio e2fsprogs iproute2 binutils
  fuse3 rsync attr sqlite3 python3
  qemu-utils libnbd-bin
)

strata_install_deps() {
  local missing=()
  for p in "${STRATA_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "== installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  strata_install_deps
fi
