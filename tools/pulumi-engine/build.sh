#!/usr/bin/env bash
# Ensure a Pulumi engine (CLI + Python language host + the two Python runtime scripts) exists and
# print the directory that holds it.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory the engine is (or would be) in; build nothing
#
# A `pulumi` on PATH at v3.272 or newer (any later 3.x) with the Python host beside it, as a release
# install has, is used as it is. Otherwise the CLI is built from Go modules through the Go module
# proxy, with this directory's go.mod as the wrapper module, and the Python language host is built
# from ./langhost (the upstream host's module is not served; see langhost/main.go) and the code it
# shares with the Node.js host, ../langhost-common (a module go.mod reaches by `replace`). The result is
# cached OUTSIDE the repository, keyed by the engine version and a hash of the build's inputs
# (../lib.sh), so every clone on the machine (CI included) reuses it:
#   ${TOGETHER_ENGINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/engine}/<key>/bin
set -euo pipefail

NAME="engine"
VERSION="3.274.1"
MIN_MINOR=272  # the oldest v3 CLI the Python SDK pin (pulumi==3.272.0) is tested with
CACHE_ENV=TOGETHER_ENGINE_CACHE
INPUTS=(go.mod go.sum 'langhost/*.go' ../langhost-common/go.mod '../langhost-common/*.go')
PROGRAMS=(pulumi pulumi-language-python pulumi-resource-pulumi-python)
FILES=(pulumi-language-python-exec)

# "v3.272.0", "v3.280.1-dev.0", "3.300.0": v3 at minor MIN_MINOR or later.
supported_version() {
  local minor
  [[ "$1" =~ ^v?3\.([0-9]+)\. ]] || return 1
  minor="${BASH_REMATCH[1]}"
  [ "$minor" -ge "$MIN_MINOR" ]
}

# A suitable CLI already installed (a release install ships the Python host and scripts with it).
installed() {
  local dir
  dir="$(dir_on_path pulumi)" || return 1
  supported_version "$("$dir/pulumi" version 2>/dev/null)" || return 1
  [ -x "$dir/pulumi-language-python" ] && [ -f "$dir/pulumi-language-python-exec" ] \
    && [ -x "$dir/pulumi-resource-pulumi-python" ] || return 1
  printf '%s\n' "$dir"
}

build() {
  local stage="$1" sdk
  require_go "the Pulumi engine (no 'pulumi' v3.$MIN_MINOR or newer is on PATH)" \
    "Install Go, or install Pulumi v3.$MIN_MINOR or newer."
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  say "building Pulumi v$VERSION (CLI + Python language host) from Go modules"
  say "the first build downloads ~1-2 GB of modules and compiles for 10-30 minutes; later builds reuse Go's caches"
  go_download
  go_build -buildvcs=false -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION" \
    -o "$stage/" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi ./langhost
  mv "$stage/langhost" "$stage/pulumi-language-python"
  sdk="$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
  install -m 0755 "$sdk/python/cmd/pulumi-language-python-exec" "$stage/"
  install -m 0755 "$sdk/python/dist/pulumi-resource-pulumi-python" "$stage/"
  "$stage/pulumi" version >/dev/null || die "the built CLI does not run"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
