"""Reach a simulated cluster's Kubernetes API server (``python -m together_sim --kubernetes``) from
a test, with a small client instead of kubectl, so that a poll costs a request, not a process."""

from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from testkit.pulumi_env import TOOLS, tool_bin
from testkit.wait import wait_for

__all__ = ["KubeClient", "control_plane_processes", "kube_bin_or_skip"]

Obj = dict[str, Any]


def kube_bin_or_skip() -> Path:
    """The control plane's bin directory. Under ``make test`` ($TOGETHER_KUBE_BIN set) it must
    exist; run outside make, a machine that never built it skips with the fix."""
    try:
        return tool_bin("kube")
    except RuntimeError as missing:
        if os.environ.get(TOOLS["kube"][0]):
            raise
        pytest.skip(f"{missing} first")


def _named(entries: list[Obj], name: str | None) -> Obj:
    return next((e for e in entries if e["name"] == name), entries[0])


def control_plane_processes(marker: Path) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose command line names ``marker`` (a state
    directory): the control-plane processes of a simulator using it. Zombies do not count."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(marker) in cmdline and state != "Z" and "together_sim" not in cmdline:
            found.append((int(entry.name), cmdline.strip()))
    return found


class KubeClient:
    """A small client for one cluster's API server, authenticated as its kubeconfig says
    (client certificate or token; no kubectl, so a poll costs a request, not a process)::

        kube = KubeClient.from_cluster(client.get_cluster(cluster_id))
        kube.wait_for(lambda: len(kube.nodes()) == 2, "two Nodes")
        kube.nodes()        # [{"metadata": {"name": "gpu-dp-...", "labels": ...}, ...}, ...]
    """

    def __init__(self, kubeconfig: str) -> None:
        config = yaml.safe_load(kubeconfig)
        context = _named(config["contexts"], config.get("current-context"))["context"]
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

    @classmethod
    def from_cluster(cls, cluster: Any) -> KubeClient:
        """From a wire ``Cluster`` (its ``kube_config`` is base64, as Together sends it)."""
        return cls(base64.b64decode(cluster.kube_config).decode())

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, **params: str) -> Obj:
        response = self.http.get(path, params=params)
        response.raise_for_status()
        result: Obj = response.json()
        return result

    def request(self, method: str, path: str, body: Obj | None = None) -> Obj:
        response = self.http.request(method, path, json=body)
        response.raise_for_status()
        result: Obj = response.json()
        return result

    def items(self, path: str, **params: str) -> list[Obj]:
        items: list[Obj] = self.get(path, **params)["items"]
        return items

    def nodes(self) -> list[Obj]:
        return self.items("/api/v1/nodes")

    def pods(self, selector: str = "", namespace: str = "default") -> list[Obj]:
        return self.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)

    def job(self, name: str, namespace: str = "default") -> Obj:
        return self.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}")

    def deployment(self, name: str, namespace: str = "default") -> Obj:
        return self.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")

    def events(self, reason: str, namespace: str | None = None) -> list[Obj]:
        """Events with this reason, in ``namespace`` or (None) in every namespace."""
        path = f"/api/v1/namespaces/{namespace}/events" if namespace else "/api/v1/events"
        return self.items(path, fieldSelector=f"reason={reason}")

    def watch(self, path: str, stop: threading.Event) -> Iterator[Obj]:
        """Watch events of ``path`` (a list URL) until ``stop`` is set or the server ends it."""
        with self.http.stream(
            "GET", path, params={"watch": "1"}, timeout=httpx.Timeout(10.0, read=None)
        ) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if stop.is_set():
                    return
                if line:
                    yield json.loads(line)

    def wait_for(self, check: Callable[[], Any], what: str, timeout: float = 120.0) -> Any:
        """`testkit.wait.wait_for` with this API server's errors counting as not yet.

        Waiting here is for real processes (the API server, the controllers, KWOK) to catch up
        with the simulator's clock, never for simulated time: tests move that with
        ``SimulatorProcess.advance``."""
        return wait_for(check, what, timeout=timeout, ignore=(httpx.HTTPError,))
