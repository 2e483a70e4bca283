"""Real nodes where users run them (issue 53): inside the VM, a cgroup v2 host with systemd, the
existing real-node and drill tests and the systemd-specific ones (tests/vm/guest) pass.

The guest runs pytest on the checkout with the host's control plane and images shared in:
a cluster comes Ready with real nodes and a reclaimed pod gets SIGTERM (test_real_nodes), the
drill says ``safe`` for together_worker's good workload and ``unsafe`` (``SIGTERM_IGNORED``) for
one that ignores SIGTERM (test_drill_reader), and the nodes' cgroups live in a delegated scope
that a stop, or a SIGKILL and ``cleanup``, leaves no trace of (guest/test_systemd_host)."""

from __future__ import annotations

import re
from pathlib import Path

from testkit.pulumi_env import tool_bin
from testkit.realnodes import images_or_skip
from testkit.vm import REPO, run_in_vm

GUEST_TESTS = (
    "tests/vm/guest/test_systemd_host.py::"
    "test_the_nodes_cgroups_live_in_a_delegated_scope_that_a_stop_removes",
    "tests/vm/guest/test_systemd_host.py::"
    "test_after_a_sigkill_the_scope_holds_the_pods_until_cleanup_stops_it",
    "tests/integration/test_real_nodes.py::"
    "test_a_reclaim_sends_sigterm_143_within_grace_and_kills_at_grace_end_with_137",
    "tests/integration/test_drill_reader.py::"
    "test_a_good_workload_is_safe_through_the_kubeconfig_alone",
    "tests/integration/test_drill_reader.py::test_a_workload_that_ignores_sigterm_is_unsafe",
)


def test_real_nodes_and_the_drill_pass_on_a_cgroup_v2_host_with_systemd(vm_image: Path) -> None:
    kube, images = tool_bin("kube"), images_or_skip()
    python = REPO / ".venv" / "bin" / "python"
    result = run_in_vm(
        f"{python} -m pytest -p no:cacheprovider -v -rA --durations=0 {' '.join(GUEST_TESTS)}",
        shares=[kube, images],
        env={
            "TOGETHER_KUBE_BIN": str(kube),
            "TOGETHER_IMAGES_DIR": str(images),
            "TOGETHER_REAL_NODES_REQUIRED": "1",  # a real node that cannot start fails
            "TOGETHER_VM_GUEST": "1",
        },
        image=vm_image,
        timeout=1200,
    )
    passed = set(re.findall(r"^PASSED (\S+)", result.output, re.MULTILINE))
    assert result.returncode == 0 and passed == set(GUEST_TESTS), result.output[-20000:]
