"""What only the dynamic host does, through the real engine: a dynamic provider loaded from an
importable module (pickled into the state by reference), its numbers normalised by check() and
an output only create() made kept through an update. What both hosts do is in scenarios/ (one
suite, run on each)."""

from __future__ import annotations

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from tests.integration.conftest import PROGRAMS

pytestmark = pytest.mark.engine


def test_dynamic_provider_lifecycle_through_the_real_engine(pulumi_env: PulumiEnv) -> None:
    work = pulumi_env.project(PROGRAMS / "counter")
    stack = pulumi_env.stack(work, config={"count": 3})

    preview = stack.preview()
    assert preview.change_summary.get(auto.OpType.CREATE) == 2  # stack + counter

    up = stack.up()
    assert up.outputs["count"].value == 3
    # The engine sends numbers as floats; check() normalised them before create saw them.
    assert up.outputs["seen_type"].value == "int"
    created_at = up.outputs["created_at"].value
    assert isinstance(created_at, float)

    stack.set_config("count", auto.ConfigValue("5"))
    second = stack.up()
    assert second.summary.resource_changes == {"update": 1, "same": 1}
    assert second.outputs["count"].value == 5
    assert second.outputs["seen_type"].value == "int"
    # An output that only create() produced survives the update: no wiped outputs.
    assert second.outputs["created_at"].value == created_at

    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"same": 2}

    noop = stack.preview(expect_no_changes=True)
    assert noop.change_summary.get(auto.OpType.SAME) == 2

    destroy = stack.destroy()
    assert destroy.summary.resource_changes == {"delete": 2}
    deployment = stack.export_stack().deployment
    assert deployment is not None
    assert deployment.get("resources") in (None, [])
