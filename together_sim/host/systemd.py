"""The real nodes' cgroups on a cgroup v2 host whose init is systemd: a transient scope of the
simulator's own with ``Delegate=yes``, below which systemd leaves the tree to us
(:func:`start_scope` says why)."""

from __future__ import annotations

import contextlib
import errno
import subprocess
import time
from pathlib import Path
from typing import Final

from together_sim.host import cgroups, shared
from together_sim.host.held import HeldSetting

__all__ = [
    "KUBELET_CONTROLLERS",
    "SLICE",
    "SYSTEMD_CONTROLLERS",
    "above_scope",
    "disable_above_scope",
    "enable_above_scope",
    "manages_cgroups",
    "others_above_scope",
    "scope_cgroup",
    "scope_unit",
    "start_scope",
    "stop_scope",
    "undelegated",
]

SLICE: Final = "system.slice"
"""The slice the scope is placed in (``--slice``), so its cgroup is known before it exists."""
RUN_SYSTEMD: Final = Path("/run/systemd/system")
"""Exists when systemd is the init of this boot (``sd_booted(3)``)."""
_START_WAIT: Final = 10.0
KUBELET_CONTROLLERS: Final = ("cpu", "cpuset", "memory", "hugetlb", "pids")
"""What the kubelet requires enabled in its ``cgroupRoot`` on cgroup v2, of those the host has
(Kubernetes' ``getSupportedUnifiedControllers``): it refuses to start without each ("has some
missing controllers: hugetlb")."""


def manages_cgroups(root: Path | None = None) -> bool:
    """Whether the cgroup tree is systemd's: a cgroup v2 host booted with systemd. (A v1 host
    with systemd keeps the v1 layout's cgroups: not tested, see docs/dependencies.md.)"""
    return cgroups.unified(root) and RUN_SYSTEMD.is_dir()


def scope_unit(index: int) -> str:
    """The scope of the simulator that owns bridge ``tsim<index>`` (one per simulator)."""
    return f"together-sim-tsim{index}.scope"


def scope_cgroup(unit: str) -> str:
    """The scope's cgroup, relative to the cgroup root."""
    return f"{SLICE}/{unit}"


