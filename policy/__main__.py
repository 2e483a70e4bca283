"""The preemptible-capacity policy pack (`pulumi preview --policy-pack policy`): only its wiring
to pulumi-policy, so that the policies stay pure, unit-tested functions of this repository's
`together_policy` package, installed into the pack's virtualenv (docs/policy.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
from together_policy.workloads import Violation

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


def _policy(spec: PolicySpec) -> ResourceValidationPolicy | StackValidationPolicy:
    """The pulumi-policy policy for `spec`: a resource check sees each resource alone, a stack
    check every resource of the stack and the policy's config."""
    about: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "enforcement_level": LEVELS[spec.level],
    }
    resource_check, stack_check = spec.resource_check, spec.stack_check
    if resource_check is not None:

        def validate_resource(args: ResourceValidationArgs, report: ReportViolation) -> None:
            res = _res(args.resource_type, args.urn, args.name, args.props)
            _report(resource_check(res), report)

        return ResourceValidationPolicy(validate=validate_resource, **about)
    assert stack_check is not None

    def validate_stack(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            _res(r.resource_type, r.urn, r.name, r.props, r.property_dependencies)
            for r in args.resources
            if isinstance(r, PolicyResource)
        ]
        _report(stack_check(resources, args.get_config() or {}), report)

    schema = PolicyConfigSchema(properties=dict(spec.config)) if spec.config else None
    return StackValidationPolicy(validate=validate_stack, config_schema=schema, **about)


def _report(violations: Iterable[Violation], report: ReportViolation) -> None:
    for violation in violations:
        report(violation.message, violation.urn)


PolicyPack(name=PACK_NAME, policies=[_policy(p) for p in POLICIES])
