"""The checked-in Go SDK (sdk/go) is what tools/go-codegen generates from the plugin's schema
today: a field added to a table, or a changed doc, without `make sdk-go` fails here, naming the
files that differ; and the SDK, the example and the Go host agree on the Pulumi Go SDK."""

from __future__ import annotations

import filecmp
import re
import subprocess
from pathlib import Path

from testkit.pulumi_env import REPO
from tests.native import go_codegen_bin
from together_provider import registry
from together_provider.hosts.native._properties import camel
from together_provider.hosts.native.package_schema import GO_IMPORT_PATH, package_schema_json

SDK = REPO / "sdk" / "go"
PULUMI_SDK = "github.com/pulumi/pulumi/sdk/v3"


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _generate(out: Path) -> None:
    subprocess.run(
        [str(go_codegen_bin() / "go-codegen"), "--schema", "-", "--out", str(out)],
        input=package_schema_json(),
        text=True,
        check=True,
        capture_output=True,
    )


def _required(go_mod: Path, module: str) -> str:
    """The version `go_mod` requires `module` at."""
    pattern = rf"^\s*(?:require\s+)?{re.escape(module)} (\S+)"
    (version,) = [m.group(1) for m in re.finditer(pattern, go_mod.read_text(), re.M)]
    return version


def test_regenerating_the_go_sdk_gives_the_checked_in_one(tmp_path: Path) -> None:
    _generate(tmp_path)
    assert _files(tmp_path) == _files(SDK)
    _, differ, errors = filecmp.cmpfiles(tmp_path, SDK, sorted(_files(SDK)), shallow=False)
    assert (differ, errors) == ([], []), "run `make sdk-go` and commit sdk/go"


def test_the_sdk_documents_every_field_with_its_table_doc() -> None:
    """Each resource's struct and Args say what each field is, in the words of its field table."""
    for kind, source in ((registry.CLUSTER, "cluster.go"), (registry.VOLUME, "sharedVolume.go")):
        code = (SDK / "together" / source).read_text()
        assert (kind.schema.spec_type.__doc__ or "").strip().split("\n")[0] in code, source
        docs = {f.name: f.doc for f in kind.schema.inputs}
        docs.update({f.name: f.doc for f in kind.schema.outputs})
        for name, doc in docs.items():
            assert f"// {doc}" in code, f"{source}: no doc comment for {camel(name)}"


def test_the_sdk_is_the_module_the_schema_names_and_everything_pins_one_pulumi_sdk() -> None:
    assert (SDK / "go.mod").read_text().startswith(f"module {GO_IMPORT_PATH.rsplit('/', 1)[0]}\n")
    pins = {
        path: _required(REPO / path, PULUMI_SDK)
        for path in ("sdk/go/go.mod", "examples/go/go.mod", "tools/go-langhost/go.mod")
    }
    assert set(pins.values()) == {"v3.248.0"}, pins
    example = (REPO / "examples" / "go" / "go.mod").read_text()
    assert f"replace {GO_IMPORT_PATH.rsplit('/', 1)[0]} => ../../sdk/go" in example
