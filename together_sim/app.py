"""Together's ``/v1`` API over HTTP: each handler reads a request the way Together does and answers
from the simulated world, with optional ``/_sim`` admin routes for tests."""

from __future__ import annotations

import asyncio
import re
from typing import Final

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from together_api.wire import (
    ClusterDeleteResponse,
    ClusterList,
    ClusterUpdateRequest,
    RegionList,
    VolumeCreateRequest,
    VolumeDeleteResponse,
    VolumeList,
    VolumeUpdateRequest,
)
from together_sim.admin import ADMIN_ROUTES
from together_sim.catalogue import DEFAULT_PROJECT_ID, REGIONS
from together_sim.clusters.operations import create_cluster, lowers, update_cluster
from together_sim.clusters.render import SIM_ORG_ID
from together_sim.errors import SimError
from together_sim.requests import SimCreateRequest, parse
from together_sim.runtime import SimulatorConfig, SimulatorRuntime
from together_sim.web import (
    Handler,
    Router,
    body_of,
    error_response,
    json_response,
    render,
    runtime_of,
    validation_error,
    volume_json,
)

__all__ = ["ABORT_EXTENSION", "API_ROUTES", "create_app"]

ABORT_EXTENSION: Final = "together_sim.abort"
"""ASGI scope extension: a callable that drops the connection (set by ``__main__``)."""

_STORAGE: Final = "/v1/compute/clusters/storage/volumes"
_CLUSTER_PATH: Final = re.compile(r"^/v1/compute/clusters/[^/]+$")
_VOLUME_PATH: Final = re.compile(r"^/v1/compute/clusters/storage/volumes/[^/]+$")


def _template(path: str) -> str:
    if _VOLUME_PATH.match(path):
        return "/v1/compute/clusters/storage/volumes/{volume_id}"
    return "/v1/compute/clusters/{cluster_id}" if _CLUSTER_PATH.match(path) else path


def api(handler: Handler) -> Handler:
    """Wrap a /v1 handler: request log, faults, auth, errors."""

    async def wrapped(request: Request) -> Response:
        runtime = runtime_of(request)
        method, path = request.method, _template(request.url.path)
        response = await _serve(runtime, request, handler)
        # A lost answer is logged with the status the server had, since the work was done.
        body = (await request.body()).decode() if method == "PUT" else None
        runtime.requests.record(method, path, response.status_code if response else 0, body)
        if (
            response is not None
            and response.status_code < 400
            and runtime.faults.lose_answer(method)
        ):
            response = None
        if response is None:
            abort = request.scope.get("extensions", {}).get(ABORT_EXTENSION)
            if abort is None:
                raise ConnectionAbortedError("simulator dropped the connection")
            abort()
            await asyncio.sleep(0)
            return Response(status_code=499)
        return response

    return wrapped


v1: Final = Router(api)
"""Every route of this module; ``@v1(method, path)`` on a handler adds one."""


async def _serve(runtime: SimulatorRuntime, request: Request, handler: Handler) -> Response | None:
    """Faults first, then bearer auth (a missing or unknown key is 401), then the handler; bodies
    are read as :mod:`together_sim.requests` says (unknown fields ignored, ``null`` not given)."""
    if runtime.stopping.is_set():
        return error_response(
            503,
            "the simulator is stopping; start it again (make demo, or python -m together_sim)",
            headers={"Connection": "close"},
        )
    faults = runtime.faults.faults
    if faults.latency_ms:
        await asyncio.sleep(faults.latency_ms / 1000)
    decision = runtime.faults.decide()
    if decision == "drop":
        return None
    if isinstance(decision, int):
        headers = {"Retry-After": f"{faults.retry_after:g}"} if faults.retry_after else None
        return error_response(decision, "injected fault", headers=headers)
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or token not in runtime.config.api_keys:
        return error_response(401, "missing or invalid API key")
    try:
        return await handler(request)
    except SimError as exc:
        return error_response(exc.status, exc.message, param=exc.param)
    except ValidationError as exc:
        err = validation_error(exc)
        return error_response(err.status, err.message, param=err.param)


@v1("POST", "/v1/compute/clusters")
async def create(request: Request) -> Response:
    runtime = runtime_of(request)
    req, ignored = parse(SimCreateRequest, await body_of(request))
    fail = runtime.faults.faults.fail_provisioning
    with runtime.transaction() as world:
        cluster = create_cluster(world, req, fail=fail)
        if runtime.kube is not None:
            runtime.kube.prepare(cluster.cluster_id, cluster.spec.cluster_name)
        return json_response(render(runtime, cluster, world), ignored)


