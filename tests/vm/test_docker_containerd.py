"""A host with Docker's containerd (issue 53, point 3): in a second boot of the VM image, Docker's
``containerd.io`` layout replaces Debian's containerd and runc, and ``scripts/node-deps.sh`` uses
what is there: it exits 0, installs and removes nothing, and Docker's containerd keeps running.

The guest has no network, so containerd.io is a stand-in with its files and unit: a package of
that name that provides, conflicts with and replaces ``containerd`` and ``runc`` (as Docker's
does), ships ``containerd``, ``ctr``, the runc shim and ``/usr/bin/runc`` (Debian's binaries,
copied), Docker's ``containerd.service`` and its ``config.toml`` with the CRI plugin off."""

from __future__ import annotations

import re
from pathlib import Path

from testkit.vm import run_in_vm

DOCKER_HOST = r"""set -e
stage=/tmp/containerd.io
mkdir -p $stage/DEBIAN $stage/usr/bin $stage/lib/systemd/system $stage/etc/containerd
cp /usr/bin/containerd /usr/bin/ctr /usr/bin/containerd-shim-runc-v2 $stage/usr/bin/
cp /usr/sbin/runc $stage/usr/bin/runc
cat >$stage/DEBIAN/control <<'END'
Package: containerd.io
Version: 1.7.27-1
Architecture: amd64
Maintainer: together-gpu-clusters tests
Provides: containerd, runc
Conflicts: containerd, runc
Replaces: containerd, runc
Description: stand-in for Docker's containerd.io: its files and its unit
END
cat >$stage/lib/systemd/system/containerd.service <<'END'
[Unit]
Description=containerd container runtime
After=network.target local-fs.target
[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/bin/containerd
Type=notify
Delegate=yes
KillMode=process
Restart=always
[Install]
WantedBy=multi-user.target
END
printf 'disabled_plugins = ["cri"]\n' >$stage/etc/containerd/config.toml
dpkg --purge --force-depends containerd runc >/dev/null
dpkg-deb --build $stage /tmp/containerd.io.deb >/dev/null
dpkg -i /tmp/containerd.io.deb >/dev/null
systemctl daemon-reload
systemctl start containerd
ctr version >/dev/null
echo "DOCKER containerd.io $(systemctl is-active containerd)"
before="$(dpkg-query -W -f='${Package} ${Version} ${Status}\n' | sort)"
set +e
bash scripts/node-deps.sh
echo "NODE-DEPS exit $?"
set -e
after="$(dpkg-query -W -f='${Package} ${Version} ${Status}\n' | sort)"
[ "$before" = "$after" ] && echo "PACKAGES unchanged"
status="$(dpkg-query -W -f='${Package} ${Status}' containerd.io)"
echo "AFTER $status $(systemctl is-active containerd)"
ctr version >/dev/null && echo "CTR answers"
.venv/bin/python -c 'from together_sim.nodes import pool, real
print("REAL-NODES", repr(pool.real_nodes_unavailable()), real.RUNC)'
"""


def test_node_deps_uses_dockers_containerd_and_leaves_docker_working(vm_image: Path) -> None:
    result = run_in_vm(DOCKER_HOST, image=vm_image, timeout=600)
    out = result.output
    assert result.returncode == 0, out
    lines = [line for line in out.splitlines() if re.match(r"^[A-Z-]+ ", line)]
    assert lines == [
        "DOCKER containerd.io active",
        "NODE-DEPS exit 0",
        "PACKAGES unchanged",
        "AFTER containerd.io install ok installed active",
        "CTR answers",
        "REAL-NODES '' /usr/bin/runc",
    ], out
