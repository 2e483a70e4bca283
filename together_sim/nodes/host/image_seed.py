"""The node images unpacked once per pool into a seed containerd root; each real node's containerd
root starts as a hard-linked copy of it (about 0.1 s and no disk) instead of unpacking every
archive again (2 to 10 s of each node's start)."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Final

from together_sim.nodes.host import processes, shared
from together_sim.nodes.host.images import NodeImages
from together_sim.nodes.host.journal import Journal
from together_sim.nodes.host.mounts import remove_tree

__all__ = ["ImageSeed", "copy_store", "seed_run_dir"]

SEED_DIR: Final = "image-seed"
"""``<pool root>/image-seed``: the seed's containerd root (same filesystem as the nodes' roots,
so their copies are hard links)."""
_DATABASES: Final = ("io.containerd.metadata.v1.bolt", "io.containerd.snapshotter.v1.overlayfs")
_CONTAINERD_WAIT: Final = 30.0
_IMPORT_WAIT: Final = 600.0

log = logging.getLogger("together_sim.kube")


def seed_run_dir(bridge: str) -> Path:
    """The seed containerd's socket, state, configuration and log, under the simulator's bridge
    name (each simulator on the machine has its own)."""
    return shared.RUN_DIR / f"{bridge}-images"


def _containerd_toml(root: Path, state: Path) -> str:
    """A containerd that only stores images: no CRI (no network, no sandboxes), overlayfs."""
    return f"""version = 2
root = "{root}"
state = "{state}"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt"]
[grpc]
  address = "{state / "containerd.sock"}"
[ttrpc]
  address = "{state / "containerd.sock.ttrpc"}"
"""


def copy_store(seed: Path, dest: Path) -> None:
    """``dest`` becomes a copy of the containerd root ``seed``: every file a hard link (``cp -a
    --link`` keeps each directory's owner, mode and the overlay xattrs), each bolt database a
    file of its own. Another filesystem (no hard link across): a full copy."""
    if dest.exists():  # a run killed before its sweep: never a copy inside the old store
        remove_tree(dest)
    dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    link = ["cp", "-a", "--link", str(seed), str(dest)]
    done = subprocess.run(link, capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        done = subprocess.run(["cp", "-a", str(seed), str(dest)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"copying the node images to {dest}: {done.stderr.strip()}")
    for plugin in _DATABASES:
        for db in (seed / plugin).glob("*.db"):
            mine = dest / plugin / db.name
            tmp = mine.with_name(f".{db.name}.tmp")
            shutil.copy2(db, tmp)
            os.replace(tmp, mine)  # breaks the link: this node's containerd writes its own


class ImageSeed:
    """The pool's images, unpacked once by a containerd of their own in a background thread
    (started with the pool, so it runs while the first control plane starts).

    Sharing the files is safe: content blobs and committed overlay snapshots are never written
    in place (a container writes to its own upper directory), and only the two bolt databases,
    which containerd rewrites, are copied rather than linked. Every change is
    in the pool's journal before it is made: the seed's directories, its mounts and each
    process (containerd, one ``ctr images import`` per archive; a process is written down as
    pid and start time once it runs, and a kill between the two is covered by
    ``PR_SET_PDEATHSIG``, as for a node's processes)."""

    def __init__(self, images: NodeImages, root: Path, run_dir: Path, journal: Journal) -> None:
        self.images = images
        self.root = root / SEED_DIR
        self.run_dir = run_dir
        self.journal = journal
        self.error = ""
        self.seconds: float | None = None
        """How long the seed took (containerd start, imports, stop)."""
        self._done = threading.Event()
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._build, name="image-seed", daemon=True)

    def start(self) -> ImageSeed:
        self._thread.start()
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Cancel a build still running (its processes are killed) and wait for its thread, so
        nothing is added to the journal once the pool undoes it."""
        self._cancel.set()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def wait(self, cancelled: threading.Event, timeout: float = _IMPORT_WAIT) -> None:
        """Return once the seed is built; a ``cancelled`` wait or a seed that failed raises,
        naming why."""
        deadline = time.monotonic() + timeout
        while not self._done.wait(0.05):
            if cancelled.is_set():
                raise RuntimeError("cancelled while the node images were being unpacked")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the node images are not unpacked after {timeout:.0f} s")
        if self.error:
            raise RuntimeError(self.error)

    def copy_to(self, dest: Path, cancelled: threading.Event) -> None:
        """Make ``dest`` a containerd root holding every image, once the seed is built."""
        self.wait(cancelled)
        copy_store(self.root, dest)

    # ------------------------------------------------------------------ the seed's thread

    def _build(self) -> None:
        began = time.monotonic()
        try:
            self._import_all()
            self.seconds = time.monotonic() - began
            log.info("node images unpacked once in %.1f s", self.seconds)
        except Exception as exc:
            self.error = str(exc)
            log.error("the node images could not be unpacked: %s", exc)
        finally:
            self._done.set()

    def _spawn(self, name: str, args: list[str], out: Path) -> subprocess.Popen[bytes]:
        with out.open("ab") as log_file:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
                preexec_fn=processes.die_with_parent,  # only prctl runs between fork and exec
            )
        started = processes.process_started(proc.pid)
        if started is not None:
            self.journal.record("process", pid=proc.pid, started=started, name=name)
        return proc

    def _import_all(self) -> None:
        state = self.run_dir
        self.journal.record("directory", path=str(self.root))
        self.journal.record("directory", path=str(state))
        self.journal.record("mounts", paths=[str(state), str(self.root)])
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        state.mkdir(mode=0o700, parents=True, exist_ok=True)
        config, log_path = state / "containerd.toml", state / "seed.log"
        config.write_text(_containerd_toml(self.root, state))
        socket = state / "containerd.sock"
        containerd = self._spawn(
            "containerd (node images)", ["containerd", "--config", str(config)], log_path
        )
        try:
            deadline = time.monotonic() + _CONTAINERD_WAIT
            while not socket.exists():
                if self._cancel.is_set():
                    raise RuntimeError("unpacking the node images was cancelled")
                if containerd.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the containerd unpacking the node images did not start: "
                        f"{log_path.read_text()[-400:].strip()}"
                    )
                time.sleep(0.02)
            imports = [  # at once: each is mostly waiting on containerd's unpacking
                (archive, self._spawn(
                    f"import {archive.name}",
                    ["ctr", "-a", str(socket), "-n", "k8s.io", "images", "import", str(archive)],
                    log_path,
                ))
                for archive in self.images.archives
            ]  # fmt: skip
            deadline = time.monotonic() + _IMPORT_WAIT
            try:
                for archive, proc in imports:
                    while proc.poll() is None:
                        if self._cancel.is_set() or time.monotonic() > deadline:
                            raise RuntimeError("unpacking the node images was cancelled")
                        time.sleep(0.02)
                    if proc.returncode != 0:
                        tail = log_path.read_text()[-400:].strip()
                        raise RuntimeError(f"image archive {archive} does not import: {tail}")
            finally:
                for _, proc in imports:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
        finally:
            containerd.send_signal(signal.SIGTERM)  # closes its databases: the copies are whole
            try:
                containerd.wait(10)
            except subprocess.TimeoutExpired:
                containerd.kill()
                containerd.wait()
