"""The VM tests (``make test-vm``): each boots the Debian 12 image of tools/vm/build.sh under QEMU
(testkit/vm.py), minutes under TCG, so ``make test`` does not collect them; ``make test-vm``
sets ``TOGETHER_VM_TESTS=1``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testkit.vm import image_dir, vm_unavailable

VM_TESTS_ENV = "TOGETHER_VM_TESTS"

collect_ignore_glob = [] if os.environ.get(VM_TESTS_ENV) == "1" else ["test_*.py"]


@pytest.fixture(scope="session")
def vm_image() -> Path:
    """The built image; under ``make test-vm`` (which builds it first) a missing piece fails."""
    image = image_dir()
    if why := vm_unavailable(image):
        pytest.fail(why)
    return image
