"""Pulumi state of the last release still loads: each dynamic provider as that state pickled it
(tests/fixtures/old_state/providers.json, by every module path state has named it by; its
providers.py wrote it) unpickles, with dill as Pulumi does, to the provider the registry derives
for its kind today."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import dill
import pytest

from together_provider import registry

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "old_state" / "providers.json"
PICKLED = json.loads(FIXTURE.read_text())
KIND_OF = {"ClusterProvider": "Cluster", "VolumeProvider": "SharedVolume"}


@pytest.mark.parametrize("path", sorted(PICKLED))
def test_a_provider_pickled_by_the_last_release_loads_as_its_kinds_provider(path: str) -> None:
    module, name = path.rsplit(".", 1)
    assert base64.b64decode(PICKLED[path]).count(module.encode()) == 1  # names that path
    provider = dill.loads(base64.b64decode(PICKLED[path]))
    kind = registry.BY_NAME[KIND_OF.get(name, name.removesuffix("Provider"))]
    assert type(provider) is getattr(registry, kind.provider_name)
    assert type(provider).KIND is kind


def test_every_path_state_has_named_a_provider_by_is_in_the_fixture() -> None:
    assert len(PICKLED) == 6 and {p.rsplit(".", 1)[0] for p in PICKLED} == {
        "together_provider.registry",
        "together_provider.provider",
        "together_provider.volume_provider",
        "together_provider.cluster.provider",
        "together_provider.volume.provider",
    }
