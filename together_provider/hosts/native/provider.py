"""The native plugin's provider: Pulumi's async provider interface over the same lifecycles, for
what the dynamic host cannot do (concurrency, customTimeouts, `pulumi import`, per-URN logs)."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from pulumi.provider.experimental.provider import (
    CheckFailure,
    CheckRequest,
    CheckResponse,
    ConfigureRequest,
    ConfigureResponse,
    CreateRequest,
    CreateResponse,
    DeleteRequest,
    DiffRequest,
    DiffResponse,
    GetSchemaRequest,
    GetSchemaResponse,
    PropertyDiff,
    PropertyDiffKind,
    Provider,
    ReadRequest,
    ReadResponse,
    UpdateRequest,
    UpdateResponse,
)

from together_facts.errors import TogetherError
from together_provider.framework.fixes import PULUMI_FIXES
from together_provider.framework.kind import Kind
from together_provider.hosts.native import _import, _properties
from together_provider.hosts.native.package_schema import package_schema_json
from together_provider.registry import BY_TOKEN

if TYPE_CHECKING:
    from together_provider.framework.lifecycle import Lifecycle

MAX_OPERATIONS: Final = 512
"""Threads for lifecycle calls, created only as calls arrive. A create holds one thread for as
long as Together provisions, so this bounds how many clusters one `pulumi up` can wait on at
once; it is far above any engine `--parallel` a stack of GPU clusters would use."""

CONFIG_KEYS: Final = {"apiKey": "api_key", "baseUrl": "base_url"}

T = TypeVar("T")


class HostError(BaseException):
    """A failure to show the user as it is: the plugin's server turns it into the RPC's error
    message. A BaseException so Pulumi's servicer wrapper (which appends a Python traceback to
    every `Exception`) lets it through untouched."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Addressed(Protocol):
    """A request naming one resource: every request the engine sends about a resource."""

    @property
    def urn(self) -> str: ...

    @property
    def type(self) -> str: ...


Log = Callable[[str, str], None]
"""Send one progress line to the engine: (urn, message)."""


def _no_log(_urn: str, _message: str) -> None:
    return None


def _timeout(seconds: float) -> float | None:
    """The engine sends 0 when the program set no customTimeouts for this operation."""
    return seconds if seconds > 0 else None


