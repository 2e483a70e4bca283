"""The SharedVolume dynamic provider: a thin adapter from Pulumi's hooks to `volume_lifecycle`.

Like `provider.ClusterProvider`, importable and free of side effects: dill pickles the class by
reference (module and name only), the pickle holds no credentials, and `configure()` state lives
only in the provider process. Every decision lives in `together_provider.volume_lifecycle`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    ConfigureRequest,
    CreateResult,
    DiffResult,
    ReadResult,
    ResourceProvider,
    UpdateResult,
)

from together_provider import volume_rules
from together_provider.provider import CONFIG_API_KEY, CONFIG_BASE_URL, _say

if TYPE_CHECKING:
    from together_provider.volume_lifecycle import VolumeLifecycle


class VolumeProvider(ResourceProvider):
    """Manages one Together shared volume per resource through `VolumeLifecycle`."""

    _api_key: str | None = None
    _base_url: str | None = None

    def configure(self, req: ConfigureRequest) -> None:
        self._api_key = req.config.get(CONFIG_API_KEY) or None
        self._base_url = req.config.get(CONFIG_BASE_URL) or None

    @contextmanager
    def _lifecycle(self) -> Iterator[VolumeLifecycle]:
        # One client per call, as for clusters: httpx clients cannot be pickled or shared
        # between the hooks the host runs at once. Imported here: a preview (check and diff only)
        # loads neither httpx nor pydantic.
        from together_api.client import TogetherClient
        from together_provider.volume_lifecycle import VolumeLifecycle

        client = TogetherClient(api_key=self._api_key, base_url=self._base_url)
        try:
            yield VolumeLifecycle(client, _say)
        finally:
            client.close()

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        inputs, failures = volume_rules.check_resource(olds, news)
        return CheckResult(inputs, [CheckFailure(f.field, f.reason) for f in failures])

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        plan = volume_rules.plan(olds, news)
        return DiffResult(
            changes=plan.has_changes,
            replaces=list(plan.replaces),
            delete_before_replace=plan.delete_before_replace,
        )

    def create(self, props: dict[str, Any]) -> CreateResult:
        with self._lifecycle() as lifecycle:
            applied = lifecycle.create(props)
        return CreateResult(applied.id, applied.outputs)

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        with self._lifecycle() as lifecycle:
            applied = lifecycle.update(id_, olds, news)
        return UpdateResult(applied.outputs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        with self._lifecycle() as lifecycle:
            observed = lifecycle.read(id_, props)
        if observed is None:
            return ReadResult(None, {})
        return ReadResult(observed.id, observed.outputs, observed.inputs)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        with self._lifecycle() as lifecycle:
            lifecycle.delete(id_, props)
