#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages fragd needs to build, test and benchmark, only
# those missing. Run as root (make run / make test call it).
set -euo pipefail

packages=(
  build-essential cmake pkg-config curl
  ccache  # the Makefile's compiler launcher: a fresh clone does not compile again what an earlier one did
  ninja-build  # make sanitize and make tsan build with Ninja (the Makefile: both cores busy)
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
  libcap2-bin  # capsh: fault_state_test runs fragd without CAP_BPF
  iproute2     # ss: security_test lists fragd's listening sockets
  shfmt        # deps_test parses the scripts to find the commands they run
  universal-ctags  # scripts/architecture-status.py finds functions and their lengths
  qemu-system-x86 cpio  # make test-kernels (tests/kernels/matrix.sh) and bench/cost_guest.sh boot guests
  default-jre-headless  # make bench-apps (bench/apps.sh): the JVM workload
  # hooks_test: the launch hooks (configs/hooks) in a real libvirtd and a real Slurm, each started
  # by hand; -sysv rather than systemd's units, which would pull in systemd-container
  libvirt-daemon-system libvirt-daemon-system-sysv libvirt-clients slurmd slurmctld slurm-client munge
  # the contract tests' linters are Go programs built from their modules (kube-score and
  # kubeconform in manifests_test, pint in rules_lint_test); pip downloads the Kubernetes schemas
  golang-go python3-pip
  ca-certificates  # go and pip fetch over TLS (a recommendation of curl, which --no-install-recommends leaves out)
)

# Those linters need Go 1.26 (their go.mod); Debian 12's golang-go is 1.19. Its go fetches the
# pinned toolchain as the module golang.org/toolchain from the Go module proxy, checked against
# the checksum database, into FRAGD_TOOLS (where the tests look first), as they fetch pint.
GO_TOOLCHAIN=go1.26.8
TOOLS=${FRAGD_TOOLS:-/var/cache/fragd-tools}

if [ "${1:-}" = --list ]; then  # deps_test: the packages, one a line
  printf '%s\n' "${packages[@]}"
  exit 0
fi

go_toolchain() {
  [ "$("$TOOLS/go/bin/go" env GOVERSION 2>/dev/null)" = "$GO_TOOLCHAIN" ] && return 0
  if [ "$(id -u)" -ne 0 ] && ! [ -w "$TOOLS" ]; then
    echo "install-deps: no Go $GO_TOOLCHAIN in $TOOLS/go: run as root (or set FRAGD_TOOLS to a writable folder)" >&2
    return 1
  fi
  local arch mod
  arch=$(dpkg --print-architecture)
  mod=golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-$arch
  echo "install-deps: fetching Go $GO_TOOLCHAIN ($mod) into $TOOLS/go"
  mkdir -p "$TOOLS"
  # A module cache of its own: the toolchain stays where the link points, whatever cleans root's.
  (cd "$TOOLS" && GOMODCACHE="$TOOLS/gomod" GOFLAGS=-mod=mod GOTOOLCHAIN=local /usr/bin/go mod download "$mod")
  # A module zip keeps no mode bits: make the commands executable, as go does for a toolchain it fetches.
  find "$TOOLS/gomod/$mod/bin" "$TOOLS/gomod/$mod/pkg/tool" -type f -exec chmod 0555 {} +
  ln -sfn "$TOOLS/gomod/$mod" "$TOOLS/go"
  [ "$("$TOOLS/go/bin/go" env GOVERSION)" = "$GO_TOOLCHAIN" ] ||
    { echo "install-deps: $TOOLS/go/bin/go is not $GO_TOOLCHAIN" >&2; return 1; }
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
go_toolchain
