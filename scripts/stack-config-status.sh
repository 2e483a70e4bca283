#!/usr/bin/env bash
# Says when a stack's config file differs from the committed one: the next `make demo` starts
# from the file as it is, and the docs' pages start from the committed one (docs/burst.md).
#   scripts/stack-config-status.sh dev
# Prints nothing when the file is as committed, or when this is no git checkout. Always exits 0.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 0
FILE="stacks/Pulumi.${1:?usage: $0 STACK}.yaml"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0
git ls-files --error-unmatch "$FILE" >/dev/null 2>&1 || exit 0
if ! git diff --quiet -- "$FILE"; then
  echo "note: $FILE differs from the committed file (git diff $FILE shows how);"
  echo "      the next make demo starts from it, and the docs' pages start from the committed one:"
  echo "      git checkout $FILE restores it"
fi
exit 0
