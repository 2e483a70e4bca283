"""The Cluster dynamic provider: a thin adapter from Pulumi's hooks to `lifecycle`.

Importable and free of side effects on purpose: dill pickles this class *by reference* (module and
name only), so the provider process imports the code that is installed now, and the pickle holds
no credentials — the class has no instance attributes until `configure()` runs in the provider
process, and `configure()` state is never pickled.

Every decision (rules, duplicate guard, lost answers, adoption, waits) lives in
`together_provider.lifecycle`; this module only translates its results into Pulumi's types and
builds one API client per call.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Final

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

from together_provider import rules

if TYPE_CHECKING:
    from together_provider.lifecycle import ClusterLifecycle

CONFIG_API_KEY: Final = "together:apiKey"
CONFIG_BASE_URL: Final = "together:baseUrl"


def _say(message: str) -> None:
    """Progress for the person running `pulumi up`: the engine shows provider stderr.

    Best effort: when the CLI has died its pipe is gone, and a progress line must never turn into
    an error that changes what happens to a cluster.
    """
    with suppress(OSError):
        print(message, file=sys.stderr, flush=True)


class ClusterProvider(ResourceProvider):
    """Manages one Together GPU cluster per resource through `ClusterLifecycle`."""

    _api_key: str | None = None
    _base_url: str | None = None

    def configure(self, req: ConfigureRequest) -> None:
        # Stack config arrives decrypted here, in the provider process only.
        self._api_key = req.config.get(CONFIG_API_KEY) or None
        self._base_url = req.config.get(CONFIG_BASE_URL) or None

    @contextmanager
    def _lifecycle(self) -> Iterator[ClusterLifecycle]:
        # Built per call: httpx clients hold SSL contexts (unpicklable), and the host runs up
        # to four hooks at once, so nothing per-request lives on self. The client falls back to
        # TOGETHER_API_KEY / TOGETHER_BASE_URL. Imported here, not at the top: a preview runs only
        # check and diff, and should not pay for loading httpx and pydantic.
        from together_api.client import TogetherClient
        from together_provider.lifecycle import ClusterLifecycle

        client = TogetherClient(api_key=self._api_key, base_url=self._base_url)
        try:
            yield ClusterLifecycle(client, _say)
        finally:
            client.close()

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        inputs, failures = rules.check_resource(olds, news)
        return CheckResult(inputs, [CheckFailure(f.field, f.reason) for f in failures])

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        plan = rules.plan(olds, news)
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
