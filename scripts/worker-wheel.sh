#!/usr/bin/env bash
# Build the worker library's wheel (worker/: together-gpu-clusters-worker, standard library only)
# into OUT_DIR and print the wheel's path: what `make worker-wheel` keeps in .build/wheels and
# what tools/images/build.sh installs into the python image.
#
#   scripts/worker-wheel.sh OUT_DIR
#
# The build runs on a copy of worker/'s sources (bytecode aside), so setuptools leaves no build/
# or *.egg-info in the clone. It uses the pip of PIP (default: .venv's, else pip3), with build
# isolation: pip fetches the build backend pyproject.toml names (pip's cache keeps it).
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: scripts/worker-wheel.sh OUT_DIR}"
pip="${PIP:-$REPO_DIR/.venv/bin/pip}"
[ -x "$pip" ] || pip="$(command -v pip3 || true)"
[ -n "$pip" ] || { echo "worker-wheel: no pip to build the wheel with: run make venv" >&2; exit 1; }

source_copy="$(mktemp -d)"
trap 'rm -rf "$source_copy"' EXIT
(cd "$REPO_DIR/worker" && tar -cf - --exclude=__pycache__ --exclude='*.pyc' --exclude=build \
  --exclude='*.egg-info' .) | tar -C "$source_copy" -xf -
mkdir -p "$out"
name="$(sed -n 's/^name = "\(.*\)"$/\1/p' "$source_copy/pyproject.toml" | head -n1 | tr - _)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$source_copy/pyproject.toml" | head -n1)"
wheel="$out/$name-$version-py3-none-any.whl"
rm -f "$wheel"
"$pip" wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$out" "$source_copy" >&2 \
  || { echo "worker-wheel: pip could not build the wheel (is the package index reachable for setuptools?)" >&2; exit 1; }
[ -f "$wheel" ] || { echo "worker-wheel: pip built no $wheel" >&2; exit 1; }
printf '%s\n' "$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")"
