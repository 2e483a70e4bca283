#!/usr/bin/env bash
# Ensure our Go language host (`pulumi-language-go`) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# The host is built from ./*.go (see main.go: the upstream host's Go module is not served by the
# Go module proxy) and the code it shares with our Python and Node.js hosts, ../langhost-common
# (a module go.mod reaches by `replace`), with this directory's go.mod as its module: pulumi's
# sdk/v3 at v3.248.0, the release of the Go SDK generator (tools/go-codegen) and of the SDK that
# Go programs and sdk/go pin, and of the Node.js host; every module the two have in common is
# required at the Node.js host's version (tests/unit/test_go_build_pins.py), so Go's build cache
# compiles their packages once. The host talks to the newer engine over the versioned gRPC
# protocol, as our other hosts do.
# It builds programs with the `go` on PATH at run time. A `pulumi-language-go` already on PATH (a
# release install) is used as it is. The result is cached OUTSIDE the repository, keyed by the sdk
# version and a hash of the build's inputs (../lib.sh):
#   ${TOGETHER_GO_LANGHOST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/go-langhost}/<key>/bin
# Put that directory on PATH (next to the engine's) to run `runtime: go` programs.
set -euo pipefail

NAME="go-langhost"
VERSION="3.248.0"  # pulumi's sdk = the Go SDK programs pin (tools/go-codegen)
CACHE_ENV=TOGETHER_GO_LANGHOST_CACHE

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
language_host pulumi-language-go "the Go language host"
main "$@"
