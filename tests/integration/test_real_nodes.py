"""``--real-nodes``: pods run real processes on a real kubelet and containerd per node, a reclaim
sends them a real SIGTERM with their own grace period, a checkpoint on the shared volume survives
two reclaims, and nothing of any node is left on the host afterwards."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import signal
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from testkit.kube import KubeClient
from testkit.realnodes import (
    alone_with_real_nodes,
    host_leftovers,
    sysctls_before,
)
from testkit.sim import SimulatorProcess, real_node_simulator
from tests.clusters import together_client
from tests.specs import CLUSTER_SPEC
from together_api.wire import ClusterCreateRequest, VolumeCreateRequest
from together_drill.kube import PodWatch, terminated
from together_sim.host.journal import Journal
from together_sim.host.shared import JOURNALS
from together_sim.nodes.pool import RECORD_FILE

COMPUTE_CLASS = "together.ai/compute-class"
PYTHON = "localhost/together-python:3.11"
ON_REAL_PREEMPTIBLE = {COMPUTE_CLASS: "preemptible", "together-sim/kwok": "false"}
Obj = dict[str, Any]


class Cluster:
    """One simulated cluster with real nodes, its API server, and a watch of its pods that
    keeps every version of every pod with the real (monotonic) time it was seen."""

    def __init__(self, sim: SimulatorProcess, preemptible_gpus: int) -> None:
        self.sim = sim
        with together_client(sim) as client:
            request = ClusterCreateRequest(
                **{**CLUSTER_SPEC, "cluster_name": "real", "billing_type": "ON_DEMAND"},
                num_preemptible_gpus=preemptible_gpus,
                shared_volume=VolumeCreateRequest(
                    volume_name="ckpt", size_tib=1, region=CLUSTER_SPEC["region"]
                ),
            )
            self.cluster_id = client.create_cluster(request).cluster_id
            sim.control_plane(self.cluster_id)
            self.kube = KubeClient.from_cluster(client.get_cluster(self.cluster_id))
        self.pods = PodWatch(self.kube, "default")  # the drill's watch: every version, timed

    def close(self) -> None:
        # Closing the client under a watch that still reads would free its socket's descriptor
        # for reuse while the TLS layer still writes to it.
        assert self.pods.stop(), "the pod watch did not end"
        self.kube.close()

    def volume_dir(self) -> Path:
        volumes = self.sim.state_dir / "kube" / "volumes"
        found = [d for d in volumes.iterdir()] if volumes.is_dir() else []
        assert len(found) == 1, f"one volume directory expected under {volumes}: {found}"
        return found[0]

    def real_nodes(self) -> dict[str, dict[str, Any]]:
        status = self.sim.kubernetes_status()[self.cluster_id]
        nodes: dict[str, dict[str, Any]] = status.get("real_nodes", {})
        return nodes

    def ready_real_nodes(self, preemptible: bool = True) -> list[str]:
        found = []
        for node in self.kube.nodes():
            labels = node["metadata"]["labels"]
            ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
            gpus = node["status"].get("allocatable", {}).get("nvidia.com/gpu")
            wanted = labels.get(COMPUTE_CLASS) == "preemptible" if preemptible else True
            if (
                labels.get("together-sim/kwok") == "false"
                and wanted
                and not node["spec"].get("unschedulable")
                and ready
                and ready[0]["status"] == "True"
                and gpus == "8"
            ):
                found.append(node["metadata"]["name"])
        return sorted(found)

    def history(self, name: str) -> list[tuple[float, Obj]]:
        return self.pods.history(name)

    def claim_volume(self) -> None:
        self.kube.claim_volume("ckpt", "ckpt")


def refill_node(cluster: Cluster) -> str:
    """The cluster's real preemptible Node, once there is one."""
    found: str = cluster.kube.wait_for(cluster.ready_real_nodes, "a real node", 120)[0]
    return found


def _conditions(pod: Obj) -> set[str]:
    return {c["type"] for c in pod.get("status", {}).get("conditions", []) if c["status"] == "True"}


def _pod(name: str, script: str, grace: int, node: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": grace,
            "automountServiceAccountToken": False,
            "containers": [{
                "name": "main",
                "image": PYTHON,
                "command": ["python3", "-u", "-c", script],
                "env": [{"name": "POD", "value": name}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "ckpt"}}],
        },
    }  # fmt: skip


