#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install-nfd-worker.sh: builds the pinned Node Feature Discovery worker (nfd-worker), with which
# the tests read the local feature file fragd writes (tests/tools/nfd_labels.sh), and prints the
# binary's path on its last stdout line. Does nothing but print it when that version is there.
#
# NFD_VERSION is NFD's newest release, and its go.mod asks for Go 1.26. `go install
# .../cmd/nfd-worker@VERSION` cannot build it: NFD's go.mod has replace directives (the k8s.io
# modules, and ./api/nfd, a module of its own), which `go install pkg@version` refuses. So the
# two modules are fetched with `go mod download` from the Go module proxy (checked against the
# checksum database), copied into a scratch tree as NFD's repository lays them out, and
# cmd/nfd-worker is built there with the flags of NFD's Makefile.
#
# Go: FRAGD_TOOLS/go/bin/go (the toolchain scripts/install-deps.sh fetches), else `go` on PATH,
# else Debian's golang-go (apt-get), which must still be Go 1.26 or newer.
# Caches, so that later runs and CI on the same machine reuse them: the module cache and the
# build cache under FRAGD_BUILD_CACHE/go (default /var/cache/fragd-build/go); the binary in
# NFD_WORKER_DIR (default FRAGD_BUILD_CACHE/nfd-worker-NFD_VERSION).
# Measured on this project's machine (2 cores, go1.26.8): cold, with empty caches, 7 min 18 s
# (about 15 s of it fetching 340 MiB of modules, the rest compiling; the build cache then holds
# 590 MiB, the binary is 46 MiB); warm, the binary there, 0.04 s; the binary removed but the
# caches kept, 5.4 s.
set -euo pipefail

NFD_VERSION=v0.19.0
NFD_GO=1.26 # the go directive of NFD_VERSION's go.mod
NFD_MODULE=sigs.k8s.io/node-feature-discovery
CACHE=${FRAGD_BUILD_CACHE:-/var/cache/fragd-build}
DIR=${NFD_WORKER_DIR:-$CACHE/nfd-worker-$NFD_VERSION}
BIN=$DIR/nfd-worker

if [ "$("$BIN" -version 2>/dev/null)" = "nfd-worker $NFD_VERSION" ]; then
	echo "$BIN"
	exit 0
fi

GO=${FRAGD_TOOLS:-/var/cache/fragd-tools}/go/bin/go
if ! [ -x "$GO" ]; then
	GO=$(command -v go || true)
fi
if [ -z "$GO" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-nfd-worker: no go: run as root, or install golang-go" >&2
		exit 1
	fi
	echo "install-nfd-worker: no go: installing golang-go" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends golang-go ca-certificates >/dev/null
	GO=/usr/bin/go
fi

export GOPATH=$CACHE/go
export GOMODCACHE=$GOPATH/pkg/mod
export GOCACHE=$GOPATH/cache
export GOFLAGS=-mod=mod
export GOTOOLCHAIN=local
have=$("$GO" env GOVERSION)
if ! printf '%s\n' "go$NFD_GO" "$have" | sort -V -C; then
	echo "install-nfd-worker: nfd-worker $NFD_VERSION needs Go $NFD_GO or newer; $GO is $have." >&2
	echo "install-nfd-worker: scripts/install-deps.sh fetches one into FRAGD_TOOLS (/var/cache/fragd-tools)" >&2
	exit 1
fi

mkdir -p "$CACHE" "$DIR"
SCRATCH=$(mktemp -d "$CACHE/nfd-build.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
echo "install-nfd-worker: building nfd-worker $NFD_VERSION with $have (GOMODCACHE=$GOMODCACHE)" >&2
# moddir MODULE: fetches MODULE@NFD_VERSION into the module cache and prints its folder there.
# The module and its api/nfd module are tagged together (api/nfd/vX.Y.Z).
moddir() {
	local d
	d=$(cd "$SCRATCH" && "$GO" mod download -json "$1@$NFD_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	if ! [ -f "$d/go.mod" ]; then
		echo "install-nfd-worker: go mod download gave no source for $1@$NFD_VERSION" >&2
		return 1
	fi
	echo "$d"
}
src=$(moddir "$NFD_MODULE")
api=$(moddir "$NFD_MODULE/api/nfd")
cp -R "$src" "$SCRATCH/src"
rm -rf "$SCRATCH/src/api/nfd"
cp -R "$api" "$SCRATCH/src/api/nfd"
chmod -R u+w "$SCRATCH/src" # the module cache is read-only; go may touch go.sum with -mod=mod
(cd "$SCRATCH/src" && "$GO" build -trimpath \
	-ldflags "-s -w -X $NFD_MODULE/pkg/version.version=$NFD_VERSION" \
	-o "$SCRATCH/nfd-worker" ./cmd/nfd-worker)
# Moved in whole, so a run stopped halfway leaves no binary that looks installed.
mv -f "$SCRATCH/nfd-worker" "$BIN"
if [ "$("$BIN" -version)" != "nfd-worker $NFD_VERSION" ]; then
	echo "install-nfd-worker: $BIN -version does not say nfd-worker $NFD_VERSION" >&2
	exit 1
fi
echo "$BIN"
