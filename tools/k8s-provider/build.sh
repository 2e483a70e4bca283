#!/usr/bin/env bash
# Ensure the pulumi-kubernetes resource plugin (`pulumi-resource-kubernetes`) exists and print the
# directory that holds it. Tests put that directory on PATH so the engine finds the plugin ambiently.
#
#   build.sh           build if needed (progress on stderr), then print the bin directory
#   build.sh --where   print the bin directory the plugin is (or would be) in; build nothing
#
# A plugin already on PATH (outside our cache) is used as it is, like a suitable `pulumi`.
# The provider module has no tags of its own, so it is pinned by the pseudo-version of tag
# v$VERSION. Its two *-embed.json inputs are generated upstream by `go generate` and
# git-ignored, so they are missing from the module zip: this script copies the module out of the
# module cache into ./provider-src (git-ignored; go.mod points there with a directory replace) and
# writes them with a small Python transform equivalent to upstream's generate.go. The result is
# cached OUTSIDE the repository, keyed by the provider version and a hash of the build's inputs:
#   ${TOGETHER_K8S_PROVIDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/together-gpu-clusters/k8s-provider}/<key>/bin
# Keep VERSION equal to the pulumi-kubernetes pin in constraints.txt.
set -euo pipefail

NAME="k8s-provider"
VERSION="4.25.0"
MODULE="github.com/pulumi/pulumi-kubernetes/provider/v4"
PLUGIN="pulumi-resource-kubernetes"
CACHE_ENV=TOGETHER_K8S_PROVIDER_CACHE
INPUTS=(go.mod go.sum)
PROGRAMS=("$PLUGIN")
ON_PATH="$PLUGIN"

build() {
  local stage="$1" rev src log
  require_go "$PLUGIN v$VERSION"
  command -v python3 >/dev/null 2>&1 || die "python3 is needed to generate the provider's embedded schema."
  say "building $PLUGIN v$VERSION from Go modules"
  say "a cold build downloads ~160 MB of modules (~0.8 GB unpacked) and compiles for ~11 minutes on 2 cores"

  # The pinned version comes from go.mod, so the module and the wrapper can never disagree.
  rev="$(awk -v m="$MODULE" '$1 == m && $2 ~ /^v/ {print $2; exit}' go.mod)"
  [ -n "$rev" ] || die "go.mod does not require $MODULE"

  # Download the provider outside this module so the directory replace does not interfere. Its
  # errors come back in the JSON, so print them before giving up.
  say "fetching $MODULE@$rev through the Go module proxy"
  log="$(mktemp)"
  src="$(cd / && go mod download -json "$MODULE@$rev" 2>"$log" | python3 -c '
import json, sys
info = json.load(sys.stdin)
if info.get("Error"):
    print(info["Error"], file=sys.stderr)
print(info.get("Dir") or "")')" || true
  [ -n "$src" ] && [ -d "$src" ] \
    || { tail -5 "$log" >&2; rm -f "$log"; die "could not download $MODULE@$rev: is the Go module proxy reachable (go env GOPROXY)?"; }
  rm -f "$log"

  rm -rf provider-src
  cp -r "$src" provider-src
  chmod -R u+w provider-src
  # Same output as upstream's generate.go: the schema with its version set, and the mapping re-marshalled.
  python3 - "$VERSION" provider-src/cmd/"$PLUGIN" <<'PY'
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

  go_download "$MODULE@$rev"
  go_build -mod=mod -buildvcs=false -trimpath \
    -ldflags "-s -w -X $MODULE/pkg/version.Version=$VERSION" \
    -o "$stage/" "$MODULE/cmd/$PLUGIN"
}

# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
