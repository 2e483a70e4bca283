"""What the ``/v1`` and the ``/_sim`` handlers share: the runtime a request is served by, the
one JSON error shape, body reading and rendering a cluster with its Kubernetes side."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Final

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from together_api.wire import Cluster
from together_sim.clusters.render import render_cluster
from together_sim.clusters.state import SimCluster
from together_sim.errors import SimError
from together_sim.model import World
from together_sim.requests import IGNORED_HEADER
from together_sim.runtime import SimulatorRuntime

__all__ = [
    "Handler",
    "Router",
    "body_of",
    "error_response",
    "json_response",
    "render",
    "runtime_of",
    "validation_error",
    "volume_json",
]

_ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}

Handler = Callable[[Request], Awaitable[Response]]


class Router:
    """Routes declared on their handlers (``@router("GET", path)``), each behind ``wrap``."""

    def __init__(self, wrap: Callable[[Handler], Handler]) -> None:
        self.routes: list[Route] = []
        self._wrap = wrap

    def __call__(self, method: str, path: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.routes.append(Route(path, self._wrap(handler), methods=[method]))
            return handler

        return register


def runtime_of(request: Request) -> SimulatorRuntime:
    """The runtime `create_app` put in ``app.state``: handlers are module functions, each app
    (a test's, the CLI's) carries its own state."""
    runtime: SimulatorRuntime = request.app.state.runtime
    return runtime


def error_response(
    status: int, message: str, *, param: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Every error is this one JSON shape, the OpenAI-style one Together uses elsewhere:
    ``{"error": {"message": str, "type": str, "param": str | null, "code": int}}`` (409 capacity
    errors carry ``"message": "Out of stock"``)."""
    body = {
        "error": {
            "message": message,
            "type": _ERROR_TYPES.get(status, "server_error" if status >= 500 else "api_error"),
            "param": param,
            "code": status,
        }
    }
    return JSONResponse(body, status_code=status, headers=headers)


def json_response(
    model: BaseModel, ignored: list[str] | None = None, *, exclude_none: bool = False
) -> JSONResponse:
    headers = {IGNORED_HEADER: ",".join(ignored)} if ignored else None
    return JSONResponse(model.model_dump(mode="json", exclude_none=exclude_none), headers=headers)


def volume_json(model: BaseModel, ignored: list[str] | None = None) -> JSONResponse:
    """Volumes carry only the SDK's four fields: the optional wire extras (None here) are
    never sent."""
    return json_response(model, ignored, exclude_none=True)


async def body_of(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise SimError(400, f"request body is not valid JSON: {exc.msg}") from None
    if not isinstance(body, dict):
        raise SimError(400, "request body must be a JSON object")
    return body


def validation_error(exc: ValidationError) -> SimError:
    first = exc.errors()[0]
    param = ".".join(str(p) for p in first["loc"]) or None
    return SimError(400, f"{param}: {first['msg']}", param=param)


def render(runtime: SimulatorRuntime, cluster: SimCluster, world: World) -> Cluster:
    """`render_cluster` with this simulator's Kubernetes side, when it has one."""
    cluster_id, kube = cluster.cluster_id, runtime.kube
    return render_cluster(
        cluster,
        world,
        runtime.kube_config(cluster_id),
        kubernetes_up=kube is None or kube.serving(cluster_id),
    )
