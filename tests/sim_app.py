"""The simulator in-process (Starlette TestClient) with a frozen clock, for unit tests.

``Sim`` wraps the app with tiny helpers so tests read as steps; the ``sim`` fixture lives in
``tests/unit/conftest.py``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

with warnings.catch_warnings():  # starlette 1.x nags about httpx; the client still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from together_api.wire import Cluster
from together_sim import SimulatorConfig, create_app

__all__ = ["BASE", "GPU", "KEY", "REGION", "Sim", "TestClient"]

KEY = "sim-key"
REGION, GPU = "us-central-8", "H100_SXM"
BASE: dict[str, Any] = {
    "cluster_name": "train",
    "region": REGION,
    "gpu_type": GPU,
    "num_gpus": 8,
    "billing_type": "ON_DEMAND",
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
}


class Sim:
    """A frozen-clock simulator plus tiny helpers, so tests read as steps."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.app = create_app(SimulatorConfig(state_dir=state_dir, time_scale=0, admin=True))
        self.http = TestClient(self.app, headers={"Authorization": f"Bearer {KEY}"})

    def create(self, **overrides: Any) -> Cluster:
        response = self.http.post("/v1/compute/clusters", json={**BASE, **overrides})
        assert response.status_code == 200, response.text
        return Cluster.model_validate(response.json())

    def get(self, cluster_id: str) -> Cluster:
        response = self.http.get(f"/v1/compute/clusters/{cluster_id}")
        assert response.status_code == 200, response.text
        return Cluster.model_validate(response.json())

    def put(self, cluster_id: str, body: dict[str, Any]) -> Any:
        return self.http.put(f"/v1/compute/clusters/{cluster_id}", json=body)

    def advance(self, seconds: float) -> None:
        assert self.http.post("/_sim/clock/advance", json={"seconds": seconds}).status_code == 200

    def ready(self, **overrides: Any) -> Cluster:
        cluster = self.create(**overrides)
        self.advance(360)
        return self.get(cluster.cluster_id)

    def capacity(self, **body: Any) -> None:
        body = {"region": REGION, "gpu_type": GPU, **body}
        assert self.http.put("/_sim/capacity", json=body).status_code == 200
