"""Each kind's dynamic provider class, derived from its `Kind` so a kind writes no Pulumi code,
and the patch that keeps the host's tracebacks for bugs only."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Final

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

from together_facts.errors import TogetherError
from together_provider.framework.fixes import PULUMI_FIXES
from together_provider.framework.kind import Kind

if TYPE_CHECKING:
    from together_provider.framework.lifecycle import Lifecycle

CONFIG_API_KEY: Final = "together:apiKey"
CONFIG_BASE_URL: Final = "together:baseUrl"


def say(message: str) -> None:
    """Progress for the person running `pulumi up`: the engine shows provider stderr.

    Best effort: when the CLI has died its pipe is gone, and a progress line must never turn into
    an error that changes what happens to a resource.
    """
    with suppress(OSError):
        print(message, file=sys.stderr, flush=True)


HOST_MODULE: Final = "pulumi.dynamic.__main__"
"""Pulumi's dynamic-provider host (`python -m pulumi.dynamic`): the `__main__` of the provider
process the engine starts for dynamic resources."""


def _sentence_or_traceback(limit: int | None = None, chain: bool = True) -> str:
    """`traceback.format_exc` as the dynamic-provider host calls it once `configure()` ran.

    The host wraps every hook (check, diff, create, read, update, delete) in one handler that
    aborts the call with `traceback.format_exc()`, whatever was raised: Pulumi's Python providers
    send every exception's whole traceback, and the request to send less is still open
    (pulumi/pulumi#10416). For a wrong API key, an `up` that updated one cluster and created
    another printed 90 lines holding six tracebacks, around the two sentences that matter. A
    `TogetherError` is the user's (a key, a URL, capacity, a conflict) and its `str()` is already
    the message and the fix, so that is all the host sends; any other exception is a bug, and
    keeps its traceback.
    """
    error = sys.exc_info()[1]
    if isinstance(error, TogetherError):
        return str(error)
    return traceback.format_exc(limit, chain)


def _plain_errors_in_the_host() -> None:
    """Give the host process's `__main__` our `traceback`; anywhere else (a program, a test)
    this does nothing. Should the host stop using `traceback.format_exc()`, the engine tests that
    assert no traceback reaches the user (tests/integration/scenarios/test_errors.py) fail."""
    host = sys.modules.get("__main__")
    if host is None or getattr(host.__spec__, "name", None) != HOST_MODULE:
        return
    if getattr(host, "traceback", None) is traceback:
        # A copy of the module with our `format_exc`: the host's name, nobody else's.
        patched = ModuleType(traceback.__name__, traceback.__doc__)
        vars(patched).update(vars(traceback))
        patched.format_exc = _sentence_or_traceback  # type: ignore[attr-defined]
        host.traceback = patched  # type: ignore[attr-defined]


class LifecycleProvider(ResourceProvider):
    """Pulumi's hooks translated to one resource's rules (check, diff) and lifecycle (the rest).

    Importable and free of side effects on purpose: dill pickles a provider *by reference*
    (module and class name only: `together_provider.registry.ClusterProvider`), so the provider
    process imports the code installed now, and the pickle holds no credentials. The class has
    no instance attributes until `configure()` runs in the provider process, and `configure()`
    state is never pickled. A failure reaches the user as our sentence alone, whichever hook
    raised it (`_sentence_or_traceback`).
    """

    _api_key: str | None = None
    _base_url: str | None = None

    KIND: ClassVar[Kind]
    """The resource kind: its rulebook answers check and diff, its lifecycle the rest."""

    def configure(self, req: ConfigureRequest) -> None:
        # Stack config arrives decrypted here, in the provider process only.
        _plain_errors_in_the_host()
        self._api_key = req.config.get(CONFIG_API_KEY) or None
        self._base_url = req.config.get(CONFIG_BASE_URL) or None

    @contextmanager
    def _lifecycle(self) -> Iterator[Lifecycle[Any]]:
        # Built per call: httpx clients hold SSL contexts (unpicklable), and the host runs up
        # to four hooks at once, so nothing per-request lives on self. The client falls back to
        # TOGETHER_API_KEY / TOGETHER_BASE_URL. Imported here, not at the top: a preview runs only
        # check and diff, and should not pay for loading httpx and pydantic.
        from together_api.client import TogetherClient

        client = TogetherClient(api_key=self._api_key, base_url=self._base_url, hints=PULUMI_FIXES)
        try:
            yield self.KIND.lifecycle()(client, say)
        finally:
            client.close()

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        inputs, failures = self.KIND.rulebook.check_resource(olds, news)
        return CheckResult(inputs, [CheckFailure(f.field, f.reason) for f in failures])

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        plan = self.KIND.rulebook.plan(olds, news)
        return DiffResult(
            changes=plan.has_changes,
            replaces=list(plan.replaces),
            delete_before_replace=plan.delete_before_replace,
        )

    def create(self, props: dict[str, Any]) -> CreateResult:
        with self._lifecycle() as lifecycle:
            applied = lifecycle.create(self.KIND.schema.resolve(props))
        return CreateResult(applied.id, applied.outputs)

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        schema = self.KIND.schema
        with self._lifecycle() as lifecycle:
            applied = lifecycle.update(id_, schema.stored(olds), schema.resolve(news))
        return UpdateResult(applied.outputs)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        with self._lifecycle() as lifecycle:
            observed = lifecycle.read(id_, self.KIND.schema.stored(props))
        if observed is None:
            return ReadResult(None, {})
        return ReadResult(observed.id, observed.outputs, observed.inputs)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        with self._lifecycle() as lifecycle:
            lifecycle.delete(id_, self.KIND.schema.stored(props))


PROVIDERS_HOME: Final = "together_provider.registry"
"""The module whose attribute `<type_name>Provider` is each kind's provider class: the path
Pulumi state pickles, so it must keep resolving in every later version."""

_PROVIDERS: dict[tuple[str, str], type[LifecycleProvider]] = {}


def provider_class(kind: Kind, home: str = PROVIDERS_HOME) -> type[LifecycleProvider]:
    """The kind's dynamic provider class, derived once. It claims `home.<type_name>Provider` as
    its name, so `home` must resolve that attribute to this very class (the registry does)."""
    key = (home, kind.provider_name)
    if key not in _PROVIDERS:
        _PROVIDERS[key] = type(
            kind.provider_name,
            (LifecycleProvider,),
            {
                "KIND": kind,
                "__module__": home,
                "__qualname__": kind.provider_name,
                "__doc__": f"Manages one {kind.type_name} per resource through its lifecycle.",
            },
        )
    return _PROVIDERS[key]
