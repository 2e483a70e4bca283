"""The drill on an existing cluster, against a recorded API server (httpx.MockTransport): a
reclaim is a cordon and an eviction of only the Job's pods, the refill an uncordon; it refuses a
cluster with nothing it may drain, and its cleanup leaves every node as found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from together_drill.cli import ClusterArgs
from together_drill.manifest import DrillInputError, checkpointing_job
from together_drill.remote import RemoteCluster

KUBECONFIG = """
apiVersion: v1
clusters: [{name: c, cluster: {server: "https://api.example", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
"""
PREEMPTIBLE = {"together.ai/compute-class": "preemptible"}


class Api:
    """Nodes and pods as a server holds them, and every request it was sent."""

    def __init__(
        self, nodes: dict[str, dict[str, str]], cordoned: frozenset[str] = frozenset()
    ) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            name: {"metadata": {"name": name, "labels": labels}, "spec": {}}
            for name, labels in nodes.items()
        }
        for name in cordoned:
            self.nodes[name]["spec"]["unschedulable"] = True
        self.sent: list[tuple[str, str, Any]] = []
        self.jobs: set[str] = {"drill"}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        path = request.url.path
        self.sent.append((request.method, path, body))
        if path == "/api/v1/nodes":
            return httpx.Response(200, json={"items": list(self.nodes.values())})
        if path.startswith("/api/v1/nodes/"):
            node = self.nodes[path.rsplit("/", 1)[1]]
            if request.method == "PATCH":
                assert body is not None
                node["spec"].update(body["spec"])
            return httpx.Response(200, json=node)
        if path.endswith("/eviction"):
            return httpx.Response(201, json={})
        if "/pods/" in path:
            return httpx.Response(200, json={"spec": {"terminationGracePeriodSeconds": 600}})
        if "/persistentvolumeclaims/" in path:
            return httpx.Response(200, json={})
        if path.startswith("/apis/batch/v1/namespaces/default/jobs/drill"):
            if request.method == "DELETE":
                self.jobs.discard("drill")
            return httpx.Response(200 if "drill" in self.jobs else 404, json={})
        return httpx.Response(404, json={})

    def writes(self) -> list[tuple[str, str, Any]]:
        return [s for s in self.sent if s[0] != "GET"]


def _cluster(tmp_path: Path, api: Api, **args: Any) -> RemoteCluster:
    config = tmp_path / "kubeconfig"
    config.write_text(KUBECONFIG)
    settings = {"context": None, "node_selector": None, "keep": False, "volume_dir": None, **args}
    cluster = RemoteCluster(ClusterArgs(kubeconfig=config, **settings))
    cluster.kube.http = httpx.Client(
        base_url="https://api.example", transport=httpx.MockTransport(api)
    )
    return cluster


JOB = checkpointing_job("trainer:1", ["python", "t.py"], local=False)


def test_a_reclaim_cordons_evicts_only_the_jobs_pods_and_the_refill_uncordons(
    tmp_path: Path,
) -> None:
    api = Api({"p1": PREEMPTIBLE, "s1": {"together.ai/compute-class": "standard"}})
    cluster = _cluster(tmp_path, api)
    lines: list[str] = []
    cluster.prepare(JOB, lines.append)
    assert cluster.eligible() == {"p1"}
    cluster.reclaim("p1", ["drill-0-a"], "default", lines.append)
    assert api.writes() == [
        ("PATCH", "/api/v1/nodes/p1", {"spec": {"unschedulable": True}}),
        (
            "POST",
            "/api/v1/namespaces/default/pods/drill-0-a/eviction",
            {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": "drill-0-a", "namespace": "default"},
                "deleteOptions": {"gracePeriodSeconds": 300},  # 600 asked, the window caps it
            },
        ),
    ]
    cluster.refill("p1", 0.0, 1e9, lines.append)
    assert api.nodes["p1"]["spec"]["unschedulable"] is False
    assert any(line.startswith("  refill: node p1 uncordoned") for line in lines)
    cluster.close(JOB, lines.append)
    assert api.writes()[-1][0] == "DELETE" and "drill" not in api.jobs
    assert not [s for s in api.sent if s[0] == "DELETE" and "/nodes/" in s[1]]  # never a node


def test_an_interrupted_drill_uncordons_what_it_cordoned_and_no_other(tmp_path: Path) -> None:
    api = Api({"p1": PREEMPTIBLE, "p2": PREEMPTIBLE}, cordoned=frozenset({"p2"}))
    cluster = _cluster(tmp_path, api)
    cluster.reclaim("p1", ["drill-0-a"], "default", lambda _: None)
    cluster.reclaim("p2", ["drill-0-b"], "default", lambda _: None)  # found cordoned: left so
    lines: list[str] = []
    cluster.close(JOB, lines.append)
    assert api.nodes["p1"]["spec"]["unschedulable"] is False
    assert api.nodes["p2"]["spec"]["unschedulable"] is True
    assert lines == ["cleaning up: node p1 uncordoned", "cleaning up: Job drill deleted"]


def test_keep_leaves_the_job_and_no_job_created_deletes_none(tmp_path: Path) -> None:
    api = Api({"p1": PREEMPTIBLE})
    _cluster(tmp_path, api, keep=True).close(JOB, lambda _: None)
    _cluster(tmp_path, api).close(None, lambda _: None)
    assert [s for s in api.sent if s[0] == "DELETE"] == []


def test_a_cluster_with_nothing_it_may_drain_is_refused(tmp_path: Path) -> None:
    api = Api({"s1": {"together.ai/compute-class": "standard"}})
    with pytest.raises(DrillInputError) as error:
        _cluster(tmp_path, api).prepare(JOB, lambda _: None)
    assert "has no node labelled together.ai/compute-class=preemptible" in str(error.value)
    assert "--node-selector" in str(error.value)
    chosen = _cluster(tmp_path, Api({"s1": {"pool": "spot"}}), node_selector={"pool": "spot"})
    chosen.prepare(JOB, lambda _: None)
    assert chosen.eligible() == {"s1"}


def test_an_unknown_context_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DrillInputError, match="--context nope: the kubeconfig has no such"):
        _cluster(tmp_path, Api({}), context="nope")
