"""An existing cluster (a Together cluster, kind, the simulator's own control plane) drilled
through its kubeconfig: a reclaim is Together's drain done by hand. Cordon the node, evict only
the Job's pods through the Eviction API (DisruptionTarget, the pod's own grace capped at the
drain window), wait for them to end, uncordon. It never deletes a node and never touches another
workload's pod; :meth:`RemoteCluster.close` uncordons what it cordoned and deletes its Job."""

from __future__ import annotations

import time
from typing import Final

import httpx

from together_drill.cli import ClusterArgs
from together_drill.cluster import Say
from together_drill.kube import Kube, Obj
from together_drill.manifest import DrillInputError, DrillJob
from together_drill.needs import create_missing, delete_created
from together_drill.reader import PodReader, checkpoint_claim, is_kwok, reader_node, reader_pod
from together_drill.volume import LocalReader, NoReader, VolumeReader
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
        self._reader: VolumeReader = (
            LocalReader(args.volume_dir) if args.volume_dir is not None else NoReader()
        )
        self.pod_reader: PodReader | None = None
        """The reader pod this drill created (and must delete)."""
        self.spared: str | None = None
        """A reclaimable node the reader pod runs on, left out of the reclaims."""
        self.created: list[str] = []
        """The API paths of the manifest's objects this drill created (and must delete)."""

    @property
    def kube(self) -> Kube:
        return self._kube

    @property
    def reader(self) -> VolumeReader:
        return self._reader

    def _where(self) -> str:
        return f"context {self.args.context or '(current)'} of {self.args.kubeconfig}"

    def _matching(self, nodes: list[Obj]) -> list[Obj]:
        return [n for n in nodes if _labelled(n, self.selector)]

    def eligible(self) -> set[str]:
        matching = self._matching(self._kube.items("/api/v1/nodes"))
        return {n["metadata"]["name"] for n in matching} - {self.spared}

    def prepare(self, job: DrillJob, say: Say) -> None:
        """Refuse a cluster with no node the drill may drain, or without the Job's claims."""
        try:
            every = self._kube.items("/api/v1/nodes")
        except httpx.HTTPError as error:
            raise CouldNotDrill(
                f"{self._where()}: the API server did not answer: {error}"
            ) from error
        matching = self._matching(every)
        nodes = {n["metadata"]["name"] for n in matching}
        wanted = ",".join(f"{k}={v}" for k, v in self.selector.items())
        if not nodes:
            raise DrillInputError(
                f"{self._where()} has no node labelled {wanted}, so there is nothing the drill "
                "may reclaim; point it at a Together cluster with preemptible nodes, or name the "
                "nodes it may drain with --node-selector KEY=VALUE"
            )
        fake = sorted(n["metadata"]["name"] for n in matching if is_kwok(n))
        if fake:
            raise DrillInputError(
                f"node(s) {', '.join(fake)} labelled {wanted} in {self._where()} are KWOK "
                "stand-ins: no process runs there (a pod 'completes' at once), so nothing can be "
                "drilled on them; drill where a kubelet runs the pods: the local world (no "
                "--kubeconfig; needs root and the node packages), the simulator started with "
                "--real-nodes, or a Together cluster; --node-selector KEY=VALUE can name the "
                "real nodes (the simulator labels them together-sim/kwok=false)"
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
        create_missing(self._kube, job, say, self.created)
        if self.args.volume_dir is None:
            self._start_reader(job, every, nodes, say)

    def _start_reader(self, job: DrillJob, every: list[Obj], nodes: set[str], say: Say) -> None:
        """The reader pod, on a node no reclaim takes; without a claim or such a node, a warning
        (the saves the files would show are then unverified)."""
        claim = checkpoint_claim(job)
        if claim is None:
            say(
                "warning: the Job mounts no claim, so the drill has no checkpoint volume to "
                "read; a save it cannot see is unverified"
            )
            return
        where = reader_node(every, nodes)
        if where is None:
            say(
                "warning: no Ready node for the volume reader pod that the drill would not "
                "reclaim (it needs a standard node, or two reclaimable ones); give --volume-dir "
                "DIR where the claim is mounted here, or a save it cannot see is unverified"
            )
            return
        node, spared = where
        image = self.args.reader_image or str(job.pod_spec["containers"][0]["image"])
        self.pod_reader = PodReader(self._kube, reader_pod(job, claim, node, image), say)
        self._reader = self.pod_reader
        if spared:
            self.spared = node
        say(
            f"volume reader pod {self.pod_reader.name} on node {node}"
            + (" (left out of the reclaims)" if spared else "")
            + f" reads claim {claim} read-only"
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
        errors += delete_created(self._kube, self.created)
        if self.created and not errors:
            say(f"cleaning up: {len(self.created)} object(s) of the manifest deleted")
        self.created = []
        reader = self.pod_reader
        if reader is not None:
            try:
                reader.delete()
                say(f"cleaning up: volume reader pod {reader.name} deleted")
                self.pod_reader = None
            except (httpx.HTTPError, CouldNotDrill) as error:
                errors.append(f"delete pod {reader.name}: {error}")
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
