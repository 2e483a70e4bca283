"""The drill's local world: a simulator with real nodes (a subprocess, as a user would run it), one
cluster with preemptible capacity and a shared volume, and its API server; all gone at the end."""

from __future__ import annotations

import base64
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import httpx

from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest, VolumeCreateRequest
from together_drill.kube import Kube
from together_drill.manifest import DrillInputError, DrillJob
from together_drill.needs import create_missing
from together_drill.volume import LocalReader, VolumeReader
from together_drill.waits import START_TIMEOUT_SECONDS, CouldNotDrill, wait_for
from together_sim.banner import read_banner
from together_sim.host.images import IMAGES_ENV, archive_names, find_images
from together_sim.nodes.pool import real_nodes_unavailable

API_KEY: Final = "drill-key"
TIME_SCALE: Final = 60.0
"""The demo's: a 300 s drain window is 5 real seconds, but a real node waits for its pods' own
grace periods in real seconds before it goes (docs/kubernetes-sim.md)."""
CLUSTER: Final[dict[str, Any]] = {
    "cluster_name": "drill",
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "project_id": "proj-drill",
    "billing_type": "ON_DEMAND",
}
VOLUME_NAME: Final = "drill-checkpoints"
REAL: Final = "together-sim/kwok"
REFILL_WAIT_SECONDS: Final = 180.0
"""How long the drill waits for the refill after a reclaim's pods ended before it moves on."""
COMPUTE_CLASS: Final = "together.ai/compute-class"


class DrillWorldError(CouldNotDrill):
    """The local world did not come up; the message says what and where its log is."""


PR_SET_PDEATHSIG: Final = 1
"""Linux prctl: the signal a process gets when the thread that started it ends."""


def _die_with_parent(parent: int) -> Callable[[], None]:
    """What the simulator runs before it starts (Popen's ``preexec_fn``): SIGTERM when the drill
    is gone, however it went (SIGKILL included), so the simulator stops as on Ctrl-C and removes
    its real nodes. A drill already gone by then gets the same signal at once."""

    def arm() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


def host_unavailable() -> str:
    """Why this machine cannot run the local world's real nodes ("" when it can): root and the
    node packages (the kubelet is checked once TOGETHER_KUBE_BIN names it, in `check_host`)."""
    return real_nodes_unavailable(None)


def _kube_bin() -> Path:
    where = os.environ.get("TOGETHER_KUBE_BIN")
    if not where:
        raise DrillInputError(
            "the drill needs the Kubernetes binaries and a kubelet: export "
            'TOGETHER_KUBE_BIN="$(tools/kube/build.sh)"'
        )
    return Path(where)


def check_host(job: DrillJob, archive: Path | None) -> tuple[Path, Path]:
    """The kube binaries and images, and the Job's images available on the nodes: all checked
    before anything starts (exit 2 otherwise)."""
    kube_bin = _kube_bin()
    reason = real_nodes_unavailable(kube_bin)
    if reason:
        raise DrillInputError(f"this machine cannot run real nodes: {reason}")
    try:
        images = find_images(None)
    except SystemExit as error:
        raise DrillInputError(str(error.code)) from error
    available: set[str] = set()
    for archive in images.glob("*.tar"):
        available.update(archive_names(archive))
    if archive is not None:
        try:
            available.update(archive_names(archive))
        except SystemExit as error:
            raise DrillInputError(f"--image-archive: {error.code}") from error
    wanted = {str(c.get("image")) for c in job.pod_spec["containers"]}
    missing = sorted(wanted - available)
    if missing:
        raise DrillInputError(
            f"image(s) {', '.join(missing)} not on the drill's nodes (they pull nothing): give "
            f"--image-archive FILE (docker save IMAGE -o FILE); the nodes have "
            f"{', '.join(sorted(available))} (from ${IMAGES_ENV} and --image-archive)"
        )
    if len(job.claims) > 1:
        raise DrillInputError(
            f"Job {job.name} mounts {len(job.claims)} claims "
            f"({', '.join(job.claims)}); the drill gives it one shared volume"
        )
    return kube_bin, images


