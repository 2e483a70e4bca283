"""Turn a simulated cluster into the wire ``Cluster`` the real API would return: the stored
wire fields the response shares, echoed as sent, plus what the API computes (status, nodes,
events, volumes, allocated counts, kubeconfig)."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from typing import Any, Final

from together_api.wire import (
    AddOn,
    Cluster,
    ClusterStatus,
    ControlPlaneNode,
    GpuWorkerNode,
    NodeLifecycleEvent,
    NodePhaseTransition,
    PhaseTransition,
    Volume,
)
from together_facts.values import GPUS_PER_NODE
from together_sim.clusters.state import PROVISIONING_PLAN, SimCluster, SimNode, reservation_end
from together_sim.echo import echoed
from together_sim.model import World
from together_sim.timings import Timings

__all__ = ["kube_config_yaml", "render_cluster", "to_datetime"]

CONTROL_PLANE_NODES: Final = 3
SIM_ORG_ID: Final = "org-sim-default"


def to_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _ip(seed: str, index: int) -> str:
    digest = hashlib.sha256(f"{seed}:{index}".encode()).digest()
    return f"10.{digest[0]}.{digest[1]}.{digest[2] or 1}"


def _node_phases(
    created: float, running: float | None, ended: float | None, now: float
) -> list[NodePhaseTransition]:
    phases = [NodePhaseTransition(phase="NODE_PHASE_PENDING", transition_time=to_datetime(created))]
    if running is not None and running <= now:
        phases.append(
            NodePhaseTransition(phase="NODE_PHASE_RUNNING", transition_time=to_datetime(running))
        )
    if ended is not None:
        phases.append(
            NodePhaseTransition(phase="NODE_PHASE_SUCCEEDED", transition_time=to_datetime(ended))
        )
    return phases


def _gpu_node(node: SimNode, index: int, now: float) -> GpuWorkerNode:
    if node.deleted_at is not None:
        status = "Deleted"
    elif node.draining_since is not None:
        status = "Draining"
    else:
        status = "Ready" if node.ready_at <= now else "NotReady"
    return GpuWorkerNode(
        node_id=node.node_id,
        host_name=node.node_id,
        node_name=node.node_id,
        status=status,
        num_cpu_cores=208,
        num_gpus=GPUS_PER_NODE,
        memory_gib=2048.0,
        networks=[_ip(node.node_id, index)],
        phase_transitions=_node_phases(node.created_at, node.ready_at, node.deleted_at, now),
        instance_id=f"i-{hashlib.sha256(node.node_id.encode()).hexdigest()[:12]}",
        deleted_at=to_datetime(node.deleted_at) if node.deleted_at is not None else None,
        marked_for_deletion=node.draining_since is not None,
        ephemeral_storage="1Ti",
    )


def _control_plane_ready_at(cluster: SimCluster, timings: Timings) -> float:
    return cluster.created_at + PROVISIONING_PLAN[1][2] * timings.provisioning


def kubeconfig(name: str, server: str, ca_data: str, user: dict[str, str]) -> str:
    """An admin kubeconfig with everything embedded (no file references), so it works wherever
    it is copied, as the one Together returns does; ``user`` holds the credential's fields."""
    credentials = "".join(f"    {key}: {value}\n" for key, value in user.items())
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        f"- name: {name}\n"
        "  cluster:\n"
        f"    server: {server}\n"
        f"    certificate-authority-data: {ca_data}\n"
        "contexts:\n"
        f"- name: {name}\n"
        "  context:\n"
        f"    cluster: {name}\n"
        f"    user: {name}-admin\n"
        f"current-context: {name}\n"
        "users:\n"
        f"- name: {name}-admin\n"
        "  user:\n" + credentials
    )


def kube_config_yaml(cluster: SimCluster) -> str:
    """A realistic-looking kubeconfig whose token is fake but stable per cluster (without
    ``--kubernetes``: it points nowhere).

    On the wire it is base64-encoded (see :func:`render_cluster`), as Together's is.
    """
    token = hashlib.sha256(f"token:{cluster.cluster_id}".encode()).hexdigest()
    ca = hashlib.sha256(f"ca:{cluster.cluster_id}".encode()).hexdigest()
    server = f"https://{cluster.cluster_id[:8]}.{cluster.spec.region}.k8s.together.invalid:6443"
    return kubeconfig(cluster.spec.cluster_name, server, ca, {"token": token})


