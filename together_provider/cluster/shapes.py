"""The nested objects of Together's cluster API as the Cluster's field table parses them: the SDK's
keys, each with its validator, so a typo in a stack's `clusterConfig` is refused at check with the
valid keys named. Pure: no pydantic (a preview never loads the wire models)."""

from __future__ import annotations

from typing import Any, Final, get_args

from together_facts.values import LoadBalancer
from together_provider.framework import validators

__all__ = ["ACCEPTANCE_TESTS", "ADD_ON", "CLUSTER_CONFIG", "OIDC_CONFIG", "changed_add_ons"]

_TOGGLE: Final = validators.toggle()
ADD_ON: Final = validators.record(
    {
        "name": validators.text,
        "add_on_type": validators.text,
        "config": validators.record(
            {"dashboard": _TOGGLE, "headlamp": _TOGGLE, "ingress": _TOGGLE, "slurm_web": _TOGGLE}
        ),
    },
    required=("name", "add_on_type"),
)
"""One add-on as the SDK's create request has it."""

CLUSTER_CONFIG: Final = validators.record(
    {
        "load_balancer": validators.choice(get_args(LoadBalancer)),
        "gpu_operator_version": validators.text,
        "network_operator_version": validators.text,
        "ingress": _TOGGLE,
        "observability": _TOGGLE,
        "jumphost_enabled": validators.flag,
        "kubernetes_dashboard_enabled": validators.flag,
        "ssh_ca_enabled": validators.flag,
        "slurm_startup_scripts": validators.record(
            dict.fromkeys(
                (
                    "controller_epilog",
                    "controller_prolog",
                    "extra_slurm_conf",
                    "login_init_script",
                    "nodeset_init_script",
                    "worker_epilog",
                    "worker_prolog",
                ),
                validators.text,
            )
        ),
    },
    required=("load_balancer",),
)

_OIDC_REQUIRED: Final = (
    "client_id",
    "issuer_url",
    "username_claim",
    "username_prefix",
    "group_claim",
    "group_prefix",
)
"""The SDK's `OidcConfig` keys it requires; `ca_cert` alone is optional."""

OIDC_CONFIG: Final = validators.record(
    dict.fromkeys((*_OIDC_REQUIRED, "ca_cert"), validators.text), required=_OIDC_REQUIRED
)

ACCEPTANCE_TESTS: Final = validators.record(
    {
        "enabled": validators.flag,
        "dcgm_diag_level": validators.choice(
            tuple(f"DCGM_DIAG_LEVEL_{level}" for level in ("SHORT", "MEDIUM", "LONG", "EXTENDED"))
        ),
        "dcgm_diag_skipped": validators.flag,
        "gpu_burn_duration": validators.whole,
        "gpu_burn_skipped": validators.flag,
        "nccl_single_node_skipped": validators.flag,
        "nccl_multi_node_skipped": validators.flag,
        "storage_skipped": validators.flag,
    }
)


def changed_add_ons(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The update request's `add_ons`: each add-on whose config changed, by name with its new
    config (Together merges it into the existing add-on's); unchanged ones are not sent."""
    before = {a["name"]: a.get("config") for a in old}
    return [
        {"name": a["name"], "config": a.get("config", {})}
        for a in new
        if before.get(a["name"]) != a.get("config")
    ]
