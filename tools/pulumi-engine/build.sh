#!/usr/bin/env bash
# Ensure a Pulumi engine (CLI + Python language host + the two Python runtime scripts) exists and
# print the directory that holds it.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory the engine is (or would be) in; build nothing
#
# A `pulumi` on PATH at v3.272 or newer (any later 3.x) with the Python host beside it, as a release
# install has, is used as it is. Otherwise
# the CLI is built from Go modules through the Go module proxy, with this directory's go.mod as
# the wrapper module, and the Python language host is built from ./langhost (the upstream host's
# module is not served; see langhost/main.go). The result is cached OUTSIDE the repository, keyed
# by the engine version and a hash of the wrapper's sources, so every clone on the machine (CI
# included) reuses it:
#   ${TOGETHER_ENGINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/engine}/<key>/bin
set -euo pipefail

PULUMI_VERSION="3.274.1"
MIN_MINOR=272  # the oldest v3 CLI the Python SDK pin (pulumi==3.272.0) is tested with
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${TOGETHER_ENGINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/engine}"

say() { printf '[engine] %s\n' "$*" >&2; }
die() { printf '[engine] error: %s\n' "$*" >&2; exit 1; }

source_hash() {
  cat "$HERE/go.mod" "$HERE/go.sum" "$HERE"/langhost/*.go "$HERE/build.sh" \
    | sha256sum | cut -c1-12
}

# "v3.272.0", "v3.280.1-dev.0", "3.300.0": v3 at minor MIN_MINOR or later.
supported_version() {
  local minor
  [[ "$1" =~ ^v?3\.([0-9]+)\. ]] || return 1
  minor="${BASH_REMATCH[1]}"
  [ "$minor" -ge "$MIN_MINOR" ]
}

# A suitable CLI already installed (a release install ships the Python host and scripts with it).
ambient_bin() {
  local cli dir
  cli="$(command -v pulumi 2>/dev/null)" || return 1
  dir="$(dirname "$(readlink -f "$cli")")"
  case "$dir" in "$CACHE_ROOT"/*) return 1 ;; esac
  supported_version "$("$cli" version 2>/dev/null)" || return 1
  [ -x "$dir/pulumi-language-python" ] && [ -f "$dir/pulumi-language-python-exec" ] \
    && [ -x "$dir/pulumi-resource-pulumi-python" ] || return 1
  printf '%s\n' "$dir"
}

if dir="$(ambient_bin)"; then
  printf '%s\n' "$dir"
  exit 0
fi

BIN="$CACHE_ROOT/v$PULUMI_VERSION-$(source_hash)/bin"
if [ "${1:-}" = "--where" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi

if [ -x "$BIN/pulumi" ] && [ -x "$BIN/pulumi-language-python" ] \
   && [ -f "$BIN/pulumi-language-python-exec" ] && [ -x "$BIN/pulumi-resource-pulumi-python" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go >= 1.26 is needed to build the Pulumi engine (no 'pulumi' v3.$MIN_MINOR or newer is on PATH). Install Go, or install Pulumi v3.$MIN_MINOR or newer."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[ "${go_minor:-0}" -ge 26 ] 2>/dev/null || die "Go >= 1.26 is needed, found $(go env GOVERSION)."

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly"
cd "$HERE"
say "building Pulumi v$PULUMI_VERSION (CLI + Python language host) from Go modules into $BIN"
say "the first build downloads ~1-2 GB of modules and compiles for 10-30 minutes; later builds reuse Go's caches"

say "fetching modules through the Go module proxy"
go mod download -x >/dev/null 2>"$HERE/.download.log" \
  || { tail -5 "$HERE/.download.log" >&2; die "could not download Go modules: is the Go module proxy reachable (go env GOPROXY)?"; }
rm -f "$HERE/.download.log"

STAGE="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE"' EXIT
LDFLAGS="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"

# -v names each package as it is compiled: show a running count so a long build is visibly alive.
start=$SECONDS
go build -v -buildvcs=false -trimpath -tags osusergo,grpcnotrace -ldflags "$LDFLAGS" -o "$STAGE/" \
  github.com/pulumi/pulumi/pkg/v3/cmd/pulumi ./langhost 2>&1 \
  | awk -v start="$start" '
      /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[engine] compiled %d packages (%s)\n", n, $0 > "/dev/stderr" } }
      END { printf "[engine] compiled %d packages\n", n > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "go build failed (see the messages above)"
mv "$STAGE/langhost" "$STAGE/pulumi-language-python"

SDK_DIR="$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
install -m 0755 "$SDK_DIR/python/cmd/pulumi-language-python-exec" "$STAGE/"
install -m 0755 "$SDK_DIR/python/dist/pulumi-resource-pulumi-python" "$STAGE/"
"$STAGE/pulumi" version >/dev/null || die "the built CLI does not run"

mkdir -p "$(dirname "$BIN")"
rm -rf "$BIN"
mv "$STAGE" "$BIN"
trap - EXIT
say "built in $((SECONDS - start)) s: $(du -sh "$BIN" | cut -f1) in $BIN"
printf '%s\n' "$BIN"