class World:
    """Start with :meth:`start`, end with :meth:`close` (always: it leaves nothing running)."""

    def __init__(
        self,
        kube_bin: Path,
        images: Path,
        real_nodes: int,
        archive: Path | None,
        start_timeout: float = START_TIMEOUT_SECONDS,
    ) -> None:
        self.kube_bin, self.images, self.real_nodes, self.archive = (
            kube_bin,
            images,
            real_nodes,
            archive,
        )
        self.start_timeout = start_timeout
        """``--start-timeout``: how long the simulator, the control plane (each of its steps:
        the simulator's ``--control-plane-timeout``) and the real nodes may each take."""
        self.state_dir = Path(tempfile.mkdtemp(prefix="together-drill-"))
        self._proc: subprocess.Popen[str] | None = None
        self.admin: httpx.Client | None = None
        self.client: TogetherClient | None = None
        self._kube: Kube | None = None
        self._known: set[str] = set()
        self.kubeconfig = ""
        """The cluster's kubeconfig (once started): a test drills it as an existing cluster."""
        self.cluster_id = ""
        self.volume_dir = Path()

    @property
    def simulator_pid(self) -> int | None:
        """The world's simulator process (None before :meth:`start` and after :meth:`close`)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def log_path(self) -> Path:
        return self.state_dir / "simulator.log"

    def start(self, progress: Callable[[str], None]) -> World:
        command = [
            sys.executable, "-m", "together_sim", "--host", "127.0.0.1", "--port", "0",
            "--admin", "--state-dir", str(self.state_dir), "--time-scale", str(TIME_SCALE),
            "--provisioning-seconds", "60", "--kubernetes", "--kube-bin", str(self.kube_bin),
            # one slot for the standard node, the rest for the preemptible ones
            "--real-nodes", str(self.real_nodes + 1), "--images", str(self.images),
            "--control-plane-timeout", str(self.start_timeout),
        ]  # fmt: skip
        if self.archive is not None:
            command += ["--image-archive", str(self.archive)]
        env = {**os.environ, "TOGETHER_SIM_API_KEY": API_KEY}
        with self.log_path.open("a") as log:
            self._proc = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=env,
                preexec_fn=_die_with_parent(os.getpid()),  # before the watch's thread starts
            )
        root = self._banner().rstrip("/").removesuffix("/v1")
        self.admin = httpx.Client(base_url=root, timeout=30.0)
        self.client = TogetherClient(api_key=API_KEY, base_url=f"{root}/v1")
        progress(f"simulator up ({root}); creating a cluster with {self.real_nodes} real node(s)")
        request = ClusterCreateRequest(
            **CLUSTER,
            num_preemptible_gpus=8 * self.real_nodes,
            shared_volume=VolumeCreateRequest(
                volume_name=VOLUME_NAME, size_tib=1, region=CLUSTER["region"]
            ),
        )
        self.cluster_id = self.client.create_cluster(request).cluster_id
        wait_for(self._control_plane_running, "the cluster's control plane", self.start_timeout)
        cluster = self.client.get_cluster(self.cluster_id)
        self.kubeconfig = base64.b64decode(cluster.kube_config or "").decode()
        self._kube = Kube(self.kubeconfig)
        wait_for(
            lambda: len(self.ready_real_nodes()) >= self.real_nodes,
            f"{self.real_nodes} real preemptible node(s) Ready",
            self.start_timeout,
        )
        volumes = self.state_dir / "kube" / "volumes"
        self.volume_dir = wait_for(
            lambda: next(iter(volumes.iterdir()), None) if volumes.is_dir() else None,
            "the shared volume's directory",
            60,
        )
        return self

    def _banner(self) -> str:
        assert self._proc is not None
        url = read_banner(self._proc, self.start_timeout, 0.2)
        if url is None:
            raise DrillWorldError("the simulator did not start")
        return url

    def _control_plane_running(self) -> bool:
        assert self.admin is not None
        status = self.admin.get("/_sim/kubernetes").json()["clusters"].get(self.cluster_id, {})
        if status.get("state") == "failed":
            raise DrillWorldError(f"the cluster's control plane failed: {status.get('error')}")
        return bool(status.get("state") == "running")

    @property
    def kube(self) -> Kube:
        assert self._kube is not None, "the world has not started"
        return self._kube

    @property
    def reader(self) -> VolumeReader:
        return LocalReader(self.volume_dir)

    def ready_real_nodes(self) -> list[str]:
        """The real preemptible nodes that are Ready and schedulable."""
        found = []
        for node in self.kube.items("/api/v1/nodes"):
            labels = node["metadata"].get("labels", {})
            ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
            if (
                labels.get(REAL) == "false"
                and labels.get(COMPUTE_CLASS) == "preemptible"
                and not node["spec"].get("unschedulable")
                and ready
                and ready[0]["status"] == "True"
            ):
                found.append(node["metadata"]["name"])
        return sorted(found)

    def eligible(self) -> set[str] | None:
        return None  # the Job's pods run on the preemptible nodes only

    def prepare(self, job: DrillJob, say: Callable[[str], None]) -> None:
        self.namespace(job.namespace)
        for claim in job.claims:
            self.claim(claim, job.namespace)
        create_missing(self.kube, job, say, [])  # the world goes, with all it holds
        self._known = set(self.ready_real_nodes())

    def reclaim(
        self, node: str, pods: list[str], namespace: str, say: Callable[[str], None]
    ) -> None:
        """Together's reclaim, as the simulator does it: notice, cordon, SIGTERM, removal. The
        simulator evicts every pod of the node itself, so ``pods`` and ``namespace`` (what a
        cluster the drill drains by hand needs: :mod:`together_drill.remote`) go unused, and it
        has nothing to ``say`` beyond what the run says of a reclaim."""
        assert self.admin is not None
        response = self.admin.post(
            f"/_sim/clusters/{self.cluster_id}/reclaim", json={"node_ids": [node]}
        )
        response.raise_for_status()

    def refill(
        self, node: str, since: float, deadline: float, say: Callable[[str], None]
    ) -> float | None:
        """Until Together's refill brought a new real node Ready (at most REFILL_WAIT_SECONDS)."""

        def new() -> set[str]:
            return set(self.ready_real_nodes()) - self._known

        try:
            fresh = wait_for(
                new, "the refill", min(REFILL_WAIT_SECONDS, deadline - time.monotonic())
            )
        except CouldNotDrill:
            say(f"  no refill within {REFILL_WAIT_SECONDS:.0f} s (Together may lack capacity)")
            return None
        self._known |= fresh
        took = round(time.monotonic() - since, 1)
        say(f"  refill: node {sorted(fresh)[0]} Ready after {took} s")
        return took

    def namespace(self, namespace: str) -> None:
        if namespace != "default":
            namespaces = {n["metadata"]["name"] for n in self.kube.items("/api/v1/namespaces")}
            if namespace not in namespaces:
                self.kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})

    def claim(self, name: str, namespace: str) -> None:
        """A claim of the drill's shared volume (its static PersistentVolume, by name)."""
        self.namespace(namespace)
        self.kube.claim_volume(name, VOLUME_NAME, namespace)

    def close(self, job: DrillJob | None = None, say: Callable[[str], None] | None = None) -> None:
        """Stop everything (the simulator stops its control planes and removes its real nodes
        and what they did to the host) and remove the state directory. ``job`` goes with the
        simulator's cluster, so nothing is deleted of it alone."""
        if say is not None:
            say("cleaning up: stopping the simulator, its control plane and real nodes")
        for closeable in (self._kube, self.client, self.admin):
            if closeable is not None:
                closeable.close()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        shutil.rmtree(self.state_dir, ignore_errors=True)