def start_scope(unit: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start the delegated scope ``unit`` with its holder in the leaf ``holder``, delegate the
    scope's controllers to its children, and return the holder and the scope's cgroup.

    Why a scope: systemd owns the cgroup tree of such a host. Cgroups made at its root outside
    any unit are not ours to make (systemd documents that only a delegated subtree may be
    written by others), and the root delegates only the controllers some unit asked for
    (``memory pids`` on a fresh Debian 12: no ``cpu``, which the kubelet needs). A scope with
    ``Delegate=yes`` gets every controller systemd can delegate, systemd never touches what is
    below it, ``systemctl stop`` kills whatever still runs in it and removes it, and
    ``systemctl`` lists it by name. The kubelet and containerd keep the ``cgroupfs`` driver:
    their tree is the node's cgroup inside the scope, which the systemd driver cannot express
    (it would put every node's pods in one ``kubepods.slice`` of the host's).

    A scope lives while a process is in it, so a holder (``sleep infinity``) keeps it from the
    pool's start (before the image seed's containerd runs) to its close. It sits in the leaf
    ``holder``: on cgroup v2 only a cgroup with no process of its own may delegate controllers
    to its children (the nodes' cgroups). It outlives a killed simulator on purpose (no
    ``PR_SET_PDEATHSIG``): the scope then stays until the sweep stops it, instead of going
    under a node that is still starting."""
    proc = subprocess.Popen(
        ["systemd-run", "--scope", "--quiet", "--collect", f"--unit={unit}", f"--slice={SLICE}",
         "--property=Delegate=yes", "--description=together_sim real nodes (python -m "
         "together_sim cleanup removes it after a crash)", "--", "sleep", "infinity"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    relative = scope_cgroup(unit)
    deadline = time.monotonic() + _START_WAIT
    while f"0::/{relative}" not in _cgroup_of(proc.pid):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate()
            raise OSError(
                f"systemd-run could not start the scope {unit} for the real nodes' cgroups "
                f"({err.decode(errors='replace').strip() or 'no answer'}); if a stopped "
                f"simulator left it, `python -m together_sim cleanup` stops it"
            )
        time.sleep(0.02)
    if proc.stderr is not None:
        proc.stderr.close()
    scope = cgroups.CGROUP_ROOT / relative
    (scope / "holder").mkdir(exist_ok=True)
    (scope / "holder" / "cgroup.procs").write_text(str(proc.pid))
    cgroups.delegate_controllers(scope)
    return proc, relative


def _cgroup_of(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cgroup").read_text()
    except OSError:
        return ""


def stop_scope(unit: str) -> list[str]:
    """Kill what still runs in the scope ``unit`` (the holder, anything a crash left), stop it
    and remove its cgroup; returns what is left ([] also when it was gone already)."""
    relative = scope_cgroup(unit)
    # systemd kills what runs in it and removes its cgroup, and does so by itself once its last
    # process (the holder, killed first by the journal's undo) is gone: the walks of
    # cgroups.kill_cgroup and remove_cgroup skip a cgroup that vanishes under them.
    subprocess.run(["systemctl", "stop", unit], capture_output=True)
    survivors = cgroups.kill_cgroup(relative)
    left_dirs = cgroups.remove_cgroup(relative)
    subprocess.run(["systemctl", "reset-failed", unit], capture_output=True)
    left = [f"process {p} in scope {unit}" for p in sorted(survivors)]
    left += [f"cgroup {c}" for c in left_dirs]
    with contextlib.suppress(OSError):
        state = subprocess.run(
            ["systemctl", "show", "--property=ActiveState", "--value", unit],
            capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        if state not in ("", "inactive", "failed"):
            left.append(f"systemd unit {unit} ({state})")
    return left


def undelegated() -> list[str]:
    """The kubelet's controllers the host has but systemd does not enable for the scopes of
    :data:`SLICE`: systemd delegates only the controllers it manages, and ``hugetlb`` is not one
    of them (systemd 252), so a ``Delegate=yes`` scope does not get it."""
    available = (cgroups.CGROUP_ROOT / "cgroup.controllers").read_text().split()
    enabled = (cgroups.CGROUP_ROOT / SLICE / "cgroup.subtree_control").read_text().split()
    return [c for c in KUBELET_CONTROLLERS if c in available and c not in enabled]


def _above_scope() -> list[Path]:
    return [cgroups.CGROUP_ROOT, cgroups.CGROUP_ROOT / SLICE]


SYSTEMD_CONTROLLERS: Final = ("cpu", "cpuset", "io", "memory", "pids")
"""The controllers systemd enables and disables in the tree itself, as its units ask
(``systemd.resource-control(5)``; a ``Delegate=yes`` scope asks for all of them): its to put
back, never ours."""


def others_above_scope() -> dict[str, list[str]]:
    """The controllers the root and :data:`SLICE` enable for their children beyond systemd's."""
    return {
        str(level): sorted(
            set((level / "cgroup.subtree_control").read_text().split()) - set(SYSTEMD_CONTROLLERS)
        )
        for level in _above_scope()
    }


def _put_back_above_scope(original: dict[str, list[str]]) -> None:
    """Disable what is enabled above the scopes now and was not before any simulator's scope,
    :data:`SLICE` first (a controller a child enables cannot be disabled above it). One that
    is busy (EBUSY: a cgroup below uses it now, another runtime's container) is theirs now."""
    for level, now in reversed(others_above_scope().items()):
        for controller in sorted(set(now) - set(original.get(level, []))):
            try:
                (Path(level) / "cgroup.subtree_control").write_text(f"-{controller}")
            except OSError as error:
                if error.errno != errno.EBUSY:
                    raise


def above_scope() -> HeldSetting[dict[str, list[str]]]:
    """The controllers enabled above every simulator's scope, as the first one found them: the
    pool enables ``hugetlb`` there (:func:`undelegated`), and runc enables every controller the
    host has (``rdma misc`` too) on its way down from the root to a container's cgroup. Systemd
    does not manage these, so nobody else would disable them: the last simulator out does."""
    return HeldSetting(
        shared.RUN_DIR / "above-scope.json", read=others_above_scope, restore=_put_back_above_scope
    )


def enable_above_scope(controllers: list[str]) -> None:
    """Enable ``controllers`` from the root down to :data:`SLICE` (neither holds a process),
    so the scopes below get them; systemd leaves controllers it does not manage alone."""
    for level in _above_scope():
        (level / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in controllers))


def disable_above_scope(controllers: list[str]) -> list[str]:
    """Disable ``controllers`` again, :data:`SLICE` first; returns what is left. One that another
    simulator's scope still uses is busy (EBUSY) and stays: the last one out disables it."""
    left = []
    for level in reversed(_above_scope()):
        for controller in controllers:
            try:
                (level / "cgroup.subtree_control").write_text(f"-{controller}")
            except OSError as error:
                if error.errno != errno.EBUSY:
                    left.append(f"controller {controller} of {level}: {error.strerror}")
    return left