@v1("GET", "/v1/compute/clusters")
async def list_clusters(request: Request) -> Response:
    runtime, project = runtime_of(request), request.query_params.get("projectId")
    with runtime.transaction() as world:
        clusters = [
            render(runtime, c, world)
            for c in world.clusters.values()
            if not project or c.spec.project_id == project
        ]
    return json_response(ClusterList(clusters=clusters))


@v1("GET", "/v1/compute/clusters/{cluster_id}")
async def get(request: Request) -> Response:
    runtime = runtime_of(request)
    with runtime.transaction() as world:
        cluster = world.get(request.path_params["cluster_id"])
        return json_response(render(runtime, cluster, world))


@v1("PUT", "/v1/compute/clusters/{cluster_id}")
async def update(request: Request) -> Response:
    runtime = runtime_of(request)
    req, ignored = parse(ClusterUpdateRequest, await body_of(request))
    cluster_id, marked = request.path_params["cluster_id"], frozenset[str]()
    if runtime.kube is not None:
        with runtime.transaction() as world:
            lowering = lowers(world.get(cluster_id), req)
        if lowering:  # targeted scale-down: the marks as the API server shows them now
            marked = await asyncio.to_thread(runtime.kube.marked_nodes, cluster_id)
    with runtime.transaction() as world:
        cluster = update_cluster(world, cluster_id, req, marked)
        return json_response(render(runtime, cluster, world), ignored)


@v1("DELETE", "/v1/compute/clusters/{cluster_id}")
async def delete(request: Request) -> Response:
    cluster_id = request.path_params["cluster_id"]
    with runtime_of(request).transaction() as world:
        world.delete(cluster_id)
    return json_response(ClusterDeleteResponse(cluster_id=cluster_id))


@v1("GET", "/v1/compute/regions")
async def regions(request: Request) -> Response:
    return json_response(RegionList(regions=list(REGIONS)))


@v1("GET", "/v3/whoami")
async def whoami(request: Request) -> Response:
    # The shape of the SDK's WhoamiProjectAPIKey; `tg` reads project.id when no --project.
    return JSONResponse(
        {
            "type": "project_api_key",
            "api_key": {"id": "key-sim"},
            "organization": {"id": SIM_ORG_ID, "name": "Simulated organization"},
            "project": {"id": DEFAULT_PROJECT_ID, "name": "Simulated project", "slug": "sim"},
        }
    )


@v1("POST", _STORAGE)
async def create_storage(request: Request) -> Response:
    req, ignored = parse(VolumeCreateRequest, await body_of(request))
    with runtime_of(request).transaction() as world:
        volume = world.volumes.create(
            req, project_id=DEFAULT_PROJECT_ID, now=world.now, clusters=world.clusters
        )
        return volume_json(volume.render(world.now), ignored)


@v1("GET", _STORAGE)
async def list_storage(request: Request) -> Response:
    project = request.query_params.get("projectId")
    with runtime_of(request).transaction() as world:
        volumes = [
            v.render(world.now)
            for v in world.volumes.by_id.values()
            if not project or v.spec.project_id == project
        ]
    return volume_json(VolumeList(volumes=volumes))


@v1("GET", _STORAGE + "/{volume_id}")
async def get_storage(request: Request) -> Response:
    with runtime_of(request).transaction() as world:
        volume = world.volumes.get(request.path_params["volume_id"])
        return volume_json(volume.render(world.now))


@v1("PUT", _STORAGE)
async def resize_storage(request: Request) -> Response:
    req, ignored = parse(VolumeUpdateRequest, await body_of(request))
    with runtime_of(request).transaction() as world:
        return volume_json(world.volumes.resize(req).render(world.now), ignored)


@v1("DELETE", _STORAGE + "/{volume_id}")
async def delete_storage(request: Request) -> Response:
    with runtime_of(request).transaction() as world:
        world.volumes.delete(request.path_params["volume_id"], world.now)
    return volume_json(VolumeDeleteResponse(success=True))


API_ROUTES: Final = tuple(v1.routes)
"""Together's paths, each behind `api` (request log, faults, auth, errors)."""


def create_app(config: SimulatorConfig | None = None) -> Starlette:
    """Build the ASGI app; ``app.state.runtime`` is the state every handler serves from (and
    what in-process tests reach into). The ``/_sim`` admin routes need no key and exist only
    with ``admin=True``."""
    runtime = SimulatorRuntime(config or SimulatorConfig())
    routes = [*API_ROUTES, *(ADMIN_ROUTES if runtime.config.admin else ())]
    if runtime.config.kubernetes:
        runtime.start_kubernetes()
    app = Starlette(routes=routes)
    app.state.runtime = runtime
    return app
