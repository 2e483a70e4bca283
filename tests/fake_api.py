"""A scripted Together API for unit tests (httpx.MockTransport), shared by the provider and
lifecycle tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from together_api.client import TogetherClient

CLUSTERS = "/v1/compute/clusters"
ONE = "/v1/compute/clusters/c-1"

SPEC: dict[str, Any] = {
    "cluster_name": "train",
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8.0,  # the engine sends every number as a float
    "num_preemptible_gpus": 16.0,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "project_id": "proj",
}


def cluster(status: str = "Ready", **fields: Any) -> dict[str, Any]:
    return {
        "cluster_id": "c-1",
        "cluster_name": "train",
        "status": status,
        "num_gpus": 8,
        "desired_preemptible_gpus": 16,
        "allocated_preemptible_gpus": 8,
        "project_id": "proj",
        "region": "us-central-8",
        "gpu_type": "H100_SXM",
        "kube_config": "apiVersion: v1\n",
        "cuda_version": "12.8",
        "nvidia_driver_version": "570",
        "billing_type": "ON_DEMAND",
        **fields,
    }


Answer = Callable[[], httpx.Response]


class FakeApi:
    """Answers from a script keyed by (method, path), the last answer repeating; records every
    request. Unscripted routes answer 404."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Answer]] = {}
        self.seen: list[tuple[str, str]] = []
        self.bodies: list[Any] = []
        """Each request's JSON body (None without one), in the order of `seen`."""

    def on(self, method: str, path: str, *answers: Answer) -> None:
        self.routes.setdefault((method, path), []).extend(answers)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        key = (request.method, request.url.path)
        self.seen.append(key)
        self.bodies.append(json.loads(request.content) if request.content else None)
        answers = self.routes.get(key)
        if not answers:
            return httpx.Response(404, json={"error": {"message": "not found"}})
        return (answers.pop(0) if len(answers) > 1 else answers[0])()


def reply(status: int, body: Any) -> Answer:
    return lambda: httpx.Response(status, json=body)


def client_for(fake: FakeApi) -> TogetherClient:
    """A client whose requests `fake` answers and whose waits take no time."""
    return TogetherClient(api_key="k", transport=httpx.MockTransport(fake), sleep=lambda _: None)