class TogetherProvider(Provider):
    """Every resource kind of `registry.KINDS`, served by the `pulumi-resource-together` plugin.

    One thin adapter for all of them: each request's type picks its `Kind` (field table, rules,
    lifecycle), and nothing here knows a cluster from a volume; every decision (rules, duplicate
    guard, lost answers, adoption, waits) is the lifecycle's. What it adds: the synchronous
    lifecycle runs on the plugin's own executor (`MAX_OPERATIONS`, never asyncio's default
    `cpu_count + 4` threads), so twelve creates wait side by side; the engine's
    `customTimeouts` bound the waits in place of `ready_timeout_seconds`; progress goes to the
    engine's log with the resource's URN, so it shows under the resource; a failure is the
    product's sentence (`HostError`), not a traceback; a read with no previous state fills every
    input from the live object (`pulumi import`, `_import`)."""

    def __init__(self, executor: Executor, log: Log = _no_log) -> None:
        self._executor = executor
        self._log = log
        self._config: dict[str, str] = {}

    # ------------------------------------------------------------------ plumbing

    async def _run(self, call: Callable[[], T]) -> T:
        """Run blocking lifecycle work on the plugin's executor; errors become `HostError`."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, call)
        except TogetherError as error:
            raise HostError(str(error)) from error

    async def _apply(self, request: Addressed, work: Callable[[Lifecycle[Any]], T]) -> T:
        """Run `work` on the executor with this operation's client (closed after) and the
        lifecycle of the request's resource type."""
        kind, urn = self._kind(request.type), request.urn

        def call() -> T:
            # Imported here: a preview runs only check and diff, which need neither httpx nor
            # pydantic (the same split as the dynamic provider's).
            from together_api.client import TogetherClient

            say = functools.partial(self._log, urn)
            client = TogetherClient(
                api_key=self._config.get("api_key") or os.environ.get("TOGETHER_API_KEY"),
                base_url=self._config.get("base_url") or os.environ.get("TOGETHER_BASE_URL"),
                hints=PULUMI_FIXES,
            )
            try:
                return work(kind.lifecycle()(client, say))
            finally:
                client.close()

        return await self._run(call)

    @staticmethod
    def _kind(token: str) -> Kind:
        if token not in BY_TOKEN:
            raise HostError(f"this plugin serves {', '.join(BY_TOKEN)}, not {token}")
        return BY_TOKEN[token]

    # ------------------------------------------------------------------ provider

    async def get_schema(self, request: GetSchemaRequest) -> GetSchemaResponse:
        return GetSchemaResponse(package_schema_json())

    async def configure(self, request: ConfigureRequest) -> ConfigureResponse:
        # Secrets arrive decrypted, in this process only; nothing here is ever written to state.
        args = _properties.to_props(request.args)
        for key, name in CONFIG_KEYS.items():
            value = args.get(key) or request.variables.get(f"together:config:{key}")
            if isinstance(value, str) and value:
                self._config[name] = value
        # No preview support: in a preview the engine calls only check and diff, never create.
        return ConfigureResponse(accept_secrets=True, supports_preview=False)

    async def check(self, request: CheckRequest) -> CheckResponse:
        kind = self._kind(request.type)
        news = _properties.to_props(request.new_inputs)
        if news.get(kind.named_after_resource) is None:
            news[kind.named_after_resource] = request.name  # as the dynamic resources do
        inputs, failures = kind.rulebook.check_resource(
            _properties.to_props(request.old_inputs), news
        )
        return CheckResponse(
            inputs=_properties.to_values(inputs),
            failures=[CheckFailure(_properties.camel(f.field), f.reason) for f in failures],
        )

    async def diff(self, request: DiffRequest) -> DiffResponse:
        news = _properties.to_props(request.new_inputs)
        olds = _import.completed(_properties.to_props(request.old_state), news)
        plan = self._kind(request.type).rulebook.plan(olds, news)
        kinds = {
            _properties.camel(name): PropertyDiff(
                PropertyDiffKind.UPDATE_REPLACE
                if name in plan.replaces
                else PropertyDiffKind.UPDATE,
                input_diff=True,
            )
            for name in plan.changed
        }
        return DiffResponse(
            changes=plan.has_changes,
            replaces=[_properties.camel(name) for name in plan.replaces],
            delete_before_replace=plan.delete_before_replace,
            diffs=list(kinds),
            detailed_diff=kinds,
        )

    async def create(self, request: CreateRequest) -> CreateResponse:
        inputs = _properties.to_props(request.properties)
        if request.preview:
            return CreateResponse(None, request.properties)
        timeout, schema = _timeout(request.timeout), self._kind(request.type).schema
        applied = await self._apply(
            request, lambda lc: lc.create(schema.resolve(inputs), timeout_seconds=timeout)
        )
        return CreateResponse(
            applied.id, _properties.to_values(applied.outputs, schema.secret_outputs)
        )

    async def update(self, request: UpdateRequest) -> UpdateResponse:
        news = _properties.to_props(request.news)
        olds = _import.completed(_properties.to_props(request.olds), news)
        if request.preview:
            return UpdateResponse(request.news)
        timeout, schema = _timeout(request.timeout), self._kind(request.type).schema
        applied = await self._apply(
            request,
            lambda lc: lc.update(
                request.resource_id,
                schema.stored(olds),
                schema.resolve(news),
                timeout_seconds=timeout,
            ),
        )
        return UpdateResponse(_properties.to_values(applied.outputs, schema.secret_outputs))

    async def read(self, request: ReadRequest) -> ReadResponse:
        kind = self._kind(request.type)
        props: Mapping[str, Any] = {
            **_properties.to_props(request.inputs),
            **_properties.to_props(request.properties),
        }
        observed = await self._apply(
            request,
            lambda lc: _import.read(kind, lc, request.resource_id, props),
        )
        if observed is None:
            return ReadResponse(None)
        return ReadResponse(
            observed.id,
            _properties.to_values(observed.outputs, kind.schema.secret_outputs),
            _properties.to_values(observed.inputs),
        )

    async def delete(self, request: DeleteRequest) -> None:
        stored = self._kind(request.type).schema.stored(_properties.to_props(request.properties))
        timeout = _timeout(request.timeout)
        await self._apply(
            request,
            lambda lc: lc.delete(request.resource_id, stored, timeout_seconds=timeout),
        )


__all__ = ["MAX_OPERATIONS", "HostError", "TogetherProvider"]
