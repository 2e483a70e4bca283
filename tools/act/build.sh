#!/usr/bin/env bash
# Ensure nektos/act (`act`, a local GitHub Actions runner) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# An `act` on PATH is used as it is. Otherwise it is built from the Go module github.com/nektos/act
# v0.2.89 (the version the Go module proxy serves) with this directory's go.mod as the wrapper
# module (committed with its go.sum). tests/gitops runs the example workflows with it in host
# mode (no containers; examples/gitops/README.md). The result is cached OUTSIDE the repository,
# keyed by version and a hash of the build's inputs (../lib.sh):
#   ${TOGETHER_ACT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/act}/<key>/bin
set -euo pipefail

NAME="act"
VERSION="0.2.89"
MODULE="github.com/nektos/act"
CACHE_ROOT="${TOGETHER_ACT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/act}"
INPUTS=(go.mod go.sum)

installed() { dir_on_path act; }

complete() { [ -x "$1/act" ]; }

build() {
  local stage="$1"
  require_go "act (no 'act' is on PATH)" "Install Go, or put an act on PATH."
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  say "building $MODULE v$VERSION"
  say "a cold build downloads ~150 MB of modules and compiles for a few minutes"
  go_download "$MODULE@v$VERSION (does the proxy serve that version? go list -m -versions $MODULE)"
  go_build -buildvcs=false -trimpath -ldflags "-s -w" -o "$stage/act" "$MODULE"
  "$stage/act" --version >/dev/null || die "the built act does not run"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
