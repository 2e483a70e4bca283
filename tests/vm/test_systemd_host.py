"""Real nodes' cgroups where users run them (issue 53): inside the VM, a cgroup v2 host with
systemd, tests/vm/guest's tests pass: the pool's cgroups go in a delegated scope where a node's
cgroup gets the kubelet's controllers, and neither a stop nor a SIGKILL and ``cleanup`` leaves a
unit, a failed unit or a cgroup of ours."""

from __future__ import annotations

import re
from pathlib import Path

from testkit.vm import REPO, run_in_vm

GUEST_TESTS = (
    "tests/vm/guest/test_systemd_cgroups.py::"
    "test_the_pools_cgroups_are_in_a_delegated_scope_and_a_stop_removes_it",
    "tests/vm/guest/test_systemd_cgroups.py::"
    "test_after_a_sigkill_the_scope_stays_until_cleanup_stops_it",
)


def test_the_systemd_hosts_guest_tests_pass(vm_image: Path) -> None:
    python = REPO / ".venv" / "bin" / "python"
    result = run_in_vm(
        f"{python} -m pytest -p no:cacheprovider -v -rA {' '.join(GUEST_TESTS)}",
        env={"TOGETHER_VM_GUEST": "1"},
        image=vm_image,
        timeout=900,
    )
    passed = set(re.findall(r"^PASSED (\S+)", result.output, re.MULTILINE))
    assert result.returncode == 0 and passed == set(GUEST_TESTS), result.output[-20000:]
