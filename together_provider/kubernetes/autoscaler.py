"""The preemptible autoscaler (`PreemptibleAutoscaler`), deployed on a cluster's standard nodes: a
reclaim must never take the autoscaler with the capacity it manages. Re-exported by
`together_provider.kubernetes`; importing this module creates nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from together_facts.errors import SpecError
from together_provider.kubernetes.placement import WorkloadCluster, off_preemptible

__all__ = [
    "AUTOSCALER_RULES",
    "LEASE_RULES",
    "PreemptibleAutoscaler",
    "PreemptibleAutoscalerArgs",
]

METRICS_PORT: Final = 8085

AUTOSCALER_RULES: Final[list[dict[str, Any]]] = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "patch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "create"]},
]
"""The ClusterRole: every cluster-wide call of `together_autoscaler.kube`, and nothing more."""

LEASE_RULES: Final[list[dict[str, Any]]] = [
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
     "verbs": ["get", "create", "update"]},
]  # fmt: skip
"""The Role in the autoscaler's namespace: its Lease (`together_autoscaler.leader`)."""


@dataclass
class PreemptibleAutoscalerArgs:
    """``api_key`` should be a Pulumi secret (``config.require_secret``); ``image`` is the
    controller's image (the repository's ``Dockerfile.autoscaler``). ``base_url`` is a host such
    as ``https://api.together.ai`` (None: Together's own)."""

    cluster: WorkloadCluster
    api_key: pulumi.Input[str]
    image: pulumi.Input[str]
    min_preemptible_gpus: pulumi.Input[int] | None = None
    max_preemptible_gpus: pulumi.Input[int] | None = None
    namespace: str = "together-autoscaler"
    replicas: int = 2
    scan_interval_seconds: float = 10.0
    scale_down_unneeded_seconds: float = 600.0
    max_hourly_usd: float | None = None
    base_url: pulumi.Input[str] | None = None


