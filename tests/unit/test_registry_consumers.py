"""Stack config, the PR preview, the docs generator and the stack program name no kind: they loop
over `registry.KINDS`, so a new kind reaches them through its declarations alone."""

from __future__ import annotations

import dataclasses
import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from together_provider.extensions import (
    ExportsExtension,
    PreviewExtension,
    StackConfigExtension,
    config_key,
)
from together_provider.framework.fields import Policy, input_field, output_field
from together_provider.framework.kind import Kind
from together_provider.framework.lifecycle import LifecycleType
from together_provider.framework.rulebook import Rulebook
from together_provider.framework.schema import Schema
from together_provider.preview import build_plan, load_price_table, render
from together_provider.registry import BY_TYPE, KINDS
from together_provider.stack_config import ConfigError, load

ROOT = Path(__file__).resolve().parents[2]
CONSUMERS = sorted(
    [
        ROOT / "__main__.py",
        ROOT / "together_provider" / "stack_config.py",
        ROOT / "together_provider" / "docs.py",
        *(ROOT / "together_provider" / "preview").glob("*.py"),
        # what every kind's preview builds on: shared, so it names none of them either
        *(ROOT / "together_provider" / "preview_parts").glob("*.py"),
        *(ROOT / "together_provider" / "gitops").glob("*.py"),
    ]
)


def _kind_names(kind: Kind) -> tuple[set[str], set[str], str]:
    """What naming `kind` by hand looks like: identifiers, string literals, its package."""
    noun = kind.schema.noun
    names = {
        noun.upper(),  # CLUSTER, VOLUME
        kind.type_name,  # Cluster, SharedVolume
        *kind.exports,
        kind.schema.spec_type.__name__,  # ClusterSpec
        f"_{config_key(kind)}",  # _volumes()
        f"{noun.upper()}_TYPE",
    }
    return names, {config_key(kind), f"{noun}s"}, kind.package


def _named(path: Path, kind: Kind) -> list[str]:
    names, keys, package = _kind_names(kind)
    found = []
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for token in tokens:
        if token.type == tokenize.NAME and token.string in names:
            found.append(f"{token.start[0]}: {token.string}")
        if token.type == tokenize.STRING and token.string.strip("\"'") in keys:
            found.append(f"{token.start[0]}: {token.string}")
    text = path.read_text(encoding="utf-8")
    if f"{package}." in text or f"import {package}" in text:
        found.append(f"imports {package}")
    return found


@pytest.mark.parametrize("path", CONSUMERS, ids=lambda p: str(p.relative_to(ROOT)))
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.type_name)
def test_a_consumer_of_the_registry_names_no_kind(path: Path, kind: Kind) -> None:
    assert _named(path, kind) == [], f"{path.relative_to(ROOT)} names {kind.type_name}"


def test_the_scan_sees_a_kind_named_by_hand(tmp_path: Path) -> None:
    (kind, *_) = KINDS
    planted = tmp_path / "planted.py"
    planted.write_text(
        f"from {kind.package}.table import {kind.schema.noun.upper()}\nKEY = {config_key(kind)!r}\n"
    )
    assert len(_named(planted, kind)) == 3


# --- a third kind, declared only: stack config and the preview take it ---------------------------


@dataclass(frozen=True)
class ThingSpec:
    """A thing of the test's own."""

    thing_name: str = input_field(
        Policy.REPLACE, "fixed", "Its name.", names_resource=True, per_resource=True
    )
    region: str = input_field(Policy.REPLACE, "fixed", "Where it is.", example="'us-central-8'")
    size: int = input_field(Policy.IN_PLACE, "resized", "How big.", example="2")


@dataclass(frozen=True)
class ThingOutputs:
    thing_id: str = output_field("Its id.")


THING_SCHEMA = Schema("thing", ThingSpec, ThingOutputs)


def _never_applied() -> LifecycleType:
    raise AssertionError("no test here applies a thing")


THING = Kind(
    type_name="Thing",
    package="tests_thing",
    schema=THING_SCHEMA,
    rulebook=Rulebook(THING_SCHEMA, (), name_field="thing_name"),
    lifecycle=lambda: _never_applied(),
    docs_marker="thing-",
    doc="A thing, made to show what loops over the registry.",
    extensions=(
        StackConfigExtension(key="things", defaults=frozenset({"region"})),
        PreviewExtension(lambda kind: ThingPreview(kind)),
    ),
)
CLUSTERS = {"train": {"numGpus": 8}}
DEFAULTS = {
    "region": "us-central-8",
    "gpuType": "H100_SXM",
    "cudaVersion": "12.8",
    "nvidiaDriverVersion": "570",
}


