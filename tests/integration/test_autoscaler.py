"""The autoscaler doing its whole job on the simulator's real control plane (``--kubernetes``).

`PreemptibleAutoscaler` is applied with the real engine and pulumi-kubernetes. KWOK runs no
containers, so the controller runs as a local process, authenticated with the ServiceAccount's
token from the TokenRequest API: whatever it may not call, RBAC refuses, so a burst that goes
0 -> 24 -> 0 proves the ClusterRole. Two replicas run; only the one holding the Lease acts.

Simulated time (provisioning, the fill, the pods' run time, the drain window) moves only when the
test advances the simulator's clock. The controllers (Kubernetes' and ours) run in real time:
the waits here are for them, with a 2-second unneeded window instead of 10 minutes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube import Client, KubeConfig

from testkit.kube import KubeClient, kube_bin_or_skip
from testkit.pulumi_env import REPO, PulumiEnv, Secret, provider_config
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.kube_helpers import (
    AutoscalerProcess,
    advancing,
    cluster_puts,
    gpu_job,
    started_pods,
)
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_autoscaler.leader import LeaseElector
from together_facts.values import COMPUTE_CLASS_LABEL
from together_provider.kubernetes import AUTOSCALER_RULES, LEASE_RULES

KEY = "sk-autoscaler-test-4b7e"
pytestmark = [pytest.mark.engine]
PROGRAM = REPO / "tests" / "integration" / "programs" / "autoscaler"
CLASS = COMPUTE_CLASS_LABEL


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimulatorProcess]:
    with SimulatorProcess(
        tmp_path / "state", kubernetes=True, kube_bin=kube_bin_or_skip(), time_scale=0,
        api_key=KEY,
    ) as simulator:  # fmt: skip
        yield simulator


def _token_kubeconfig(admin: KubeClient, admin_config: str, ns: str, account: str) -> str:
    """A kubeconfig that authenticates as the ServiceAccount (TokenRequest API), nothing else."""
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": 3600}}  # fmt: skip
    token = admin.request(
        "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{account}/token", request
    )["status"]["token"]
    config = yaml.safe_load(admin_config)
    config["users"] = [{"name": "autoscaler", "user": {"token": token}}]
    for context in config["contexts"]:
        context["context"]["user"] = "autoscaler"
        context["context"]["namespace"] = ns
    return yaml.safe_dump(config)


def _job(name: str, pods: int, run_seconds: int) -> dict[str, Any]:
    return gpu_job(name, run_seconds=run_seconds, pods=pods,
                   node_selector={CLASS: "preemptible"}, backoffLimit=0)  # fmt: skip


def _replica(sim: SimulatorProcess, kubeconfig: Path, cluster_id: str, ns: str,
             log: Path) -> AutoscalerProcess:  # fmt: skip
    return AutoscalerProcess(sim, KEY, cluster_id, kubeconfig, log, **{
        "--scale-down-unneeded-seconds": 2, "--lease-namespace": ns})  # fmt: skip


def test_the_component_renders_least_privilege_rbac_and_the_range(
    k8s_env: PulumiEnv, tmp_path: Path
) -> None:
    rendered = tmp_path / "rendered"
    with SimulatorProcess(tmp_path / "state", time_scale=600, api_key=KEY) as fast:
        stack = k8s_env.stack(k8s_env.project(PROGRAM), config={
            **provider_config(fast), "cluster": json.dumps({**CLUSTER_SPEC,
                "cluster_name": "burst", "num_preemptible_gpus": 8}),
            "apiKey": Secret(KEY), "baseUrl": fast.root_url, "max": "32",
            "renderYamlTo": str(rendered),
        })  # fmt: skip
        cid = stack.up().outputs["cluster_id"].value
        docs = [d for f in sorted(rendered.rglob("*.yaml"))
                for d in yaml.safe_load_all(f.read_text()) if d]  # fmt: skip
        by_kind = {d["kind"]: d for d in docs}
        assert by_kind["ClusterRole"]["rules"] == AUTOSCALER_RULES
        assert by_kind["Role"]["rules"] == LEASE_RULES
        assert by_kind["Role"]["metadata"]["namespace"] == "together-autoscaler"
        pod = by_kind["Deployment"]["spec"]["template"]["spec"]
        [container] = pod["containers"]
        command = container["command"]
        assert command[:3] == ["python", "-m", "together_autoscaler"]
        flags = dict(zip(command[3::2], command[4::2], strict=True))
        assert flags["--cluster-id"] == cid
        assert (flags["--min-preemptible-gpus"], flags["--max-preemptible-gpus"]) == ("8", "32")
        assert pod["serviceAccountName"] == "together-autoscaler"
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [
            {"key": CLASS, "operator": "NotIn", "values": ["preemptible"]}
        ]
        [key_env] = [e for e in container["env"] if e["name"] == "TOGETHER_API_KEY"]
        assert "secretKeyRef" in key_env["valueFrom"] and KEY not in json.dumps(
            by_kind["Deployment"]
        )
        stack.destroy()


def test_a_burst_goes_0_to_24_in_one_put_runs_and_returns_to_the_floor(
    k8s_env: PulumiEnv, sim: SimulatorProcess, tmp_path: Path
) -> None:
    pulumi_env = k8s_env
    work = pulumi_env.project(PROGRAM)
    cluster = {**CLUSTER_SPEC, "cluster_name": "burst", "num_preemptible_gpus": 0}
    stack = pulumi_env.stack(work, config={
        **provider_config(sim), "cluster": json.dumps(cluster), "apiKey": Secret(KEY),
        "baseUrl": sim.root_url, "max": "32",
    })  # fmt: skip
    outputs = advancing(stack.up, sim, step=60).outputs
    cid, ns = outputs["cluster_id"].value, outputs["namespace"].value
    account = outputs["service_account"].value
    with TogetherClient(api_key=KEY, base_url=sim.base_url) as together:
        admin_config = base64.b64decode(together.get_cluster(cid).kube_config).decode()
    admin = KubeClient(admin_config)
    # The Deployment's pods (which KWOK never starts) are placed on the standard node.
    placed = wait_for(lambda: _nodes_of(admin.pods(namespace=ns), 2), "the controllers placed")
    assert all(n.startswith("gpu-dp-") for n in placed)

    kubeconfig = tmp_path / "autoscaler.kubeconfig"
    kubeconfig.write_text(_token_kubeconfig(admin, admin_config, ns, account))
    replicas = [_replica(sim, kubeconfig, cid, ns, tmp_path / f"replica-{i}.log") for i in (0, 1)]
    try:
        attempts = "together_autoscaler_lease_attempts_total"
        wait_for(lambda: all((r.metric(attempts) or 0) >= 3 for r in replicas),
                   "both replicas trying for the Lease")  # fmt: skip
        leaders = [r for r in replicas if r.metric("together_autoscaler_leader") == 1.0]
        assert len(leaders) == 1
        follower = next(r for r in replicas if r is not leaders[0])
        # A third replica in this process, with the same token, is refused the Lease too.
        third = LeaseElector(Client(KubeConfig.from_file(kubeconfig)), ns, "third")
        assert third.try_acquire_or_renew() is False

        sim.reset_requests()
        admin.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job("burst", 3, 600))
        wait_for(lambda: cluster_puts(sim), "the scale-up PUT")
        with TogetherClient(api_key=KEY, base_url=sim.base_url) as together:
            assert together.get_cluster(cid).desired_preemptible_gpus == 24
            wait_for(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 24,
                       "the fill", each=lambda: sim.advance(60))  # fmt: skip
            # Stamped by the pod clock, not only Running: a pod stamped after the advance
            # would run 600 s more.
            running = wait_for(
                lambda: _nodes_of(started_pods(admin, "job-name=burst"), 3), "3 pods started"
            )
            assert all(n.startswith("gpu-preemptible-dp-") for n in running)
            assert len(set(running)) == 3
            assert len(cluster_puts(sim)) == 1  # one PUT for the whole burst
            sim.advance(600)  # the pods' run time
            wait_for(lambda: admin.job("burst")["status"].get("succeeded") == 3, "the Job done")
            # Idle for the unneeded window: all three marked, the target dropped to the floor.
            wait_for(lambda: together.get_cluster(cid).desired_preemptible_gpus == 0,
                       "the scale-down to the floor")  # fmt: skip
            marked = [n for n in admin.nodes() if n["metadata"].get("labels", {}).get(CLASS)]
            assert all(n["spec"].get("unschedulable") for n in marked)
            wait_for(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 0,
                       "the drained nodes gone", each=lambda: sim.advance(60))  # fmt: skip
        # One PUT up; down, one per batch of nodes idle past the window: the pods finish one
        # at a time, so the three may go together or in up to three PUTs.
        puts = cluster_puts(sim)
        assert 2 <= len(puts) <= 1 + 3, puts
        assert admin.events("TriggeredScaleUp") and admin.events("ScaleDown", "default")
        assert follower.metric("together_autoscaler_target_updates_total") == 0.0
        assert leaders[0].metric("together_autoscaler_target_preemptible_gpus") == 0.0
        # The leader goes (SIGTERM, Lease released): the follower takes over.
        assert leaders[0].stop() == 0
        wait_for(lambda: follower.metric("together_autoscaler_leader") == 1.0, "a new leader")
    finally:
        for replica in replicas:
            if replica.process.poll() is None:
                replica.stop()
        admin.close()
    logs = "".join(r.log.read_text() for r in replicas)
    assert KEY not in logs and "forbidden" not in logs.lower()  # RBAC granted every call
    advancing(stack.destroy, sim, step=60)


def _nodes_of(pods: list[dict[str, Any]], count: int, phase: str | None = None) -> list[str]:
    """The nodes of ``pods`` (in ``phase``) once ``count`` of them are bound; else []."""
    nodes = [
        p["spec"]["nodeName"]
        for p in pods
        if p["spec"].get("nodeName") and (phase is None or p["status"].get("phase") == phase)
    ]
    return nodes if len(nodes) == count else []
