"""Tests that run inside the VM (``make test-vm`` boots it and sets ``TOGETHER_VM_GUEST=1``
there): on any other host they are not collected, since they change its systemd units."""

from __future__ import annotations

import os

GUEST_ENV = "TOGETHER_VM_GUEST"

collect_ignore_glob = [] if os.environ.get(GUEST_ENV) == "1" else ["test_*.py"]
