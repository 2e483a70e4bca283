#!/usr/bin/env bash
# Ensure our Node.js language host (`pulumi-language-nodejs`) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# The host is built from ./*.go (see main.go: the upstream host's Go module is not served by the
# Go module proxy), with this directory's go.mod as its module: pulumi's sdk/v3 and pkg/v3 at
# v3.248.0, the @pulumi/pulumi npm version the SDK runs on, not the engine's v3.274.1, because
# the host also generates TypeScript for `pulumi import` and generator and runtime are released
# together (see tools/ts-codegen/build.sh). The host talks to the newer engine over the versioned
# gRPC protocol, as the YAML host does.
# It runs TypeScript and JavaScript programs through the runner their @pulumi/pulumi npm package
# ships, so it needs `node` on PATH at run time, nothing else. A `pulumi-language-nodejs` already
# on PATH (a release install) is used as it is. The result is cached OUTSIDE the repository, keyed
# by the sdk version and a hash of the sources:
#   ${TOGETHER_NODEJS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/nodejs-langhost}/<key>/bin
# Put that directory on PATH (next to the engine's) to run `runtime: nodejs` programs.
set -euo pipefail

SDK_VERSION="3.248.0"  # = the @pulumi/pulumi the SDK runs on (tools/ts-codegen)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${TOGETHER_NODEJS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/nodejs-langhost}"

say() { printf '[nodejs-langhost] %s\n' "$*" >&2; }
die() { printf '[nodejs-langhost] error: %s\n' "$*" >&2; exit 1; }

source_hash() { cat "$HERE/go.mod" "$HERE/go.sum" "$HERE"/*.go "$HERE/build.sh" | sha256sum | cut -c1-12; }

ambient_bin() {
  local host dir
  host="$(command -v pulumi-language-nodejs 2>/dev/null)" || return 1
  dir="$(dirname "$(readlink -f "$host")")"
  case "$dir" in "$CACHE_ROOT"/*) return 1 ;; esac
  printf '%s\n' "$dir"
}

if dir="$(ambient_bin)"; then
  printf '%s\n' "$dir"
  exit 0
fi

BIN="$CACHE_ROOT/v$SDK_VERSION-$(source_hash)/bin"
if [ "${1:-}" = "--where" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi
if [ -x "$BIN/pulumi-language-nodejs" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go >= 1.26 is needed to build the Node.js language host (no 'pulumi-language-nodejs' is on PATH). Install Go, or put a pulumi-language-nodejs on PATH."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[ "${go_minor:-0}" -ge 26 ] 2>/dev/null || die "Go >= 1.26 is needed, found $(go env GOVERSION)."

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly"
cd "$HERE"
say "building pulumi-language-nodejs (sdk v$SDK_VERSION) into $BIN"
say "the first build compiles pulumi's code generators (a few minutes); later builds reuse Go's cache"

go mod download -x >/dev/null 2>"$HERE/.download.log" \
  || { tail -5 "$HERE/.download.log" >&2; die "could not download Go modules: is the Go module proxy reachable (go env GOPROXY)?"; }
rm -f "$HERE/.download.log"

STAGE="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE"' EXIT
start=$SECONDS
go build -v -buildvcs=false -trimpath -tags osusergo,grpcnotrace \
  -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$SDK_VERSION" \
  -o "$STAGE/pulumi-language-nodejs" . 2>&1 \
  | awk '
      /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[nodejs-langhost] compiled %d packages (%s)\n", n, $0 > "/dev/stderr" } }
      END { printf "[nodejs-langhost] compiled %d packages\n", n > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "go build failed (see the messages above)"
"$STAGE/pulumi-language-nodejs" -version >/dev/null || die "the built host does not run"

mkdir -p "$(dirname "$BIN")"
rm -rf "$BIN"
mv "$STAGE" "$BIN"
trap - EXIT
say "built in $((SECONDS - start)) s: $(du -sh "$BIN" | cut -f1) in $BIN"
printf '%s\n' "$BIN"
