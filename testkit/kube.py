"""Reach a simulated cluster's Kubernetes API server (``python -m together_sim --kubernetes``) from
a test, with a small client instead of kubectl, so that a poll costs a request, not a process."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from testkit.pulumi_env import TOOLS, tool_bin
from testkit.wait import wait_for
from together_drill.kube import Kube

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


class KubeClient(Kube):
    """A small client for one cluster's API server, authenticated as its kubeconfig says (the
    drill's :class:`Kube`; no kubectl, so a poll costs a request, not a process)::

        kube = KubeClient.from_cluster(client.get_cluster(cluster_id))
        kube.wait_for(lambda: len(kube.nodes()) == 2, "two Nodes")
        kube.nodes()        # [{"metadata": {"name": "gpu-dp-...", "labels": ...}, ...}, ...]
    """

    @classmethod
    def from_cluster(cls, cluster: Any) -> KubeClient:
        """From a wire ``Cluster`` (its ``kube_config`` is base64, as Together sends it)."""
        return cls(base64.b64decode(cluster.kube_config).decode())

    def get(self, path: str, **params: str) -> Obj:
        response = self.http.get(path, params=params)
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