GRACEFUL = """
import os, signal, sys, time
def note(what):
    with open(f"/data/{os.environ['POD']}.log", "a") as f:
        f.write(f"{what} {time.time()}\\n")
def on_term(*_):
    note("sigterm")
    time.sleep(7)  # longer than the drain window in real seconds (5 at 60x), within its grace
    sys.exit(143)
signal.signal(signal.SIGTERM, on_term)
note("started")
while True:
    time.sleep(0.1)
"""
IGNORES = """
import os, signal, time
signal.signal(signal.SIGTERM, lambda *_: open(f"/data/{os.environ['POD']}.log", "a").write(
    f"sigterm-ignored {time.time()}\\n"))
open(f"/data/{os.environ['POD']}.log", "a").write(f"started {time.time()}\\n")
while True:
    time.sleep(0.1)
"""


USER_IMAGE = "localhost/user-own:1"


def _user_archive(path: Path) -> Path:
    """An image of the user's own, as `docker save` writes it: one layer with busybox (the
    host's static one) as /bin/sh, named :data:`USER_IMAGE`."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        tar.add("/bin/busybox", arcname="bin/busybox")
        link = tarfile.TarInfo("bin/sh")
        link.type, link.linkname = tarfile.SYMTYPE, "busybox"
        tar.addfile(link)
    layer_bytes = layer.getvalue()
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": ["/bin/sh"], "Env": ["PATH=/bin"]},
        "rootfs": {"type": "layers",
                   "diff_ids": [f"sha256:{hashlib.sha256(layer_bytes).hexdigest()}"]},
    }).encode()  # fmt: skip
    manifest = json.dumps(
        [{"Config": "config.json", "RepoTags": [USER_IMAGE], "Layers": ["layer.tar"]}]
    ).encode()
    with tarfile.open(path, "w") as archive:
        for name, data in (("layer.tar", layer_bytes), ("config.json", config),
                           ("manifest.json", manifest)):  # fmt: skip
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _real_sim(tmp_path: Path, kube_bin: Path, real_nodes: int, *extra: str) -> SimulatorProcess:
    return real_node_simulator(tmp_path / "state", kube_bin, real_nodes, *extra)


@contextmanager
def _real_simulator(
    tmp_path: Path, kube_bin: Path, real_nodes: int, *extra: str
) -> Iterator[SimulatorProcess]:
    """A simulator at the demo's 60x with ``real_nodes`` real nodes; afterwards the host must
    hold nothing of them (every item, and the kernel settings as they were)."""
    sim = _real_sim(tmp_path, kube_bin, real_nodes, *extra)
    sysctls = sysctls_before()
    with sim:
        record = json.loads((sim.state_dir / "kube" / RECORD_FILE).read_text())
        yield sim
    assert sim.returncode == 0, (tmp_path / "state" / "simulator.log").read_text()[-3000:]
    assert host_leftovers(sim.state_dir, record["network"], sysctls) == []


def test_a_reclaim_sends_sigterm_143_within_grace_and_kills_at_grace_end_with_137(
    tmp_path: Path, kube_bin: Path
) -> None:
    archive = _user_archive(tmp_path / "own.tar")
    with _real_simulator(tmp_path, kube_bin, 2, "--image-archive", str(archive)) as sim:
        cluster = Cluster(sim, preemptible_gpus=8)
        try:
            kube = cluster.kube
            node = kube.wait_for(cluster.ready_real_nodes, "a real preemptible Node", 120)[0]
            k8s = next(n for n in kube.nodes() if n["metadata"]["name"] == node)
            assert k8s["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
            cluster.claim_volume()
            kube.request("POST", "/api/v1/namespaces/default/pods",
                         _pod("graceful", GRACEFUL, grace=20, node=node))  # fmt: skip
            kube.request("POST", "/api/v1/namespaces/default/pods",
                         _pod("ignores", IGNORES, grace=4, node=node))  # fmt: skip
            logs = cluster.volume_dir()
            kube.wait_for(
                lambda: all((logs / f"{p}.log").exists() for p in ("graceful", "ignores")),
                "both processes to start and write to the shared volume",
            )
            reclaimed_at, wall = time.monotonic(), time.time()
            assert sim.reclaim(cluster.cluster_id, node_ids=[node]) == [node]

            # The drain window is 5 real seconds here (300 simulated at 60x), but the Node goes
            # only once both pods ended: the graceful one after its own 7 s, the one that
            # ignores SIGTERM at its grace end (4 s).
            kube.wait_for(
                lambda: node not in {n["metadata"]["name"] for n in kube.nodes()},
                "the reclaimed Node to go",
                60,
            )
            gone_after = time.monotonic() - reclaimed_at

            def ended(name: str) -> tuple[float, Obj]:
                return next((t, p) for t, p in cluster.history(name) if terminated(p))

            graceful_at, graceful = ended("graceful")
            ignores_at, ignores = ended("ignores")
            stopped = terminated(graceful)
            assert stopped is not None and stopped["exitCode"] == 143
            assert "DisruptionTarget" in _conditions(graceful)
            assert graceful["status"]["phase"] == "Failed"
            assert 7 <= graceful_at - reclaimed_at < 20  # its own time, within its grace
            killed = terminated(ignores)
            assert killed is not None and killed["exitCode"] == 137
            assert "DisruptionTarget" in _conditions(ignores)
            assert ignores_at - reclaimed_at >= 4  # not before its grace period ended

            # Both processes got the signal itself (each wrote it on the shared volume).
            lines = (logs / "graceful.log").read_text().split()
            assert "sigterm" in lines
            sigterm_at = float(lines[lines.index("sigterm") + 1])
            assert 0 <= sigterm_at - wall < 5
            assert "sigterm-ignored" in (logs / "ignores.log").read_text()

            # The removal undid everything of the node: no process, no files of it.
            node_dir = sim.state_dir / "kube" / cluster.cluster_id / "nodes" / node
            assert not node_dir.exists()
            assert gone_after >= 7

            # The user's own image (--image-archive) is on every real node: it runs there.
            own = _pod("own", "", grace=1, node=refill_node(cluster))
            own["spec"]["containers"][0].update(
                image=USER_IMAGE, command=["/bin/sh", "-c", "echo own; exit 3"], volumeMounts=[]
            )
            own["spec"]["volumes"] = []
            kube.request("POST", "/api/v1/namespaces/default/pods", own)
            exited = kube.wait_for(
                lambda: terminated(kube.get("/api/v1/namespaces/default/pods/own")),
                "the user's image to run",
            )
            assert exited["exitCode"] == 3

            # A crash is noticed: the refill is a real node again; its containerd dies, the
            # kubelet reports the node NotReady, the simulator records an Event.
            refill = refill_node(cluster)
            assert refill != node
            pids = cluster.real_nodes()[refill]["pids"]
            os.kill(pids["containerd"], signal.SIGKILL)
            crash_event(kube, refill, "containerd exited with -9")
            kube.wait_for(
                lambda: (
                    refill not in cluster.ready_real_nodes()
                    and any(
                        c["type"] == "Ready" and c["status"] != "True"
                        for n in kube.nodes()
                        if n["metadata"]["name"] == refill
                        for c in n["status"]["conditions"]
                    )
                ),
                "the crashed node to be NotReady",
                90,
            )
            # The standard node's kubelet dies: the same Event names it (the control plane
            # marks the node NotReady only after its node-monitor grace period, 50 s), and the
            # simulator's stop still removes all of that node (the host check afterwards).
            (standard,) = [n for n in cluster.real_nodes() if n.startswith("gpu-dp-")]
            os.kill(cluster.real_nodes()[standard]["pids"]["kubelet"], signal.SIGKILL)
            crash_event(kube, standard, "kubelet exited with -9")
        finally:
            cluster.close()


CHECKPOINTING = """
import json, os, signal, sys, time
CKPT, LOG, TOTAL, INTERVAL = "/data/ckpt.json", "/data/train.log", 48, 4
node = os.environ["NODE_NAME"]
def log(event, step):
    with open(LOG, "a") as f:
        f.write(json.dumps({"event": event, "step": step, "node": node}) + "\\n")
