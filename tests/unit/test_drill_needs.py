"""What the Job needs beside itself: the manifest's ConfigMaps, Secrets and ServiceAccounts come
with it into the Job's namespace; on a cluster only the missing ones are created and only those
deleted; anything else the manifest holds is named in one warning line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.unit.test_drill_input import CLAIM, JOB, _write
from tests.unit.test_drill_remote import _cluster
from tests.unit.test_drill_volume import ReaderApi
from together_drill.manifest import load_job, on_cluster, warnings

SCRIPT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "script", "namespace": "elsewhere", "resourceVersion": "3"},
    "data": {"train.py": "print('hi')"},
}
TOKEN = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"}, "data": {}}
ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "trainer"}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}


def test_the_manifests_configmaps_secrets_and_service_accounts_come_with_the_job(
    tmp_path: Path,
) -> None:
    job = load_job(_write(tmp_path / "j.yaml", SCRIPT, CLAIM, JOB, TOKEN, ACCOUNT, DEPLOYMENT, CRD))
    assert [o["kind"] for o in job.objects] == ["ConfigMap", "Secret", "ServiceAccount"]
    paths = dict(job.paths())
    script = paths["/api/v1/namespaces/ml/configmaps/script"]
    assert script["metadata"] == {"name": "script", "namespace": "ml"}  # the Job's namespace
    assert "/api/v1/namespaces/ml/secrets/token" in paths
    assert "/api/v1/namespaces/ml/serviceaccounts/trainer" in paths
    assert job.ignored == ("Deployment web", "CustomResourceDefinition (no name)")
    (line,) = [w for w in warnings(job) if "not created" in w]
    assert line.startswith(
        "the manifest's Deployment web, CustomResourceDefinition (no name) not created"
    )
    moved = on_cluster(job, "team", None)
    assert moved.objects == job.objects
    assert "/api/v1/namespaces/team/configmaps/script" in dict(moved.paths())
    plain = load_job(_write(tmp_path / "p.yaml", CLAIM, JOB))
    assert plain.objects == () and not [w for w in warnings(plain) if "not created" in w]


def test_on_a_cluster_only_the_missing_are_created_and_only_those_deleted(tmp_path: Path) -> None:
    api = ReaderApi({})
    existing = "/api/v1/namespaces/ml/secrets/token"

    def call(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.startswith("/api/v1/namespaces/ml/") and "/pods" not in path:
            api.sent.append((request.method, path, None))
            if path in (existing, "/api/v1/namespaces/ml/persistentvolumeclaims/ckpt"):
                return httpx.Response(200, json=TOKEN)
            if request.method == "GET":
                return httpx.Response(404, json={})
            return httpx.Response(201 if request.method == "POST" else 200, json={})
        return api(request)

    cluster = _cluster(tmp_path, api, volume_dir=tmp_path)
    cluster.kube.http = httpx.Client(
        base_url="https://api.example", transport=httpx.MockTransport(call)
    )
    api.nodes = {
        "p": {
            "metadata": {"name": "p", "labels": {"together.ai/compute-class": "preemptible"}},
            "spec": {},
        }
    }
    job = on_cluster(
        load_job(_write(tmp_path / "j.yaml", SCRIPT, JOB, TOKEN, ACCOUNT), local=False), None, None
    )
    said: list[str] = []
    cluster.prepare(job, said.append)
    posts = [p for m, p, _ in api.sent if m == "POST"]
    assert posts == ["/api/v1/namespaces/ml/configmaps", "/api/v1/namespaces/ml/serviceaccounts"]
    assert "Secret token already in namespace ml: used as it is" in said
    cluster.close(None, said.append)
    deletes = [p for m, p, _ in api.sent if m == "DELETE"]
    assert deletes == [
        "/api/v1/namespaces/ml/configmaps/script",
        "/api/v1/namespaces/ml/serviceaccounts/trainer",
    ]


def test_the_examples_configmap_holds_the_examples_train_py() -> None:
    """docs/drill.md runs one script two ways: inline (examples/drill/train.py) and from the
    ConfigMap of examples/drill/job.yaml. Two copies of it must not drift apart."""
    root = Path(__file__).resolve().parents[2] / "examples" / "drill"
    job = load_job(root / "job.yaml")
    (script,) = [o for o in job.objects if o["kind"] == "ConfigMap"]
    assert script["data"]["train.py"] == (root / "train.py").read_text()
