"""HTTP layer of the simulator: Together's ``/v1`` API plus optional ``/_sim`` admin.

Every error is one JSON shape, the OpenAI-style one Together uses elsewhere:
``{"error": {"message": str, "type": str, "param": str | null, "code": int}}``
(409 capacity errors carry ``"message": "Out of stock"``). Bearer auth: a
missing or unknown key is 401. Request bodies follow :mod:`together_sim.requests`: every field
Together's spec or clients define is typed and stored, an explicit ``null`` means "not given",
and an unknown field is ignored and named in ``X-Together-Sim-Ignored-Fields``. Admin endpoints
need no key and exist only with ``admin=True``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from together_api.wire import (
    Cluster,
    ClusterDeleteResponse,
    ClusterList,
    ClusterUpdateRequest,
    RegionList,
    VolumeCreateRequest,
    VolumeDeleteResponse,
    VolumeList,
    VolumeUpdateRequest,
)
from together_sim import autoscale as autoscaler
from together_sim.catalogue import REGIONS
from together_sim.errors import SimError
from together_sim.faults import Faults
from together_sim.model import SimCluster, World
from together_sim.operations import (
    DEFAULT_PROJECT_ID,
    create_cluster,
    create_volume,
    lowers,
    update_cluster,
)
from together_sim.render import SIM_ORG_ID, render_cluster, to_datetime
from together_sim.requests import IGNORED_HEADER, SimCreateRequest, parse
from together_sim.runtime import SimulatorConfig, SimulatorRuntime

__all__ = ["ABORT_EXTENSION", "create_app"]

ABORT_EXTENSION: Final = "together_sim.abort"
"""ASGI scope extension: a callable that drops the connection (set by ``__main__``)."""

_ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}
_CLUSTER_PATH: Final = re.compile(r"^/v1/compute/clusters/[^/]+$")
_VOLUME_PATH: Final = re.compile(r"^/v1/compute/clusters/storage/volumes/[^/]+$")

Handler = Callable[[Request], Awaitable[Response]]


def error_response(
    status: int, message: str, *, param: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {
        "error": {
            "message": message,
            "type": _ERROR_TYPES.get(status, "server_error" if status >= 500 else "api_error"),
            "param": param,
            "code": status,
        }
    }
    return JSONResponse(body, status_code=status, headers=headers)


def _json(
    model: BaseModel, ignored: list[str] | None = None, *, exclude_none: bool = False
) -> JSONResponse:
    headers = {IGNORED_HEADER: ",".join(ignored)} if ignored else None
    return JSONResponse(model.model_dump(mode="json", exclude_none=exclude_none), headers=headers)


def _volume_json(model: BaseModel, ignored: list[str] | None = None) -> JSONResponse:
    """Volumes carry only the SDK's four fields: the optional wire extras (None here) are
    never sent."""
    return _json(model, ignored, exclude_none=True)


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise SimError(400, f"request body is not valid JSON: {exc.msg}") from None
    if not isinstance(body, dict):
        raise SimError(400, "request body must be a JSON object")
    return body


def _validation_error(exc: ValidationError) -> SimError:
    first = exc.errors()[0]
    param = ".".join(str(p) for p in first["loc"]) or None
    return SimError(400, f"{param}: {first['msg']}", param=param)


def _template(path: str) -> str:
    if _VOLUME_PATH.match(path):
        return "/v1/compute/clusters/storage/volumes/{volume_id}"
    return "/v1/compute/clusters/{cluster_id}" if _CLUSTER_PATH.match(path) else path


def _render(runtime: SimulatorRuntime, cluster: SimCluster, world: World) -> Cluster:
    """`render_cluster` with this simulator's Kubernetes side, when it has one."""
    cluster_id, kube = cluster.cluster_id, runtime.kube
    return render_cluster(
        cluster,
        world,
        runtime.kube_config(cluster_id),
        kubernetes_up=kube is None or kube.serving(cluster_id),
    )


