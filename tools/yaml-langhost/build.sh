#!/usr/bin/env bash
# Ensure the Pulumi YAML language host (`pulumi-language-yaml`) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# A `pulumi-language-yaml` on PATH is used as it is. Otherwise the host is built from the Go
# module github.com/pulumi/pulumi-yaml (cmd/pulumi-language-yaml) through the Go module proxy,
# with this directory's go.mod as the wrapper module (committed with its go.sum). It pins
# pulumi-yaml v1.25.0, the newest the proxy serves, at the github.com/pulumi/pulumi/{pkg,sdk}/v3
# v3.206.0 it declares: it does not compile against the engine's v3.274.1 (plugin.Host and
# plugin.NewContextWithRoot moved between the two), and a language host only talks to the engine
# over the versioned gRPC protocol, so an older host drives a newer engine. The result is
# cached OUTSIDE the repository, keyed by version and a hash of the build's inputs:
#   ${TOGETHER_YAML_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/yaml-langhost}/<key>/bin
# Put that directory on PATH (next to the engine's) to run `runtime: yaml` programs.
set -euo pipefail

NAME="yaml-langhost"
VERSION="1.25.0"
MODULE="github.com/pulumi/pulumi-yaml"
CACHE_ENV=TOGETHER_YAML_CACHE
VERSION_VAR="$MODULE/pkg/version.Version"
NOTE="with a warm Go cache from the engine build this takes a few minutes; cold, 10-20 minutes"

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
upstream_program pulumi-language-yaml "$MODULE/cmd/pulumi-language-yaml" "the YAML language host"
main "$@"
