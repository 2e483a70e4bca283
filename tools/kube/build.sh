#!/usr/bin/env bash
# Ensure a Kubernetes control plane built from Go modules exists (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and KWOK, the kubelet stand-in) and print the
# directory that holds it. `python -m together_sim --kubernetes` runs one control plane per
# simulated cluster from these binaries (docs/kubernetes-sim.md).
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory the binaries are (or would be) in; build nothing
#
# This directory's go.mod is the wrapper module: it requires k8s.io/kubernetes and replaces each
# of its staging modules (required at v0.0.0 and replaced by ./staging/... upstream, which a
# dependent module cannot see) with the published v0.$KUBE_MINOR.$KUBE_PATCH; `tool` lines keep
# etcd, KWOK and the commands through `go mod tidy`. KWOK's node stages ship inside its module and
# are copied out of the module cache into <bin>/kwok-stages/node; the pod stages are ours
# (together_sim/kube/stages). The result is cached OUTSIDE the repository, keyed by the versions
# and a hash of this wrapper's sources:
#   ${TOGETHER_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/kube}/<key>/bin
set -euo pipefail

KUBE_VERSION="1.36.3"
ETCD_VERSION="3.6.8"
KWOK_VERSION="0.8.0"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${TOGETHER_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/kube}"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

say() { printf '[kube] %s\n' "$*" >&2; }
die() { printf '[kube] error: %s\n' "$*" >&2; exit 1; }

source_hash() {
  cat "$HERE/go.mod" "$HERE/go.sum" "$HERE/build.sh" | sha256sum | cut -c1-12
}

complete() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$1/$b" ] || return 1; done
  [ -f "$1/kwok-stages/node/node-initialize.yaml" ]
}

BIN="$CACHE_ROOT/v$KUBE_VERSION-etcd$ETCD_VERSION-kwok$KWOK_VERSION-$(source_hash)/bin"
if [ "${1:-}" = "--where" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi
if complete "$BIN"; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go >= 1.26 is needed to build Kubernetes v$KUBE_VERSION. Install Go and re-run (make engine)."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[ "${go_minor:-0}" -ge 26 ] 2>/dev/null || die "Go >= 1.26 is needed, found $(go env GOVERSION)."

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly"
cd "$HERE"
say "building Kubernetes v$KUBE_VERSION (apiserver, controller-manager, scheduler, kubectl), etcd v$ETCD_VERSION and KWOK v$KWOK_VERSION from Go modules into $BIN"
say "a cold build downloads ~0.5 GB of modules and compiles for ~10 minutes on 2 cores; later builds reuse Go's caches"

say "fetching modules through the Go module proxy"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
go mod download -x >/dev/null 2>"$LOG" \
  || { tail -5 "$LOG" >&2; die "could not download Go modules: is the Go module proxy reachable (go env GOPROXY)?"; }

STAGE="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE" "$LOG"' EXIT
chmod 0755 "$STAGE"  # mktemp makes it 0700; the cache is shared by every clone on the machine
V=k8s.io/component-base/version
LDFLAGS="-s -w -X $V.gitVersion=v$KUBE_VERSION -X $V.gitMajor=${KUBE_VERSION%%.*}"
LDFLAGS="$LDFLAGS -X $V.gitMinor=$(cut -d. -f2 <<<"$KUBE_VERSION") -X $V.gitTreeState=clean"

# -v names each package as it is compiled: show a running count so a long build is visibly alive.
start=$SECONDS
go build -v -buildvcs=false -trimpath -ldflags "$LDFLAGS" -o "$STAGE/" \
  go.etcd.io/etcd/server/v3 \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl \
  sigs.k8s.io/kwok/cmd/kwok 2>&1 \
  | awk '
      /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
      { n++; if (n % 200 == 0) { printf "[kube] compiled %d packages (%s)\n", n, $0 > "/dev/stderr" } }
      END { printf "[kube] compiled %d packages\n", n > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "go build failed (see the messages above)"
# go build names a main package whose path ends in a major version (/v3) after the element before.
mv "$STAGE/server" "$STAGE/etcd"

KWOK_DIR="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
mkdir -p "$STAGE/kwok-stages/node"
install -m 0644 "$KWOK_DIR/kustomize/stage/node/fast/node-initialize.yaml" \
  "$KWOK_DIR/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
  "$STAGE/kwok-stages/node/"
for b in "${BINARIES[@]}"; do [ -x "$STAGE/$b" ] || die "go build produced no $b"; done
"$STAGE/kube-apiserver" --version >/dev/null || die "the built kube-apiserver does not run"

mkdir -p "$(dirname "$BIN")"
rm -rf "$BIN"
mv "$STAGE" "$BIN"
trap - EXIT
rm -f "$LOG"
say "built in $((SECONDS - start)) s: $(du -sh "$BIN" | cut -f1) in $BIN"
printf '%s\n' "$BIN"
