"""The preemptible-capacity policy pack: `pulumi preview --policy-pack policy`.

Only the wiring to pulumi-policy lives here; the policies and their checks are the `together_policy`
package of this repository (pure functions, unit-tested), installed into the pack's virtualenv
with the provider whose rules they call. See docs/policy.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from together_policy.pack import PACK_NAME, POLICIES, PolicySpec
from together_policy.resources import Res, with_unknowns

LEVELS = {
    "advisory": EnforcementLevel.ADVISORY,
    "mandatory": EnforcementLevel.MANDATORY,
    "disabled": EnforcementLevel.DISABLED,
}


def plain(value: Any) -> Any:
    """A pulumi-policy property proxy as plain JSON; unknowns become `Unknown.VALUE` instead of
    raising, since the provider's rules skip what is not known yet."""
    if isinstance(value, Mapping):
        target = value["__target"] if type(value).__name__ == "_DictProxy" else value
        return {k: plain(v) for k, v in target.items()}
    if type(value).__name__ == "_ListProxy":
        return [plain(v) for v in value["__target"]]
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _res(type_: str, urn: str, name: str, props: Any, deps: Mapping[str, Any] | None = None) -> Res:
    depends_on = {k: tuple(d.urn for d in v) for k, v in (deps or {}).items()}
    return Res(type_, urn, name, with_unknowns(plain(props)), depends_on)


def _resource_policy(spec: PolicySpec) -> ResourceValidationPolicy:
    check = spec.resource_check
    assert check is not None

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        res = _res(args.resource_type, args.urn, args.name, args.props)
        for violation in check(res):
            report(violation.message, violation.urn)

    return ResourceValidationPolicy(
        name=spec.name,
        description=spec.description,
        validate=validate,
        enforcement_level=LEVELS[spec.level],
    )


def _stack_policy(spec: PolicySpec) -> StackValidationPolicy:
    check = spec.stack_check
    assert check is not None

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            _res(r.resource_type, r.urn, r.name, r.props, r.property_dependencies)
            for r in args.resources
            if isinstance(r, PolicyResource)
        ]
        for violation in check(resources, args.get_config() or {}):
            report(violation.message, violation.urn)

    return StackValidationPolicy(
        name=spec.name,
        description=spec.description,
        validate=validate,
        enforcement_level=LEVELS[spec.level],
        config_schema=PolicyConfigSchema(properties=dict(spec.config)) if spec.config else None,
    )


PolicyPack(
    name=PACK_NAME,
    policies=[
        _resource_policy(p) if p.resource_check is not None else _stack_policy(p) for p in POLICIES
    ],
)
