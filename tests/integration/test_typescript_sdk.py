"""The checked-in TypeScript SDK (sdk/typescript) is what tools/ts-codegen generates from the
plugin's schema today: a field added to a table, or a changed doc, without `make sdk-typescript`
fails here, naming the files that differ."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
from pathlib import Path

from testkit.pulumi_env import REPO
from tests.native import PLUGIN_DIR, ts_codegen_bin
from together_provider import registry
from together_provider.hosts.native._properties import camel
from together_provider.hosts.native.package_schema import (
    NPM_PACKAGE,
    package_schema,
    package_schema_json,
)

SDK = REPO / "sdk" / "typescript"


def _files(root: Path) -> set[str]:
    """The SDK's files, without what npm and tsc add (node_modules/, bin/)."""
    skipped = {"node_modules", "bin"}
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not skipped & set(p.relative_to(root).parts)
    }


def _generate(out: Path) -> None:
    subprocess.run(
        [str(ts_codegen_bin() / "ts-codegen"), "--schema", "-", "--out", str(out)],
        input=package_schema_json(),
        text=True,
        check=True,
        capture_output=True,
    )


def test_regenerating_the_typescript_sdk_gives_the_checked_in_one(tmp_path: Path) -> None:
    _generate(tmp_path)
    assert _files(tmp_path) == _files(SDK)
    _, differ, errors = filecmp.cmpfiles(tmp_path, SDK, sorted(_files(SDK)), shallow=False)
    assert (differ, errors) == ([], []), "run `make sdk-typescript` and commit sdk/typescript"


def test_the_sdk_documents_every_field_with_its_table_doc() -> None:
    """Each resource's class says what each field is, in the words of its field table."""
    for kind, source in ((registry.CLUSTER, "cluster.ts"), (registry.VOLUME, "sharedVolume.ts")):
        code = (SDK / source).read_text()
        docs = {f.name: f.doc for f in kind.schema.inputs}
        docs.update({f.name: f.doc for f in kind.schema.outputs})
        for name, doc in docs.items():
            assert doc in code, f"{source}: no doc comment for {camel(name)}"


def test_the_sdk_is_the_package_the_schema_names_and_pins_its_dependencies() -> None:
    manifest = (SDK / "package.json").read_text()
    assert f'"name": "{NPM_PACKAGE}"' in manifest
    assert '"@pulumi/pulumi": "3.248.0"' in manifest
    assert "^" not in manifest and "~" not in manifest


def test_the_sdk_is_generated_from_the_schema_the_plugin_serves(
    tmp_path: Path, engine: Path
) -> None:
    """`make sdk-typescript` reads the schema from Python; the plugin serves that same schema."""
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
