# shellcheck shell=bash
# What every tools/*/build.sh shares: find an installed copy or a cached build, else build from Go
# modules into a staging directory and move it into the cache whole. A build.sh declares
#
#   NAME        the tag of its progress lines, e.g. engine -> "[engine] ...", and its cache's name
#   VERSION     the version it builds (part of the cache directory's name)
#   CACHE_ENV   the variable that moves its cache, e.g. TOGETHER_ACT_CACHE: the cache, outside the
#               repository and shared by every clone, is that variable's value when set, else
#               ${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/$NAME
#   INPUTS      the files, besides build.sh and this file, that the build reads (relative paths)
#   PROGRAMS    the executables a finished build holds (the images build has none)
#   FILES       (optional) the other files it holds, relative to the bin directory, each not empty
#   ON_PATH     (optional) the executable whose copy on PATH, outside our cache, is used as it is
#               (a release install); without it the build is ours alone
#
# then calls `main "$@"`. A build of one Go program (PROGRAMS names it) from the wrapper module
# in its directory declares how, and this file builds it (go_program); upstream_program,
# language_host and sdk_generator below declare most of it in one line for each kind:
#
#   PACKAGE     the Go package: a path in MODULE, or . for the build's own sources
#   MODULE      (optional) the upstream module PACKAGE is in, downloaded at v$VERSION
#   WHAT        what it is, in messages: "the YAML language host"
#   TAGS        (optional) go build -tags
#   VERSION_VAR (optional) the Go variable set to v$VERSION at link time
#   CHECK       (optional) the flag the built program must run with, e.g. -version
#   NOTE        (optional) a progress line on how long a first build takes
#
# Any other build defines `build`, which builds into the directory $1 (a staging directory), in
# the build's directory; one may also define `installed` (print the directory of a usable
# installed copy, or fail) and `complete` (succeed when the directory $1 holds a finished build)
# where ON_PATH, PROGRAMS and FILES do not say enough.
#
# main prints the bin directory on stdout, progress on stderr; `build.sh --where` prints the
# directory the build is (or would be) in and builds nothing. The cache key hashes INPUTS and the
# code of build.sh and of this file without their comment lines: a change to a source, a pin or a
# build step rebuilds; an edited comment or a second clone reuses the cache.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"  # the build's directory (its build.sh's)
TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GO_MIN_MINOR=26  # Go >= 1.26: the oldest toolchain the wrapper modules declare
CACHE_ROOT="${!CACHE_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/$NAME}"

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

# The defaults of the functions a build.sh may define (it defines them before sourcing this).
declare -F installed >/dev/null || installed() {
  [ -n "${ON_PATH:-}" ] && dir_on_path "$ON_PATH"
}
declare -F complete >/dev/null || complete() {
  local program file
  for program in "${PROGRAMS[@]}"; do [ -x "$1/$program" ] || return 1; done
  for file in "${FILES[@]}"; do [ -s "$1/$file" ] || return 1; done
}
declare -F build >/dev/null || build() { go_program "$1"; }

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

# The one Go program PACKAGE, built into the directory $1 as ${PROGRAMS[0]}, stamped and checked
# as its build.sh declares (see the top of this file). The messages name where it comes from
# (MODULE at VERSION, or WHAT) and, when ON_PATH allows an installed copy, that one would do.
go_program() {
  local stage="$1" program="${PROGRAMS[0]}" from a=a ldflags="-s -w"
  [ "${#PROGRAMS[@]}" -eq 1 ] || die "a Go program build declares one program, not: ${PROGRAMS[*]}"
  if [ -n "${ON_PATH:-}" ]; then
    case "$ON_PATH" in [aeiou]*) a=an ;; esac
    require_go "$WHAT (no '$ON_PATH' is on PATH)" "Install Go, or put $a $ON_PATH on PATH."
  else
    require_go "$WHAT"
  fi
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
  if [ -n "${MODULE:-}" ]; then
    from="${PACKAGE#"$MODULE"}"
    say "building $MODULE v$VERSION${from:+ (${from#/})}"
  else
    say "building $program (pulumi v$VERSION) into $stage"
  fi
  [ -z "${NOTE:-}" ] || say "$NOTE"
  if [ -n "${MODULE:-}" ]; then
    go_download "$MODULE@v$VERSION (does the proxy serve that version? go list -m -versions $MODULE)"
  else
    go_download "$WHAT"
  fi
  [ -z "${VERSION_VAR:-}" ] || ldflags="$ldflags -X $VERSION_VAR=v$VERSION"
  go_build -buildvcs=false -trimpath ${TAGS:+-tags "$TAGS"} -ldflags "$ldflags" \
    -o "$stage/$program" "$PACKAGE"
  [ -z "${CHECK:-}" ] || "$stage/$program" "$CHECK" >/dev/null || die "the built $program does not run"
}

# upstream_program PROGRAM PACKAGE WHAT: PROGRAM built from PACKAGE of the upstream MODULE at
# VERSION, which this directory's go.mod (with its go.sum) requires; one on PATH is used instead.
upstream_program() {
  PROGRAMS=("$1")
  ON_PATH="$1"
  PACKAGE="$2"
  WHAT="$3"
  INPUTS=(go.mod go.sum)
}

# Our own Go sources (this directory's *.go) beside the module they share with their siblings,
# tools/$1, both in the cache key; built with pulumi's tags, as the engine is.
own_sources() {
  PACKAGE=.
  TAGS=osusergo,grpcnotrace
  INPUTS=(go.mod go.sum '*.go' "../$1/go.mod" "../$1/*.go")
}

# language_host PROGRAM WHAT: one of our language hosts (on tools/langhost-common), stamped with
# the pulumi sdk VERSION it is built on and checked with -version; one on PATH is used instead.
language_host() {
  PROGRAMS=("$1")
  ON_PATH="$1"
  WHAT="$2"
  VERSION_VAR=github.com/pulumi/pulumi/sdk/v3/go/common/version.Version
  CHECK=-version
  own_sources langhost-common
}

# sdk_generator PROGRAM WHAT: one of our SDK generators (on tools/codegen-common), ours alone
# (no release ships them), built on pulumi's pkg/v3 at VERSION.
sdk_generator() {
  PROGRAMS=("$1")
  WHAT="$2"
  NOTE="the first build compiles pulumi's code generators (a few minutes); later builds reuse Go's cache"
  own_sources codegen-common
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