def test_stack_config_takes_a_new_kind_from_its_declaration() -> None:
    kinds = (*KINDS, THING)
    config = load(
        {"defaults": DEFAULTS, "clusters": CLUSTERS, "things": {"box": {"size": 2}}}, kinds
    )
    assert config.props(THING) == {"box": {"region": "us-central-8", "size": 2}}
    assert config.resources["things"] == {"box": {"size": 2}}
    with pytest.raises(ConfigError) as error:
        load({"defaults": DEFAULTS, "clusters": CLUSTERS, "things": {"box": {"size": "x"}}}, kinds)
    assert [p.split(":")[0] for p in error.value.problems] == ["things.box.size"]


@dataclass(frozen=True)
class ThingChange:
    name: str
    action: Any
    old_cost: float | None = 0.0
    new_cost: float | None = 0.0


class ThingPreview:
    plural = "things"
    per_hour = False

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def change(self, name: str, steps: Sequence[dict[str, Any]], prices: Any, where: str) -> Any:
        from together_provider.preview_parts.steps import merge

        return ThingChange(name, merge(steps)[1])

    def table(self, shown: Sequence[Any], plan: Any, destructive: frozenset[Any]) -> list[str]:
        return ["| Thing | Action |", "|---|---|", *(f"| `{c.name}` | {c.action} |" for c in shown)]

    def loss(self, change: Any) -> str:
        return f"thing `{change.name}` goes"

    def callouts(self, *_: Any) -> list[str]:
        return []

    def notes(self, changes: Sequence[Any], plan: Any) -> list[str]:
        return []


def test_the_preview_reads_and_renders_a_new_kind_from_its_declaration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from together_provider.preview import plan as plan_module

    monkeypatch.setattr(plan_module, "KINDS", (*KINDS, THING))
    monkeypatch.setattr(plan_module, "BY_TYPE", {**BY_TYPE, THING.dynamic_type: THING})
    urn = "urn:pulumi:dev::p::pulumi:pulumi:Stack${type}::{name}"
    document = {
        "steps": [
            {"op": "delete", "urn": urn.format(type=THING.dynamic_type, name="box")},
            {"op": "create", "urn": urn.format(type=THING.dynamic_type, name="bag")},
        ],
        "changeSummary": {"delete": 1, "create": 1},
    }
    plan = build_plan(document, "thing.json", load_price_table())
    assert [(c.name, str(c.action)) for c in plan.changes["things"]] == [
        ("box", "delete"),
        ("bag", "create"),
    ]
    comment = render([plan])
    assert "| `box` | delete |\n| `bag` | create |" in comment
    assert "> - thing `box` goes" in comment


def test_a_kind_without_a_preview_only_counts_in_the_change_summary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from together_provider.preview import plan as plan_module

    unseen = dataclasses.replace(THING, extensions=(THING[StackConfigExtension],))
    monkeypatch.setattr(plan_module, "KINDS", (*KINDS, unseen))
    monkeypatch.setattr(plan_module, "BY_TYPE", {**BY_TYPE, unseen.dynamic_type: unseen})
    urn = f"urn:pulumi:dev::p::pulumi:pulumi:Stack${unseen.dynamic_type}::box"
    document = {"steps": [{"op": "create", "urn": urn}], "changeSummary": {"create": 1}}
    plan = build_plan(document, "thing.json", load_price_table())
    assert "things" not in plan.changes
    assert "Engine change summary (all resources): create 1." in render([plan])


def test_a_feature_finds_its_extension_and_a_missing_one_names_where_it_goes() -> None:
    assert THING[StackConfigExtension].key == "things"
    assert THING.get(ExportsExtension) is None
    with pytest.raises(LookupError, match=r"Thing declares no ExportsExtension.*tests_thing"):
        _ = THING[ExportsExtension]
    with pytest.raises(TypeError, match="one extension per type"):
        dataclasses.replace(
            THING, extensions=(PreviewExtension(ThingPreview), PreviewExtension(ThingPreview))
        )
