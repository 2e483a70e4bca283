#!/usr/bin/env bash
# actions/setup-go, locally: the host's Go when there is one (see action.yml).
set -euo pipefail
if ! go="$(command -v go)"; then
  echo "setup-go stand-in: no Go on the host (wanted $WANT); only a cached engine will do"
  echo "go-version=" >> "$GITHUB_OUTPUT"
  exit 0
fi
version="$(go env GOVERSION)"
dirname "$(readlink -f "$go")" >> "$GITHUB_PATH"
echo "go-version=${version#go}" >> "$GITHUB_OUTPUT"
echo "setup-go stand-in: using the host's $version for $WANT"
