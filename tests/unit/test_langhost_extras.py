"""The skip of the tests that need our Python language host's extras (testkit/langhost.py): a
host that lists them runs them; upstream's, which rejects the flag, or a host listing only some,
skips them with a reason naming what is missing and how to test ours."""

from __future__ import annotations

from pathlib import Path

from testkit.langhost import HOST, host_extras, missing_extras_reason

# The flag as tools/pulumi-engine/langhost/main.go defines it.
FLAG = "-together-extras"


def fake_host(bin_dir: Path, *, lists: tuple[str, ...] | None) -> Path:
    """A `pulumi-language-python` that answers FLAG with `lists` (one per line), or, for None, as
    upstream's does: Go's flag parser rejects the unknown flag with exit 2."""
    bin_dir.mkdir(parents=True)
    answer = (
        "echo 'flag provided but not defined: -together-extras' >&2; exit 2"
        if lists is None
        else "printf '%s\\n' " + " ".join(lists)
    )
    script = bin_dir / HOST
    script.write_text(f'#!/bin/sh\n[ "$1" = "{FLAG}" ] && [ $# -eq 1 ] || exit 64\n{answer}\n')
    script.chmod(0o755)
    return bin_dir


def test_our_host_listing_the_extras_runs_the_tests(tmp_path: Path) -> None:
    ours = fake_host(tmp_path / "ours", lists=("cancel-exits", "health-interval"))
    assert host_extras(ours) == {"cancel-exits", "health-interval"}
    assert missing_extras_reason(ours, ("cancel-exits",)) is None
    assert missing_extras_reason(ours, ("cancel-exits", "health-interval")) is None


def test_upstreams_host_skips_them_naming_the_extra_and_the_fix(tmp_path: Path) -> None:
    upstream = fake_host(tmp_path / "release", lists=None)
    reason = missing_extras_reason(upstream, ("health-interval",))
    assert reason is not None
    assert f"{upstream / HOST} does not list health-interval" in reason
    assert "upstream's host, which a release Pulumi first on PATH brings, lacks them" in reason
    assert "TOGETHER_ENGINE_BIN" in reason


def test_a_host_listing_some_extras_names_only_the_missing_ones(tmp_path: Path) -> None:
    partial = fake_host(tmp_path / "older", lists=("cancel-exits",))
    assert missing_extras_reason(partial, ("cancel-exits",)) is None
    reason = missing_extras_reason(partial, ("cancel-exits", "health-interval"))
    assert reason is not None
    assert "does not list health-interval (" in reason


def test_no_host_at_all_skips_rather_than_crashes(tmp_path: Path) -> None:
    reason = missing_extras_reason(tmp_path / "empty", ("cancel-exits",))
    assert reason is not None and "cancel-exits" in reason
