"""The stack's structured config: a map of clusters, validated before any resource exists.

Why validate here as well as in the provider's `check`: a config with five mistakes should fail
once, listing all five with their config paths (`clusters.train.numGpus: ...`), before the
program registers anything — so `pulumi preview` makes zero API calls and the user fixes every
problem in one go. The domain rules are not repeated: each cluster is turned into the provider's
properties and checked by `rules.validate`, the same function the provider's `check` runs.

Config shape (project namespace, camelCase keys as Pulumi config usually has):

    defaults:   {region, gpuType, cudaVersion, nvidiaDriverVersion, projectId, ...}  # optional
    volumes:                                      # optional: shared volumes for checkpoints
      <key>:    {sizeTib, region?, projectId?, isLifecycleIndependent?, ...}
    clusters:
      <name>:   {numGpus, numPreemptibleGpus, region?, gpuType?, volume?: <key>, ...}

A volume takes `region` and `projectId` from `defaults` when it does not set them; a cluster's
`volume` names a key of `volumes`, and is checked against it here (it exists, same region).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from together_api.errors import SpecError
from together_provider.cluster.rules import RULEBOOK as CLUSTER_RULES
from together_provider.cluster.table import CLUSTER
from together_provider.framework.schema import UNKNOWN, Schema
from together_provider.registry import KINDS
from together_provider.volume.rules import RULEBOOK as VOLUME_RULES
from together_provider.volume.table import VOLUME

SETTINGS: Final[Mapping[str, str]] = CLUSTER.config_keys
"""Each cluster setting's config key (camelCase) -> its property, from the field table."""

PER_CLUSTER: Final[frozenset[str]] = frozenset(
    f.config_key for f in CLUSTER.inputs if f.per_resource and f.config_key
)
"""Keys that identify one cluster (its name, the cluster it adopts): never in `defaults`, where
every cluster would share them and two resources would manage, and delete, one cluster."""

NAME_KEY: Final = next(f.config_key for f in CLUSTER.inputs if f.names_resource and f.config_key)

VOLUME_SETTINGS: Final[Mapping[str, str]] = VOLUME.config_keys
"""Each volume setting's config key -> its property, from the volume's field table."""

VOLUME_KEY: Final = "volume"
"""A cluster's setting naming a key of `volumes`: attaches that volume (its id and region)."""

INHERITED_BY_VOLUMES: Final = frozenset({"region", "project_id"})
"""Defaults a volume takes when it does not set them: where, and whose, its clusters are."""


@dataclass(frozen=True)
class StackConfig:
    """The validated `clusters` + `defaults` of one stack, as provider properties (snake_case)."""

    defaults: dict[str, Any] = field(default_factory=dict)
    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)
    volumes: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster_volumes: dict[str, str] = field(default_factory=dict)
    """Cluster name -> the key of the volume it attaches."""
    host: str = "dynamic"
    """Which provider host manages the clusters: one of `HOSTS`."""

    def cluster_props(self) -> dict[str, dict[str, Any]]:
        """Each cluster's provider properties, defaults applied."""
        return {name: {**self.defaults, **props} for name, props in self.clusters.items()}

    def volume_props(self) -> dict[str, dict[str, Any]]:
        """Each volume's provider properties, `region` and `projectId` defaults applied."""
        return {name: {**_inherited(self.defaults), **p} for name, p in self.volumes.items()}


def _inherited(defaults: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in defaults.items() if k in INHERITED_BY_VOLUMES}


NAME_PATTERN: Final = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


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


def _settings(
    prefix: str,
    raw: object,
    problems: list[str],
    *,
    shared: bool,
    settings: Mapping[str, str] = SETTINGS,
) -> tuple[dict[str, Any], dict[str, str]]:
    """One settings map as provider properties, and each misspelt key's likely meaning.

    Only the keys are checked here; the values are the field table's job (`rules.validate`),
    which reports every problem of a cluster at once with its own wording.
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
        elif shared and key in PER_CLUSTER:
            problems.append(
                f"{path}: identifies one cluster, so it cannot be a default (every cluster would "
                f"get the same one, and destroying either would delete it); set it under "
                f"clusters.<name>.{key}"
            )
        else:
            props[settings[key]] = value
    return props, meant


PROJECT_KEYS: Final = (*(kind.config_key for kind in KINDS), "defaults", "host", "pricesPerGpuHour")
"""The program's config keys: each kind's map (`clusters`, `volumes`), then the shared ones;
`pricesPerGpuHour` is read by the PR preview, not here. Pulumi
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
    seen: dict[tuple[str, object], str], what: str, value: object, path: str, problems: list[str]
) -> None:
    """Two clusters naming (or adopting) one Together cluster would both manage it."""
    owner = seen.setdefault((what, value), path)
    if owner != path:
        problems.append(
            f"{path}: {value!r} is also the {what} of {owner.rsplit('.', 1)[0]}; two resources "
            "would manage one Together cluster, and destroying either deletes it (give each "
            f"cluster its own {what})"
        )


