"""The provider's `kube_config` output is YAML, whatever encoding Together used on the wire:
pulumi-kubernetes is handed this output, and it reads YAML only."""

from __future__ import annotations

import base64

import pytest

from together_api.kubeconfig import KubeconfigError
from together_api.wire import Cluster
from together_provider.cluster import mapping

YAML = "apiVersion: v1\nkind: Config\nclusters: []\n"


@pytest.mark.parametrize("wire", [base64.b64encode(YAML.encode()).decode(), YAML])
def test_outputs_carry_yaml(wire: str) -> None:
    cluster = Cluster(cluster_id="c-1", status="Ready", kube_config=wire)
    assert mapping.outputs({}, cluster)["kube_config"] == YAML


def test_an_undecodable_kube_config_is_a_clear_error() -> None:
    cluster = Cluster(cluster_id="c-1", status="Ready", kube_config="%%%")
    with pytest.raises(KubeconfigError, match="cluster c-1: kube_config") as raised:
        mapping.outputs({}, cluster)
    assert "(fix: check that the base URL (together:baseUrl or TOGETHER_BASE_URL)" in str(
        raised.value
    )
