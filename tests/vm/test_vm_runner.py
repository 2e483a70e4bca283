"""The VM runner itself (testkit/vm.py): a command's output and exit status come back from a
guest that is a cgroup v2 host with systemd, and no QEMU or file of a run outlives it."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from testkit.vm import run_in_vm


def test_a_command_runs_on_a_cgroup_v2_host_with_systemd_and_its_status_comes_back(
    vm_image: Path,
) -> None:
    result = run_in_vm(
        "echo out; echo err >&2; stat -fc %T /sys/fs/cgroup; ps -p 1 -o comm=;"
        " test -d /run/systemd/system && echo booted-by-systemd;"
        " .venv/bin/python -c 'import together_sim; print(together_sim.__name__)'; exit 7",
        image=vm_image,
        timeout=600,
    )
    assert result.returncode == 7, result.output
    assert result.output.splitlines() == [
        "out", "err", "cgroup2fs", "systemd", "booted-by-systemd", "together_sim",
    ]  # fmt: skip


def _our_qemus() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True, check=True)
    return [line for line in ps.stdout.splitlines() if "together-vm-" in line and "qemu" in line]


def test_a_guest_that_does_not_finish_is_killed_and_its_files_removed(vm_image: Path) -> None:
    before = set(Path(tempfile.gettempdir()).glob("together-vm-*"))
    with pytest.raises(TimeoutError, match="still running after 5 s"):
        run_in_vm("exec sleep 100000", image=vm_image, timeout=5)
    assert _our_qemus() == []
    assert set(Path(tempfile.gettempdir()).glob("together-vm-*")) == before
