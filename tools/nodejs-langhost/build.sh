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
CACHE_ENV=TOGETHER_NODEJS_CACHE
NOTE="the first build compiles pulumi's code generators (a few minutes); later builds reuse Go's cache"

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
language_host pulumi-language-nodejs "the Node.js language host"
main "$@"
