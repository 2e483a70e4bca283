"""Everything the policy pack takes from the provider, imported in this one module.

The pack enforces the provider's own rules and placement checks rather than a second copy of
them, so a rule changed in the provider changes the policy too. When the provider's modules move
(into `together_provider.cluster`, `.volume`, ...), only the imports below change.
"""

from __future__ import annotations

from together_api.wire import DRAIN_WINDOW_SECONDS
from together_provider.cluster_schema import CLUSTER_TYPE
from together_provider.kubernetes import (
    COMPUTE_CLASS_LABEL,
    GRACE_FIELD,
    ComputeClass,
    WorkloadSpecError,
    check_pod_spec,
)
from together_provider.kubernetes import _forbids_preemptible as forbids_preemptible
from together_provider.kubernetes import _requires_preemptible as requires_preemptible
from together_provider.native.kinds import CLUSTER_TOKEN, VOLUME_TOKEN
from together_provider.preview.prices import PriceTable, hourly_cost, load_price_table
from together_provider.rules import RULEBOOK as CLUSTER_RULEBOOK
from together_provider.schema import Failure, Unknown, is_unknown
from together_provider.volume_schema import VOLUME_TYPE

__all__ = [
    "CLUSTER_RULEBOOK",
    "CLUSTER_TOKEN",
    "CLUSTER_TYPE",
    "COMPUTE_CLASS_LABEL",
    "DRAIN_WINDOW_SECONDS",
    "GRACE_FIELD",
    "VOLUME_TOKEN",
    "VOLUME_TYPE",
    "ComputeClass",
    "Failure",
    "PriceTable",
    "Unknown",
    "WorkloadSpecError",
    "check_pod_spec",
    "forbids_preemptible",
    "hourly_cost",
    "is_unknown",
    "load_price_table",
    "requires_preemptible",
]
