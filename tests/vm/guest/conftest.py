"""Tests that run inside the VM (``make test-vm`` boots it and sets ``TOGETHER_VM_GUEST=1``
there): on any other host they are not collected, since they change its systemd units."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testkit.kube import kube_bin_or_skip
from testkit.realnodes import real_nodes_or_skip

GUEST_ENV = "TOGETHER_VM_GUEST"

collect_ignore_glob = [] if os.environ.get(GUEST_ENV) == "1" else ["test_*.py"]


@pytest.fixture(scope="session")
def kube_bin() -> Path:
    """The control plane and kubelet shared into the guest; real nodes must run here."""
    found = kube_bin_or_skip()
    real_nodes_or_skip(found)
    return found
