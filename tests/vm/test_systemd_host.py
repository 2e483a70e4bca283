"""Real nodes where users run them (issue 53): inside the VM, a cgroup v2 host with systemd,
tests/vm/guest's tests pass. The pool's cgroups go in a delegated scope where a node's cgroup
gets the kubelet's controllers, and neither a stop nor a SIGKILL and ``cleanup`` leaves a unit,
a failed unit or a cgroup of ours; and a whole cluster with real nodes comes up there, the drill
judges two workloads on it, a reclaimed pod gets SIGTERM, and a SIGKILL and ``cleanup`` of it
leave the host as before."""

from __future__ import annotations

import re
from pathlib import Path

from testkit.kube import kube_bin_or_skip
from testkit.realnodes import REQUIRED_ENV, images_or_skip
from testkit.vm import REPO, run_in_vm
from together_sim.host.images import IMAGES_ENV
from together_sim.kube.hub import KUBE_BIN_ENV

CGROUPS = "tests/vm/guest/test_systemd_cgroups.py::"
CLUSTER = "tests/vm/guest/test_whole_cluster.py::"


def _guest_tests_pass(vm_image: Path, tests: tuple[str, ...], timeout: float) -> None:
    """Run ``tests`` in one boot of the VM, with the built control plane and the real nodes'
    images shared in at their host paths; each must pass."""
    python = REPO / ".venv" / "bin" / "python"
    kube, images = kube_bin_or_skip(), images_or_skip()
    result = run_in_vm(
        f"{python} -m pytest -p no:cacheprovider -v -rA --durations=0 {' '.join(tests)}",
        shares=(kube, images),
        env={
            "TOGETHER_VM_GUEST": "1",
            KUBE_BIN_ENV: str(kube),
            IMAGES_ENV: str(images),
            REQUIRED_ENV: "1",
        },
        image=vm_image,
        timeout=timeout,
    )
    passed = set(re.findall(r"^PASSED (\S+)", result.output, re.MULTILINE))
    assert result.returncode == 0 and passed == set(tests), result.output[-20000:]


def test_the_guest_tests_pass(vm_image: Path) -> None:
    """One boot for all (under TCG a boot is about 25 s)."""
    _guest_tests_pass(vm_image, (
        f"{CGROUPS}test_the_pools_cgroups_are_in_a_delegated_scope_and_a_stop_removes_it",
        f"{CGROUPS}test_after_a_sigkill_the_scope_stays_until_cleanup_stops_it",
        f"{CLUSTER}test_the_drill_says_safe_for_a_workload_that_keeps_the_contract",
        f"{CLUSTER}test_the_drill_says_unsafe_for_a_workload_that_ignores_sigterm",
        f"{CLUSTER}test_a_pod_on_a_node_together_reclaims_gets_sigterm",
        f"{CLUSTER}test_after_a_sigkill_cleanup_leaves_the_host_as_before",
    ), timeout=1200)  # fmt: skip
