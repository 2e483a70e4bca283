"""The reader pod: on a cluster, the drill reads the Job's checkpoint claim from inside it. Its own
pod mounts the same claim read-only (Together's shared volume is ReadWriteMany), runs on a node
the drill will not reclaim, in an image the cluster already has (the Job's own by default), and
prints what it sees (volume.LISTER); the drill reads its last log line. It touches nothing
else, and :meth:`PodReader.delete` removes it whatever ends the drill."""

from __future__ import annotations

import time
from typing import Final

import httpx

from together_drill.cluster import Say
from together_drill.kube import Kube, Obj
from together_drill.manifest import DrillJob
from together_drill.starting import WAITING_FIXES
from together_drill.volume import LISTER, NOTHING, TICK_SECONDS, Observation, parse_line
from together_drill.waits import CouldNotDrill, wait_for
from together_worker.job import COMPUTE_CLASS_LABEL

MOUNT: Final = "/volume"
READER_LABEL: Final = "together.ai/drill-reader"
START_SECONDS: Final = 120.0
"""How long the drill waits for its reader pod to run before it reads nothing (unverified)."""
FRESH_SECONDS: Final = 10.0
"""How long a read waits for a line printed after the moment it asks for."""
GONE_SECONDS: Final = 60.0
TAIL_MOST: Final = 4096
"""The deepest tail a read asks for, in log entries (64 MiB of a line split every 16 KiB)."""
STANDARD: Final = "standard"
KWOK_ANNOTATION: Final = "kwok.x-k8s.io/node"


def is_kwok(node: Obj) -> bool:
    """A KWOK stand-in: no kubelet, no process ever runs there."""
    version = str(node.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""))
    annotations = node["metadata"].get("annotations") or {}
    return version.startswith("kwok") or KWOK_ANNOTATION in annotations


def _ready(node: Obj) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def reader_node(nodes: list[Obj], eligible: set[str]) -> tuple[str, bool] | None:
    """Where the reader pod runs: a Ready, schedulable real node the drill never reclaims (a
    standard node first), else one of the reclaimable ones, then excluded from the reclaims (the
    bool: True), when another is left to reclaim; None: nowhere."""
    real = [n for n in nodes if _ready(n) and not n["spec"].get("unschedulable") and not is_kwok(n)]

    def name(node: Obj) -> str:
        return str(node["metadata"]["name"])

    others = [n for n in real if name(n) not in eligible]
    others.sort(
        key=lambda n: (
            (n["metadata"].get("labels") or {}).get(COMPUTE_CLASS_LABEL) != STANDARD,
            name(n),
        )
    )
    if others:
        return name(others[0]), False
    mine = sorted(name(n) for n in real if name(n) in eligible)
    if len(eligible) > 1 and mine:
        return mine[0], True
    return None


def checkpoint_claim(job: DrillJob) -> str | None:
    """The claim the Job checkpoints to: the one mounted where CHECKPOINT_DIR points, else its
    first."""
    if not job.claims:
        return None
    volumes = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in job.pod_spec.get("volumes", [])
        if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)
    }
    for container in job.pod_spec["containers"]:
        env = {e.get("name"): e.get("value") for e in container.get("env") or []}
        where = env.get("CHECKPOINT_DIR")
        for mount in container.get("volumeMounts") or []:
            if where and mount.get("name") in volumes and str(where).startswith(mount["mountPath"]):
                return str(volumes[mount["name"]])
    return job.claims[0]


def reader_pod(job: DrillJob, claim: str, node: str, image: str) -> Obj:
    """The reader pod: the claim mounted read-only, pinned to ``node``, the Job's security
    contexts (to read what its pods wrote, and be admitted where they are), the lister as its
    only process."""
    pull = job.pod_spec["containers"][0].get("imagePullPolicy", "IfNotPresent")
    spec: Obj = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 1,
        "automountServiceAccountToken": False,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}],
        "containers": [
            {
                "name": "lister",
                "image": image,
                "imagePullPolicy": pull,
                "command": ["python3", "-c", LISTER, MOUNT, str(TICK_SECONDS)],
                "volumeMounts": [{"name": "volume", "mountPath": MOUNT, "readOnly": True}],
            }
        ],
        "volumes": [
            {"name": "volume", "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}
        ],
    }
    if job.pod_spec.get("securityContext"):
        spec["securityContext"] = job.pod_spec["securityContext"]
    first = job.pod_spec["containers"][0]
    if first.get("securityContext"):  # a namespace's pod security admits the Job's own
        spec["containers"][0]["securityContext"] = first["securityContext"]
    if job.pod_spec.get("imagePullSecrets"):
        spec["imagePullSecrets"] = job.pod_spec["imagePullSecrets"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job.name}-volume-reader"[:63].rstrip("-."),
            "namespace": job.namespace,
            "labels": {READER_LABEL: job.name[:63]},
        },
        "spec": spec,
    }


