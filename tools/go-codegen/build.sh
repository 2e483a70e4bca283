#!/usr/bin/env bash
# Ensure the Go SDK generator (`go-codegen`, see main.go) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# Built from ./main.go and the code it shares with tools/ts-codegen, ../codegen-common (a module
# go.mod reaches by `replace`), with this directory's go.mod as its module: the code generators
# of github.com/pulumi/pulumi/pkg/v3 at v3.248.0, the same release as ts-codegen (so the two
# share compiled packages) and as the Go SDK the generated code requires (main.go's sdkVersion).
# The result is cached OUTSIDE the repository, keyed by the pkg version and a hash of the
# build's inputs (../lib.sh):
#   ${TOGETHER_GO_CODEGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/go-codegen}/<key>/bin
# `make sdk-go` runs it to regenerate sdk/go from the plugin's schema.
set -euo pipefail

NAME="go-codegen"
VERSION="3.248.0"  # pulumi's pkg/v3 = main.go's sdkVersion
CACHE_ROOT="${TOGETHER_GO_CODEGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/go-codegen}"
INPUTS=(go.mod go.sum '*.go' ../codegen-common/go.mod '../codegen-common/*.go')

# Ours alone: no release ships this generator.
installed() { return 1; }

complete() { [ -x "$1/go-codegen" ]; }

build() {
  local stage="$1"
  require_go "the Go SDK generator"
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  say "building go-codegen (pulumi pkg v$VERSION code generators) into $stage"
  say "the first build compiles pulumi's code generators (a few minutes); later builds reuse Go's cache"
  go_download "the Go SDK generator"
  go_build -buildvcs=false -trimpath -tags osusergo,grpcnotrace -ldflags "-s -w" \
    -o "$stage/go-codegen" .
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
