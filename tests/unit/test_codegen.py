"""A kind is its table, its rules, its lifecycle and one registry line; the rest derives.

The typed classes are generated and checked in (`make sdk-python`), and held here as the
TypeScript SDK is; the dynamic provider classes are derived and pickle by a path that resolves;
a toy kind declared in a temporary package gets its Args, both hosts' classes, its provider and
its package schema with no other edit.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dill
import pulumi
import pytest

import together_provider
from together_provider import codegen, native, registry
from together_provider.dynamic.provider import LifecycleProvider, provider_class
from together_provider.extensions import ProgramExtension
from together_provider.framework.kind import Kind
from together_provider.hosts.native.package_schema import resource_schema


def test_the_checked_in_typed_classes_are_what_the_tables_give() -> None:
    for path, text in codegen.generated().items():
        assert path.read_text() == text, f"{path} is stale: run `make sdk-python` and commit it"
    assert codegen.main([]) == 0


@pytest.mark.parametrize("kind", registry.KINDS, ids=lambda kind: kind.type_name)
def test_each_kinds_args_and_classes_carry_every_field_of_its_table(kind: Kind) -> None:
    resource, args_class = (getattr(together_provider, name) for name in kind.exports)
    args = {f.name: f for f in dataclasses.fields(args_class)}
    # Required first (a valid dataclass, positional use kept), each group in table order.
    required = [f.name for f in kind.schema.inputs if f.required and not f.names_resource]
    assert list(args) == required + [n for n in kind.schema.input_names if n not in required]
    for spec_field in kind.schema.inputs:
        expected = None if spec_field.names_resource else spec_field.default
        if spec_field.required and not spec_field.names_resource:
            expected = dataclasses.MISSING
        assert args[spec_field.name].default == expected, spec_field.name
    program = kind.get(ProgramExtension)
    flags = program.flags if program else {}
    fields = {*kind.schema.input_names, *kind.schema.output_names, *flags}
    for host_class in (resource, getattr(native, kind.type_name)):
        assert set(host_class.__dict__.get("__doc__", "").split()) >= set(kind.doc.split())
    assert set(resource.__annotations__) == fields
    assert resource.kind is kind
    assert f"pulumi-python:{resource._resource_type_name}" == kind.dynamic_type


DERIVING = (
    "together_provider/__init__.py",
    "together_provider/codegen.py",
    "together_provider/dynamic/provider.py",
    "together_provider/dynamic/resource.py",
    "together_provider/native.py",
    "together_provider/hosts/native/_base.py",
    "together_provider/hosts/native/_properties.py",
    "together_provider/hosts/native/package_schema.py",
)


def _code_names(source: str) -> set[str]:
    """Every identifier and string a module's code holds, docstrings left out."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names |= set() if id(node) in docstrings else set(node.value.split())
    return names


@pytest.mark.parametrize("module", DERIVING)
def test_what_derives_the_kinds_names_none_of_them(module: str) -> None:
    named = {"CLUSTER", "VOLUME"} | {n for kind in registry.KINDS for n in kind.exports}
    named |= {kind.provider_name for kind in registry.KINDS}
    source = (Path(together_provider.__file__).parent.parent / module).read_text()
    assert _code_names(source) & named == set()


OLD_PATHS = [
    ("together_provider.provider", "ClusterProvider", "Cluster"),
    ("together_provider.cluster.provider", "ClusterProvider", "Cluster"),
    ("together_provider.volume_provider", "VolumeProvider", "SharedVolume"),
    ("together_provider.volume.provider", "VolumeProvider", "SharedVolume"),
]


@pytest.mark.parametrize(("module", "name", "type_name"), OLD_PATHS)
def test_every_pickled_provider_path_resolves_to_the_derived_class(
    module: str, name: str, type_name: str
) -> None:
    derived = getattr(importlib.import_module(module), name)
    assert derived is provider_class(registry.BY_NAME[type_name])
    assert derived.KIND is registry.BY_NAME[type_name]
    # What dill checks before it pickles a class by reference rather than by value.
    assert getattr(sys.modules[derived.__module__], derived.__qualname__) is derived
    assert dill.loads(dill.dumps(derived(), recurse=True)).__class__ is derived