class PodReader:
    """The reader pod once created: :meth:`read` gives its latest line; when the pod cannot run
    (no python3 in the image, a claim it cannot mount), the drill says so once and reads nothing."""

    def __init__(self, kube: Kube, pod: Obj, say: Say) -> None:
        self.kube, self.say = kube, say
        self.name = str(pod["metadata"]["name"])
        self.namespace = str(pod["metadata"]["namespace"])
        self.path = f"/api/v1/namespaces/{self.namespace}/pods/{self.name}"
        self.image = str(pod["spec"]["containers"][0]["image"])
        self.node = str(
            pod["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
        )
        self.failed: str | None = None
        self.running = False
        create = f"/api/v1/namespaces/{self.namespace}/pods"
        response = kube.http.post(create, json=pod)
        if response.status_code == 409:
            # A reader left by a drill killed with SIGKILL: this drill's to replace, when it is
            # one (its label); any other pod of that name is not the drill's to touch.
            found = kube.request("GET", self.path)
            if READER_LABEL not in (found["metadata"].get("labels") or {}):
                raise CouldNotDrill(
                    f"namespace {self.namespace} has a pod {self.name} that is not the drill's "
                    "volume reader: rename the Job, or give --volume-dir DIR"
                )
            self.delete()
            response = kube.http.post(create, json=pod)
        response.raise_for_status()

    @property
    def readable(self) -> bool:
        return self.failed is None

    def _give_up(self, why: str) -> None:
        self.failed = why
        self.say(
            f"warning: the volume reader pod {self.name} (image {self.image}, node {self.node}) "
            f"{why}; the Job's checkpoint volume is not read, so a save it would show is "
            "unverified (give --reader-image IMAGE with python3, or --volume-dir DIR)"
        )

    def _wait_running(self) -> None:
        def state() -> str | None:
            pod = self.kube.request("GET", self.path)
            statuses = pod.get("status", {}).get("containerStatuses") or []
            if statuses and "running" in statuses[0].get("state", {}):
                return "running"
            if statuses and "terminated" in statuses[0].get("state", {}):
                self._give_up(f"ended: {self._tail()}")
                return "failed"
            waiting = statuses[0].get("state", {}).get("waiting", {}) if statuses else {}
            if waiting.get("reason") in WAITING_FIXES:  # what keeps the Job's pods from starting
                said = f": {waiting['message']}" if waiting.get("message") else ""
                self._give_up(f"cannot start: {waiting['reason']}{said}")
                return "failed"
            return None

        try:
            wait_for(state, f"the volume reader pod {self.name} to run", START_SECONDS)
        except CouldNotDrill:
            self._give_up(f"did not run within {START_SECONDS:.0f} s")
        self.running = self.failed is None

    def _tail(self) -> str:
        response = self.kube.http.get(f"{self.path}/log", params={"tailLines": "3"})
        text = response.text.strip() if response.status_code == 200 else ""
        return " | ".join(text.splitlines()[-3:]) or "(no output)"

    def _last(self) -> Observation | None:
        """The lister's latest line. The container runtime stores a line longer than its limit
        (16 KiB for containerd, 8 KiB for CRI-O: a volume of a few hundred files) as partial
        entries, and ``tailLines`` counts each: when the last line read does not parse, the tail
        is asked again, deeper, until it holds the whole line (or the log has no more)."""
        depth, text = 1, ""
        while depth <= TAIL_MOST:
            response = self.kube.http.get(f"{self.path}/log", params={"tailLines": str(depth)})
            if response.status_code != 200 or response.text == text:
                return None
            text = response.text
            lines = text.strip().splitlines()
            seen = parse_line(lines[-1]) if lines else None
            if seen is not None:
                return seen
            depth *= 8
        return None

    def read(self, after: float | None = None) -> Observation:
        if self.failed is not None:
            return NOTHING
        if not self.running:
            self._wait_running()
            if self.failed is not None:
                return NOTHING
        deadline = time.monotonic() + FRESH_SECONDS
        last: Observation | None = None
        while True:
            try:
                seen = self._last()
            except httpx.HTTPError:
                seen = None
            if seen is not None:
                last = seen
                if after is None or seen.at >= after:
                    return seen
            if time.monotonic() >= deadline:
                break
            time.sleep(TICK_SECONDS / 2)
        if last is not None:
            return last
        self._give_up(f"printed nothing readable within {FRESH_SECONDS:.0f} s: {self._tail()}")
        return NOTHING

    def delete(self) -> None:
        """Delete the reader pod (at once) and wait until it is gone."""
        response = self.kube.http.request(
            "DELETE", self.path, json={"gracePeriodSeconds": 0, "propagationPolicy": "Background"}
        )
        if response.status_code != 404:
            response.raise_for_status()
        wait_for(
            lambda: self.kube.http.get(self.path).status_code == 404,
            f"the volume reader pod {self.name} to be gone",
            GONE_SECONDS,
        )
