"""The whole host as real nodes can change it, read before a test and after it, and what appeared
or changed since: processes, mounts, netns, links, iptables, kernel settings, cgroups, /run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from together_sim.host import cgroups, processes, shared, sysctls, systemd
from together_sim.host.held import HeldSetting
from together_sim.host.journal import Journal

__all__ = ["HostSnapshot", "bridge_index", "foreign_journals", "leftovers", "snapshot"]

_INDEXED = re.compile(r"(?<!\w)(?:tsim(\d+)(?:-n\d+|v\d+)?|seed(\d+))(?![\d])")
"""What carries a bridge index: a node's netns, veth, cgroup or run directory (``tsim<k>``,
``tsim<k>-n<s>``, ``tsim<k>v<s>``) and the image seed's cgroup and run directory (``seed<k>``),
each a whole name (a test's directory ``test_image_seed0`` names no bridge)."""


@dataclass(frozen=True)
class HostSnapshot:
    processes: dict[tuple[int, int], str]
    """(pid, start time) -> "ppid session cgroups cwd cmdline", of every process but zombies."""
    mounts: frozenset[str]
    netns: frozenset[str]
    links: frozenset[str]
    iptables: tuple[str, ...]
    sysctls: dict[str, str]
    cgroups: frozenset[str]
    run_dir: frozenset[str]
    sysctls_original: dict[str, str] | None = None
    """When another simulator held the kernel settings then, the settings as they were before
    any holder (`sysctls.SHARED_SETTINGS`): its hold may end meanwhile, and the last release
    writes these back."""
    above_scope: dict[str, list[str]] | None = None
    """On a cgroup v2 host with systemd, the controllers enabled above the nodes' scopes beyond
    systemd's own (`systemd.others_above_scope`): hugetlb, and what runc enables (rdma, misc)."""
    above_scope_original: dict[str, list[str]] | None = None
    """As `sysctls_original`, for `systemd.above_scope()`."""


def _processes() -> dict[tuple[int, int], str]:
    found: dict[tuple[int, int], str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            groups = ",".join(
                line.split(":", 2)[2] for line in (entry / "cgroup").read_text().splitlines()
            )
            cwd = os.readlink(entry / "cwd")
        except (OSError, IndexError):
            continue
        if stat[0] == "Z":
            continue
        what = f"{stat[1]} {stat[3]} {groups} {cwd} {cmdline.strip()[:160]}"
        found[(int(entry.name), int(stat[19]))] = what
    return found


def _cgroups() -> frozenset[str]:
    """Every cgroup directory. ``os.walk``, not ``rglob``: another simulator's node may remove
    its cgroup while the walk is in it, and a walk skips what vanished where rglob raises."""
    found: set[str] = set()
    for hierarchy in cgroups.cgroup_dirs(""):
        for directory, _, _ in os.walk(hierarchy):
            found.add(directory)
        found.discard(str(hierarchy))
    return frozenset(found)


def _lines(*args: str) -> list[str]:
    return subprocess.run(list(args), capture_output=True, text=True).stdout.splitlines()


def _original(setting: HeldSetting[Any]) -> Any:
    """What ``setting`` was before any holder, when another simulator holds it now (else None)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return json.loads(setting.path.read_text())["original"]
    return None


def snapshot() -> HostSnapshot:
    """The host now. `/run/netns` itself is left out of the mounts: `ip netns add` makes it a
    mount point the first time any program on the machine asks for a namespace, and it stays for
    every program's later ones (each namespace under it is a mount of its own, and counted)."""
    netns_dir = Path("/run/netns")
    mounts = frozenset(
        line.split()[4]
        for line in Path("/proc/self/mountinfo").read_text().splitlines()
        if line.split()[4] != str(netns_dir)
    )
    links = frozenset(
        line.split(":")[1].strip().split("@")[0] for line in _lines("ip", "-o", "link")
    )
    iptables = tuple(
        f"{table}: {rule}"
        for table in ("filter", "nat")
        for rule in _lines("iptables", "-t", table, "-S")
    )
    run = shared.RUN_DIR
    return HostSnapshot(
        processes=_processes(),
        mounts=mounts,
        netns=frozenset(p.name for p in netns_dir.iterdir()) if netns_dir.is_dir() else frozenset(),
        links=links,
        iptables=iptables,
        sysctls=sysctls.read_sysctls(),
        sysctls_original=_original(sysctls.settings()),
        above_scope=systemd.others_above_scope() if systemd.manages_cgroups() else None,
        above_scope_original=_original(systemd.above_scope()),
        cgroups=_cgroups(),
        run_dir=frozenset(str(p) for p in run.rglob("*")) if run.is_dir() else frozenset(),
    )


def bridge_index(pid: int) -> int:
    """The bridge index of the running simulator ``pid``, from its pool's journal."""
    for path in shared.JOURNALS.glob(f"pool-{pid}-*.jsonl"):
        for change in Journal.load(path).changes():
            if change.kind == "link" and (m := re.fullmatch(r"tsim(\d+)", change.args["name"])):
                return int(m.group(1))
    raise AssertionError(f"simulator {pid} has no bridge in its journal")


def foreign_journals(besides: int) -> set[str]:
    """The journals of every live pool but pid ``besides``'s, and the pools' entries older
    simulators write."""
    paths: set[str] = set()
    for path in shared.JOURNALS.glob("pool-*.jsonl") if shared.JOURNALS.is_dir() else ():
        journal = Journal.load(path)
        if journal.owner.pid != besides and journal.owner.alive():
            paths.add(str(path))
            paths.update(str(p) for p in shared.JOURNALS.glob(f"{path.stem}.*"))
    pools = shared.RUN_DIR / "pools"  # simulators before the journal
    for entry in pools.glob("*.json") if pools.is_dir() else ():
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            data = json.loads(entry.read_text())
            if (
                int(data["pid"]) != besides
                and processes.process_started(data["pid"]) == data["started"]
            ):
                paths.add(str(entry))
    return paths


def _foreign(item: str, ours: int) -> bool:
    return any(int(m.group(1) or m.group(2)) != ours for m in _INDEXED.finditer(item))


def leftovers(
    before: HostSnapshot, after: HostSnapshot, besides: int, ours: int, marks: tuple[str, ...] = ()
) -> list[str]:
    """What ``after`` has that ``before`` had not, and every change to iptables and the kernel
    settings, less what another simulator owns: simulator ``besides`` used bridge ``ours``.
    A process is the simulator's when it is in a node's cgroup, in the simulator's session, or
    runs in or names a path of ``marks`` (its state directory) or ``/run/together-sim``: other
    people's processes come and go on a shared machine, orphans among them.

    Other simulators may run real nodes on the machine meanwhile (other test workers, other
    people): what is theirs is told apart by the bridge index it carries (``tsim<k>``,
    ``tsim<k>-n<s>``, ``tsim<k>v<s>``: a node's netns, veth, cgroup, run directory and the
    processes in that cgroup): an index other than ``ours`` is another's. Everything else that
    appeared, whatever its name, and any change to iptables or the kernel settings, is a
    leftover; in ``/run/together-sim`` what all simulators share stays while another runs."""
    journals = foreign_journals(besides)
    left: list[str] = []
    for key, what in after.processes.items():
        if key in before.processes or _foreign(what, ours):
            continue
        _, session, rest = what.split(" ", 2)
        if (
            int(session) == besides
            or "together-sim" in rest  # a node's cgroup, /run/together-sim
            or any(mark in rest for mark in marks)
        ):
            left.append(f"process {key[0]}: {what}")
    for kind, old, new in (
        ("mount", before.mounts, after.mounts),
        ("netns", before.netns, after.netns),
        ("link", before.links, after.links),
        ("cgroup", before.cgroups, after.cgroups),
    ):
        left += [f"{kind} {x}" for x in sorted(new - old) if not _foreign(x, ours)]
    if before.iptables != after.iptables:
        gone = sorted(set(before.iptables) - set(after.iptables))
        added = sorted(set(after.iptables) - set(before.iptables))
        left += [f"iptables added {r}" for r in added] + [f"iptables removed {r}" for r in gone]
    left += _held_changes(
        ("sysctl", "sysctls"), sysctls.settings(),
        before.sysctls_original or before.sysctls, after.sysctls, besides,
    )  # fmt: skip
    if after.above_scope is not None:
        left += _held_changes(
            ("subtree_control of", "controllers above the scopes"), systemd.above_scope(),
            before.above_scope_original or before.above_scope or {}, after.above_scope, besides,
        )  # fmt: skip
    others = bool(journals)
    common = {str(shared.LOCK), str(shared.JOURNALS), str(sysctls.SHARED_SETTINGS)}
    common.add(str(systemd.above_scope().path))
    common.add(str(shared.RUN_DIR / ".pools.lock"))  # what simulators before the journal share
    for path in sorted(after.run_dir - before.run_dir):
        if others and (path in common or path in journals or "/pools" in path):
            continue  # another simulator runs: what all share stays
        if not _foreign(path, ours):
            left.append(f"file {path}")
    return [x for x in left if not (others and x.endswith("/together-sim"))]


def _held_changes(
    what: tuple[str, str],
    setting: HeldSetting[Any],
    restored: dict[str, Any],
    now: dict[str, Any],
    besides: int,
) -> list[str]:
    """A setting simulators share (:mod:`together_sim.host.held`): once nobody holds it, it must
    be as before (or as before any holder, when another held it then: the last release restored
    it meanwhile); while another holds it, simulator ``besides`` must no longer be a holder.
    ``what`` names an item of it and the whole."""
    if not setting.path.exists():
        changed = {k: v for k, v in restored.items() if now.get(k) != v}
        return [f"{what[0]} {k}={now.get(k)} (was {v})" for k, v in changed.items()]
    return [
        f"{what[1]} held by {h}"
        for h in setting.holders()
        if h.startswith((f"{besides}@", f"{besides}:"))
    ]
