#!/usr/bin/env bash
# Ensure the pulumi-kubernetes resource plugin (`pulumi-resource-kubernetes`) exists and print the
# directory that holds it. Tests put that directory on PATH so the engine finds the plugin ambiently.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory the plugin is (or would be) in; build nothing
#
# The provider module has no tags of its own, so it is pinned by the pseudo-version of tag
# v$K8S_PROVIDER_VERSION. Its two *-embed.json inputs are generated upstream by `go generate` and
# git-ignored, so they are missing from the module zip: this script copies the module out of the
# module cache into ./provider-src (git-ignored; go.mod points there with a directory replace) and
# writes them with a small Python transform equivalent to upstream's generate.go. The result is
# cached OUTSIDE the repository, keyed by the provider version and a hash of this wrapper's sources:
#   ${TOGETHER_K8S_PROVIDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/k8s-provider}/<key>/bin
# Keep K8S_PROVIDER_VERSION equal to the pulumi-kubernetes pin in constraints.txt.
set -euo pipefail

K8S_PROVIDER_VERSION="4.25.0"
K8S_PROVIDER_MODULE="github.com/pulumi/pulumi-kubernetes/provider/v4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${TOGETHER_K8S_PROVIDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/k8s-provider}"
PLUGIN="pulumi-resource-kubernetes"

say() { printf '[k8s-provider] %s\n' "$*" >&2; }
die() { printf '[k8s-provider] error: %s\n' "$*" >&2; exit 1; }

source_hash() {
  cat "$HERE/go.mod" "$HERE/go.sum" "$HERE/build.sh" | sha256sum | cut -c1-12
}

# A plugin already on PATH (outside our cache) is used as it is, like a suitable `pulumi`.
if ambient="$(command -v "$PLUGIN" 2>/dev/null)"; then
  dir="$(dirname "$(readlink -f "$ambient")")"
  case "$dir" in
    "$CACHE_ROOT"/*) ;;
    *) printf '%s\n' "$dir"; exit 0 ;;
  esac
fi

BIN="$CACHE_ROOT/v$K8S_PROVIDER_VERSION-$(source_hash)/bin"
if [ "${1:-}" = "--where" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi
if [ -x "$BIN/$PLUGIN" ]; then
  printf '%s\n' "$BIN"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go >= 1.26 is needed to build $PLUGIN v$K8S_PROVIDER_VERSION. Install Go and re-run (make engine)."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
[ "${go_minor:-0}" -ge 26 ] 2>/dev/null || die "Go >= 1.26 is needed, found $(go env GOVERSION)."
command -v python3 >/dev/null 2>&1 || die "python3 is needed to generate the provider's embedded schema."

export GOTOOLCHAIN=local CGO_ENABLED=0
cd "$HERE"
say "building $PLUGIN v$K8S_PROVIDER_VERSION from Go modules into $BIN"
say "a cold build downloads ~160 MB of modules (~0.8 GB unpacked) and compiles for ~11 minutes on 2 cores"

# The pinned version comes from go.mod, so the module and the wrapper can never disagree.
rev="$(awk -v m="$K8S_PROVIDER_MODULE" '$1 == m && $2 ~ /^v/ {print $2; exit}' go.mod)"
[ -n "$rev" ] || die "go.mod does not require $K8S_PROVIDER_MODULE"

say "fetching modules through the Go module proxy"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
# Download the provider outside this module so the directory replace does not interfere. Its
# errors come back in the JSON, so print them before giving up.
src="$(cd / && go mod download -json "$K8S_PROVIDER_MODULE@$rev" 2>"$LOG" | python3 -c '
import json, sys
info = json.load(sys.stdin)
print(info.get("Error", ""), file=sys.stderr)
print(info.get("Dir") or "")')" || true
[ -n "$src" ] && [ -d "$src" ] \
  || { tail -5 "$LOG" >&2; die "could not download $K8S_PROVIDER_MODULE@$rev: is the Go module proxy reachable (go env GOPROXY)?"; }

rm -rf provider-src
cp -r "$src" provider-src
chmod -R u+w provider-src
# Same output as upstream's generate.go: the schema with its version set, and the mapping re-marshalled.
python3 - "$K8S_PROVIDER_VERSION" provider-src/cmd/"$PLUGIN" <<'PY'
import json
import sys

version, cmd_dir = sys.argv[1], sys.argv[2]
with open(f"{cmd_dir}/schema.json") as f:
    spec = json.load(f)
spec["version"] = version
with open(f"{cmd_dir}/schema-embed.json", "w") as f:
    json.dump(spec, f, separators=(",", ":"))
with open(f"{cmd_dir}/terraform-mapping.json") as f:
    mapping = json.load(f)
with open(f"{cmd_dir}/terraform-mapping-embed.json", "w") as f:
    json.dump(mapping, f, separators=(",", ":"))
PY

go mod download -x >/dev/null 2>"$LOG" \
  || { tail -5 "$LOG" >&2; die "could not download Go modules: is the Go module proxy reachable (go env GOPROXY)?"; }

STAGE="$(mktemp -d "$CACHE_ROOT.stage.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT" && mktemp -d "$CACHE_ROOT.stage.XXXXXX"; })"
trap 'rm -rf "$STAGE" "$LOG"' EXIT
chmod 0755 "$STAGE"  # mktemp makes it 0700; the cache is shared by every clone on the machine
LDFLAGS="-s -w -X $K8S_PROVIDER_MODULE/pkg/version.Version=$K8S_PROVIDER_VERSION"

# -v names each package as it is compiled: show a running count so a long build is visibly alive.
start=$SECONDS
go build -v -mod=mod -buildvcs=false -trimpath -ldflags "$LDFLAGS" -o "$STAGE/" \
  "$K8S_PROVIDER_MODULE/cmd/$PLUGIN" 2>&1 \
  | awk '
      /^(#|go: |.*\.go:[0-9]+)/ { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[k8s-provider] compiled %d packages (%s)\n", n, $0 > "/dev/stderr" } }
      END { printf "[k8s-provider] compiled %d packages\n", n > "/dev/stderr" }'
[ "${PIPESTATUS[0]}" -eq 0 ] || die "go build failed (see the messages above)"
[ -x "$STAGE/$PLUGIN" ] || die "go build produced no $PLUGIN"

mkdir -p "$(dirname "$BIN")"
rm -rf "$BIN"
mv "$STAGE" "$BIN"
trap - EXIT
rm -f "$LOG"
say "built in $((SECONDS - start)) s: $(du -sh "$BIN/$PLUGIN" | cut -f1) in $BIN"
printf '%s\n' "$BIN"
