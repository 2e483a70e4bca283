"""`pulumi import`: a read with no previous state must return every input, from the live cluster.

A refresh knows the previous inputs and reads back only what can drift (the two counts); an
import knows nothing but the id, so the identity fields come from the cluster itself. The inputs
it returns are what `pulumi import` writes into the program, and what a matching program must
declare for its next preview to show no changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from together_api.client import TogetherClient
from together_api.errors import NotFoundError
from together_api.wire import Cluster
from together_provider.lifecycle import ClusterLifecycle, Observed
from together_provider.mapping import IDENTITY_FIELDS
from together_provider.spec import INPUT_FIELDS

LIVE_FIELDS: Final[Mapping[str, str]] = {
    **{name: name for name in IDENTITY_FIELDS},
    "project_id": "project_id",
    "num_gpus": "num_gpus",
    "num_preemptible_gpus": "desired_preemptible_gpus",
}
"""Input name -> the live cluster's attribute holding it (what Together reports back)."""


def imported_inputs(cluster: Cluster) -> dict[str, Any]:
    """The inputs of a cluster created elsewhere, as far as Together reports them."""
    found = {name: getattr(cluster, attribute) for name, attribute in LIVE_FIELDS.items()}
    return {name: value for name, value in found.items() if value not in ("", None)}


def read(
    lifecycle: ClusterLifecycle, client: TogetherClient, id_: str, props: Mapping[str, Any]
) -> Observed | None:
    """Refresh as the lifecycle does; for an import, seed the inputs from the live cluster."""
    if any(name in props for name in INPUT_FIELDS):
        return lifecycle.read(id_, props)
    try:
        cluster = client.get_cluster(id_)
    except NotFoundError:
        return None
    return lifecycle.read(id_, imported_inputs(cluster))
