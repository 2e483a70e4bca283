#!/usr/bin/env bash
# actions/upload-artifact, locally: copy the files into $TOGETHER_ACT_ARTIFACTS/<name>/ and set
# the outputs a real upload sets (see action.yml).
set -euo pipefail
store="${TOGETHER_ACT_ARTIFACTS:-}"
if [ -z "$store" ]; then
  echo "::error::TOGETHER_ACT_ARTIFACTS is not set: set it to the directory the artifacts go to"
  exit 1
fi
name="${ARTIFACT_NAME:-artifact}"
mkdir -p "$store/$name"
while IFS= read -r path; do
  [ -n "$path" ] || continue
  if [ ! -e "$path" ]; then
    echo "::error::upload-artifact stand-in: no file at $path"
    exit 1
  fi
  cp -a "$path" "$store/$name/"
done <<< "$ARTIFACT_PATHS"
id="$(find "$store" -mindepth 1 -maxdepth 1 -type d | wc -l)"
server="${GITHUB_SERVER_URL:-https://github.com}"
url="$server/${GITHUB_REPOSITORY:?}/actions/runs/${GITHUB_RUN_ID:?}/artifacts/$id"
echo "artifact-id=$id" >> "$GITHUB_OUTPUT"
echo "artifact-url=$url" >> "$GITHUB_OUTPUT"
echo "upload-artifact stand-in: $name in $store/$name ($url)"