def _control_plane(cluster: SimCluster, world: World, ready: bool) -> list[ControlPlaneNode]:
    ready_at = _control_plane_ready_at(cluster, world.timings)
    return [
        ControlPlaneNode(
            node_id=f"cp-{cluster.cluster_id[:5]}-{i}",
            host_name=f"cp-{cluster.cluster_id[:5]}-{i}",
            status="Ready" if ready else "NotReady",
            num_cpu_cores=16,
            memory_gib=64.0,
            network=_ip(cluster.cluster_id, i),
            phase_transitions=_node_phases(cluster.created_at, ready_at, None, world.now),
        )
        for i in range(CONTROL_PLANE_NODES)
    ]


def _add_ons(cluster: SimCluster) -> list[AddOn]:
    """Each add-on with its config, and its state: an entry per enabled component once the
    cluster has been Ready (the SDK's ``AddOnState`` has one key per component)."""
    rendered = []
    for add_on in cluster.spec.add_ons or []:
        config = add_on.config.model_dump(mode="json", exclude_none=True) if add_on.config else {}
        state: dict[str, Any] = {
            key: {}
            for key, toggle in config.items()
            if toggle.get("enabled") and cluster.first_ready_at is not None
        }
        rendered.append(
            AddOn(
                add_on_type=add_on.add_on_type or add_on.name,
                name=add_on.name,
                config=config,
                state=state,
            )
        )
    return rendered


def _time(seconds: float | None) -> datetime | None:
    return to_datetime(seconds) if seconds is not None else None


def render_cluster(
    cluster: SimCluster,
    world: World,
    kube_config: str | None = None,
    *,
    kubernetes_up: bool = True,
) -> Cluster:
    """The JSON shape the real API returns for ``cluster`` at the world's virtual time.

    ``kube_config`` is base64 of the YAML: the official CLI (``tg clusters get-credentials``)
    base64-decodes the field, so that is what the real API sends. With ``--kubernetes`` it is the
    working kubeconfig of the cluster's control plane; otherwise a stable placeholder.
    ``kubernetes_up=False`` (``--kubernetes``, the control plane not serving its nodes yet) holds
    a Ready cluster in its last provisioning phase: a client that sees Ready may use the
    kubeconfig at once, as it may with Together.
    """
    now, spec = world.now, cluster.spec
    cp_ready = (
        _control_plane_ready_at(cluster, world.timings) <= now
        and cluster.deleting_since is None
        and kubernetes_up
    )
    status = cluster.status
    if status == ClusterStatus.READY and not kubernetes_up:
        status = PROVISIONING_PLAN[-2][0]
    retention = world.timings.event_retention
    yaml = kube_config or kube_config_yaml(cluster)
    computed = {
        "cluster_id": cluster.cluster_id,
        "num_cpu_workers": 0,
        "desired_preemptible_gpus": cluster.preemptible_target,
        "allocated_preemptible_gpus": cluster.allocated_preemptible_gpus(),
        "nvidia_driver_version_id": spec.nvidia_version_id,
        "status": status,
        "phase_transitions": [
            PhaseTransition(phase=phase, transition_time=to_datetime(at))
            for phase, at in cluster.phases
        ],
        "control_plane_nodes": _control_plane(cluster, world, cp_ready),
        "gpu_worker_nodes": [_gpu_node(n, i, now) for i, n in enumerate(cluster.nodes)],
        "deleted_gpu_worker_nodes": [
            _gpu_node(n, i, now) for i, n in enumerate(cluster.deleted_nodes)
        ],
        "node_lifecycle_events": [
            NodeLifecycleEvent(
                node_id=e.node_id, reason=e.reason, message=e.message, timestamp=to_datetime(e.at)
            )
            for e in cluster.events
            if now - e.at <= retention
        ],
        "volumes": [
            Volume.model_validate(echoed(v.render(now), Volume))
            for v in (world.volumes.by_id.get(i) for i in cluster.volume_ids)
            if v is not None
        ],
        "kube_config": base64.b64encode(yaml.encode()).decode("ascii"),
        "add_ons": _add_ons(cluster),
        "created_at": to_datetime(cluster.created_at),
        "first_ready_at": _time(cluster.first_ready_at),
        "control_plane_ready": cp_ready,
        "duration_hours": spec.duration_days * 24 if spec.duration_days else None,
        "reservation_end_time": reservation_end(cluster),
        "os_image": (
            f"together-gpu-worker-cuda{spec.cuda_version}-nvidia{spec.nvidia_driver_version}"
        ),
        "is_in_substrate": True,
        "machine_cluster_id": f"mc-{cluster.cluster_id[:8]}",
        "ums_org_id": SIM_ORG_ID,
        "ums_project_id": spec.project_id,
    }
    return Cluster.model_validate({**echoed(spec, Cluster), **computed})
