"""The ``/_sim`` admin endpoints (``--admin``): clock, faults, capacity, reclaim, fail,
autoscale, Kubernetes status and the request log. They need no key; a bad body is a 400."""

from __future__ import annotations

from typing import Any, Final

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from together_sim import autoscale as autoscaler
from together_sim import web
from together_sim.clusters.render import to_datetime
from together_sim.errors import SimError
from together_sim.faults import Faults
from together_sim.runtime import SimulatorRuntime
from together_sim.web import Handler

__all__ = ["ADMIN_ROUTES"]


def admin(handler: Handler) -> Handler:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except SimError as exc:
            return web.error_response(exc.status, exc.message, param=exc.param)
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            return web.error_response(400, f"bad admin request: {exc}")

    return wrapped


sim: Final = web.Router(admin)
"""Every route of this module; ``@sim(method, path)`` on a handler adds one."""


def _clock_body(runtime: SimulatorRuntime) -> dict[str, Any]:
    now = runtime.clock.now()
    return {"now": to_datetime(now).isoformat(), "epoch": now}


@sim("GET", "/_sim/clock")
async def get_clock(request: Request) -> Response:
    return JSONResponse(_clock_body(web.runtime_of(request)))


@sim("POST", "/_sim/clock/advance")
async def advance(request: Request) -> Response:
    runtime = web.runtime_of(request)
    runtime.advance(float((await web.body_of(request))["seconds"]))
    return JSONResponse(_clock_body(runtime))


@sim("PUT", "/_sim/faults")
async def set_faults(request: Request) -> Response:
    faults = web.runtime_of(request).faults
    faults.faults = Faults.model_validate(await web.body_of(request))
    return JSONResponse(faults.faults.model_dump())


@sim("DELETE", "/_sim/faults")
async def clear_faults(request: Request) -> Response:
    faults = web.runtime_of(request).faults
    faults.faults = Faults()
    return JSONResponse(faults.faults.model_dump())


@sim("GET", "/_sim/faults")
async def get_faults(request: Request) -> Response:
    return JSONResponse(web.runtime_of(request).faults.faults.model_dump())


@sim("PUT", "/_sim/capacity")
async def set_capacity(request: Request) -> Response:
    body = await web.body_of(request)
    region, gpu_type = str(body["region"]), str(body["gpu_type"])
    with web.runtime_of(request).transaction() as world:
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


@sim("POST", "/_sim/clusters/{cluster_id}/reclaim")
async def reclaim(request: Request) -> Response:
    body = await web.body_of(request)
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
    with web.runtime_of(request).transaction() as world:
        cluster_id = request.path_params["cluster_id"]
        nodes = world.reclaim(cluster_id, count, node_ids, None if drain is None else float(drain))
    return JSONResponse({"reclaimed": nodes})


@sim("POST", "/_sim/clusters/{cluster_id}/autoscale")
async def autoscale(request: Request) -> Response:
    """Together's autoscaler moves the standard count (inside its bounds only)."""
    num_gpus = (await web.body_of(request)).get("num_gpus")
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, int):
        raise SimError(
            400,
            f"num_gpus must be a whole number of GPUs (a multiple of 8), got {num_gpus!r}",
            param="num_gpus",
        )
    runtime = web.runtime_of(request)
    with runtime.transaction() as world:
        cluster = world.get(request.path_params["cluster_id"])
        autoscaler.set_count(world, cluster, num_gpus)
        return web.json_response(web.render(runtime, cluster, world))


@sim("GET", "/_sim/kubernetes")
async def kubernetes(request: Request) -> Response:
    kube = web.runtime_of(request).kube
    if kube is None:
        raise SimError(404, "the simulator runs no Kubernetes control planes (--kubernetes)")
    return JSONResponse({"clusters": kube.status()})


@sim("POST", "/_sim/clusters/{cluster_id}/fail")
async def fail(request: Request) -> Response:
    cluster_id, runtime = request.path_params["cluster_id"], web.runtime_of(request)
    with runtime.transaction() as world:
        world.fail(cluster_id)
        cluster = world.get(cluster_id)
        return web.json_response(web.render(runtime, cluster, world))


@sim("GET", "/_sim/requests")
async def get_requests(request: Request) -> Response:
    return JSONResponse(web.runtime_of(request).requests.snapshot())


@sim("DELETE", "/_sim/requests")
async def reset_requests(request: Request) -> Response:
    web.runtime_of(request).requests.reset()
    return JSONResponse({"total": 0})


ADMIN_ROUTES: Final = tuple(sim.routes)
"""Mounted by `create_app` only with ``admin=True``."""