class PreemptibleAutoscaler(pulumi.ComponentResource):
    """`together_autoscaler` on the cluster. In its own namespace: a ServiceAccount; a ClusterRole
    granting exactly the calls it makes cluster-wide (:data:`AUTOSCALER_RULES`) and a Role for its
    Lease (:data:`LEASE_RULES`, in its own namespace only); a Secret holding the API key, taken
    from a Pulumi secret; and a Deployment of ``replicas`` controllers (leader election lets one
    act) kept off preemptible nodes. The range defaults to the Cluster's own floor
    (``num_preemptible_gpus``) and ceiling (``max_preemptible_gpus``)."""

    namespace_name: pulumi.Output[str]
    service_account_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: PreemptibleAutoscalerArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("together:kubernetes:PreemptibleAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        floor = args.min_preemptible_gpus
        if floor is None:
            floor = args.cluster.num_preemptible_gpus
        # The Cluster's output is never None itself; one resolving to None is refused in _command.
        ceiling: pulumi.Input[int | None] = args.max_preemptible_gpus
        if ceiling is None:
            ceiling = args.cluster.max_preemptible_gpus
        labels = {
            "app.kubernetes.io/name": "together-autoscaler",
            "app.kubernetes.io/instance": name,
        }
        ns = k8s.core.v1.Namespace(
            f"{name}-ns", metadata={"name": args.namespace}, opts=child
        ).metadata.name
        account_name = _grant(name, ns, child)
        secret = k8s.core.v1.Secret(
            f"{name}-key",
            metadata={"namespace": ns},
            string_data={"TOGETHER_API_KEY": pulumi.Output.secret(args.api_key)},
            opts=child,
        )
        env: list[dict[str, Any]] = [
            {"name": "TOGETHER_API_KEY", "valueFrom": {"secretKeyRef": {
                "name": secret.metadata.name, "key": "TOGETHER_API_KEY"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ]  # fmt: skip
        if args.base_url is not None:
            env.append({"name": "TOGETHER_BASE_URL", "value": args.base_url})
        container = {
            "name": "autoscaler",
            "image": args.image,
            "command": _command(name, args, args.cluster.id, floor, ceiling),
            "env": env,
            "ports": [{"name": "metrics", "containerPort": METRICS_PORT}],
            "resources": {"requests": {"cpu": "50m", "memory": "96Mi"},
                          "limits": {"memory": "256Mi"}},
        }  # fmt: skip
        pod = {
            "serviceAccountName": account_name,
            "terminationGracePeriodSeconds": 30,
            "affinity": off_preemptible({})["affinity"],
            "containers": [container],
        }
        k8s.apps.v1.Deployment(
            f"{name}-controller",
            metadata={"namespace": ns, "labels": labels},
            spec={
                "replicas": args.replicas,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": pod},
            },
            opts=child,
        )
        self.namespace_name = ns
        self.service_account_name = account_name
        self.register_outputs({"namespace": ns, "service_account": account_name})


def _grant(name: str, ns: pulumi.Output[str], child: pulumi.ResourceOptions) -> pulumi.Output[str]:
    """The autoscaler's ServiceAccount in ``ns``, bound to exactly the calls it makes: the
    ClusterRole of :data:`AUTOSCALER_RULES` and, in its namespace only, the Role of its Lease
    (:data:`LEASE_RULES`). Returns the account's name."""
    account = k8s.core.v1.ServiceAccount(
        f"{name}-sa", metadata={"name": "together-autoscaler", "namespace": ns}, opts=child
    )
    account_name: pulumi.Output[str] = account.metadata.name
    subject = [{"kind": "ServiceAccount", "name": account_name, "namespace": ns}]
    role = k8s.rbac.v1.ClusterRole(f"{name}-role", rules=AUTOSCALER_RULES, opts=child)
    k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-binding", role_ref=_role_ref(role), subjects=subject, opts=child
    )
    lease_role = k8s.rbac.v1.Role(
        f"{name}-lease", metadata={"namespace": ns}, rules=LEASE_RULES, opts=child
    )
    k8s.rbac.v1.RoleBinding(
        f"{name}-lease",
        metadata={"namespace": ns},
        role_ref=_role_ref(lease_role),
        subjects=subject,
        opts=child,
    )
    return account_name


def _role_ref(role: k8s.rbac.v1.ClusterRole | k8s.rbac.v1.Role) -> dict[str, Any]:
    """A binding's ``roleRef`` to `role`: the ClusterRole or Role it grants the ServiceAccount."""
    kind = "ClusterRole" if isinstance(role, k8s.rbac.v1.ClusterRole) else "Role"
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role.metadata.name}


def _no_ceiling(name: str) -> SpecError:
    return SpecError(
        f"autoscaler '{name}': no ceiling; the cluster declares no max_preemptible_gpus",
        resource=name,
        field="max_preemptible_gpus",
        fix="set max_preemptible_gpus on the Cluster, or pass max_preemptible_gpus here",
    )


def _command(
    name: str,
    args: PreemptibleAutoscalerArgs,
    cluster_id: pulumi.Input[str],
    floor: pulumi.Input[int | None],
    ceiling: pulumi.Input[int | None],
) -> list[pulumi.Input[str]]:
    """The container's command, one element per argument: a range the program gives as plain
    values stays plain, so a preview that moves the floor shows that one argument changing.
    (Built as one Output of the whole list, the list was unknown whenever any part was: the
    Cluster's `cluster_id` output is unknown while the Cluster is being updated, because a
    dynamic provider's preview hands back only its inputs. The Cluster's id, the same
    cluster id, stays known through an in-place update.) A ceiling left unset is refused: at
    once when it is a plain value, once it resolves when it is the Cluster's output."""

    def ceiling_arg(value: Any) -> str:
        if value is None:
            raise _no_ceiling(name)
        return str(int(value))

    command: list[pulumi.Input[str]] = [
        "python", "-m", "together_autoscaler",
        "--cluster-id", cluster_id,
        "--min-preemptible-gpus", _arg(floor, lambda value: str(int(value or 0))),
        "--max-preemptible-gpus", _arg(ceiling, ceiling_arg),
        "--scan-interval-seconds", f"{args.scan_interval_seconds:g}",
        "--scale-down-unneeded-seconds", f"{args.scale_down_unneeded_seconds:g}",
        "--metrics-port", str(METRICS_PORT),
    ]  # fmt: skip
    if args.max_hourly_usd is not None:
        command += ["--max-hourly-usd", f"{args.max_hourly_usd:g}"]
    return command


def _arg(value: pulumi.Input[Any], render: Callable[[Any], str]) -> pulumi.Input[str]:
    """`value` rendered as a command-line argument: a plain value at once, an Output or an
    awaitable once it resolves."""
    if value is None or isinstance(value, (int, float, str)):
        return render(value)
    return pulumi.Output.from_input(value).apply(render)
