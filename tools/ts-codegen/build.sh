#!/usr/bin/env bash
# Ensure the TypeScript SDK generator (`ts-codegen`, see main.go) exists and print its directory.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory it is (or would be) in; build nothing
#
# Built from ./main.go with this directory's go.mod as its module: the code generators of
# github.com/pulumi/pulumi/pkg/v3 at v3.248.0, the version of the @pulumi/pulumi npm package the
# SDK runs on (the last that accepts Node 20), NOT the engine's v3.274.1: generator and runtime
# are released together, and newer generators emit calls older runtimes lack (v3.274.1's uses
# runtime.existsResource, which @pulumi/pulumi 3.248.0 does not have, so the SDK would not
# compile). The result is cached OUTSIDE the repository, keyed by the
# pkg version and a hash of the sources:
#   ${TOGETHER_TS_CODEGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/ts-codegen}/<key>/bin
# `make sdk-typescript` runs it to regenerate sdk/typescript from the plugin's schema.
set -euo pipefail

PKG_VERSION="3.248.0"  # = the @pulumi/pulumi pin in main.go
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${TOGETHER_TS_CODEGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/ts-codegen}"

say() { printf '[ts-codegen] %s\n' "$*" >&2; }
die() { printf '[ts-codegen] error: %s\n' "$*" >&2; exit 1; }

source_hash() { cat "$HERE/go.mod" "$HERE/go.sum" "$HERE"/*.go "$HERE/build.sh" | sha256sum | cut -c1-12; }

BIN="$CACHE_ROOT/v$PKG_VERSION-$(source_hash)/bin"
if [ "${1:-}" = "--where" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi
if [ -x "$BIN/ts-codegen" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go >= 1.26 is needed to build the TypeScript SDK generator. Install Go."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[ "${go_minor:-0}" -ge 26 ] 2>/dev/null || die "Go >= 1.26 is needed, found $(go env GOVERSION)."

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly"
cd "$HERE"
say "building ts-codegen (pulumi pkg v$PKG_VERSION code generators) into $BIN"
say "the first build compiles pulumi's code generators (a few minutes); later builds reuse Go's cache"

go mod download -x >/dev/null 2>"$HERE/.download.log" \
  || { tail -5 "$HERE/.download.log" >&2; die "could not download Go modules: is the Go module proxy reachable (go env GOPROXY)?"; }
rm -f "$HERE/.download.log"

STAGE="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE"' EXIT
start=$SECONDS
go build -v -buildvcs=false -trimpath -tags osusergo,grpcnotrace -ldflags "-s -w" \
  -o "$STAGE/ts-codegen" . 2>&1 \
  | awk '
      /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[ts-codegen] compiled %d packages (%s)\n", n, $0 > "/dev/stderr" } }
      END { printf "[ts-codegen] compiled %d packages\n", n > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "go build failed (see the messages above)"
[ -x "$STAGE/ts-codegen" ] || die "the build produced no ts-codegen"

mkdir -p "$(dirname "$BIN")"
rm -rf "$BIN"
mv "$STAGE" "$BIN"
trap - EXIT
say "built in $((SECONDS - start)) s: $(du -sh "$BIN" | cut -f1) in $BIN"
printf '%s\n' "$BIN"
