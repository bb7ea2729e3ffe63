#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages fragd needs to build, test and benchmark, only
# those missing. Run as root (make run / make test call it).
set -euo pipefail

packages=(
  build-essential cmake pkg-config curl
  ccache  # the Makefile's compiler launcher: a fresh clone does not compile again what an earlier one did
  clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev
  libclang-rt-dev  # libFuzzer and clang's sanitizer runtimes: make fuzz
  prometheus-cpp-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libsystemd-dev
  libcairo2-dev  # fragctl map --png
  libcivetweb-dev libcap-dev  # the HTTP endpoint; dropping capabilities after attach
  # the protobuf exposition of /metrics (native histograms): the library, protoc, and Prometheus'
  # io/prometheus/client/metrics.proto as Debian ships it
  libprotobuf-dev protobuf-compiler golang-github-prometheus-client-model-dev
  libgtest-dev
  prometheus   # promtool checks the /metrics output in the tests
  bpftrace     # the reference the overhead benchmark compares with
  libhugetlbfs-bin  # hugeadm: the prior art the act benchmark compares with
  strace       # proves in the act test that observe and dry_run write nothing to the kernel
  systemd      # systemd-analyze: the package test verifies and scores the unit
  lintian      # the package test: no error or warning in the .deb
  mmdebstrap buildah  # make image: the OCI image from Debian packages (scripts/build-image.sh)
  # make deb (scripts/build-deb.sh): mmdebstrap (above) makes each release's build chroot, git
  # lists the source files copied into it
  git
  python3-prometheus-client  # the Prometheus text parser of the tests and benchmarks
  groff-base python3-yaml  # docs_test: man pages render without warnings, the DaemonSet parses
  python3-matplotlib  # dashboards/render.py draws docs/dashboard.png
  # runtime_test: the image run by podman with the DaemonSet's security context; runc, not crun
  # (crun 1.8 refuses hybrid cgroups); busybox-static probes the running container's mounts
  podman runc busybox-static
  apache2-utils
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
