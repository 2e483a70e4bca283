"""The image seed (together_sim/host/image_seed.py): a node's containerd root is hard links
to the seed's files but for containerd's databases, which the node's containerd writes; a seed that
cannot be made fails every node that waits for it, with its reason; the hub keeps the seed when
it removes gone clusters' directories.

The seed's import with the real containerd runs in every real-node test (tests/integration)."""

from __future__ import annotations

import os
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from together_sim.host import cgroups, shared
from together_sim.host.image_seed import SEED_DIR, ImageSeed, copy_root
from together_sim.host.images import NodeImages
from together_sim.host.journal import Journal
from together_sim.kube.hub import KubeHub


def _seed_tree(seed: Path) -> None:
    (seed / "io.containerd.content.v1.content" / "blobs" / "sha256").mkdir(parents=True)
    (seed / "io.containerd.content.v1.content" / "blobs" / "sha256" / "abc").write_text("blob")
    layer = seed / "io.containerd.snapshotter.v1.overlayfs" / "snapshots" / "1" / "fs" / "tmp"
    layer.mkdir(parents=True)
    layer.chmod(0o1777)
    (layer.parent / "etc-passwd").write_text("root:x:0:0")
    (layer.parent / "rpm.db").write_text("a layer's own file")
    (layer.parent / "lib").symlink_to("usr/lib")
    (seed / "io.containerd.snapshotter.v1.overlayfs" / "metadata.db").write_text("snapshots")
    (seed / "io.containerd.metadata.v1.bolt").mkdir()
    (seed / "io.containerd.metadata.v1.bolt" / "meta.db").write_text("images")


def test_a_nodes_root_links_the_seeds_files_and_owns_its_databases(tmp_path: Path) -> None:
    seed, node = tmp_path / "seed", tmp_path / "node" / "containerd"
    _seed_tree(seed)
    node.parent.mkdir()
    copy_root(seed, node)
    blob = Path("io.containerd.content.v1.content/blobs/sha256/abc")
    fs = Path("io.containerd.snapshotter.v1.overlayfs/snapshots/1/fs")
    for linked in (blob, fs / "etc-passwd", fs / "rpm.db"):  # a layer's *.db too
        assert (node / linked).stat().st_ino == (seed / linked).stat().st_ino
    for database in ("io.containerd.snapshotter.v1.overlayfs/metadata.db",
                     "io.containerd.metadata.v1.bolt/meta.db"):  # fmt: skip
        assert (node / database).stat().st_ino != (seed / database).stat().st_ino
        (node / database).write_text("written by the node's containerd")
        assert (seed / database).read_text() in ("snapshots", "images")
    assert stat.S_IMODE((node / fs / "tmp").stat().st_mode) == 0o1777  # a layer's dir as it was
    assert os.readlink(node / fs / "lib") == "usr/lib"


def test_a_node_made_again_gets_a_fresh_copy(tmp_path: Path) -> None:
    seed, node = tmp_path / "seed", tmp_path / "containerd"
    _seed_tree(seed)
    node.mkdir()
    (node / "io.containerd.metadata.v1.bolt").mkdir()
    (node / "io.containerd.metadata.v1.bolt" / "meta.db").write_text("a stopped run's")
    (node / "stale").write_text("x")
    copy_root(seed, node)
    assert not (node / "stale").exists()
    assert (node / "io.containerd.metadata.v1.bolt" / "meta.db").read_text() == "images"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``/run/together-sim`` and a cgroup v1 root (one hierarchy) under ``tmp_path``, and a
    ``containerd`` on the PATH that fails at once, as one does on a machine whose containerd is
    broken."""
    cgroup_root = tmp_path / "cgroup"
    (cgroup_root / "pids").mkdir(parents=True)
    (cgroup_root / "pids" / "cgroup.procs").write_text("")
    monkeypatch.setattr(shared, "RUN_DIR", tmp_path / "run")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", cgroup_root)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "containerd"
    fake.write_text("#!/bin/sh\necho 'containerd: broken on purpose' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return tmp_path


def test_a_seed_that_cannot_be_made_fails_every_node_with_its_reason(host: Path) -> None:
    journal = Journal.create(host / "run" / "journals" / "pool-1.jsonl")
    images = NodeImages(archives=(), sandbox="localhost/pause:test")
    seed = ImageSeed(host / "kube", images, journal, "seed9").start()
    for node in ("a", "b"):
        with pytest.raises(RuntimeError, match="containerd exited with 3"):
            seed.copy_to(host / node, threading.Event())
        assert not (host / node).exists()
    assert "containerd.log" in seed.error
    assert "broken on purpose" in (seed.root / "logs" / "containerd.log").read_text()
    kinds = [c.kind for c in journal.changes()]
    assert kinds[:4] == ["directory", "directory", "mounts", "cgroup"]  # each before it is made
    assert "process" in kinds
    journal.undo()
    assert not seed.root.exists() and not seed.run_dir.exists()


def test_a_wait_for_the_seed_ends_when_the_node_is_cancelled(host: Path) -> None:
    journal = Journal.create(host / "run" / "journals" / "pool-1.jsonl")
    images = NodeImages(archives=(), sandbox="localhost/pause:test")
    seed = ImageSeed(host / "kube", images, journal, "seed9")  # never started: never ready
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(RuntimeError, match="cancelled"):
        seed.copy_to(host / "node", cancelled)


def test_the_hub_keeps_the_seed_and_the_volumes_when_it_removes_gone_clusters(
    tmp_path: Path,
) -> None:
    for name in (SEED_DIR, "volumes", "c-gone", "c-kept"):
        (tmp_path / name).mkdir()
    world: Any = SimpleNamespace(
        clusters={
            "c-kept": SimpleNamespace(
                cluster_id="c-kept", spec=SimpleNamespace(cluster_name="kept")
            )
        }
    )

    @contextmanager
    def transaction() -> Any:
        yield world

    assert KubeHub(transaction, tmp_path, tmp_path)._remove_orphans() == {"c-kept": "kept"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([SEED_DIR, "volumes", "c-kept"])
