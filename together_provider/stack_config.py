"""The stack's structured config, a map per kind, validated before any resource exists: a config
with five mistakes fails once, listing all five with their config paths, and `pulumi preview`
makes no API call. Each map and what it takes or attaches are the kinds' (`registry.KINDS`)."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from together_facts.errors import SpecError
from together_provider.extensions import Attach, StackConfigExtension, config_key
from together_provider.framework.kind import Kind
from together_provider.framework.schema import UNKNOWN, Schema
from together_provider.registry import KINDS


def _stack(kind: Kind) -> StackConfigExtension:
    """What the kind declares for stack config (every kind of the registry declares it)."""
    return kind[StackConfigExtension]


def _shared_settings(kinds: Sequence[Kind]) -> dict[str, str]:
    """The keys `defaults` may set: each one some kind takes (`StackConfigExtension.defaults`)."""
    settings: dict[str, str] = {}
    for kind in kinds:
        for key, prop in kind.schema.config_keys.items():
            taken = _stack(kind).defaults
            if taken is None or prop in taken:
                settings.setdefault(key, prop)
    return settings


SETTINGS: Final[Mapping[str, str]] = _shared_settings(KINDS)
"""Each setting `defaults` may hold: its config key (camelCase) -> its property, from the field
tables of the kinds that take it."""

NAME_PATTERN: Final = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


def _taken(kind: Kind, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults `kind` takes when it does not set them."""
    taken = _stack(kind).defaults
    if taken is None:
        return dict(defaults)
    return {k: v for k, v in defaults.items() if k in taken}


def declaration_order(kinds: Sequence[Kind]) -> list[Kind]:
    """The kinds, each after every kind its resources attach: validated and declared first, so
    an attached resource's settings can be checked and its outputs passed on."""
    ordered: list[Kind] = []
    pending = list(kinds)
    while pending:
        done = {config_key(k) for k in ordered}
        ready = next(k for k in pending if {a.target for a in _stack(k).attaches} <= done)
        ordered.append(ready)
        pending.remove(ready)
    return ordered


