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
# cached OUTSIDE the repository, keyed by version and a hash of the wrapper's sources:
#   ${TOGETHER_YAML_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/yaml-langhost}/<key>/bin
# Put that directory on PATH (next to the engine's) to run `runtime: yaml` programs.
set -euo pipefail

YAML_VERSION="1.25.0"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${TOGETHER_YAML_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/yaml-langhost}"
MODULE="github.com/pulumi/pulumi-yaml"

say() { printf '[yaml-langhost] %s\n' "$*" >&2; }
die() { printf '[yaml-langhost] error: %s\n' "$*" >&2; exit 1; }

source_hash() { cat "$HERE/go.mod" "$HERE/go.sum" "$HERE/build.sh" | sha256sum | cut -c1-12; }

ambient_bin() {
  local host dir
  host="$(command -v pulumi-language-yaml 2>/dev/null)" || return 1
  dir="$(dirname "$(readlink -f "$host")")"
  case "$dir" in "$CACHE_ROOT"/*) return 1 ;; esac
  printf '%s\n' "$dir"
}

if dir="$(ambient_bin)"; then
  printf '%s\n' "$dir"
  exit 0
fi

BIN="$CACHE_ROOT/v$YAML_VERSION-$(source_hash)/bin"
if [ "${1:-}" = "--where" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi
if [ -x "$BIN/pulumi-language-yaml" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go >= 1.26 is needed to build the YAML language host (no 'pulumi-language-yaml' is on PATH). Install Go, or put a pulumi-language-yaml on PATH."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[ "${go_minor:-0}" -ge 26 ] 2>/dev/null || die "Go >= 1.26 is needed, found $(go env GOVERSION)."

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly"
cd "$HERE"
say "building $MODULE v$YAML_VERSION (cmd/pulumi-language-yaml) into $BIN"
say "with a warm Go cache from the engine build this takes a few minutes; cold, 10-20 minutes"

go mod download -x >/dev/null 2>"$HERE/.download.log" \
  || { tail -5 "$HERE/.download.log" >&2; die "could not download Go modules for $MODULE@v$YAML_VERSION: is the Go module proxy reachable (go env GOPROXY), and does it serve that version (go list -m -versions $MODULE)?"; }
rm -f "$HERE/.download.log"

STAGE="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE"' EXIT
start=$SECONDS
go build -v -trimpath -ldflags "-s -w -X $MODULE/pkg/version.Version=v$YAML_VERSION" -o "$STAGE/" \
  "$MODULE/cmd/pulumi-language-yaml" 2>&1 \
  | awk '
      /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[yaml-langhost] compiled %d packages (%s)\n", n, $0 > "/dev/stderr" } }
      END { printf "[yaml-langhost] compiled %d packages\n", n > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "go build of $MODULE/cmd/pulumi-language-yaml failed (see the messages above)"
[ -x "$STAGE/pulumi-language-yaml" ] || die "the build produced no pulumi-language-yaml"

mkdir -p "$(dirname "$BIN")"
rm -rf "$BIN"
mv "$STAGE" "$BIN"
trap - EXIT
say "built in $((SECONDS - start)) s: $(du -sh "$BIN" | cut -f1) in $BIN"
printf '%s\n' "$BIN"
