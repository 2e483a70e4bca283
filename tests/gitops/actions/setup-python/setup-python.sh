#!/usr/bin/env bash
# actions/setup-python, locally: the host's python3 if it is at least $WANT (see action.yml).
set -euo pipefail
python="$(command -v python3)" || { echo "::error::no python3 on PATH"; exit 1; }
python="$(readlink -f "$python")"
version="$("$python" -c 'import platform; print(platform.python_version())')"
if ! "$python" -c 'import sys; want = tuple(map(int, sys.argv[1].split("."))); sys.exit(sys.version_info[:len(want)] < want)' "$WANT"; then
  echo "::error::the host's python3 is $version; the workflow asks for $WANT"
  exit 1
fi
dirname "$python" >> "$GITHUB_PATH"
{
  echo "python-version=$version"
  echo "python-path=$python"
} >> "$GITHUB_OUTPUT"
echo "setup-python stand-in: using the host's Python $version ($python) for $WANT"
