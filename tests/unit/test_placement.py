"""`together_facts.placement`: where a pod may run, read from its spec. Kubernetes ORs a node
affinity's required `nodeSelectorTerms` (a node matching any one term will do), so a spec
requires preemptible nodes only when *every* term asks for them, and is kept off them only when
every term excludes them."""

from __future__ import annotations

from typing import Any

import pytest

from together_facts.placement import (
    forbids_preemptible,
    may_use_preemptible,
    needs_preemptible,
    requires_preemptible,
    tolerates_preemptible,
)

LABEL = "together.ai/compute-class"


def _expr(operator: str, *values: str, key: str = LABEL) -> dict[str, Any]:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return expression


def _terms(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    """A pod spec whose required node affinity has one term per argument."""
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": e} for e in terms]
                }
            }
        }
    }


ON_PREEMPTIBLE = [_expr("In", "preemptible")]
ON_STANDARD = [_expr("In", "standard")]
NOT_PREEMPTIBLE = [_expr("NotIn", "preemptible")]
ANYWHERE = [_expr("Exists", key="kubernetes.io/hostname")]


def test_a_second_term_that_allows_standard_nodes_means_preemptible_is_not_required() -> None:
    """One term asks for preemptible, another for standard: the scheduler may pick either, so
    nothing requires preemptible capacity (with `any` over the terms it would)."""
    spec = _terms(ON_PREEMPTIBLE, ON_STANDARD)
    assert requires_preemptible(spec) is None
    assert not needs_preemptible(spec)
    assert requires_preemptible(_terms(ON_PREEMPTIBLE, ANYWHERE)) is None


def test_every_term_asking_for_preemptible_requires_it() -> None:
    spec = _terms(ON_PREEMPTIBLE, [_expr("In", "preemptible"), _expr("Exists", key="gpu")])
    assert requires_preemptible(spec) == f"required node affinity {LABEL} In [preemptible]"
    assert needs_preemptible(spec) and may_use_preemptible(spec)


def test_a_second_term_that_allows_preemptible_nodes_means_it_is_not_forbidden() -> None:
    spec = _terms(NOT_PREEMPTIBLE, ON_PREEMPTIBLE)
    assert forbids_preemptible(spec) is None
    assert may_use_preemptible(spec)
    assert forbids_preemptible(_terms(ON_STANDARD, ANYWHERE)) is None


@pytest.mark.parametrize(
    "expressions",
    [NOT_PREEMPTIBLE, ON_STANDARD, [_expr("DoesNotExist")], [_expr("NotIn", "x", "preemptible")]],
)
def test_every_term_excluding_preemptible_forbids_it(expressions: list[dict[str, Any]]) -> None:
    spec = _terms(expressions, NOT_PREEMPTIBLE)
    assert forbids_preemptible(spec) == f"required node affinity {LABEL} NotIn [preemptible]"
    assert not may_use_preemptible(spec)
    assert not needs_preemptible({**spec, "tolerations": [{"key": LABEL, "operator": "Exists"}]})


@pytest.mark.parametrize(
    "expressions",
    [
        [_expr("In", "preemptible", "standard")],  # either class will do
        [_expr("In")],  # no values: not a request for preemptible
        [_expr("NotIn", "standard")],  # keeps it off standard, not on preemptible
        [_expr("Exists")],
        [_expr("In", "preemptible", key="other.io/class")],  # another label
    ],
)
def test_an_expression_that_is_not_exactly_in_preemptible_requires_nothing(
    expressions: list[dict[str, Any]],
) -> None:
    assert requires_preemptible(_terms(expressions)) is None


@pytest.mark.parametrize(
    "expressions",
    [
        [_expr("In", "preemptible", "standard")],
        [_expr("NotIn", "standard")],
        [_expr("Exists")],
        [_expr("NotIn")],
        [_expr("DoesNotExist", key="other.io/class")],
    ],
)
def test_an_expression_that_admits_preemptible_forbids_nothing(
    expressions: list[dict[str, Any]],
) -> None:
    assert forbids_preemptible(_terms(expressions)) is None


def test_the_node_selector_decides_before_the_affinity() -> None:
    on = {"nodeSelector": {LABEL: "preemptible"}}
    off = {"nodeSelector": {LABEL: "standard"}}
    assert requires_preemptible(on) == f"nodeSelector {LABEL}=preemptible"
    assert forbids_preemptible(on) is None
    assert forbids_preemptible(off) == f"nodeSelector {LABEL}=standard"
    assert requires_preemptible(off) is None
    assert requires_preemptible({"nodeSelector": {"other": "preemptible"}}) is None
    assert requires_preemptible({}) is None and forbids_preemptible({}) is None
    assert requires_preemptible(_terms()) is None and forbids_preemptible(_terms()) is None


@pytest.mark.parametrize(
    ("toleration", "tolerates"),
    [
        ({"key": LABEL, "operator": "Exists"}, True),
        ({"key": LABEL, "value": "preemptible"}, True),  # operator defaults to Equal
        ({"key": LABEL, "operator": "Equal", "value": "preemptible"}, True),
        ({"key": LABEL, "operator": "Equal", "value": "standard"}, False),
        ({"key": LABEL, "operator": "Exists", "value": "standard"}, True),
        ({"key": "other", "operator": "Exists"}, False),
        ({"key": "other", "value": "preemptible"}, False),
        ({"key": LABEL, "operator": "NotEqual", "value": "preemptible"}, False),
    ],
)
def test_what_tolerates_the_preemptible_taint(toleration: dict[str, str], tolerates: bool) -> None:
    assert tolerates_preemptible({"tolerations": [toleration]}) is tolerates
    assert not tolerates_preemptible({})


def test_a_toleration_alone_needs_preemptible_unless_the_spec_is_kept_off_it() -> None:
    tolerating = {"tolerations": [{"key": LABEL, "operator": "Exists"}]}
    assert needs_preemptible(tolerating)
    assert not needs_preemptible({**tolerating, "nodeSelector": {LABEL: "standard"}})
    assert not needs_preemptible({"nodeSelector": {LABEL: "standard"}})
    assert not needs_preemptible({})
    assert needs_preemptible({"nodeSelector": {LABEL: "preemptible"}})
