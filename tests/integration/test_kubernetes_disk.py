"""``--kubernetes`` leaves no disk behind and no key readable by others.

A cluster's control-plane directory (``<state>/kube/<id>``: etcd's files, logs, keys) is over a
hundred MB; it goes with its cluster, also when the simulator stops right after the delete, and
one left by a cluster that went while the simulator was down goes at its next start."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest
from together_sim.store import DB_FILENAME

REQUEST = {**CLUSTER_SPEC, "billing_type": "ON_DEMAND"}
MB = 1 << 20


def _size(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _removed(path: Path) -> Callable[[], bool]:
    return lambda: not path.exists()


def test_five_create_delete_cycles_leave_no_control_plane_directory(
    tmp_path: Path, kube_bin: Path
) -> None:
    state = tmp_path / "state"
    orphan = state / "kube" / "c-deleted-while-the-simulator-was-down"
    (orphan / "etcd").mkdir(parents=True)
    (orphan / "etcd" / "db").write_bytes(bytes(4 * MB))
    sim = SimulatorProcess(state, time_scale=0, kubernetes=True, kube_bin=kube_bin).start()
    try:
        assert not orphan.exists()  # no such cluster in the world: removed at start
        with TogetherClient(api_key=sim.api_key, base_url=sim.base_url) as client:
            for cycle in range(5):
                request = ClusterCreateRequest(**{**REQUEST, "cluster_name": f"cycle-{cycle}"})
                cid = client.create_cluster(request).cluster_id
                sim.advance(360)
                sim.control_plane(cid)
                root = state / "kube" / cid
                if cycle == 0:  # the admin key is in pki/ and in the kubeconfig: owner-only
                    assert _mode(root) == 0o700
                    pki = list((root / "pki").iterdir())
                    assert len(pki) >= 8 and [f.name for f in pki if _mode(f) != 0o600] == []
                    assert _mode(root / "pki") == 0o700
                    assert _mode(root / "kubeconfig") == 0o600
                client.delete_cluster(cid)
                sim.advance(60)  # Deleting for 60 simulated seconds, then gone
                if cycle < 4:
                    # Real time: the control plane's processes end, then the directory goes.
                    removed = f"cycle {cycle}: {root} removed"
                    wait_for(_removed(root), removed, timeout=60)
    finally:
        sim.stop()  # at once after the last delete: the stop removes what is left
    assert sim.returncode == 0
    assert sorted(p.name for p in (state / "kube").iterdir()) == []
    rest = _size(state) - (state / DB_FILENAME).stat().st_size
    assert rest < 2 * MB, sorted((f.stat().st_size, str(f)) for f in state.rglob("*"))
