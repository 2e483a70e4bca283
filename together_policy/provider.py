"""Everything the policy pack takes from the provider, in this one module: the pack enforces the
provider's own rules rather than a copy, and a move in the provider changes only these imports."""

from __future__ import annotations

from typing import Final

from together_facts.values import DRAIN_WINDOW_SECONDS
from together_provider.cluster.table import counts
from together_provider.framework.schema import Failure, Unknown, is_unknown
from together_provider.framework.validators import Invalid, instant, timestamp
from together_provider.kubernetes import (
    COMPUTE_CLASS_LABEL,
    GRACE_FIELD,
    ComputeClass,
    WorkloadSpecError,
    check_pod_spec,
    forbids_preemptible,
    requires_preemptible,
)
from together_provider.preview_parts.prices import (
    PRICES_CONFIG_KEY,
    PriceTable,
    hourly_cost,
    load_price_table,
)
from together_provider.registry import CLUSTER, VOLUME

CLUSTER_RULEBOOK: Final = CLUSTER.rulebook
CLUSTER_TOKEN: Final = CLUSTER.token
CLUSTER_TYPE: Final = CLUSTER.dynamic_type
VOLUME_TOKEN: Final = VOLUME.token
VOLUME_TYPE: Final = VOLUME.dynamic_type

__all__ = [
    "CLUSTER_RULEBOOK",
    "CLUSTER_TOKEN",
    "CLUSTER_TYPE",
    "COMPUTE_CLASS_LABEL",
    "DRAIN_WINDOW_SECONDS",
    "GRACE_FIELD",
    "PRICES_CONFIG_KEY",
    "VOLUME_TOKEN",
    "VOLUME_TYPE",
    "ComputeClass",
    "Failure",
    "Invalid",
    "PriceTable",
    "Unknown",
    "WorkloadSpecError",
    "check_pod_spec",
    "counts",
    "forbids_preemptible",
    "hourly_cost",
    "instant",
    "is_unknown",
    "load_price_table",
    "requires_preemptible",
    "timestamp",
]
