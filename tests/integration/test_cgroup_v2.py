"""A real node's cgroup handling against a real cgroup v2 tree: a temporary cgroup2 mount (the
kernel allows a second mount of the unified hierarchy, also on a v1 hybrid host), so the v2 rules
the kernel enforces (delegation, processes only in leaves, removal of a busy cgroup) are met."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.realnodes import done_beside_others, real_nodes_beside_others
from together_sim.host import cgroups, processes
from together_sim.host.journal import Journal, Owner

NODE = f"together-sim/cgroup-v2-test-{os.getpid()}"
"""The test's own node cgroup, under the parent every real node shares, with a name no
simulator gives a node (theirs are tsim<index>-n<slot>): the second cgroup2 mount is the host's
own unified tree, where the real nodes of simulators running beside this test live too."""
NEIGHBOUR = f"together-sim/cgroup-v2-test-{os.getpid()}-neighbour"
"""Another node's cgroup beside it, whose process must outlive every undo of the test's."""
_MNT_DETACH = 2


@pytest.fixture
def cgroup2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cgroup2 mount under ``tmp_path``, as ``/sys/fs/cgroup`` for the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting cgroup2 needs root")
    if "cgroup2" not in Path("/proc/filesystems").read_text():
        pytest.skip("this kernel has no cgroup2 filesystem")
    root = tmp_path / "cgroup2"
    root.mkdir()
    # The crash tests compare the host's mounts: never beside them (they hold this exclusively).
    lock = real_nodes_beside_others()
    mounted = subprocess.run(["mount", "-t", "cgroup2", "none", str(root)], capture_output=True)
    if mounted.returncode:
        done_beside_others(lock)
        pytest.skip(f"the kernel refuses a cgroup2 mount here: {mounted.stderr.decode().strip()}")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", root)
    try:
        yield root
    finally:
        ctypes.CDLL(None, use_errno=True).umount2(str(root).encode(), _MNT_DETACH)
        done_beside_others(lock)


def test_a_nodes_cgroup_on_cgroup_v2_delegates_runs_its_processes_in_a_leaf_and_goes(
    cgroup2: Path, tmp_path: Path
) -> None:
    assert cgroups.unified() and cgroups.cgroup_dirs(NODE) == [cgroup2 / NODE]
    available = set((cgroup2 / "cgroup.controllers").read_text().split())
    delegated = set((cgroup2 / "cgroup.subtree_control").read_text().split())
    cgroups.make_cgroup(NODE)
    cgroups.make_cgroup(f"{NODE}/runtime", leaf=True)
    # Below the root, every level hands its controllers down; the root is left as it was.
    assert set((cgroup2 / "cgroup.subtree_control").read_text().split()) == delegated
    for level in (cgroup2 / "together-sim", cgroup2 / NODE):
        have = set((level / "cgroup.controllers").read_text().split())
        assert set((level / "cgroup.subtree_control").read_text().split()) == have
        if level.parent == cgroup2:
            assert have == available & delegated
    # Another node's process (another simulator's, as make test runs them side by side).
    cgroups.make_cgroup(f"{NEIGHBOUR}/runtime", leaf=True)
    neighbour = subprocess.Popen(
        cgroups.in_cgroup(f"{NEIGHBOUR}/runtime", ["sleep", "60"]), start_new_session=True
    )
    # A process joins the leaf before its program runs, and its children are in it too.
    child = subprocess.Popen(
        cgroups.in_cgroup(f"{NODE}/runtime", ["sh", "-c", "sleep 60 & sleep 60"]),
        start_new_session=True,
    )
    try:
        seen = processes.process_started(child.pid)
        assert seen is not None
        for _ in range(100):
            if len(cgroups.cgroup_pids(NODE)) >= 2:
                break
            subprocess.run(["sleep", "0.05"])
        assert child.pid in cgroups.cgroup_pids(NODE) and len(cgroups.cgroup_pids(NODE)) >= 2
        membership = Path(f"/proc/{child.pid}/cgroup").read_text()
        assert f"0::/{NODE}/runtime" in membership.splitlines()
        # A process cannot join a cgroup that delegates a controller (v2's rule): the join
        # fails the start. (On a v1 hybrid host the v2 tree may have no controller to delegate.)
        if (cgroup2 / NODE / "cgroup.subtree_control").read_text().split():
            refused = subprocess.run(cgroups.in_cgroup(NODE, ["true"]), capture_output=True)
            assert refused.returncode == 121
        # The journal's undo kills every process in the tree and removes it, idempotently.
        journal = Journal.create(tmp_path / "pool-1.jsonl", Owner.me())
        journal.record("cgroup", relative=NODE)
        assert journal.undo().left == []
        # Killed, or (the kills go one process at a time) the shell saw its `sleep` killed
        # first and exited as a shell does then: 128 + SIGKILL.
        assert child.wait(5) in (-signal.SIGKILL, 128 + signal.SIGKILL)
        assert not (cgroup2 / NODE).exists() and (cgroup2 / "together-sim").is_dir()
        assert Journal.create(tmp_path / "pool-2.jsonl").undo().left == []
    finally:
        # Only what this test made: killing "together-sim" here killed every real node on the
        # machine (a make test worker's demo lost its node's containerd and kubelet mid-page).
        child.kill()
        cgroups.kill_cgroup(NODE)
        cgroups.remove_cgroup(NODE)
        alive = neighbour.poll() is None
        neighbour.kill()
        neighbour.wait(5)
        cgroups.remove_cgroup(NEIGHBOUR)
        with contextlib.suppress(OSError):  # the shared parent, when no simulator uses it
            (cgroup2 / "together-sim").rmdir()
    assert alive, "the undo of one node's cgroup killed another node's process"