@dataclass(frozen=True)
class StackConfig:
    """The validated config of one stack, as provider properties (snake_case): each kind's
    resources with the defaults they take (`props(kind)`), their own settings
    (`resources[config_key(kind)]`) and what they attach (`attachments(kind, attach)`)."""

    defaults: dict[str, Any] = field(default_factory=dict)
    resources: Mapping[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """A kind's `config_key` -> resource name -> its own settings (no defaults)."""
    attached: Mapping[str, Mapping[str, dict[str, str]]] = field(default_factory=dict)
    """A kind's `config_key` -> an `Attach.target` -> resource name -> the attached key."""
    host: str = "dynamic"
    """Which provider host manages the resources: one of `HOSTS`."""
    kinds: tuple[Kind, ...] = field(default=KINDS, compare=False, repr=False)

    def props(self, kind: Kind) -> dict[str, dict[str, Any]]:
        """Each resource's provider properties, the defaults it takes applied."""
        taken = _taken(kind, self.defaults)
        return {name: {**taken, **own} for name, own in self.resources[config_key(kind)].items()}

    def attachments(self, kind: Kind, attach: Attach) -> Mapping[str, str]:
        """Resource name -> the key of the `attach.target` resource it attaches."""
        return self.attached.get(config_key(kind), {}).get(attach.target, {})

    def in_declaration_order(self) -> list[Kind]:
        """The kinds in the order the program declares them (`declaration_order`)."""
        return declaration_order(self.kinds)


class ConfigError(SpecError):
    """The stack config has problems; `problems` lists each as `path: reason`."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        listed = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"the stack config has {len(problems)} problem(s); nothing was created or changed:\n"
            f"{listed}",
            fix="edit stacks/Pulumi.<stack>.yaml (or use `pulumi config set --path`), then run "
            "`pulumi preview` again",
        )


def _per_resource(kinds: Sequence[Kind]) -> dict[str, Kind]:
    """Default keys that identify one resource (its name, the one it adopts), by their kind:
    never in `defaults`, where every resource would share them and two resources would manage,
    and delete, one."""
    shared = _shared_settings(kinds)
    return {
        f.config_key: kind
        for kind in kinds
        for f in kind.schema.inputs
        if f.per_resource and f.config_key in shared
    }


def _settings(
    prefix: str,
    raw: object,
    problems: list[str],
    settings: Mapping[str, str],
    per_resource: Mapping[str, Kind] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """One settings map as provider properties, and each misspelt key's likely meaning.

    Only the keys are checked here; the values are the field table's job (`Kind.rulebook.validate`),
    which reports every problem of a resource at once with its own wording. `per_resource`:
    `defaults` only, the keys it may not set.
    """
    if raw is None:
        return {}, {}
    if not isinstance(raw, Mapping):
        problems.append(f"{prefix}: expected a map of settings, got {type(raw).__name__}")
        return {}, {}
    props: dict[str, Any] = {}
    meant: dict[str, str] = {}
    for key, value in raw.items():
        path = f"{prefix}.{key}"
        if key not in settings:
            close = difflib.get_close_matches(str(key), list(settings), n=1)
            if close:
                meant[settings[close[0]]] = str(key)
            hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(settings)}"
            problems.append(f"{path}: unknown key; {hint}")
        elif per_resource and key in per_resource:
            owner = per_resource[key]
            problems.append(
                f"{path}: identifies one {owner.schema.noun}, so it cannot be a default (every "
                f"{owner.schema.noun} would get the same one, and destroying either would delete "
                f"it); set it under {config_key(owner)}.<name>.{key}"
            )
        else:
            props[settings[key]] = value
    return props, meant


SHARED_KEYS: Final = ("defaults", "host", "pricesPerGpuHour", "failOnPlaceholderPrices")


def project_keys(kinds: Sequence[Kind] = KINDS) -> tuple[str, ...]:
    return (*(config_key(kind) for kind in kinds), *SHARED_KEYS)


PROJECT_KEYS: Final = project_keys()
"""The program's config keys: each kind's map (`clusters`, `volumes`), then the shared ones;
`pricesPerGpuHour` and `failOnPlaceholderPrices` are read by the PR preview, not here. Pulumi
accepts undeclared keys silently, so a typo such as `defualts` is caught here instead."""

HOSTS: Final = ("dynamic", "native")
"""`host`: the dynamic provider (the default) or the native plugin, `pulumi-resource-together`."""


def project_values(project: str, config: Mapping[str, str]) -> dict[str, Any]:
    """The program's own keys of the raw stack config (`pulumi.runtime.get_config_env()`), with
    the namespace dropped and structured values parsed from their JSON text."""
    values: dict[str, Any] = {}
    for key, text in config.items():
        namespace, _, name = key.partition(":")
        if namespace != project:
            continue
        try:
            values[name] = json.loads(text)
        except (TypeError, ValueError):
            values[name] = text
    return values


def _path(
    schema: Schema[Any],
    prefix: str,
    own: Mapping[str, Any],
    defaults: Mapping[str, Any],
    prop: str,
) -> str:
    """Where a value came from, as a config path: the resource's own settings (under `prefix`,
    e.g. `clusters.train`), else `defaults`."""
    spec_field = schema.by_name.get(prop)
    key = (spec_field.config_key if spec_field else None) or prop
    if prop not in own and prop in defaults:
        return f"defaults.{key}"
    return f"{prefix}.{key}"


def _claim(
    seen: dict[tuple[str, object], str],
    kind: Kind,
    what: str,
    value: object,
    path: str,
    problems: list[str],
) -> None:
    """Two resources naming (or adopting) one Together object would both manage it."""
    owner = seen.setdefault((what, value), path)
    if owner != path:
        noun = kind.schema.noun
        problems.append(
            f"{path}: {value!r} is also the {what} of {owner.rsplit('.', 1)[0]}; two resources "
            f"would manage one Together {noun}, and destroying either deletes it (give each "
            f"{noun} its own {what})"
        )


def load(raw: Mapping[str, Any], kinds: Sequence[Kind] = KINDS) -> StackConfig:
    """Validate the program's config values; raise one `ConfigError` listing every problem.

    Each resource is validated on its own and completely, so a type error in one field hides
    neither a rule broken in another field nor a problem in another resource.
    """
    problems: list[str] = []
    keys = project_keys(kinds)
    for key in sorted(set(raw) - set(keys)):
        close = difflib.get_close_matches(key, keys, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(keys)}"
        problems.append(f"{key}: unknown key; {hint}")
    for kind in kinds:
        declared = raw.get(config_key(kind))
        if _stack(kind).required and (not isinstance(declared, Mapping) or not declared):
            problems.append(
                f"{config_key(kind)}: required: a map of {kind.schema.noun} name -> settings, "
                f"e.g. `pulumi config set --path {_stack(kind).required}`"
            )
            raise ConfigError(problems)
    host = raw.get("host", HOSTS[0])
    if host not in HOSTS:
        problems.append(f"host: {host!r} is not a provider host; use one of {', '.join(HOSTS)}")
    shared = _shared_settings(kinds)
    defaults, _ = _settings("defaults", raw.get("defaults"), problems, shared, _per_resource(kinds))
    resources: dict[str, dict[str, dict[str, Any]]] = {}
    attached: dict[str, dict[str, dict[str, str]]] = {}
    seen: dict[tuple[str, object], str] = {}
    for kind in declaration_order(kinds):
        resources[config_key(kind)], attached[config_key(kind)] = _resources(
            kind, raw.get(config_key(kind)), defaults, resources, kinds, seen, problems
        )
    if problems:
        raise ConfigError(problems)
    return StackConfig(
        defaults=defaults,
        resources=resources,
        attached=attached,
        host=str(host),
        kinds=tuple(kinds),
    )


def _attachments(
    kind: Kind,
    name: str,
    prefix: str,
    settings_raw: object,
    by_key: Mapping[str, Kind],
    defaults: Mapping[str, Any],
    declared: Mapping[str, Mapping[str, Mapping[str, Any]]],
    attached: dict[str, dict[str, str]],
    problems: list[str],
) -> tuple[object, dict[str, Any], dict[str, Attach]]:
    """What one resource attaches (a cluster's `volume: <key>`): its settings without the attach
    keys, the properties taken from each attached resource (an output unknown until it exists,
    an input now), and the attach of each property checked against it. Records each attachment
    in `attached` (target -> resource name -> attached key)."""
    props: dict[str, Any] = {}
    attaching: dict[str, Attach] = {}
    for attach in _stack(kind).attaches:
        if not (isinstance(settings_raw, Mapping) and attach.key in settings_raw):
            continue
        settings_raw = dict(settings_raw)
        target = by_key[attach.target]
        key = _attach(
            prefix,
            attach,
            kind.schema,
            target,
            settings_raw.pop(attach.key),
            settings_raw,
            declared.get(attach.target, {}),
            problems,
        )
        if key is None:
            continue
        attached[attach.target][name] = key
        attaching[attach.checked] = attach
        values = {**_taken(target, defaults), **declared[attach.target][key]}
        props |= {
            prop: values.get(source) if source in target.schema.by_name else UNKNOWN
            for prop, source in attach.props.items()
        }
    return settings_raw, props, attaching


def _resources(
    kind: Kind,
    raw: object,
    defaults: Mapping[str, Any],
    declared: Mapping[str, Mapping[str, Mapping[str, Any]]],
    kinds: Sequence[Kind],
    seen: dict[tuple[str, object], str],
    problems: list[str],
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, str]]]:
    """One kind's map: each resource checked completely by the kind's rules, and what it
    attaches (target -> resource name -> attached key).

    The domain rules are not repeated here: each resource is turned into the provider's
    properties and checked by `kind.rulebook.validate`, the same function its `check` runs.
    A volume takes `region` and `projectId` from `defaults` when it does not set them (its
    `StackConfigExtension.defaults`); a cluster's `volume: <key>` is checked against that
    volume here.
    """
    noun = kind.schema.noun
    if raw is None:
        return {}, {}
    if not isinstance(raw, Mapping):
        problems.append(
            f"{config_key(kind)}: expected a map of {noun} key -> settings, "
            f"got {type(raw).__name__}"
        )
        return {}, {}
    by_key = {config_key(k): k for k in kinds}
    taken = _taken(kind, defaults)
    parsed: dict[str, dict[str, Any]] = {}
    attached: dict[str, dict[str, str]] = {a.target: {} for a in _stack(kind).attaches}
    reported: set[str] = set()
    for name, settings_raw in raw.items():
        prefix = f"{config_key(kind)}.{name}"
        if not NAME_PATTERN.match(str(name)):
            problems.append(
                f"{prefix}: the {noun} key must be lowercase letters, digits and '-', "
                "starting with a letter"
            )
        settings_raw, props, attaching = _attachments(
            kind, str(name), prefix, settings_raw, by_key, defaults, declared, attached, problems
        )
        own, meant = _settings(prefix, settings_raw, problems, kind.schema.config_keys)
        parsed[str(name)] = own
        props = {kind.named_after_resource: name, **taken, **own, **props}
        for failure in kind.rulebook.validate(str(name), props, None):
            if failure.field in meant:
                continue  # a misspelt key was reported already; "required" would repeat it
            if failure.field in attaching:
                attach = attaching[failure.field]
                target_noun = by_key[attach.target].schema.noun
                problems.append(
                    f"{prefix}.{attach.key}: {target_noun} "
                    f"{attached[attach.target][str(name)]!r} is in {props[attach.checked]!r} but "
                    f"the {noun} is in {props.get(attach.against)!r}; Together attaches only a "
                    f"{target_noun} of the {noun}'s own {attach.against} (put both in one "
                    f"{attach.against})"
                )
                continue
            path = _path(kind.schema, prefix, own, taken, failure.field)
            reason = failure.reason.removeprefix(f"{noun} {name!r}: ")
            if path.startswith("defaults.") and path in reported:
                continue  # a bad default is one problem, not one per resource
            reported.add(path)
            problems.append(f"{path}: {reason}")
        for spec_field in kind.schema.inputs:
            value = props.get(spec_field.name)
            if spec_field.per_resource and spec_field.config_key and value:
                what = f"{noun} name" if spec_field.names_resource else f"adopted {noun}"
                path = f"{prefix}.{spec_field.config_key}"
                _claim(seen, kind, what, value, path, problems)
    return parsed, attached


def _attach(
    prefix: str,
    attach: Attach,
    own: Schema[Any],
    target: Kind,
    key: object,
    settings: Mapping[str, Any],
    declared: Mapping[str, Any],
    problems: list[str],
) -> str | None:
    """An attaching setting (`volume: <key>`): the key must name a resource of the target kind,
    and not beside the property it sets by hand (`volumeId`)."""
    path = f"{prefix}.{attach.key}"
    if not isinstance(key, str) or key not in declared:
        known = ", ".join(declared) or "none are declared"
        problems.append(
            f"{path}: {key!r} is not a key of `{attach.target}` ({known}); declare it under "
            f"{attach.target}.{key} or name one of those"
        )
        return None
    noun = target.schema.noun
    by_hand = [
        setting
        for prop in attach.props
        if (setting := own.by_name[prop].config_key) is not None and setting in settings
    ]
    if by_hand:
        problems.append(
            f"{path}: set either {attach.key} (a {noun} of this stack) or {by_hand[0]} (an "
            f"existing {noun}'s id), not both"
        )
        return None
    return key
