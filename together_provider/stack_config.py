"""The stack's structured config: a map of clusters, validated before any resource exists.

Why validate here as well as in the provider's `check`: a config with five mistakes should fail
once, listing all five with their config paths (`clusters.train.numGpus: ...`), before the
program registers anything — so `pulumi preview` makes zero API calls and the user fixes every
problem in one go. The domain rules are not repeated: each cluster is turned into the provider's
properties and checked by `rules.validate`, the same function the provider's `check` runs.

Config shape (project namespace, camelCase keys as Pulumi config usually has):

    defaults:   {region, gpuType, cudaVersion, nvidiaDriverVersion, projectId, ...}  # optional
    clusters:
      <name>:   {numGpus, numPreemptibleGpus, region?, gpuType?, ...}  # defaults fill the gaps
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, ValidationError
from pydantic.alias_generators import to_camel

from together_api.errors import SpecError
from together_provider import rules


class _Strict(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, extra="forbid", frozen=True)


class ClusterSettings(_Strict):
    """Every setting of a cluster; all optional here because `defaults` may supply them."""

    cluster_name: str | None = None
    region: str | None = None
    gpu_type: str | None = None
    num_gpus: StrictInt | None = None
    num_preemptible_gpus: StrictInt | None = None
    cluster_type: str | None = None
    billing_type: str | None = None
    duration_days: StrictInt | None = None
    cuda_version: str | None = None
    nvidia_driver_version: str | None = None
    project_id: str | None = None
    volume_id: str | None = None
    ready_timeout_seconds: StrictInt | StrictFloat | None = None
    adopt_cluster_id: str | None = None


class StackConfig(_Strict):
    """The whole `clusters` + `defaults` config of one stack."""

    defaults: ClusterSettings = Field(default_factory=ClusterSettings)
    clusters: dict[str, ClusterSettings] = Field(min_length=1)

    def cluster_props(self) -> dict[str, dict[str, Any]]:
        """Each cluster's provider properties (snake_case), defaults applied."""
        base = self.defaults.model_dump(exclude_none=True)
        return {
            name: {**base, **settings.model_dump(exclude_none=True)}
            for name, settings in self.clusters.items()
        }


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


def _path(prefix: str, loc: tuple[int | str, ...]) -> str:
    return ".".join([prefix, *(str(part) for part in loc)])


def _pydantic_problems(prefix: str, error: ValidationError) -> list[str]:
    problems = []
    keys = [to_camel(f) for f in ClusterSettings.model_fields]
    for item in error.errors():
        path = _path(prefix, item["loc"])
        if item["type"] == "extra_forbidden":
            key = str(item["loc"][-1])
            close = difflib.get_close_matches(key, keys, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(keys)}"
            problems.append(f"{path}: unknown key; {hint}")
        else:
            problems.append(f"{path}: {item.get('input')!r} is invalid: {item['msg']}")
    return problems


def _settings(prefix: str, raw: object, problems: list[str]) -> ClusterSettings | None:
    try:
        return ClusterSettings.model_validate(raw if raw is not None else {})
    except ValidationError as error:
        problems.extend(_pydantic_problems(prefix, error))
        return None


PROJECT_KEYS: Final = ("clusters", "defaults", "pricesPerGpuHour")
"""The program's config keys; `pricesPerGpuHour` is read by the PR preview, not here. Pulumi
accepts undeclared keys silently, so a typo such as `defualts` is caught here instead."""


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


def load(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the program's config values; raise one `ConfigError` listing every problem.

    Each cluster is validated on its own, so a type error in one does not hide a rule broken in
    another.
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
    defaults = _settings("defaults", raw.get("defaults"), problems)
    base = defaults.model_dump(exclude_none=True) if defaults else {}
    parsed: dict[str, ClusterSettings] = {}
    for name, settings_raw in clusters.items():
        prefix = f"clusters.{name}"
        if not NAME_PATTERN.match(str(name)):
            problems.append(
                f"{prefix}: the cluster key must be lowercase letters, digits and '-', "
                "starting with a letter"
            )
        settings = _settings(prefix, settings_raw, problems)
        if settings is None:
            continue
        parsed[str(name)] = settings
        props = {"cluster_name": name, **base, **settings.model_dump(exclude_none=True)}
        for failure in rules.validate(str(name), props, None):
            reason = failure.reason.removeprefix(f"cluster {name!r}: ")
            problems.append(f"{prefix}.{to_camel(failure.field)}: {reason}")
    if problems:
        raise ConfigError(problems)
    return StackConfig(defaults=defaults or ClusterSettings(), clusters=parsed)
