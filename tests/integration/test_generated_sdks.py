"""The checked-in SDKs (sdk/typescript, sdk/go) are what tools/ts-codegen and tools/go-codegen
generate from the plugin's schema today: a field added to a table, or a changed doc, without
`make sdk-typescript` / `make sdk-go` fails here, naming the files that differ. Each documents
every field in its table's words and pins its Pulumi SDK exactly."""

from __future__ import annotations

import filecmp
import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from testkit.pulumi_env import REPO
from tests.native import PLUGIN_DIR, go_codegen_bin, ts_codegen_bin
from together_provider import registry
from together_provider.framework.kind import Kind
from together_provider.hosts.native._properties import camel
from together_provider.hosts.native.package_schema import (
    GO_IMPORT_PATH,
    NPM_PACKAGE,
    package_schema,
    package_schema_json,
)

PULUMI_GO_SDK = "github.com/pulumi/pulumi/sdk/v3"


@dataclass(frozen=True)
class Sdk:
    """One generated SDK: where it is, its generator, and the file each resource is in."""

    directory: Path
    generator: Callable[[], Path]
    tool: str
    make: str
    sources: dict[str, str]  # kind's type name -> file under `directory`
    not_generated: frozenset[str] = frozenset()  # what the language's tools add (npm, tsc)

    def kinds(self) -> list[tuple[Kind, str]]:
        return [
            (registry.CLUSTER, self.sources["Cluster"]),
            (registry.VOLUME, self.sources["SharedVolume"]),
        ]


TYPESCRIPT = Sdk(
    REPO / "sdk" / "typescript", ts_codegen_bin, "ts-codegen", "make sdk-typescript",
    {"Cluster": "cluster.ts", "SharedVolume": "sharedVolume.ts"},
    frozenset({"node_modules", "bin"}),
)  # fmt: skip
GO = Sdk(
    REPO / "sdk" / "go", go_codegen_bin, "go-codegen", "make sdk-go",
    {"Cluster": "together/cluster.go", "SharedVolume": "together/sharedVolume.go"},
)  # fmt: skip
SDKS = pytest.mark.parametrize("sdk", [TYPESCRIPT, GO], ids=["typescript", "go"])


def _files(sdk: Sdk, root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not sdk.not_generated & set(p.relative_to(root).parts)
    }


@SDKS
def test_regenerating_the_sdk_gives_the_checked_in_one(sdk: Sdk, tmp_path: Path) -> None:
    subprocess.run(
        [str(sdk.generator() / sdk.tool), "--schema", "-", "--out", str(tmp_path)],
        input=package_schema_json(),
        text=True,
        check=True,
        capture_output=True,
    )
    assert _files(sdk, tmp_path) == _files(sdk, sdk.directory)
    names = sorted(_files(sdk, sdk.directory))
    _, differ, errors = filecmp.cmpfiles(tmp_path, sdk.directory, names, shallow=False)
    assert (differ, errors) == ([], []), f"run `{sdk.make}` and commit {sdk.directory.name}"


@SDKS
def test_the_sdk_documents_every_field_with_its_table_doc(sdk: Sdk) -> None:
    """Each resource says what each field is, in the words of its field table."""
    for kind, source in sdk.kinds():
        code = (sdk.directory / source).read_text()
        docs = {f.name: f.doc for f in kind.schema.inputs}
        docs.update({f.name: f.doc for f in kind.schema.outputs})
        for name, doc in docs.items():
            assert doc in code, f"{source}: no doc comment for {camel(name)}"


def test_the_typescript_sdk_is_the_package_the_schema_names_and_pins_its_dependencies() -> None:
    manifest = (TYPESCRIPT.directory / "package.json").read_text()
    assert f'"name": "{NPM_PACKAGE}"' in manifest
    assert '"@pulumi/pulumi": "3.248.0"' in manifest
    assert "^" not in manifest and "~" not in manifest


def _required(go_mod: Path, module: str) -> str:
    """The version `go_mod` requires `module` at."""
    pattern = rf"^\s*(?:require\s+)?{re.escape(module)} (\S+)"
    (version,) = [m.group(1) for m in re.finditer(pattern, go_mod.read_text(), re.M)]
    return version


def test_the_go_sdk_is_the_module_the_schema_names_and_everything_pins_one_pulumi_sdk() -> None:
    module = GO_IMPORT_PATH.rsplit("/", 1)[0]
    assert (GO.directory / "go.mod").read_text().startswith(f"module {module}\n")
    pins = {
        path: _required(REPO / path, PULUMI_GO_SDK)
        for path in ("sdk/go/go.mod", "examples/go/go.mod", "tools/go-langhost/go.mod")
    }
    assert set(pins.values()) == {"v3.248.0"}, pins
    example = (REPO / "examples" / "go" / "go.mod").read_text()
    assert f"replace {module} => ../../sdk/go" in example


def test_the_sdks_are_generated_from_the_schema_the_plugin_serves(
    tmp_path: Path, engine: Path
) -> None:
    """`make sdk-typescript` and `make sdk-go` read the schema from Python; the plugin serves
    that same schema."""
    served = subprocess.run(
        [
            str(engine / "pulumi"),
            "package",
            "get-schema",
            str(PLUGIN_DIR / "pulumi-resource-together"),
        ],
        env={**os.environ, "PULUMI_HOME": str(tmp_path), "PULUMI_SKIP_UPDATE_CHECK": "true"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(served.stdout) == package_schema()
