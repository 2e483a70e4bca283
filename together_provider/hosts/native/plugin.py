"""`pulumi-resource-together`: the native plugin's executable, which the engine starts and talks
to over gRPC. Served through `pulumi.provider.experimental`'s servicer, with what it lacks: the
product's error messages, progress on the engine's log, an empty read, one sized thread pool."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import Any

import grpc
import grpc.aio
from pulumi.provider.experimental.server import ProviderServicer
from pulumi.runtime import proto
from pulumi.runtime._grpc_settings import _GRPC_CHANNEL_OPTIONS
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, provider_pb2_grpc

from together_provider.hosts.native.package_schema import version
from together_provider.hosts.native.provider import MAX_OPERATIONS, HostError, TogetherProvider


class EngineLog:
    """The engine's log, for progress attached to one resource: the experimental interface gives
    a provider no way to log, and a line with the resource's URN is shown under it by `pulumi
    up`. Best effort: a lost line never fails an operation on a cluster."""

    def __init__(self, address: str) -> None:
        self._channel = grpc.insecure_channel(address, options=_GRPC_CHANNEL_OPTIONS)
        self._engine = engine_pb2_grpc.EngineStub(self._channel)

    def __call__(self, urn: str, message: str) -> None:
        with suppress(grpc.RpcError):
            self._engine.Log(
                engine_pb2.LogRequest(severity=engine_pb2.INFO, message=message, urn=urn)
            )

    def close(self) -> None:
        self._channel.close()


Handler = Callable[[Any, Any, Any], Awaitable[Any]]


def _user_facing(handler: Handler) -> Handler:
    """`handler` with a `HostError` as the RPC's error message as it is: the user reads the
    product's sentence, where the servicer would append a Python traceback to every exception."""

    async def serve(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await handler(self, request, context)
        except HostError as error:
            await context.abort(grpc.StatusCode.UNKNOWN, error.message)

    return serve


class Servicer(ProviderServicer):
    """Pulumi's servicer, with `HostError` shown as the product's message."""

    Check = _user_facing(ProviderServicer.Check)
    Diff = _user_facing(ProviderServicer.Diff)
    Create = _user_facing(ProviderServicer.Create)
    _read = _user_facing(ProviderServicer.Read)
    Update = _user_facing(ProviderServicer.Update)
    Delete = _user_facing(ProviderServicer.Delete)
    Configure = _user_facing(ProviderServicer.Configure)

    async def Read(self, request: Any, context: Any) -> Any:
        """A read that found nothing must answer with no properties at all: `pulumi import` only
        refuses an id it cannot find when the properties are absent, and the base servicer
        always sends a (possibly empty) property map. (Refresh goes by the empty id alone.)"""
        response = await self._read(request, context)
        return response if response.id else proto.ReadResponse()


async def serve(engine_address: str, args: list[str]) -> None:
    """Serve the provider until the engine ends it; the engine reads the port printed first.

    One thread pool sized for the stack (`MAX_OPERATIONS`) runs every blocking call.
    """
    log = EngineLog(engine_address)
    executor = ThreadPoolExecutor(max_workers=MAX_OPERATIONS, thread_name_prefix="together")
    provider = TogetherProvider(executor, log)
    server = grpc.aio.server(options=_GRPC_CHANNEL_OPTIONS)
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(
        Servicer(args, version(), provider, engine_address=engine_address), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    try:
        await server.wait_for_termination()
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        log.close()


def main(argv: list[str] | None = None) -> None:
    """The console script: `pulumi-resource-together <engine address> [engine flags]`."""
    args = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="pulumi-resource-together",
        description="Pulumi resource plugin for Together AI GPU clusters; the Pulumi engine "
        "starts it, with its own address as the argument.",
    )
    parser.add_argument("engine", help="the Pulumi engine's gRPC address")
    known, _ = parser.parse_known_args(args)
    with suppress(KeyboardInterrupt):
        asyncio.run(serve(known.engine, args))


if __name__ == "__main__":
    main()
