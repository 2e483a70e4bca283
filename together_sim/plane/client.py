"""A small Kubernetes REST client over httpx: the calls the simulator makes as Together's side of
the cluster (Nodes, PersistentVolumes, Events, pod evictions and pod status). The simulator adds
no Kubernetes client library; every call names the object it failed on."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx

__all__ = ["KubeApi", "KubeApiError"]

Obj = dict[str, Any]


class KubeApiError(RuntimeError):
    def __init__(self, status: int, what: str, body: str) -> None:
        super().__init__(f"{what}: HTTP {status}: {body[:300]}")
        self.status = status


def rfc3339(when: datetime | None = None) -> str:
    return (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


class KubeApi:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def _call(
        self,
        method: str,
        path: str,
        what: str,
        *,
        body: Obj | None = None,
        content_type: str = "application/json",
        params: dict[str, str] | None = None,
        ok_missing: bool = False,
    ) -> Obj:
        response = self.http.request(
            method,
            path,
            content=json.dumps(body) if body is not None else None,
            headers={"Content-Type": content_type} if body is not None else None,
            params=params,
        )
        if ok_missing and response.status_code == 404:
            return {}
        if response.status_code >= 400:
            raise KubeApiError(response.status_code, f"{method} {what}", response.text)
        result: Obj = response.json()
        return result

    # --------------------------------------------------------------------- nodes

    def nodes(self, label_selector: str) -> list[Obj]:
        items: list[Obj] = self._call(
            "GET", "/api/v1/nodes", "nodes", params={"labelSelector": label_selector}
        )["items"]
        return items

    def create_node(self, node: Obj) -> Obj:
        return self._call("POST", "/api/v1/nodes", f"node {node['metadata']['name']}", body=node)

    def patch_node(self, name: str, patch: Obj, *, status: bool = False) -> Obj:
        path = f"/api/v1/nodes/{name}" + ("/status" if status else "")
        return self._call(
            "PATCH", path, f"node {name}", body=patch, content_type="application/merge-patch+json"
        )

    def delete_node(self, name: str) -> None:
        self._call("DELETE", f"/api/v1/nodes/{name}", f"node {name}", ok_missing=True)

    # ---------------------------------------------------------------------- pods

    def pods(self) -> list[Obj]:
        items: list[Obj] = self._call("GET", "/api/v1/pods", "pods")["items"]
        return items

    @staticmethod
    def _pod_path(pod: Obj) -> str:
        meta = pod["metadata"]
        return f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"

    @staticmethod
    def pod_name(pod: Obj) -> str:
        return f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']}"

    def patch_pod(self, pod: Obj, patch: Obj, *, status: bool = False) -> Obj:
        """A merge patch of the pod, or a strategic merge patch of its status (which merges
        conditions and container statuses by their keys instead of replacing the lists)."""
        path = self._pod_path(pod) + ("/status" if status else "")
        kind = "strategic-merge-patch" if status else "merge-patch"
        return self._call(
            "PATCH", path, self.pod_name(pod), body=patch, content_type=f"application/{kind}+json"
        )

    def evict(self, pod: Obj, grace_seconds: int) -> bool:
        """The eviction API (which gives the pod the ``DisruptionTarget`` condition); False when
        a PodDisruptionBudget refused it (HTTP 429)."""
        meta = pod["metadata"]
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "deleteOptions": {"gracePeriodSeconds": grace_seconds},
        }
        try:
            self._call("POST", self._pod_path(pod) + "/eviction", self.pod_name(pod), body=body)
        except KubeApiError as exc:
            if exc.status == 429:
                return False
            if exc.status == 404:
                return True
            raise
        return True

    def delete_pod(self, pod: Obj, grace_seconds: int) -> None:
        self._call(
            "DELETE",
            self._pod_path(pod),
            self.pod_name(pod),
            body={"gracePeriodSeconds": grace_seconds},
            ok_missing=True,
        )

    # ---------------------------------------------------- volumes and events

    def persistent_volumes(self, label_selector: str) -> list[Obj]:
        items: list[Obj] = self._call(
            "GET",
            "/api/v1/persistentvolumes",
            "persistent volumes",
            params={"labelSelector": label_selector},
        )["items"]
        return items

    def create_persistent_volume(self, pv: Obj) -> None:
        name = pv["metadata"]["name"]
        self._call("POST", "/api/v1/persistentvolumes", f"persistent volume {name}", body=pv)

    def delete_persistent_volume(self, name: str) -> None:
        self._call(
            "DELETE",
            f"/api/v1/persistentvolumes/{name}",
            f"persistent volume {name}",
            ok_missing=True,
        )

    def node_event(self, node: Obj, *, reason: str, message: str, kind: str = "Warning") -> None:
        """A core/v1 Event on ``node`` (namespace ``default``, where node events live), so
        ``kubectl get events --field-selector reason=...`` and ``kubectl describe node`` show it."""
        name = node["metadata"]["name"]
        now = rfc3339()
        event = {
            "metadata": {"generateName": f"{name}.", "namespace": "default"},
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Node",
                "name": name,
                "uid": node["metadata"].get("uid", ""),
            },
            "reason": reason,
            "message": message,
            "type": kind,
            "source": {"component": "together", "host": name},
            "reportingComponent": "together",
            "reportingInstance": name,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        self._call("POST", "/api/v1/namespaces/default/events", f"event on node {name}", body=event)
