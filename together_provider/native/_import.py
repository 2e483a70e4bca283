"""`pulumi import`: a read with no previous state must return every input, from the live cluster.

A refresh knows the previous inputs and reads back only what can drift (the two counts); an
import knows nothing but the id, so the identity fields come from the cluster itself. The inputs
it returns are what `pulumi import` writes into the program, and what a matching program must
declare for its next preview to show no changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from together_api.client import TogetherClient
from together_api.errors import NotFoundError
from together_api.wire import Cluster
from together_provider.cluster_schema import CLUSTER
from together_provider.lifecycle import ClusterLifecycle, Observed


def imported_inputs(cluster: Cluster) -> dict[str, Any]:
    """The inputs of a cluster created elsewhere: every field whose table entry names the live
    attribute Together reports it in (`live=`). Unset ones are left to their defaults."""
    found = {f.name: getattr(cluster, f.live) for f in CLUSTER.inputs if f.live}
    return {name: value for name, value in found.items() if value not in ("", None)}


def read(
    lifecycle: ClusterLifecycle, client: TogetherClient, id_: str, props: Mapping[str, Any]
) -> Observed | None:
    """Refresh as the lifecycle does; for an import, seed the inputs from the live cluster."""
    if any(name in props for name in CLUSTER.input_names):
        return lifecycle.read(id_, props)
    try:
        cluster = client.get_cluster(id_)
    except NotFoundError:
        return None
    return lifecycle.read(id_, imported_inputs(cluster))