def save(step):
    with open(CKPT + ".tmp", "w") as f:
        json.dump({"step": step}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(CKPT + ".tmp", CKPT)
step = json.load(open(CKPT))["step"] if os.path.exists(CKPT) else 0
log("start", step)
def on_term(*_):
    log("sigterm", step)
    sys.exit(143)
signal.signal(signal.SIGTERM, on_term)
while step < TOTAL:
    time.sleep(0.25)
    step += 1
    if step % INTERVAL == 0:
        save(step)
        log("checkpoint", step)
log("done", step)
"""
INTERVAL = 4


def _checkpoints_on(entries: Callable[[], list[Obj]], node: str, step: int) -> Callable[[], bool]:
    """Whether the job checkpointed at ``step`` or later on ``node``."""
    return lambda: any(
        e["event"] == "checkpoint" and e["node"] == node and e["step"] >= step for e in entries()
    )


def _job() -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train"},
        "spec": {
            "backoffLimit": 0,
            "podFailurePolicy": {"rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            ]},
            "template": {"spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 30,
                "automountServiceAccountToken": False,
                "nodeSelector": ON_REAL_PREEMPTIBLE,
                "containers": [{
                    "name": "train",
                    "image": PYTHON,
                    "command": ["python3", "-u", "-c", CHECKPOINTING],
                    "env": [{"name": "NODE_NAME",
                             "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                    "resources": {"limits": {"nvidia.com/gpu": "8"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "ckpt"}}],
            }},
        },
    }  # fmt: skip


def test_a_job_checkpointing_to_the_shared_volume_survives_two_reclaims_on_real_nodes(
    tmp_path: Path, kube_bin: Path
) -> None:
    with _real_simulator(tmp_path, kube_bin, real_nodes=3) as sim:
        cluster = Cluster(sim, preemptible_gpus=16)
        try:
            kube = cluster.kube
            kube.wait_for(lambda: len(cluster.ready_real_nodes()) == 2, "2 real nodes", 120)
            cluster.claim_volume()
            kube.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job())
            log = cluster.volume_dir() / "train.log"

            def entries() -> list[Obj]:
                text = log.read_text() if log.exists() else ""
                return [json.loads(line) for line in text.splitlines() if line.strip()]

            nodes: list[str] = []
            for _ in range(2):  # reclaim the node it runs on, twice
                start = kube.wait_for(
                    lambda: next((e for e in entries() if e["event"] == "start"
                                  and e["node"] not in nodes), None),
                    "the job to start on a new node",
                    120,
                )  # fmt: skip
                nodes.append(start["node"])
                kube.wait_for(
                    _checkpoints_on(entries, nodes[-1], start["step"] + 2 * INTERVAL),
                    "two checkpoints on this node",
                    60,
                )
                sim.reclaim(cluster.cluster_id, node_ids=[nodes[-1]])
            kube.wait_for(
                lambda: kube.job("train")["status"].get("succeeded") == 1, "the job to finish", 180
            )
            done = entries()
            starts = [e for e in done if e["event"] == "start"]
            assert len(starts) == 3 and len({s["node"] for s in starts}) == 3
            assert [s["node"] for s in starts[:2]] == nodes
            for before, after in itertools.pairwise(starts):
                reached = max(e["step"] for e in done if e["node"] == before["node"])
                # Resumed from its checkpoint: at most one checkpoint interval redone.
                assert after["step"] >= reached - INTERVAL, (before, after, reached)
                assert after["step"] > before["step"]
            assert [e for e in done if e["event"] == "sigterm"] != []
            assert done[-1]["event"] == "done" and done[-1]["step"] == 48

            # A cluster's delete removes its real nodes from the host at once.
            network = json.loads((sim.state_dir / "kube" / RECORD_FILE).read_text())["network"]
            sysctls = sysctls_before()
            with together_client(sim) as client:
                client.delete_cluster(cluster.cluster_id)
            running = (f"link tsim{network}", f"process {sim.pid}:")  # the simulator's own

            def left() -> list[str]:
                found = host_leftovers(sim.state_dir, network, sysctls)
                return [x for x in found if not x.startswith(running)]

            kube.wait_for(lambda: not left(), "the deleted cluster's nodes to leave the host", 60)
            # The volume was made with the cluster (not lifecycle-independent): it went with the
            # cluster, and its directory with it.
            kube.wait_for(lambda: not log.parent.exists(), "the volume's directory to go", 60)
        finally:
            cluster.close()


def crash_event(kube: KubeClient, node: str, what: str) -> None:
    """Wait for the simulator's Event that a process of real node ``node`` exited (``what``)."""
    kube.wait_for(
        lambda: [e for e in kube.events("TogetherSimNodeProcessExited")
                 if e["involvedObject"]["name"] == node and e["message"].startswith(what)],
        f"the Event: {node}'s {what}",
        30,
    )  # fmt: skip


def _kill_with_a_running_pod(sim: SimulatorProcess) -> tuple[Cluster, Obj]:
    """In the running ``sim``: a cluster whose real standard node runs a pod, and then ``sim``
    killed with SIGKILL (its cleanup never runs); returns the cluster and the Node as it was."""
    cluster = Cluster(sim, preemptible_gpus=0)
    try:
        node = cluster.kube.wait_for(
            lambda: cluster.ready_real_nodes(preemptible=False), "the real standard node"
        )[0]
        pod = _pod("sleeper", "import time; time.sleep(3600)", grace=30, node=node)
        pod["spec"]["containers"][0]["volumeMounts"] = []
        pod["spec"]["volumes"] = []
        cluster.kube.request("POST", "/api/v1/namespaces/default/pods", pod)
        cluster.kube.wait_for(
            lambda: (
                "Ready" in _conditions(cluster.kube.get("/api/v1/namespaces/default/pods/sleeper"))
            ),
            "the pod to run",
        )
        old = next(n for n in cluster.kube.nodes() if n["metadata"]["name"] == node)
    finally:
        cluster.close()
    os.kill(sim.pid, signal.SIGKILL)
    return cluster, old


def _killed_leaves_processes_and_a_netns(left: list[str]) -> None:
    """Its kubelet and containerd died with it; the container and its shim did not."""
    assert any(item.startswith("process") for item in left), left
    assert any(item.startswith("netns") for item in left), left


@pytest.fixture
def alone() -> Iterator[None]:
    """No other test's simulator with real nodes runs: its start would sweep what the killed
    one left before this test has looked at it."""
    with alone_with_real_nodes():
        yield


@pytest.mark.usefixtures("alone")
def test_a_killed_simulators_nodes_are_removed_at_its_next_start(
    tmp_path: Path, kube_bin: Path
) -> None:
    sysctls = sysctls_before()
    sim = _real_sim(tmp_path, kube_bin, 1)
    with sim:
        network = json.loads((sim.state_dir / "kube" / RECORD_FILE).read_text())["network"]
        cluster, old = _kill_with_a_running_pod(sim)
    node = old["metadata"]["name"]
    _killed_leaves_processes_and_a_netns(host_leftovers(sim.state_dir, network, sysctls))
    with sim:  # the same state dir: its start removes what the killed run left
        assert json.loads((sim.state_dir / "kube" / RECORD_FILE).read_text())["network"] == network
        sim.control_plane(cluster.cluster_id)
        with together_client(sim) as client:
            kube = KubeClient.from_cluster(client.get_cluster(cluster.cluster_id))
        try:

            def real_again() -> bool:  # a new Node of that name (the old one's kubelet is gone)
                return any(
                    n["metadata"]["name"] == node
                    and n["metadata"]["uid"] != old["metadata"]["uid"]
                    and n["metadata"]["labels"].get("together-sim/kwok") == "false"
                    and any(c["type"] == "Ready" and c["status"] == "True"
                            for c in n["status"].get("conditions", []))
                    for n in kube.nodes()
                )  # fmt: skip

            kube.wait_for(real_again, "the node, real again")
            # The stale Node's pod went with the killed node (nothing restarts a bare pod).
            assert kube.pods() == []
        finally:
            kube.close()
    assert sim.returncode == 0
    assert host_leftovers(sim.state_dir, network, sysctls) == []


@pytest.mark.usefixtures("alone")
def test_a_simulator_killed_without_a_state_dir_is_swept_by_the_next_to_start_real_nodes(
    tmp_path: Path, kube_bin: Path
) -> None:
    """No later run finds a temporary directory; the machine-wide journal of each running pool
    (under `JOURNALS`) is what lets any simulator remove a killed one's nodes, with another state
    dir, and the temporary directory is in it."""
    sysctls = sysctls_before()
    killed = _real_sim(tmp_path / "killed", kube_bin, 1)
    killed.persist = False
    with killed:
        (path,) = JOURNALS.glob(f"pool-{killed.pid}-*.jsonl")
        directories = [c for c in Journal.load(path).changes() if c.kind == "directory"]
        gone = killed.pid
        root = Path(directories[0].args["path"])  # the killed run's temporary directory
        network = json.loads((root / RECORD_FILE).read_text())["network"]
        _kill_with_a_running_pod(killed)
    _killed_leaves_processes_and_a_netns(host_leftovers(root, network, sysctls))

    later = _real_sim(tmp_path / "later", kube_bin, 1)
    with later:  # its start sweeps; it runs no node itself yet
        own = json.loads((later.state_dir / "kube" / RECORD_FILE).read_text())["network"]
        left = host_leftovers(root, network, sysctls)
        assert [item for item in left if item != f"link tsim{own}"] == []  # its own bridge stays
        assert not root.exists()
        assert _pool_pids() >= {later.pid} and gone not in _pool_pids()
        running = later.pid
    assert later.returncode == 0
    assert host_leftovers(later.state_dir, network, sysctls) == []
    assert not _pool_pids() & {gone, running}


def _pool_pids() -> set[int]:
    """The simulators with a pool journal in `JOURNALS` (another, e.g. `make demo`'s, may run)."""
    return {int(p.name.split("-")[1]) for p in JOURNALS.glob("pool-*.jsonl")}
