# shellcheck shell=bash
# What every tools/*/build.sh shares: find an installed copy or a cached build, else build from Go
# modules into a staging directory and move it into the cache whole. A build.sh sets
#
#   NAME        the tag of its progress lines, e.g. engine            -> "[engine] ..."
#   VERSION     the version it builds (part of the cache directory's name)
#   CACHE_ROOT  where its builds are cached (outside the repository, shared by every clone)
#   INPUTS      the files, besides build.sh and this file, that the build reads (relative paths)
#
# and defines three functions, then calls `main "$@"`:
#
#   installed   print the directory of a usable installed copy, or fail (a release install)
#   complete    succeed when the directory $1 holds a finished build
#   build       build into the directory $1 (a staging directory), in the build's directory
#
# main prints the bin directory on stdout, progress on stderr; `build.sh --where` prints the
# directory the build is (or would be) in and builds nothing. The cache key hashes INPUTS and the
# code of build.sh and of this file without their comment lines: a change to a source, a pin or a
# build step rebuilds; an edited comment or a second clone reuses the cache.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"  # the build's directory (its build.sh's)
TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GO_MIN_MINOR=26  # Go >= 1.26: the oldest toolchain the wrapper modules declare

say() { printf '[%s] %s\n' "$NAME" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$NAME" "$*" >&2; exit 1; }

# Code without comment lines: what a build does, not how it is described.
code_of() { grep -v -E '^[[:space:]]*(#|$)' "$1"; }

# Twelve hex digits over every input's name and content, in a fixed order. INPUTS may hold
# globs (langhost/*.go), expanded here in the build's directory.
source_hash() {
  (
    cd "$HERE"
    export LC_ALL=C
    local pattern file
    for pattern in "${INPUTS[@]}"; do
      for file in $pattern; do
        [ -f "$file" ] || die "build input $pattern is missing from $HERE"
        printf '%s\0' "$file"
        cat "$file"
      done
    done
    printf 'build.sh\0'
    code_of build.sh
    printf 'lib.sh\0'
    code_of "$TOOLS/lib.sh"
  ) | sha256sum | cut -c1-12
}

bin_dir() {
  local key
  key="$(source_hash)" || exit 1
  printf '%s/v%s-%s/bin\n' "$CACHE_ROOT" "$VERSION" "$key"
}

# An installed copy counts only when it is not one of our own cached builds on PATH.
installed_elsewhere() {
  local dir
  dir="$(installed)" || return 1
  case "$dir" in "$CACHE_ROOT"/*) return 1 ;; esac
  printf '%s\n' "$dir"
}

# The directory of the executable $1 on PATH, symlinks resolved.
dir_on_path() {
  local found
  found="$(command -v "$1" 2>/dev/null)" || return 1
  dirname "$(readlink -f "$found")"
}

# require_go WHAT [FIX]: Go >= 1.GO_MIN_MINOR on PATH, or an error naming what needs it.
require_go() {
  local minor
  command -v go >/dev/null 2>&1 || die "Go >= 1.$GO_MIN_MINOR is needed to build $1. ${2:-Install Go and re-run (make engine).}"
  minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
  [ "${minor:-0}" -ge "$GO_MIN_MINOR" ] 2>/dev/null || die "Go >= 1.$GO_MIN_MINOR is needed, found $(go env GOVERSION)."
}

# `go mod download` in the current module, its log kept only when it fails.
go_download() {
  local log
  log="$(mktemp)"
  say "fetching modules through the Go module proxy"
  go mod download -x >/dev/null 2>"$log" \
    || { tail -5 "$log" >&2; rm -f "$log"; die "could not download Go modules${1:+ for $1}: is the Go module proxy reachable (go env GOPROXY)?"; }
  rm -f "$log"
}

# `go build -v ARGS...`, showing a running count of compiled packages so a long build is visibly
# alive; compiler messages pass through.
go_build() {
  go build -v "$@" 2>&1 \
    | awk -v tag="$NAME" '
        /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
        { n++; if (n % 100 == 0) { printf "[%s] compiled %d packages (%s)\n", tag, n, $0 > "/dev/stderr" } }
        END { printf "[%s] compiled %d packages\n", tag, n > "/dev/stderr" }'
  [ "${PIPESTATUS[0]}" -eq 0 ] || die "go build failed (see the messages above)"
}

main() {
  local dir bin stage start
  if dir="$(installed_elsewhere)"; then
    printf '%s\n' "$dir"
    return 0
  fi
  bin="$(bin_dir)"
  if [ "${1:-}" = "--where" ]; then
    printf '%s\n' "$bin"
    return 0
  fi
  if complete "$bin"; then
    printf '%s\n' "$bin"
    return 0
  fi

  export GOTOOLCHAIN=local CGO_ENABLED=0
  mkdir -p "$CACHE_ROOT"
  stage="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX")"
  chmod 0755 "$stage"  # mktemp makes it 0700; the cache is shared by every clone on the machine
  # shellcheck disable=SC2064  # expand now: $stage is local
  trap "rm -rf '$stage'" EXIT
  start=$SECONDS
  cd "$HERE"
  build "$stage"
  complete "$stage" || die "the build finished without everything in place in $stage"
  mkdir -p "$(dirname "$bin")"
  # Another clone may have finished the same build meanwhile (and be using it): keep that one.
  if complete "$bin"; then
    say "an identical build finished first; using it"
  else
    rm -rf "$bin"
    mv -T "$stage" "$bin" 2>/dev/null || complete "$bin" || die "could not move the build to $bin"
  fi
  rm -rf "$stage"
  trap - EXIT
  say "built in $((SECONDS - start)) s: $(du -sh "$bin" | cut -f1) in $bin"
  printf '%s\n' "$bin"
}
