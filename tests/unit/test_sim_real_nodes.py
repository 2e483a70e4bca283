"""Real nodes' pure decisions and files (``--real-nodes``), with no process started: what the pod
clock does on a real node, when a reclaimed real node may go in real seconds, how a node is
configured, and the errors a bad flag or image archive gets.

tests/integration/test_real_nodes.py runs the same nodes for real.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from together_sim.__main__ import parse_args
from together_sim.host.image_seed import ImageSeed
from together_sim.host.images import NodeImages, archive_names, find_images
from together_sim.host.journal import Journal, Owner
from together_sim.host.network import MAX_SLOTS, Network
from together_sim.kube.mirror import volume_object
from together_sim.nodes import SimNode
from together_sim.nodes import pool as nodepool
from together_sim.nodes.kwok import KwokNode
from together_sim.nodes.pool import real_nodes_unavailable
from together_sim.nodes.real import (
    KILL_MARGIN_SECONDS,
    JoinedPlane,
    NodeLayout,
    PoolShare,
    RealNode,
    RealNodeSpec,
    _containerd_toml,
    _kubelet_yaml,
    node_labels,
    removable,
)
from together_sim.plane.client import KubeApi
from together_sim.plane.pki import ClusterPki
from together_sim.plane.pods import RUN_SECONDS, Act, PodClock, next_step
from together_sim.plane.views import VolumeView

NODE = "gpu-preemptible-dp-aaaaa-bbbbb"


def pod(*, node: str = NODE, grace: int | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": node, "restartPolicy": "Never", "containers": []}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    meta = {"name": "p", "namespace": "default", "ownerReferences": [{"kind": "Job"}]}
    return {
        "metadata": {**meta, **extra.pop("meta", {})},
        "spec": spec,
        "status": {"phase": extra.pop("phase", "Running")},
    }


def test_on_a_real_node_the_pod_clock_only_evicts_when_the_node_drains() -> None:
    running = pod(meta={"annotations": {RUN_SECONDS: "1"}})
    # Its run time is long over on the clock: the process decides when it ends, not the clock.
    assert next_step(10_000.0, running, {}, real={NODE}).act is Act.WAIT
    # On a KWOK node the same pod would be started and then succeed.
    assert next_step(10_000.0, running, {}).act is Act.START
    step = next_step(10_000.0, pod(grace=45), {NODE: 9_000.0}, real={NODE})
    assert (step.act, step.grace) == (Act.EVICT, 45)
    capped = next_step(10_000.0, pod(grace=3600), {NODE: 9_000.0}, real={NODE})
    assert capped.grace == 300  # Together's drain window caps the grace period
    assert next_step(10_000.0, pod(), {NODE: 9_000.0}, real={NODE}).grace == 30
    deleting = pod(meta={"deletionTimestamp": "2026-01-01T00:00:00Z"})
    assert next_step(10_000.0, deleting, {NODE: 9_000.0}, real={NODE}).act is Act.WAIT
    failed = pod(phase="Failed")
    assert next_step(10_000.0, failed, {NODE: 9_000.0}, real={NODE}).act is Act.WAIT


def test_a_removed_real_node_waits_for_its_pods_grace_in_real_seconds() -> None:
    drained = 100.0
    pods = [pod(grace=20), pod(grace=4), pod(node="other", grace=300)]
    # Nothing runs on it, or it was never drained (a standard scale-down): at once.
    assert removable(NODE, [], drained, drained)
    assert removable(NODE, pods, None, drained)
    # Its longest grace period (20 s, not the other node's pod) plus the margin.
    assert not removable(NODE, pods, drained, drained + 20)
    assert removable(NODE, pods, drained, drained + 20 + KILL_MARGIN_SECONDS)
    # Once every pod on it has ended it goes, whatever is left of the grace period.
    ended = [pod(grace=20, phase="Failed"), pod(grace=4, phase="Succeeded")]
    assert removable(NODE, ended, drained, drained + 1)


def test_the_shared_volume_is_a_host_path_when_real_nodes_mount_it(tmp_path: Path) -> None:
    volume = VolumeView("vol-1", "ckpt", 2)
    real = volume_object(volume, tmp_path / "vol-1")
    assert real["spec"]["hostPath"] == {"path": str(tmp_path / "vol-1"), "type": "Directory"}
    assert real["spec"]["accessModes"] == ["ReadWriteMany"]
    assert "csi" in volume_object(volume)["spec"]


def _spec(tmp_path: Path, preemptible: bool = True) -> RealNodeSpec:
    images = NodeImages(archives=(), sandbox="localhost/pause:test")
    seed = ImageSeed(tmp_path, images, Journal(tmp_path / "journal", Owner.me()), "seed7")
    return RealNodeSpec(
        name=NODE,
        slot=3,
        preemptible=preemptible,
        gpu_type="H100_SXM",
        plane=JoinedPlane(tmp_path, 2345, ClusterPki(tmp_path / "pki")),
        pool=PoolShare(4, tmp_path, images, seed, Network(7)),
    )


def test_a_real_node_registers_with_the_simulators_labels(tmp_path: Path) -> None:
    labels = node_labels(_spec(tmp_path), ("together.ai/compute-class", "preemptible"))
    assert set(labels.split(",")) == {
        "together-sim/kwok=false",
        "node.kubernetes.io/instance-type=H100_SXM",
        "together.ai/compute-class=preemptible",
    }
    standard = node_labels(_spec(tmp_path, preemptible=False), None)
    assert "compute-class" not in standard


def test_a_real_nodes_runtime_and_kubelet_are_its_own(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    record = NodeLayout.of(spec)
    assert record.cgroup == "together-sim/tsim7-n3"
    assert record.run_dir == "/run/together-sim/tsim7-n3"
    containerd = _containerd_toml(spec, record)
    for line in (
        'address = "/run/together-sim/tsim7-n3/containerd.sock"',
        "restrict_oom_score_adj = true",
        "netns_mounts_under_state_dir = true",
        'sandbox_image = "localhost/pause:test"',
        'BinaryName = "/usr/sbin/runc"',
        "SystemdCgroup = false",
        'snapshotter = "overlayfs"',
    ):
        assert line in containerd
    kubelet = _kubelet_yaml(spec, record)
    for line in (
        "failCgroupV1: false",
        "cgroupDriver: cgroupfs",
        "cgroupRoot: /together-sim/tsim7-n3",
        "address: 10.199.7.13",
    ):
        assert line in kubelet


def test_each_slot_has_its_own_addresses_and_short_link_names() -> None:
    net = Network(255)
    assert len(net.host_veth(MAX_SLOTS - 1)) <= 15  # the kernel's limit on a link's name
    assert len({net.pod_cidr(s) for s in range(MAX_SLOTS)}) == MAX_SLOTS
    assert len({net.node_ip(s) for s in range(MAX_SLOTS)}) == MAX_SLOTS
    assert net.gateway not in {net.node_ip(s) for s in range(MAX_SLOTS)}


def _archive(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_an_image_archive_names_its_images_or_is_refused_with_the_fix(tmp_path: Path) -> None:
    manifest = json.dumps([{"RepoTags": ["localhost/mine:1"], "Layers": []}]).encode()
    good = _archive(tmp_path / "good.tar", {"manifest.json": manifest})
    assert archive_names(good) == ["localhost/mine:1"]
    (tmp_path / "text.tar").write_text("not a tar")
    no_manifest = _archive(tmp_path / "empty.tar", {"README": b"x"})
    untagged = _archive(tmp_path / "untagged.tar", {"manifest.json": b"[{}]"})
    for bad, why in (
        (tmp_path / "text.tar", "not an image archive"),
        (no_manifest, "neither manifest.json nor index.json"),
        (untagged, "names no image"),
        (tmp_path / "missing.tar", "not an image archive"),
    ):
        with pytest.raises(SystemExit) as refused:
            archive_names(bad)
        message = str(refused.value)
        assert str(bad) in message and why in message and "docker save" in message


def test_real_nodes_need_the_pause_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOGETHER_IMAGES_DIR", raising=False)
    with pytest.raises(SystemExit, match=r"--images or \$TOGETHER_IMAGES_DIR"):
        find_images(None)
    with pytest.raises(SystemExit, match=r"no pause.tar in"):
        find_images(tmp_path)
    manifest = json.dumps([{"RepoTags": ["localhost/pause:3"]}]).encode()
    _archive(tmp_path / "pause.tar", {"manifest.json": manifest})
    images = NodeImages.load(find_images(tmp_path))
    assert images.sandbox == "localhost/pause:3"
    assert images.archives == (tmp_path / "pause.tar",)


def test_real_nodes_need_kubernetes_and_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["--kubernetes", "--real-nodes", "2"]).real_nodes == 2
    assert parse_args([]).real_nodes == 0
    assert parse_args(["--kubernetes", "--real-nodes", "3", "--real-nodes-once"]).real_nodes_once
    assert not parse_args([]).real_nodes_once
    for argv, said in (
        (["--real-nodes", "2"], "--real-nodes needs --kubernetes"),
        (["--kubernetes", "--real-nodes-once"], "--real-nodes-once needs --real-nodes N"),
        (["--kubernetes", "--real-nodes", "-1"], "give a count of nodes"),
    ):
        with pytest.raises(SystemExit):
            parse_args(argv)
        assert said in capsys.readouterr().err


def test_a_machine_without_what_real_nodes_need_is_told_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("together_sim.nodes.pool.os.geteuid", lambda: 1000)
    assert "need root" in real_nodes_unavailable(tmp_path)
    monkeypatch.setattr("together_sim.nodes.pool.os.geteuid", lambda: 0)
    monkeypatch.setattr("together_sim.nodes.pool.shutil.which", lambda name: None)
    missing = real_nodes_unavailable(tmp_path)
    assert "containerd" in missing and "apt-get install" in missing
    monkeypatch.setattr("together_sim.nodes.pool.shutil.which", lambda name: f"/bin/{name}")
    monkeypatch.setattr(nodepool, "REQUIRED_CNI", ())
    assert "no kubelet in" in real_nodes_unavailable(tmp_path)
    (tmp_path / "kubelet").write_text("")
    assert real_nodes_unavailable(tmp_path) == ""


def test_a_kwok_node_and_a_real_node_are_both_a_sim_node(tmp_path: Path) -> None:
    """The one interface the mirror drives (mypy checks the signatures at these assignments)."""
    api = KubeApi(httpx.Client())
    kwok: SimNode = KwokNode(api, {"metadata": {"name": "n"}}, PodClock(api))
    real: SimNode = RealNode(
        _spec(tmp_path), "", lambda *_: None, Journal(tmp_path / "j.jsonl", Owner(1, None))
    )
    assert isinstance(kwok, SimNode) and isinstance(real, SimNode)
    assert kwok.may_go([], None, 0.0) and real.may_go([], None, 0.0)
    assert not real.ready(None) and real.ready({"metadata": {"name": NODE}}) and real.ready(None)


def _started_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, reuses: bool
) -> nodepool.RealNodePool:
    """A pool of two slots as `start` leaves it, whose nodes neither start nor touch the host:
    what is left to run is the slots' bookkeeping."""
    for name in ("hold_sysctls", "release_sysctls", "read_sysctls"):
        monkeypatch.setattr(f"together_sim.host.sysctls.{name}", lambda *_: {})
    monkeypatch.setattr(RealNode, "make", lambda node: node)
    monkeypatch.setattr(RealNode, "delete", lambda node: [])
    images = NodeImages(archives=(), sandbox="localhost/pause:test")
    pool = nodepool.RealNodePool(tmp_path, 2, tmp_path, images, reuses=reuses)
    pool.journal = Journal.create(tmp_path / "pool.jsonl", Owner.me())
    pool.network = Network(7)
    pool.seed = ImageSeed(tmp_path, images, pool.journal, "seed7")
    return pool


