"""The crash tests' host comparison (testkit/hostsnap.py) finds what the tested simulator left and
tells another simulator's things apart by their bridge index, whatever their kind."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from testkit.hostsnap import HostSnapshot, leftovers, snapshot
from together_sim.host import shared, sysctls, systemd
from together_sim.host.journal import Journal, Owner

SETTINGS = {"vm/overcommit_memory": "0", "kernel/panic": "1", "kernel/panic_on_oops": "0"}
BEFORE = HostSnapshot(
    processes={(1, 5): "0 1 / / /sbin/init"},
    mounts=frozenset({"/", "/proc"}),
    netns=frozenset(),
    links=frozenset({"lo", "eth0"}),
    iptables=("filter: -P INPUT ACCEPT", "nat: -P PREROUTING ACCEPT"),
    sysctls=SETTINGS,
    cgroups=frozenset({"/sys/fs/cgroup/memory/user"}),
    run_dir=frozenset(),
)


@pytest.fixture(autouse=True)
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    run = tmp_path / "together-sim"
    monkeypatch.setattr(shared, "RUN_DIR", run)
    monkeypatch.setattr(shared, "LOCK", run / ".lock")
    monkeypatch.setattr(shared, "JOURNALS", run / "journals")
    monkeypatch.setattr(sysctls, "SHARED_SETTINGS", run / "sysctls.json")
    return run


def test_the_host_as_it_was_has_no_leftover() -> None:
    assert leftovers(BEFORE, BEFORE, besides=99, ours=3) == []


def test_each_kind_of_leftover_is_named_and_anothers_index_is_not(run_dir: Path) -> None:
    other = Journal.create(shared.JOURNALS / "pool-live.jsonl", Owner.me())  # a live simulator
    other.record("link", name="tsim4")
    after = replace(
        BEFORE,
        processes={
            **BEFORE.processes,
            (500, 7): "1 500 /together-sim/tsim3-n0/kubepods/x / containerd-shim",  # ours
            (501, 7): "1 501 /together-sim/tsim4-n0/kubepods/x / containerd-shim",  # other's
            (502, 7): "1 99 / / sleep 100",  # in the killed simulator's session
            (503, 7): "1 503 / /tmp/test-7/state/c1 etcd",  # runs in its state directory
            (504, 7): "1 504 / / python -m mutate",  # an orphan of someone else's
            (505, 7): "400 400 / / bash",  # a child of another live process
        },
        mounts=BEFORE.mounts | {"/run/netns/tsim3-n0", "/run/netns/tsim4-n1", "/mnt/x"},
        netns=frozenset({"tsim3-n0", "tsim4-n0"}),
        links=BEFORE.links | {"tsim3", "tsim4v0"},
        iptables=(*BEFORE.iptables, "filter: -N KUBE-FIREWALL"),
        sysctls={**SETTINGS, "kernel/panic": "10"},
        cgroups=BEFORE.cgroups | {"/sys/fs/cgroup/memory/together-sim/tsim3-n0"},
        run_dir=frozenset({f"{run_dir}/tsim3-n0", f"{run_dir}/tsim4-n0", str(other.path)}),
    )
    assert leftovers(BEFORE, after, besides=99, ours=3, marks=("/tmp/test-7",)) == [
        "process 500: 1 500 /together-sim/tsim3-n0/kubepods/x / containerd-shim",
        "process 502: 1 99 / / sleep 100",
        "process 503: 1 503 / /tmp/test-7/state/c1 etcd",
        "mount /mnt/x",
        "mount /run/netns/tsim3-n0",
        "netns tsim3-n0",
        "link tsim3",
        "cgroup /sys/fs/cgroup/memory/together-sim/tsim3-n0",
        "iptables added filter: -N KUBE-FIREWALL",
        "sysctl kernel/panic=10 (was 1)",
        f"file {run_dir}/tsim3-n0",
    ]


def test_the_kernel_settings_held_by_another_are_its_own_but_never_the_tested_ones(
    run_dir: Path,
) -> None:
    run_dir.mkdir(parents=True)
    me = f"{os.getpid()}@1:/x/kube"
    shared.save_json(sysctls.SHARED_SETTINGS, {"original": SETTINGS, "holders": ["7@1:/y", me]})
    after = replace(BEFORE, sysctls={**SETTINGS, "kernel/panic": "10"})
    assert leftovers(BEFORE, after, besides=os.getpid(), ours=3) == [f"sysctls held by {me}"]


def test_a_snapshot_of_this_machine_reads_every_part() -> None:
    now = snapshot()
    assert now.processes and now.mounts and "lo" in now.links and set(now.sysctls) == set(SETTINGS)


def test_an_image_seed_of_another_bridge_is_anothers(run_dir: Path) -> None:
    """The seed's cgroup and run directory carry the bridge index too (``seed<k>``)."""
    after = replace(
        BEFORE,
        processes={**BEFORE.processes, (600, 7): "1 600 /together-sim/seed4 / containerd"},
        cgroups=BEFORE.cgroups | {"/sys/fs/cgroup/together-sim/seed4"},
    )
    assert leftovers(BEFORE, after, besides=99, ours=3) == []
    ours = replace(after, cgroups=BEFORE.cgroups | {"/sys/fs/cgroup/together-sim/seed3"})
    assert leftovers(BEFORE, ours, besides=99, ours=3) == [
        "cgroup /sys/fs/cgroup/together-sim/seed3"
    ]
    # A name that merely ends in seed<k> (a test's directory) is nobody's bridge: it is ours.
    test_dir = "/tmp/pytest-of-root/pytest-0/test_image_seed0"
    process = {**BEFORE.processes, (601, 8): f"1 601 / {test_dir} etcd"}
    assert leftovers(BEFORE, replace(BEFORE, processes=process), 99, 3, marks=(test_dir,)) == [
        f"process 601: 1 601 / {test_dir} etcd"
    ]