TOY = {
    "__init__.py": """
        from together_provider.extensions import (
            ID, NativeExtension, ProgramExtension, StackConfigExtension,
        )
        from together_provider.framework.kind import Kind
        from toy.rules import RULEBOOK
        from toy.table import TOY

        def _lifecycle():
            from toy.lifecycle import ToyLifecycle

            return ToyLifecycle

        KIND = Kind(
            type_name="Toy", package=__name__, schema=TOY, rulebook=RULEBOOK,
            lifecycle=_lifecycle, docs_marker="toy-",
            doc="A toy, made to show what derives.",
            extensions=(
                StackConfigExtension(key="toys"),
                NativeExtension("Notes."),
                ProgramExtension(flags={"has_color": "color"}, known_at_preview={"toy_id": ID}),
            ),
        )
    """,
    "table.py": """
        from dataclasses import dataclass
        from typing import Literal

        from together_provider.framework.schema import Policy, Schema, input_field, output_field

        @dataclass(frozen=True)
        class ToySpec:
            toy_name: str = input_field(
                Policy.REPLACE, "fixed", "Its name.", names_resource=True, live="toy_name"
            )
            size: int = input_field(Policy.IN_PLACE, "grows", "How big.", live="size")
            color: Literal["red", "blue"] | None = input_field(
                Policy.REPLACE, "fixed", "Its color.", default=None
            )

        @dataclass(frozen=True)
        class ToyOutputs:
            toy_id: str = output_field("Its id.")
            tags: list[str] = output_field("Its tags.")

        TOY = Schema("toy", ToySpec, ToyOutputs)
    """,
    "rules.py": """
        from together_provider.framework.rulebook import Rulebook
        from toy.table import TOY

        RULEBOOK = Rulebook(TOY, (), name_field="toy_name")
    """,
    "lifecycle.py": """
        from together_provider.framework.lifecycle import ResourceLifecycle
        from toy import rules

        class ToyLifecycle(ResourceLifecycle):
            RULEBOOK = rules.RULEBOOK
    """,
    "toyreg.py": """
        from together_provider.dynamic.provider import provider_class
        from toy import KIND

        KINDS = (KIND,)
        BY_NAME = {KIND.type_name: KIND}

        def __getattr__(name):
            if name != KIND.provider_name:
                raise AttributeError(name)
            return provider_class(KIND, home=__name__)
    """,
}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kind]:
    (tmp_path / "toy").mkdir()
    for name, source in TOY.items():
        where = tmp_path / name if name == "toyreg.py" else tmp_path / "toy" / name
        where.write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    toyreg = importlib.import_module("toyreg")
    (tmp_path / "toy_resources.py").write_text(codegen.dynamic_module(toyreg.KINDS, "toyreg"))
    native_source = codegen.native_module(toyreg.KINDS, "toyreg", "toy_resources")
    (tmp_path / "toy_native.py").write_text(native_source)
    yield toyreg.KINDS[0]
    for module in [m for m in sys.modules if m.split(".")[0] in {"toy", "toyreg", "toy_native"}]:
        del sys.modules[module]
    sys.modules.pop("toy_resources", None)


def test_a_new_kind_is_its_table_rules_lifecycle_and_registry_line(toy: Kind) -> None:
    resources: Any = importlib.import_module("toy_resources")
    native_resources: Any = importlib.import_module("toy_native")
    args = resources.ToyArgs(size=2)
    assert [f.name for f in dataclasses.fields(args)] == ["size", "toy_name", "color"]
    assert args.has_color is False and resources.ToyArgs(size=1, color="red").has_color
    assert resources.ToyArgs.__doc__.startswith("A toy, made to show what derives.")
    assert set(resources.Toy.__annotations__) == {"toy_name", "size", "color", "toy_id", "tags"} | {
        "has_color"
    }
    assert native_resources.Toy.kind is toy and native_resources.ToyArgs is resources.ToyArgs
    assert toy.lifecycle().__name__ == "ToyLifecycle"

    provider = importlib.import_module("toyreg").ToyProvider
    assert issubclass(provider, LifecycleProvider) and provider.KIND is toy
    assert dill.loads(dill.dumps(provider(), recurse=True)).__class__ is provider

    schema = resource_schema(toy)
    assert schema["requiredInputs"] == ["size"]
    assert set(schema["properties"]) == {"toyName", "size", "color", "toyId", "tags"}


class _Echo(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", {**args.inputs, "region": "somewhere-else"}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None


@pytest.fixture
def echo(mocks_loop: object) -> None:
    pulumi.runtime.set_mocks(_Echo(), preview=False)


@pytest.mark.parametrize("host", ["dynamic", "native"])
@pulumi.runtime.test
def test_both_hosts_volumes_know_their_id_and_region_in_the_program(
    echo: None, host: str
) -> pulumi.Output[None]:
    """`known_at_preview`: the id and the input, never the outputs a preview cannot know."""
    module = together_provider if host == "dynamic" else native
    volume = module.SharedVolume("ckpt", module.SharedVolumeArgs(region="us-central-8", size_tib=1))

    def check(values: list[Any]) -> None:
        assert values == ["ckpt-id", "us-central-8"]

    return pulumi.Output.all(volume.volume_id, volume.region).apply(check)
