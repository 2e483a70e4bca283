#!/usr/bin/env bash
# Ensure the TypeScript SDK generator (`ts-codegen`, see main.go) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# Built from ./main.go and the code it shares with tools/go-codegen, ../codegen-common (a module
# go.mod reaches by `replace`), with this directory's go.mod as its module: the code generators of
# github.com/pulumi/pulumi/pkg/v3 at v3.248.0, the version of the @pulumi/pulumi npm package the
# SDK runs on (the last that accepts Node 20), NOT the engine's v3.274.1: generator and runtime
# are released together, and newer generators emit calls older runtimes lack (v3.274.1's uses
# runtime.existsResource, which @pulumi/pulumi 3.248.0 does not have, so the SDK would not
# compile). The result is cached OUTSIDE the repository, keyed by the
# pkg version and a hash of the build's inputs (../lib.sh):
#   ${TOGETHER_TS_CODEGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/ts-codegen}/<key>/bin
# `make sdk-typescript` runs it to regenerate sdk/typescript from the plugin's schema.
set -euo pipefail

NAME="ts-codegen"
VERSION="3.248.0"  # pulumi's pkg/v3 = the @pulumi/pulumi pin in main.go
CACHE_ENV=TOGETHER_TS_CODEGEN_CACHE

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
sdk_generator ts-codegen "the TypeScript SDK generator"
main "$@"
