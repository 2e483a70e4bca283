"""A small client of the drilled cluster's API server (httpx, authenticated by the cluster's
kubeconfig), and a watch of its pods that keeps every version with the real time it was seen."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import ssl
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

Obj = dict[str, Any]


def _named(entries: list[Obj], name: str | None) -> Obj:
    return next((e for e in entries if e["name"] == name), entries[0])


class Kube:
    """Authenticated as the kubeconfig says (client certificate or token); testkit's KubeClient
    builds on it, so the drill and the tests read a kubeconfig one way."""

    def __init__(self, kubeconfig: str, context_name: str | None = None) -> None:
        config = yaml.safe_load(kubeconfig)
        names = [c["name"] for c in config["contexts"]]
        if context_name is not None and context_name not in names:
            raise ValueError(
                f"--context {context_name}: the kubeconfig has no such context (it has: "
                f"{', '.join(names)})"
            )
        context = _named(config["contexts"], context_name or config.get("current-context"))[
            "context"
        ]
        cluster = _named(config["clusters"], context["cluster"])["cluster"]
        user = _named(config["users"], context["user"])["user"]
        tls = ssl.create_default_context()
        if "certificate-authority-data" in cluster:
            tls.load_verify_locations(
                cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
            )
        elif cluster.get("insecure-skip-tls-verify"):
            tls.check_hostname = False
            tls.verify_mode = ssl.CERT_NONE
        headers = {}
        if "client-certificate-data" in user:
            with tempfile.TemporaryDirectory() as tmp:  # ssl loads a key pair from files only
                cert, key = Path(tmp) / "client.crt", Path(tmp) / "client.key"
                cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
                key.write_bytes(base64.b64decode(user["client-key-data"]))
                tls.load_cert_chain(cert, key)
        if "token" in user:
            headers["Authorization"] = f"Bearer {user['token']}"
        self.server: str = cluster["server"]
        self.http = httpx.Client(base_url=self.server, verify=tls, headers=headers, timeout=10.0)

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, body: Obj | None = None) -> Obj:
        response = self.http.request(method, path, json=body)
        response.raise_for_status()
        result: Obj = response.json()
        return result

    def merge_patch(self, path: str, body: Obj) -> Obj:
        """A JSON merge patch (RFC 7386): only the fields given change."""
        response = self.http.patch(
            path,
            content=json.dumps(body),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        response.raise_for_status()
        result: Obj = response.json()
        return result

    def items(self, path: str) -> list[Obj]:
        items: list[Obj] = self.request("GET", path)["items"]
        return items

    def claim_volume(self, name: str, volume_name: str, namespace: str = "default") -> None:
        """Claim (ReadWriteMany, 1Ti) the static PersistentVolume the simulator made for an
        attached shared volume: no storage class, bound by ``volumeName`` (the drill and the
        tests claim it so)."""
        claim: Obj = {
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "volumeName": volume_name,
                "resources": {"requests": {"storage": "1Ti"}},
            },
        }
        self.request("POST", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", claim)


class PodWatch:
    """Every version of every pod of one namespace, each with ``time.monotonic()`` when seen,
    from a watch that restarts when the server ends it."""

    def __init__(self, kube: Kube, namespace: str, label_selector: str | None = None) -> None:
        self.kube = kube
        self.path = f"/api/v1/namespaces/{namespace}/pods"
        self.params = {
            "watch": "1",
            **({"labelSelector": label_selector} if label_selector else {}),
        }
        self.seen: list[tuple[float, Obj]] = []
        self._stop = threading.Event()
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self.kube.http.stream(
                    "GET",
                    self.path,
                    params=self.params,
                    timeout=httpx.Timeout(10.0, read=None),
                ) as response:
                    self._response = response
                    if self._stop.is_set():  # stop() may have looked before it was set
                        return
                    for line in response.iter_lines():
                        if self._stop.is_set():
                            return
                        if line:
                            event = json.loads(line)
                            pod = event["object"]
                            pod["_event"] = event["type"]  # DELETED: gone, ended or not
                            self.seen.append((time.monotonic(), pod))
            except (httpx.HTTPError, json.JSONDecodeError, KeyError, OSError, ValueError):
                self._stop.wait(0.2)  # the server ended the watch or is stopping: again
            finally:
                self._response = None

    def stop(self, timeout: float = 10.0) -> bool:
        """End the watch and wait for its thread, so the client can be closed after it.

        The thread is blocked reading its stream; closing the client under it would free the
        socket's descriptor while its TLS layer still holds the number, and its close_notify
        would then be written into whatever reuses it (a pipe, a file). So the socket is shut
        down instead (the read returns, the descriptor stays), and the thread closes it itself.
        Returns whether the thread ended."""
        self._stop.set()
        response = self._response
        if response is not None:
            stream = response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def history(self, name: str) -> list[tuple[float, Obj]]:
        return [(t, p) for t, p in list(self.seen) if p["metadata"]["name"] == name]

    def latest(self) -> dict[str, Obj]:
        """Each pod's latest version seen."""
        found: dict[str, Obj] = {}
        for _, pod in list(self.seen):
            found[pod["metadata"]["name"]] = pod
        return found


def terminated(pod: Obj) -> Obj | None:
    for status in pod.get("status", {}).get("containerStatuses", []):
        if "terminated" in status.get("state", {}):
            state: Obj = status["state"]["terminated"]
            return state
    return None


def running(pod: Obj) -> bool:
    statuses = pod.get("status", {}).get("containerStatuses", [])
    return bool(statuses) and all("running" in s.get("state", {}) for s in statuses)
