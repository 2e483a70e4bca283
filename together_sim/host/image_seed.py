"""The images every real node runs, unpacked once per simulator into an *image seed*: a containerd
root that each node's own root is hard-linked from (:class:`ImageSeed` says why)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Final

from together_sim.host import cgroups, shared
from together_sim.host.images import NodeImages
from together_sim.host.journal import Journal
from together_sim.host.mounts import remove_tree
from together_sim.host.processes import wait_ready

__all__ = ["SEED_DIR", "ImageSeed", "copy_root"]

SEED_DIR: Final = "image-seed"
"""``<pool root>/image-seed``: on the nodes' filesystem, which hard links need. The hub keeps it
when it removes gone clusters' directories from the same root."""
_DATABASES: Final = "*/*.db"
"""containerd's bolt databases, each in its plugin's directory (``io.containerd.metadata.v1.bolt/
meta.db``, ``io.containerd.snapshotter.v1.overlayfs/metadata.db``): written by each node's
containerd through a memory map, so copied, never linked. Only there: an unpacked layer's own
``*.db`` file stays a link like the rest of the layer."""
_READY_TIMEOUT: Final = 30.0
_IMPORT_TIMEOUT: Final = 300.0

log = logging.getLogger(__name__)


def _seed_toml(root: Path, run_dir: Path) -> str:
    """A containerd that only imports: no CRI (nothing runs in it), the nodes' snapshotter."""
    return f"""version = 2
root = "{root}"
state = "{run_dir / "state"}"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "{run_dir / "containerd.sock"}"
[ttrpc]
  address = "{run_dir / "containerd.sock.ttrpc"}"
"""


def copy_root(seed: Path, dest: Path) -> None:
    """``dest`` becomes a copy of the containerd root ``seed`` in which every file but the
    databases is a hard link (``cp -al``: directories with their modes, owners and overlay
    xattrs, files linked), and each database a file of its own. Off the seed's filesystem
    (no hard link possible) it is a plain copy."""
    remove_tree(dest)  # a node made again (a restarted simulator): no stale database
    linked = subprocess.run(
        ["cp", "-a", "--link", str(seed), str(dest)], capture_output=True, text=True
    )
    if linked.returncode != 0:
        remove_tree(dest)
        copied = subprocess.run(["cp", "-a", str(seed), str(dest)], capture_output=True, text=True)
        if copied.returncode != 0:
            raise RuntimeError(f"cannot copy the image seed to {dest}: {copied.stderr.strip()}")
        return
    for path in dest.glob(_DATABASES):
        own = path.with_name(f".{path.name}.copy")
        shutil.copy2(path, own)
        os.replace(own, path)  # the link goes, the copy takes its name


