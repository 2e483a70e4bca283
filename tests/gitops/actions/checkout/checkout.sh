#!/usr/bin/env bash
# actions/checkout, locally: copy $TOGETHER_ACT_CHECKOUT over $GITHUB_WORKSPACE (see action.yml).
set -euo pipefail
workspace="${GITHUB_WORKSPACE:?GITHUB_WORKSPACE is not set: run this under act}"
source="${TOGETHER_ACT_CHECKOUT:-}"
if [ -z "$source" ]; then
  echo "::error::TOGETHER_ACT_CHECKOUT is not set: set it to a tree of the repository, or run act without --no-skip-checkout (act then copies its working directory)"
  exit 1
fi
if [ ! -f "$source/Pulumi.yaml" ]; then
  echo "::error::TOGETHER_ACT_CHECKOUT=$source holds no Pulumi.yaml: point it at a tree of the repository"
  exit 1
fi
cp -a "$source/." "$workspace/"
echo "checkout stand-in: copied $source into $workspace"