def load(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the program's config values; raise one `ConfigError` listing every problem.

    Each cluster is validated on its own and completely, so a type error in one field hides
    neither a rule broken in another field nor a problem in another cluster.
    """
    problems: list[str] = []
    for key in sorted(set(raw) - set(PROJECT_KEYS)):
        close = difflib.get_close_matches(key, PROJECT_KEYS, n=1)
        hint = (
            f"did you mean {close[0]!r}?" if close else f"expected one of {', '.join(PROJECT_KEYS)}"
        )
        problems.append(f"{key}: unknown key; {hint}")
    clusters = raw.get("clusters")
    if not isinstance(clusters, Mapping) or not clusters:
        problems.append(
            "clusters: required: a map of cluster name -> settings, e.g. "
            "`pulumi config set --path clusters.train.numGpus 8`"
        )
        raise ConfigError(problems)
    host = raw.get("host", HOSTS[0])
    if host not in HOSTS:
        problems.append(f"host: {host!r} is not a provider host; use one of {', '.join(HOSTS)}")
    defaults, _ = _settings("defaults", raw.get("defaults"), problems, shared=True)
    volumes = _volumes(raw.get("volumes"), defaults, problems)
    parsed: dict[str, dict[str, Any]] = {}
    attached: dict[str, str] = {}
    seen: dict[tuple[str, object], str] = {}
    reported: set[str] = set()
    for name, settings_raw in clusters.items():
        prefix = f"clusters.{name}"
        if not NAME_PATTERN.match(str(name)):
            problems.append(
                f"{prefix}: the cluster key must be lowercase letters, digits and '-', "
                "starting with a letter"
            )
        if isinstance(settings_raw, Mapping) and VOLUME_KEY in settings_raw:
            settings_raw = dict(settings_raw)
            volume_key = _attach(
                prefix, settings_raw.pop(VOLUME_KEY), settings_raw, volumes, problems
            )
            if volume_key is not None:
                attached[str(name)] = volume_key
        own, meant = _settings(prefix, settings_raw, problems, shared=False)
        parsed[str(name)] = own
        props = {"cluster_name": name, **defaults, **own}
        if str(name) in attached:
            # The id is only known once the volume exists; its region is known now.
            volume = {**_inherited(defaults), **volumes[attached[str(name)]]}
            props.update(volume_id=UNKNOWN, volume_region=volume.get("region"))
        for failure in CLUSTER_RULES.validate(str(name), props, None):
            if failure.field in meant:
                continue  # a misspelt key was reported already; "required" would repeat it
            if failure.field == "volume_region":
                key = attached[str(name)]
                problems.append(
                    f"{prefix}.{VOLUME_KEY}: volume {key!r} is in {props['volume_region']!r} "
                    f"but the cluster is in {props.get('region')!r}; Together attaches only a "
                    "volume of the cluster's own region (put both in one region)"
                )
                continue
            path = _path(CLUSTER, prefix, own, defaults, failure.field)
            reason = failure.reason.removeprefix(f"cluster {name!r}: ")
            if path.startswith("defaults.") and path in reported:
                continue  # a bad default is one problem, not one per cluster
            reported.add(path)
            problems.append(f"{path}: {reason}")
        _claim(seen, "cluster name", props["cluster_name"], f"{prefix}.{NAME_KEY}", problems)
        adopt = props.get("adopt_cluster_id")
        if adopt:
            _claim(seen, "adopted cluster", adopt, f"{prefix}.adoptClusterId", problems)
    if problems:
        raise ConfigError(problems)
    return StackConfig(
        defaults=defaults,
        clusters=parsed,
        volumes=volumes,
        cluster_volumes=attached,
        host=str(host),
    )


def _volumes(
    raw: object, defaults: Mapping[str, Any], problems: list[str]
) -> dict[str, dict[str, Any]]:
    """The `volumes` map: each volume checked completely by the volume rules."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(
            f"volumes: expected a map of volume key -> settings, got {type(raw).__name__}"
        )
        return {}
    parsed: dict[str, dict[str, Any]] = {}
    for name, settings_raw in raw.items():
        prefix = f"volumes.{name}"
        if not NAME_PATTERN.match(str(name)):
            problems.append(
                f"{prefix}: the volume key must be lowercase letters, digits and '-', "
                "starting with a letter"
            )
        own, meant = _settings(
            prefix, settings_raw, problems, shared=False, settings=VOLUME_SETTINGS
        )
        parsed[str(name)] = own
        props = {"volume_name": name, **_inherited(defaults), **own}
        for failure in VOLUME_RULES.validate(str(name), props, None):
            if failure.field in meant:
                continue
            path = _path(VOLUME, prefix, own, _inherited(defaults), failure.field)
            reason = failure.reason.removeprefix(f"volume {name!r}: ")
            problems.append(f"{path}: {reason}")
    return parsed


def _attach(
    prefix: str,
    key: object,
    settings: Mapping[str, Any],
    volumes: Mapping[str, Any],
    problems: list[str],
) -> str | None:
    """A cluster's `volume: <key>`: the key must name a volume, and not beside a `volumeId`."""
    path = f"{prefix}.{VOLUME_KEY}"
    if not isinstance(key, str) or key not in volumes:
        known = ", ".join(volumes) or "none are declared"
        problems.append(
            f"{path}: {key!r} is not a key of `volumes` ({known}); declare it under "
            f"volumes.{key} or name one of those"
        )
        return None
    if "volumeId" in settings:
        problems.append(
            f"{path}: set either volume (a volume of this stack) or volumeId (an existing "
            "volume's id), not both"
        )
        return None
    return key