def create_app(config: SimulatorConfig | None = None) -> Starlette:
    """Build the ASGI app; ``app.state.runtime`` exposes the state to in-process tests."""
    runtime = SimulatorRuntime(config or SimulatorConfig())
    keys = frozenset(runtime.config.api_keys)

    def render(cluster: SimCluster, world: World) -> Cluster:
        return _render(runtime, cluster, world)

    def api(handler: Handler) -> Handler:
        """Wrap a /v1 handler: request log, faults, auth, errors."""

        async def wrapped(request: Request) -> Response:
            method, path = request.method, _template(request.url.path)
            response = await _serve(request, handler)
            # A lost answer is logged with the status the server had, since the work was done.
            runtime.requests.record(method, path, response.status_code if response else 0)
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

    async def _serve(request: Request, handler: Handler) -> Response | None:
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
        if scheme.lower() != "bearer" or token not in keys:
            return error_response(401, "missing or invalid API key")
        try:
            return await handler(request)
        except SimError as exc:
            return error_response(exc.status, exc.message, param=exc.param)
        except ValidationError as exc:
            err = _validation_error(exc)
            return error_response(err.status, err.message, param=err.param)

    def rendered(cluster_id: str) -> JSONResponse:
        with runtime.transaction() as world:
            cluster = world.get(cluster_id)
            return _json(render(cluster, world))

    async def create(request: Request) -> Response:
        req, ignored = parse(SimCreateRequest, await _body(request))
        fail = runtime.faults.faults.fail_provisioning
        with runtime.transaction() as world:
            cluster = create_cluster(world, req, fail=fail)
            if runtime.kube is not None:
                runtime.kube.prepare(cluster.cluster_id, cluster.cluster_name)
            return _json(render(cluster, world), ignored)

    async def list_clusters(request: Request) -> Response:
        project = request.query_params.get("projectId")
        with runtime.transaction() as world:
            clusters = [
                render(c, world)
                for c in world.clusters.values()
                if not project or c.project_id == project
            ]
        return _json(ClusterList(clusters=clusters))

    async def get(request: Request) -> Response:
        return rendered(request.path_params["cluster_id"])

    async def update(request: Request) -> Response:
        req, ignored = parse(ClusterUpdateRequest, await _body(request))
        cluster_id, marked = request.path_params["cluster_id"], frozenset[str]()
        if runtime.kube is not None:
            with runtime.transaction() as world:
                lowering = lowers(world.get(cluster_id), req)
            if lowering:  # targeted scale-down: the marks as the API server shows them now
                marked = await asyncio.to_thread(runtime.kube.marked_nodes, cluster_id)
        with runtime.transaction() as world:
            cluster = update_cluster(world, cluster_id, req, marked)
            return _json(render(cluster, world), ignored)

    async def delete(request: Request) -> Response:
        cluster_id = request.path_params["cluster_id"]
        with runtime.transaction() as world:
            world.delete(cluster_id)
        return _json(ClusterDeleteResponse(cluster_id=cluster_id))

    async def regions(request: Request) -> Response:
        return _json(RegionList(regions=list(REGIONS)))

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

    async def create_storage(request: Request) -> Response:
        req, ignored = parse(VolumeCreateRequest, await _body(request))
        with runtime.transaction() as world:
            return _volume_json(create_volume(world, req).render(world.now), ignored)

    async def list_storage(request: Request) -> Response:
        project = request.query_params.get("projectId")
        with runtime.transaction() as world:
            volumes = [
                v.render(world.now)
                for v in world.volumes.by_id.values()
                if not project or v.project_id == project
            ]
        return _volume_json(VolumeList(volumes=volumes))

    async def get_storage(request: Request) -> Response:
        with runtime.transaction() as world:
            volume = world.volumes.get(request.path_params["volume_id"])
            return _volume_json(volume.render(world.now))

    async def resize_storage(request: Request) -> Response:
        req, ignored = parse(VolumeUpdateRequest, await _body(request))
        with runtime.transaction() as world:
            return _volume_json(world.volumes.resize(req).render(world.now), ignored)

    async def delete_storage(request: Request) -> Response:
        with runtime.transaction() as world:
            world.volumes.delete(request.path_params["volume_id"], world.now)
        return _volume_json(VolumeDeleteResponse(success=True))

    storage = "/v1/compute/clusters/storage/volumes"

    routes = [
        Route("/v1/compute/clusters", api(create), methods=["POST"]),
        Route("/v1/compute/clusters", api(list_clusters), methods=["GET"]),
        Route("/v1/compute/clusters/{cluster_id}", api(get), methods=["GET"]),
        Route("/v1/compute/clusters/{cluster_id}", api(update), methods=["PUT"]),
        Route("/v1/compute/clusters/{cluster_id}", api(delete), methods=["DELETE"]),
        Route("/v1/compute/regions", api(regions), methods=["GET"]),
        Route(storage, api(create_storage), methods=["POST"]),
        Route(storage, api(list_storage), methods=["GET"]),
        Route(storage, api(resize_storage), methods=["PUT"]),
        Route(storage + "/{volume_id}", api(get_storage), methods=["GET"]),
        Route(storage + "/{volume_id}", api(delete_storage), methods=["DELETE"]),
        Route("/v3/whoami", api(whoami), methods=["GET"]),
    ]
    if runtime.config.admin:
        routes += admin_routes(runtime)
    if runtime.config.kubernetes:
        runtime.start_kubernetes()
    app = Starlette(routes=routes)
    app.state.runtime = runtime
    return app


