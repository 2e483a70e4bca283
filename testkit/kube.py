"""Reach a simulated cluster's Kubernetes API server (``python -m together_sim --kubernetes``).

    kube = KubeClient.from_cluster(client.get_cluster(cluster_id))
    kube.wait_for(lambda: len(kube.nodes()) == 2, "two Nodes")
    kube.nodes()        # [{"metadata": {"name": "gpu-dp-...", "labels": ...}, ...}, ...]

Waiting here is for real processes (the API server, the controllers, KWOK) to catch up with the
simulator's clock, never for simulated time: tests move that with ``SimulatorProcess.advance``.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from testkit.pulumi_env import TOOLS, tool_bin

__all__ = ["KubeClient", "control_plane_processes", "kube_bin_or_skip"]

Obj = dict[str, Any]


def kube_bin_or_skip() -> Path:
    """The control plane's bin directory. Under ``make test`` ($TOGETHER_KUBE_BIN set) it must
    exist; run outside make, a machine that never built it skips with the fix."""
    if os.environ.get(TOOLS["kube"][0]):
        return tool_bin("kube")
    try:
        return tool_bin("kube")
    except RuntimeError as missing:
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


class KubeClient:
    """A tiny client authenticated by a kubeconfig with embedded client certificates."""

    def __init__(self, kubeconfig: str) -> None:
        config = yaml.safe_load(kubeconfig)
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        self._dir = tempfile.TemporaryDirectory(prefix="kubeclient-")
        files = {}
        for name, key in (
            ("ca.crt", cluster["certificate-authority-data"]),
            ("client.crt", user["client-certificate-data"]),
            ("client.key", user["client-key-data"]),
        ):
            path = Path(self._dir.name) / name
            path.write_bytes(base64.b64decode(key))
            files[name] = str(path)
        self.server = cluster["server"]
        tls = ssl.create_default_context(cafile=files["ca.crt"])
        tls.load_cert_chain(files["client.crt"], files["client.key"])
        self.http = httpx.Client(base_url=self.server, verify=tls, timeout=10.0)

    @classmethod
    def from_cluster(cls, cluster: Any) -> KubeClient:
        """From a wire ``Cluster`` (its ``kube_config`` is base64, as Together sends it)."""
        return cls(base64.b64decode(cluster.kube_config).decode())

    def close(self) -> None:
        self.http.close()
        self._dir.cleanup()

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

    def nodes(self) -> list[Obj]:
        items: list[Obj] = self.get("/api/v1/nodes")["items"]
        return items

    def pods(self, namespace: str = "default") -> list[Obj]:
        items: list[Obj] = self.get(f"/api/v1/namespaces/{namespace}/pods")["items"]
        return items

    def events(self, reason: str) -> list[Obj]:
        items: list[Obj] = self.get("/api/v1/events", fieldSelector=f"reason={reason}")["items"]
        return items

    def wait_for(self, check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
        """Poll ``check`` until it returns something truthy (API errors count as not yet)."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = check()
            except httpx.HTTPError as exc:
                last = exc
            else:
                if last:
                    return last
            time.sleep(0.1)
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last: {last!r}")
