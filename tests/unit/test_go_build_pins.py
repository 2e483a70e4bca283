"""The Go builds that share code share versions: our Go host requires every module it has in
common with our Node.js host at the same version, and the Go SDK generator with the TypeScript
one. Go's build cache then compiles their common packages once, so on a fresh machine the Go
host adds a link, not ~250 packages (docs/engine.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def requirements(build: str) -> dict[str, str]:
    """Module -> version for every `require` of tools/<build>/go.mod."""
    text = (TOOLS / build / "go.mod").read_text()
    return dict(re.findall(r"^\s*(?:require\s+)?(\S+) (v\S+)(?: // indirect)?$", text, re.M))


@pytest.mark.parametrize(
    ("build", "like"), [("go-langhost", "nodejs-langhost"), ("go-codegen", "ts-codegen")]
)
def test_a_go_build_requires_what_it_shares_at_its_siblings_versions(build: str, like: str) -> None:
    ours, theirs = requirements(build), requirements(like)
    assert "github.com/pulumi/pulumi/sdk/v3" in ours
    differ = {m: (v, theirs[m]) for m, v in ours.items() if m in theirs and theirs[m] != v}
    assert differ == {}, f"raise {build}/go.mod to {like}'s versions (go get MODULE@VERSION)"
