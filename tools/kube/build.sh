#!/usr/bin/env bash
# Ensure a Kubernetes control plane built from Go modules exists (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, the kubelet for real nodes and KWOK, the
# kubelet stand-in) and print the directory that holds it. `python -m together_sim --kubernetes`
# runs one control plane per simulated cluster from these binaries (docs/kubernetes-sim.md).
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
# and a hash of the build's inputs (../lib.sh):
#   ${TOGETHER_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/kube}/<key>/bin
set -euo pipefail

NAME="kube"
KUBE_VERSION="1.36.3"
ETCD_VERSION="3.6.8"
KWOK_VERSION="0.8.0"
VERSION="$KUBE_VERSION-etcd$ETCD_VERSION-kwok$KWOK_VERSION"
CACHE_ENV=TOGETHER_KUBE_CACHE
INPUTS=(go.mod go.sum)
# Ours alone (no ON_PATH): the simulator needs these exact versions and KWOK's stages beside them.
PROGRAMS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kwok)
FILES=(kwok-stages/node/node-initialize.yaml)

build() {
  local stage="$1" v=k8s.io/component-base/version ldflags kwok_dir
  require_go "Kubernetes v$KUBE_VERSION"
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  say "building Kubernetes v$KUBE_VERSION (apiserver, controller-manager, scheduler, kubectl, kubelet), etcd v$ETCD_VERSION and KWOK v$KWOK_VERSION from Go modules"
  say "a cold build downloads ~0.5 GB of modules and compiles for ~10 minutes on 2 cores; later builds reuse Go's caches"
  go_download "Kubernetes v$KUBE_VERSION"
  ldflags="-s -w -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=${KUBE_VERSION%%.*}"
  ldflags="$ldflags -X $v.gitMinor=$(cut -d. -f2 <<<"$KUBE_VERSION") -X $v.gitTreeState=clean"
  go_build -buildvcs=false -trimpath -ldflags "$ldflags" -o "$stage/" \
    go.etcd.io/etcd/server/v3 \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl \
    k8s.io/kubernetes/cmd/kubelet \
    sigs.k8s.io/kwok/cmd/kwok
  # go build names a main package whose path ends in a major version (/v3) after the element before.
  mv "$stage/server" "$stage/etcd"
  kwok_dir="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
  mkdir -p "$stage/kwok-stages/node"
  install -m 0644 "$kwok_dir/kustomize/stage/node/fast/node-initialize.yaml" \
    "$kwok_dir/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
    "$stage/kwok-stages/node/"
  "$stage/kube-apiserver" --version >/dev/null || die "the built kube-apiserver does not run"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