def _acquire(pool: nodepool.RealNodePool, name: str) -> RealNode | None:
    plane = JoinedPlane(Path("/nowhere"), 6443, ClusterPki(Path("/nowhere/pki")))
    return pool.acquire(
        name=name,
        preemptible=True,
        gpu_type="H100_SXM",
        plane=plane,
        labels=lambda spec: "",
        on_crash=lambda *_: None,
    )


@pytest.mark.parametrize("reuses", [True, False])
def test_a_slot_a_node_freed_is_given_again_unless_slots_are_given_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reuses: bool
) -> None:
    """--real-nodes 2: the first two nodes take slots 0 and 1, a third finds none. Once node 0
    has gone, a fourth takes its slot again; with --real-nodes-once (reuses=False) it does not,
    and no later node is real, even when every node has gone."""
    pool = _started_pool(tmp_path, monkeypatch, reuses=reuses)
    first, second = _acquire(pool, "n0"), _acquire(pool, "n1")
    assert first is not None and second is not None
    assert (first.spec.slot, second.spec.slot) == (0, 1)
    assert _acquire(pool, "n2") is None
    assert pool.release(first) == []
    again = _acquire(pool, "n3")
    assert (again.spec.slot if again is not None else None) == (0 if reuses else None)
    pool.release(second)
    if again is not None:
        pool.release(again)
    last = _acquire(pool, "n4")
    assert (last.spec.slot if last is not None else None) == (0 if reuses else None)
