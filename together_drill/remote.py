"""An existing cluster (a Together cluster, kind, the simulator's own control plane) drilled
through its kubeconfig: a reclaim is Together's drain done by hand. Cordon the node, evict only
the Job's pods through the Eviction API (DisruptionTarget, the pod's own grace capped at the
drain window), wait for them to end, uncordon. It never deletes a node and never touches another
workload's pod; :meth:`RemoteCluster.close` uncordons what it cordoned and deletes its Job."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Final

import httpx

from together_drill.cli import ClusterArgs
from together_drill.cluster import Say
from together_drill.kube import Kube, Obj
from together_drill.manifest import DrillInputError, DrillJob
from together_drill.waits import CouldNotDrill, wait_for
from together_facts.values import DRAIN_WINDOW_SECONDS
from together_worker.job import COMPUTE_CLASS_LABEL, PREEMPTIBLE

PREEMPTIBLE_SELECTOR: Final = {COMPUTE_CLASS_LABEL: PREEMPTIBLE}
JOB_GONE_SECONDS: Final = 60.0


def _labelled(node: Obj, selector: dict[str, str]) -> bool:
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


class RemoteCluster:
    def __init__(self, args: ClusterArgs) -> None:
        self.args = args
        self.selector = args.node_selector or PREEMPTIBLE_SELECTOR
        try:
            self._kube = Kube(args.kubeconfig.read_text(), args.context)
        except (ValueError, KeyError, TypeError, OSError) as error:
            raise DrillInputError(f"--kubeconfig {args.kubeconfig}: {error}") from error
        self.cordoned: set[str] = set()
        """The nodes this drill cordoned (and must uncordon): never one found cordoned."""

    @property
    def kube(self) -> Kube:
        return self._kube

    @property
    def volume_dir(self) -> Path | None:
        return self.args.volume_dir

    def _where(self) -> str:
        return f"context {self.args.context or '(current)'} of {self.args.kubeconfig}"

    def eligible(self) -> set[str]:
        return {
            n["metadata"]["name"]
            for n in self._kube.items("/api/v1/nodes")
            if _labelled(n, self.selector)
        }

    def prepare(self, job: DrillJob, say: Say) -> None:
        """Refuse a cluster with no node the drill may drain, or without the Job's claims."""
        try:
            nodes = self.eligible()
        except httpx.HTTPError as error:
            raise CouldNotDrill(
                f"{self._where()}: the API server did not answer: {error}"
            ) from error
        wanted = ",".join(f"{k}={v}" for k, v in self.selector.items())
        if not nodes:
            raise DrillInputError(
                f"{self._where()} has no node labelled {wanted}, so there is nothing the drill "
                "may reclaim; point it at a Together cluster with preemptible nodes, or name the "
                "nodes it may drain with --node-selector KEY=VALUE"
            )
        say(f"{len(nodes)} node(s) labelled {wanted} in {self._where()}")
        for claim in job.claims:
            path = f"/api/v1/namespaces/{job.namespace}/persistentvolumeclaims/{claim}"
            try:
                self._kube.request("GET", path)
            except httpx.HTTPStatusError as error:
                raise DrillInputError(
                    f"Job {job.name} mounts claim {claim}, which namespace {job.namespace} of "
                    f"{self._where()} does not have ({error.response.status_code}): create it "
                    "first (the drill makes claims only in its local world)"
                ) from error
        if self.args.volume_dir is None and job.claims:
            say(
                "warning: the Job's checkpoint volume is not readable from here (give "
                "--volume-dir where it is mounted); findings that need its files are left out"
            )

    def reclaim(self, node: str, pods: list[str], namespace: str, say: Say) -> None:
        """Cordon ``node`` (unless it already was) and evict ``pods``, each with its own grace
        capped at the drain window."""
        found = self._kube.request("GET", f"/api/v1/nodes/{node}")
        if not found["spec"].get("unschedulable"):
            self._kube.merge_patch(f"/api/v1/nodes/{node}", {"spec": {"unschedulable": True}})
            self.cordoned.add(node)
        for name in pods:
            self._evict(name, namespace)

    def _evict(self, name: str, namespace: str) -> None:
        pod = self._kube.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
        grace = min(int(pod["spec"].get("terminationGracePeriodSeconds", 30)), DRAIN_WINDOW_SECONDS)
        eviction = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
            "deleteOptions": {"gracePeriodSeconds": grace},
        }
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        response = self._kube.http.post(path, json=eviction)
        if response.status_code == 429:
            raise CouldNotDrill(
                f"the Eviction API refused to evict pod {name} (429: a PodDisruptionBudget "
                "allows no disruption now); Together's drain does not wait for one, so relax it "
                "for the drill"
            )
        response.raise_for_status()

    def refill(self, node: str, since: float, deadline: float, say: Say) -> float | None:
        """Uncordon the node (it comes back, as Together's refill brings capacity back)."""
        if node in self.cordoned:
            self._uncordon(node)
        took = round(time.monotonic() - since, 1)
        say(f"  refill: node {node} uncordoned after {took} s")
        return took

    def _uncordon(self, node: str) -> None:
        self._kube.merge_patch(f"/api/v1/nodes/{node}", {"spec": {"unschedulable": False}})
        self.cordoned.discard(node)

    def close(self, job: DrillJob | None, say: Say) -> None:
        """Uncordon every node this drill cordoned, delete its Job (unless --keep) and wait
        until it is gone; each step is tried even when another fails."""
        errors = []
        for node in sorted(self.cordoned):
            try:
                self._uncordon(node)
                say(f"cleaning up: node {node} uncordoned")
            except httpx.HTTPError as error:
                errors.append(f"uncordon {node}: {error}")
        if job is not None and not self.args.keep:
            try:
                self._delete(job)
                say(f"cleaning up: Job {job.name} deleted")
            except (httpx.HTTPError, CouldNotDrill) as error:
                errors.append(f"delete Job {job.name}: {error}")
        self._kube.close()
        if errors:
            raise CouldNotDrill(
                "could not leave the cluster as found: " + "; ".join(errors) + " (do it by hand)"
            )

    def _delete(self, job: DrillJob) -> None:
        path = f"/apis/batch/v1/namespaces/{job.namespace}/jobs/{job.name}"
        response = self._kube.http.request("DELETE", path, json={"propagationPolicy": "Background"})
        if response.status_code != 404:
            response.raise_for_status()

        def gone() -> bool:
            return self._kube.http.get(path).status_code == 404

        wait_for(gone, f"Job {job.name} to be gone", JOB_GONE_SECONDS)