def test_settings_another_simulator_held_before_may_be_restored_meanwhile() -> None:
    """Held by another then (their record kept the settings before any holder), nobody after:
    the last release wrote the record's settings back, and only those pass."""
    held = replace(BEFORE, sysctls={**SETTINGS, "vm/overcommit_memory": "1"})
    held_by_another = replace(held, sysctls_original=SETTINGS)
    assert leftovers(held_by_another, BEFORE, besides=99, ours=3) == []
    assert leftovers(held_by_another, held, besides=99, ours=3) == [  # never restored
        "sysctl vm/overcommit_memory=1 (was 0)"
    ]
    assert leftovers(held, BEFORE, besides=99, ours=3) == [  # nobody held them: a change
        "sysctl vm/overcommit_memory=0 (was 1)"
    ]


def test_a_controller_left_enabled_above_the_scopes_is_a_leftover_until_another_holds_them(
    run_dir: Path,
) -> None:
    """On a cgroup v2 host with systemd: runc enables ``rdma`` at the root on its way down to a
    container; once nobody holds what is above the scopes, it must be off again."""
    v2 = replace(BEFORE, above_scope={"/sys/fs/cgroup": [], "/sys/fs/cgroup/system.slice": []})
    after = replace(v2, above_scope={**(v2.above_scope or {}), "/sys/fs/cgroup": ["rdma"]})
    assert leftovers(v2, after, besides=99, ours=3) == [
        "subtree_control of /sys/fs/cgroup=['rdma'] (was [])"
    ]
    run_dir.mkdir(parents=True)
    me = f"{os.getpid()}@1:together-sim-tsim3.scope"
    shared.save_json(systemd.above_scope().path, {"original": {}, "holders": ["7@1:x", me]})
    assert leftovers(v2, after, besides=os.getpid(), ours=3) == [
        f"controllers above the scopes held by {me}"
    ]