def admin_routes(runtime: SimulatorRuntime) -> list[Route]:
    """``/_sim`` endpoints: clock, faults, capacity, reclaim, fail, autoscale, request log."""

    def admin(handler: Handler) -> Handler:
        async def wrapped(request: Request) -> Response:
            try:
                return await handler(request)
            except SimError as exc:
                return error_response(exc.status, exc.message, param=exc.param)
            except (ValidationError, ValueError, KeyError, TypeError) as exc:
                return error_response(400, f"bad admin request: {exc}")

        return wrapped

    def clock_body() -> dict[str, Any]:
        now = runtime.clock.now()
        return {"now": to_datetime(now).isoformat(), "epoch": now}

    async def get_clock(request: Request) -> Response:
        return JSONResponse(clock_body())

    async def advance(request: Request) -> Response:
        runtime.advance(float((await _body(request))["seconds"]))
        return JSONResponse(clock_body())

    async def set_faults(request: Request) -> Response:
        runtime.faults.faults = Faults.model_validate(await _body(request))
        return JSONResponse(runtime.faults.faults.model_dump())

    async def clear_faults(request: Request) -> Response:
        runtime.faults.faults = Faults()
        return JSONResponse(runtime.faults.faults.model_dump())

    async def get_faults(request: Request) -> Response:
        return JSONResponse(runtime.faults.faults.model_dump())

    async def set_capacity(request: Request) -> Response:
        body = await _body(request)
        region, gpu_type = str(body["region"]), str(body["gpu_type"])
        with runtime.transaction() as world:
            capacity = world.capacity_of(region, gpu_type)
            if body.get("standard_gpus") is not None:
                capacity.standard_gpus = int(body["standard_gpus"])
            if body.get("preemptible_gpus") is not None:
                capacity.preemptible_gpus = int(body["preemptible_gpus"])
            return JSONResponse(
                {
                    "region": region,
                    "gpu_type": gpu_type,
                    "standard_gpus": capacity.standard_gpus,
                    "preemptible_gpus": capacity.preemptible_gpus,
                    "standard_spare": world.standard_spare(region, gpu_type),
                    "preemptible_spare": world.preemptible_spare(region, gpu_type),
                }
            )

    async def reclaim(request: Request) -> Response:
        body = await _body(request)
        node_ids = body.get("node_ids")
        if node_ids is not None and (
            not isinstance(node_ids, list) or not all(isinstance(n, str) for n in node_ids)
        ):
            raise SimError(400, "node_ids must be a list of node ids", param="node_ids")
        count = int(body.get("nodes", len(node_ids) if node_ids else 1))
        drain = body.get("drain_seconds")
        if drain is not None and (
            isinstance(drain, bool) or not isinstance(drain, int | float) or drain <= 0
        ):
            raise SimError(
                400,
                f"drain_seconds must be a number of simulated seconds above 0, not {drain!r} "
                "(leave it out for Together's 300 s drain window)",
                param="drain_seconds",
            )
        with runtime.transaction() as world:
            cluster_id = request.path_params["cluster_id"]
            nodes = world.reclaim(
                cluster_id, count, node_ids, None if drain is None else float(drain)
            )
        return JSONResponse({"reclaimed": nodes})

    async def autoscale(request: Request) -> Response:
        """Together's autoscaler moves the standard count (inside its bounds only)."""
        num_gpus = (await _body(request)).get("num_gpus")
        if isinstance(num_gpus, bool) or not isinstance(num_gpus, int):
            raise SimError(
                400,
                f"num_gpus must be a whole number of GPUs (a multiple of 8), got {num_gpus!r}",
                param="num_gpus",
            )
        with runtime.transaction() as world:
            cluster = world.get(request.path_params["cluster_id"])
            autoscaler.set_count(world, cluster, num_gpus)
            return _json(_render(runtime, cluster, world))

    async def kubernetes(request: Request) -> Response:
        if runtime.kube is None:
            raise SimError(404, "the simulator runs no Kubernetes control planes (--kubernetes)")
        return JSONResponse({"clusters": runtime.kube.status()})

    async def fail(request: Request) -> Response:
        cluster_id = request.path_params["cluster_id"]
        with runtime.transaction() as world:
            world.fail(cluster_id)
            cluster = world.get(cluster_id)
            return _json(_render(runtime, cluster, world))

    async def get_requests(request: Request) -> Response:
        return JSONResponse(runtime.requests.snapshot())

    async def reset_requests(request: Request) -> Response:
        runtime.requests.reset()
        return JSONResponse({"total": 0})

    return [
        Route("/_sim/clock", admin(get_clock), methods=["GET"]),
        Route("/_sim/clock/advance", admin(advance), methods=["POST"]),
        Route("/_sim/faults", admin(get_faults), methods=["GET"]),
        Route("/_sim/faults", admin(set_faults), methods=["PUT"]),
        Route("/_sim/faults", admin(clear_faults), methods=["DELETE"]),
        Route("/_sim/capacity", admin(set_capacity), methods=["PUT"]),
        Route("/_sim/clusters/{cluster_id}/reclaim", admin(reclaim), methods=["POST"]),
        Route("/_sim/clusters/{cluster_id}/fail", admin(fail), methods=["POST"]),
        Route("/_sim/clusters/{cluster_id}/autoscale", admin(autoscale), methods=["POST"]),
        Route("/_sim/kubernetes", admin(kubernetes), methods=["GET"]),
        Route("/_sim/requests", admin(get_requests), methods=["GET"]),
        Route("/_sim/requests", admin(reset_requests), methods=["DELETE"]),
    ]