class ImageSeed:
    """One containerd root holding every archive of ``images``, made in a thread of its own.

    Why: importing the image archives (pause, python, the autoscaler: about 110 MB) took a node 3
    to 10 s of its start, most of it containerd decompressing and unpacking layers, and two nodes
    starting together did it twice at once. The seed does it once, while the first control plane
    boots, with a containerd of its own that then stops. A node's root is then a tree of hard
    links to the seed's files (content blobs and unpacked layers are never written in place: a
    container writes to its own upper directory), except containerd's databases, which each
    node's containerd writes and so gets copies of (:func:`copy_root`). Every directory, mount
    and process of the seed is in the pool's journal before it is made, like a node's.

    :meth:`start` begins the import and returns; :meth:`copy_to` waits for it (or for its error,
    which it raises for every node that asks) and copies the seed into a node's root."""

    def __init__(
        self,
        root: Path,
        images: NodeImages,
        journal: Journal,
        name: str,
        cgroup_parent: str = cgroups.PARENT,
    ) -> None:
        self.root = root / SEED_DIR
        self.images = images
        self.journal = journal
        self.run_dir = shared.RUN_DIR / name
        """containerd's socket and state: short paths (a unix socket's is at most 107 bytes)."""
        self.cgroup = f"{cgroup_parent}/{name}"
        self.seconds: float | None = None
        """How long the import took (None until it is done)."""
        self.error = ""
        self._done = threading.Event()
        self._cancelled = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._imports: list[subprocess.Popen[bytes]] = []
        self._thread = threading.Thread(target=self._run, name=f"seed-{name}", daemon=True)

    @property
    def containerd_root(self) -> Path:
        return self.root / "root"

    def start(self) -> ImageSeed:
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop an import still running (the pool is closing): its containerd is killed here,
        what it made goes with the pool's journal."""
        self._cancelled.set()
        for proc in [self._proc, *self._imports]:
            if proc is not None and proc.poll() is None:
                proc.kill()
        # Its processes killed, the thread ends at once; the pool's undo waits for it, or a
        # step between its journal entry and its change would make that change after the undo.
        if self._thread.ident is not None:
            self._thread.join(_READY_TIMEOUT)

    def wait(self, cancelled: threading.Event, timeout: float = _IMPORT_TIMEOUT) -> None:
        """Return once the seed is ready; raise its error, or on ``cancelled`` or ``timeout``."""
        deadline = time.monotonic() + timeout
        while not self._done.wait(0.05):
            if cancelled.is_set():
                raise RuntimeError("cancelled while the image seed was being made")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the image seed was not ready within {timeout:.0f} s")
        if self.error:
            raise RuntimeError(self.error)

    def copy_to(self, dest: Path, cancelled: threading.Event) -> None:
        """Wait for the seed, then make ``dest`` a node's containerd root from it."""
        self.wait(cancelled)
        copy_root(self.containerd_root, dest)

    # ------------------------------------------------------------------ the seed's thread

    def _run(self) -> None:
        began = time.monotonic()
        try:
            self._make()
            self.seconds = time.monotonic() - began
            log.info("image seed ready in %.1f s (%s)", self.seconds, self.root)
        except Exception as exc:
            self.error = f"the node images do not import: {exc}"
            if not self._cancelled.is_set():
                log.error("%s", self.error)
        finally:
            self._stop_containerd()
            self._done.set()

    def _make(self) -> None:
        journal, logs = self.journal, self.root / "logs"
        journal.record("directory", path=str(self.root))
        journal.record("directory", path=str(self.run_dir))
        journal.record("mounts", paths=[str(self.run_dir), str(self.root)])  # unpacks mount
        remove_tree(self.root)  # a state dir's earlier run: the images may have changed since
        for directory in (logs, self.run_dir):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        config = self.root / "containerd.toml"
        config.write_text(_seed_toml(self.containerd_root, self.run_dir))
        if self._cancelled.is_set():
            raise RuntimeError("cancelled")
        journal.record("cgroup", relative=self.cgroup)
        cgroups.make_cgroup(self.cgroup, leaf=True)
        socket = self.run_dir / "containerd.sock"
        self._proc = journal.start_process(
            "seed-containerd",
            ["containerd", "--config", str(config)],
            logs / "containerd.log",
            cgroup=self.cgroup,
        )
        wait_ready(
            "the image seed's containerd",
            socket.exists,
            _READY_TIMEOUT,
            {"containerd": self._proc},
            logs,
            self._cancelled,
            "cancelled",
            interval=0.05,
        )
        if self._cancelled.is_set():
            raise RuntimeError("cancelled")
        self._imports = [  # at once: each mostly waits on containerd's unpacking
            journal.start_process(
                f"seed-import-{n}",
                ["ctr", "-a", str(socket), "-n", "k8s.io", "images", "import", str(archive)],
                logs / "images.log",
                cgroup=self.cgroup,
            )
            for n, archive in enumerate(self.images.archives)
        ]  # fmt: skip
        for archive, proc in zip(self.images.archives, self._imports, strict=True):
            if proc.wait(_IMPORT_TIMEOUT) != 0:
                tail = (logs / "images.log").read_text()[-400:].strip()
                raise RuntimeError(f"image archive {archive} does not import: {tail}")

    def _stop_containerd(self) -> None:
        """SIGTERM, so containerd closes its databases before a node copies them."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(10.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5.0)
