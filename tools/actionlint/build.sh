#!/usr/bin/env bash
# Ensure rhysd/actionlint (a GitHub Actions workflow linter) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# An `actionlint` on PATH is used as it is. Otherwise it is built from the Go module
# github.com/rhysd/actionlint v1.7.12 (cmd/actionlint) with this directory's go.mod as the wrapper
# module (committed with its go.sum). `make lint` runs it over examples/gitops/workflows. The
# result is cached OUTSIDE the repository, keyed by version and a hash of the build's inputs:
#   ${TOGETHER_ACTIONLINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/actionlint}/<key>/bin
set -euo pipefail

NAME="actionlint"
VERSION="1.7.12"
MODULE="github.com/rhysd/actionlint"
CACHE_ENV=TOGETHER_ACTIONLINT_CACHE
VERSION_VAR="$MODULE.version"
CHECK=-version

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
upstream_program actionlint "$MODULE/cmd/actionlint" "actionlint"
main "$@"
