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
CACHE_ENV=TOGETHER_ACT_CACHE
CHECK=--version
NOTE="a cold build downloads ~150 MB of modules and compiles for a few minutes"

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
upstream_program act "$MODULE" "act"
main "$@"
