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
CACHE_ENV=TOGETHER_GO_CODEGEN_CACHE

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sdk_generator go-codegen "the Go SDK generator"
main "$@"
