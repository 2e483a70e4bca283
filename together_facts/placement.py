"""Where a pod may run on a Together cluster, read from its spec as plain Kubernetes JSON: the one
"needs preemptible" rule the provider's workload helpers, the policy pack and the autoscaler's
controller all apply. Pure: no Pulumi, no Kubernetes client."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from together_facts.values import COMPUTE_CLASS_LABEL, PREEMPTIBLE

__all__ = [
    "REQUIRED_AFFINITY",
    "forbids_preemptible",
    "may_use_preemptible",
    "needs_preemptible",
    "requires_preemptible",
    "tolerates_preemptible",
]

REQUIRED_AFFINITY: Final = "requiredDuringSchedulingIgnoredDuringExecution"


def requires_preemptible(spec: Mapping[str, Any]) -> str | None:
    """Which part of ``spec`` requires a preemptible node, if any (for error messages): its
    nodeSelector, or every required affinity term, asks for ``together.ai/compute-class=
    preemptible``."""
    if (spec.get("nodeSelector") or {}).get(COMPUTE_CLASS_LABEL) == PREEMPTIBLE:
        return f"nodeSelector {COMPUTE_CLASS_LABEL}={PREEMPTIBLE}"
    terms = _required_terms(spec)
    if terms and all(any(_only_preemptible(e) for e in _expressions(t)) for t in terms):
        return f"required node affinity {COMPUTE_CLASS_LABEL} In [preemptible]"
    return None


def forbids_preemptible(spec: Mapping[str, Any]) -> str | None:
    """Which part of ``spec`` keeps it off preemptible nodes, if any (for error messages): its
    nodeSelector picks another class, or every required affinity term excludes ``preemptible``. A
    spec that neither requires nor forbids them may land on either kind of node."""
    value = (spec.get("nodeSelector") or {}).get(COMPUTE_CLASS_LABEL)
    if value is not None and value != PREEMPTIBLE:
        return f"nodeSelector {COMPUTE_CLASS_LABEL}={value}"
    terms = _required_terms(spec)
    if terms and all(any(_excludes_preemptible(e) for e in _expressions(t)) for t in terms):
        return f"required node affinity {COMPUTE_CLASS_LABEL} NotIn [preemptible]"
    return None


def tolerates_preemptible(spec: Mapping[str, Any]) -> bool:
    """It tolerates a taint on the compute-class label: on a cluster that taints its preemptible
    nodes, that is how a pod asks for them."""
    return any(
        t.get("key") == COMPUTE_CLASS_LABEL
        and (
            t.get("operator") == "Exists"
            or (t.get("value") == PREEMPTIBLE and t.get("operator") in (None, "Equal"))
        )
        for t in spec.get("tolerations") or []
    )


def needs_preemptible(spec: Mapping[str, Any]) -> bool:
    """Only preemptible capacity will run it: it requires or tolerates preemptible nodes, and
    nothing in it keeps it off them."""
    wanted = requires_preemptible(spec) is not None or tolerates_preemptible(spec)
    return wanted and may_use_preemptible(spec)


def may_use_preemptible(spec: Mapping[str, Any]) -> bool:
    """A preemptible node may run it: nothing in it keeps it off them."""
    return forbids_preemptible(spec) is None


def _required_terms(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    terms: list[Mapping[str, Any]] = (node_affinity.get(REQUIRED_AFFINITY) or {}).get(
        "nodeSelectorTerms"
    ) or []
    return terms


def _expressions(term: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = term.get("matchExpressions") or []
    return [e for e in found if e.get("key") == COMPUTE_CLASS_LABEL]


def _only_preemptible(expression: Mapping[str, Any]) -> bool:
    values = expression.get("values") or []
    return expression.get("operator") == "In" and set(values) == {PREEMPTIBLE}


def _excludes_preemptible(expression: Mapping[str, Any]) -> bool:
    operator, values = expression.get("operator"), expression.get("values") or []
    return (
        (operator == "NotIn" and PREEMPTIBLE in values)
        or (operator == "In" and PREEMPTIBLE not in values)
        or operator == "DoesNotExist"
    )
