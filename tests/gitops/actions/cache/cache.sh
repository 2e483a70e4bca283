#!/usr/bin/env bash
# actions/cache, locally: report whether the host already has the paths (see action.yml).
set -euo pipefail
hit=true
while IFS= read -r path; do
  [ -n "$path" ] || continue
  path="${path/#\~/$HOME}"
  if [ -e "$path" ]; then
    echo "cache stand-in: $path is on the host (key $CACHE_KEY)"
  else
    echo "cache stand-in: $path is not on the host (key $CACHE_KEY)"
    hit=false
  fi
done <<< "$CACHE_PATHS"
echo "cache-hit=$hit" >> "$GITHUB_OUTPUT"
