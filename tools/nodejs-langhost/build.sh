#!/usr/bin/env bash
# Ensure our Node.js language host (`pulumi-language-nodejs`) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# The host is built from ./*.go (see main.go: the upstream host's Go module is not served by the
# Go module proxy) and the code it shares with our Python host, ../langhost-common (a module go.mod
# reaches by `replace`), with this directory's go.mod as its module: pulumi's sdk/v3 and pkg/v3 at
# v3.248.0, the @pulumi/pulumi npm version the SDK runs on, not the engine's v3.274.1, because
# the host also generates TypeScript for `pulumi import` and generator and runtime are released
# together (see tools/ts-codegen/build.sh). The host talks to the newer engine over the versioned
# gRPC protocol, as the YAML host does.
# It runs TypeScript and JavaScript programs through the runner their @pulumi/pulumi npm package
# ships, so it needs `node` on PATH at run time, nothing else. A `pulumi-language-nodejs` already
# on PATH (a release install) is used as it is. The result is cached OUTSIDE the repository, keyed
# by the sdk version and a hash of the build's inputs (../lib.sh):
#   ${TOGETHER_NODEJS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/nodejs-langhost}/<key>/bin
# Put that directory on PATH (next to the engine's) to run `runtime: nodejs` programs.
set -euo pipefail

NAME="nodejs-langhost"
VERSION="3.248.0"  # pulumi's sdk/pkg = the @pulumi/pulumi the SDK runs on (tools/ts-codegen)
CACHE_ROOT="${TOGETHER_NODEJS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/nodejs-langhost}"
INPUTS=(go.mod go.sum '*.go' ../langhost-common/go.mod '../langhost-common/*.go')

installed() { dir_on_path pulumi-language-nodejs; }

complete() { [ -x "$1/pulumi-language-nodejs" ]; }

build() {
  local stage="$1"
  require_go "the Node.js language host (no 'pulumi-language-nodejs' is on PATH)" \
    "Install Go, or put a pulumi-language-nodejs on PATH."
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  say "building pulumi-language-nodejs (sdk v$VERSION) into $stage"
  say "the first build compiles pulumi's code generators (a few minutes); later builds reuse Go's cache"
  go_download "the Node.js language host"
  go_build -buildvcs=false -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$VERSION" \
    -o "$stage/pulumi-language-nodejs" .
  "$stage/pulumi-language-nodejs" -version >/dev/null || die "the built host does not run"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
