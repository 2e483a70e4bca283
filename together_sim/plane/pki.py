"""Certificates and the kubeconfig of one simulated cluster's control plane, shaped like a real
cluster's admin kubeconfig and made with ``openssl``, so the simulator needs no crypto package."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from together_sim.clusters.render import kubeconfig

__all__ = [
    "PRIVATE_UMASK",
    "ClusterPki",
    "ensure_pki",
    "kubeconfig_yaml",
    "node_credential_paths",
    "node_credentials",
    "write_private",
]

_DAYS = "3650"
_SIGNING = threading.Lock()
PRIVATE_UMASK = 0o077
"""Files a process creates under this umask are 0600 (directories 0700)."""


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file: a new file, created with that mode, then
    renamed over the old one, so an old file's looser mode is not kept either."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)


class _File:
    """A file of the PKI's directory, read as an attribute: ``pki.ca_cert`` is ``root/ca.crt``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, pki: ClusterPki, owner: object = None) -> Path:
        return pki.root / self.name


@dataclass(frozen=True)
class ClusterPki:
    """Paths of the files one control plane needs, under ``<cluster dir>/pki``.

    The API server serves TLS with a certificate signed by the cluster's own CA, and trusts client
    certificates signed by that CA (``--client-ca-file``): the kubeconfig carries the CA and an
    admin client certificate in group ``system:masters``, as a real cluster's admin kubeconfig does.
    Keys are ECDSA P-256 (fast to generate; Kubernetes accepts them for serving, clients and service
    account tokens). Generated with the ``openssl`` command, so the simulator needs no crypto
    package.

    Everything here is a credential (the admin key is in the kubeconfig), so each file is created
    owner-only: ``openssl`` runs under umask 077, and :func:`write_private` opens with mode 0600. A
    file is never created readable and narrowed afterwards, which would leave a window in which
    another local user could open it.
    """

    root: Path
    ca_cert = _File("ca.crt")
    ca_key = _File("ca.key")
    server_cert = _File("apiserver.crt")
    server_key = _File("apiserver.key")
    admin_cert = _File("admin.crt")
    admin_key = _File("admin.key")
    service_account_key = _File("sa.key")
    service_account_pub = _File("sa.pub")


def _openssl(*args: str, cwd: Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise RuntimeError(
            "together_sim --kubernetes needs the openssl command to make each cluster's "
            "certificates; install openssl (e.g. apt-get install openssl)"
        )
    done = subprocess.run(
        [binary, *args], cwd=cwd, capture_output=True, text=True, umask=PRIVATE_UMASK
    )
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def _new_key(path: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out", path.name, cwd=path.parent)  # fmt: skip


def _signed(pki: ClusterPki, key: Path, cert: Path, subject: str, extensions: str) -> None:
    """A certificate for ``key`` signed by the cluster CA, with ``extensions`` (x509v3 lines)."""
    csr, ext = cert.with_suffix(".csr"), cert.with_suffix(".ext")
    write_private(ext, extensions)
    _openssl("req", "-new", "-key", key.name, "-subj", subject, "-out", csr.name, cwd=pki.root)
    _openssl("x509", "-req", "-in", csr.name, "-CA", pki.ca_cert.name, "-CAkey", pki.ca_key.name,
             "-CAcreateserial", "-days", _DAYS, "-extfile", ext.name, "-out", cert.name,
             cwd=pki.root)  # fmt: skip
    csr.unlink()
    ext.unlink()


def _server_extensions(addresses: tuple[str, ...]) -> str:
    ips = ",".join(f"IP:{a}" for a in ("127.0.0.1", *addresses))
    return (
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage=serverAuth\nsubjectAltName={ips},DNS:localhost,"
        "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n"
    )


def _serving_cert(pki: ClusterPki, addresses: tuple[str, ...]) -> None:
    """The API server's certificate for loopback and ``addresses`` (the real nodes' bridge and
    the ``kubernetes`` Service address, where real nodes and pods reach it), re-signed when the
    addresses change (a restart with or without real nodes)."""
    marker = pki.root / "apiserver.addresses"
    wanted = " ".join(addresses)
    had = marker.read_text() if marker.exists() else ""  # none: made before real nodes
    if pki.server_cert.exists() and had == wanted:
        return
    if not pki.server_key.exists():
        _new_key(pki.server_key)
    extensions = _server_extensions(addresses)
    _signed(pki, pki.server_key, pki.server_cert, "/CN=kube-apiserver", extensions)
    write_private(marker, wanted)


def node_credential_paths(pki: ClusterPki, node_name: str) -> tuple[Path, Path]:
    """Where a real node's client certificate and key are (cert, key): named in its journal
    before :func:`node_credentials` makes them, so they go with the node."""
    return pki.root / f"node-{node_name}.crt", pki.root / f"node-{node_name}.key"


def node_credentials(pki: ClusterPki, node_name: str) -> tuple[Path, Path]:
    """A real node's kubelet client certificate (``system:node:<name>`` in ``system:nodes``, as
    the Node authorizer wants) and key, signed by the cluster's CA: (cert, key)."""
    cert, key = node_credential_paths(pki, node_name)
    with _SIGNING:  # nodes start in threads of their own; openssl's serial file is not shared
        if not cert.exists():
            _new_key(key)
            _signed(
                pki,
                key,
                cert,
                f"/O=system:nodes/CN=system:node:{node_name}",
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=clientAuth\n",
            )
    return cert, key


def ensure_pki(root: Path, cluster_id: str, addresses: tuple[str, ...] = ()) -> ClusterPki:
    """Create the CA, serving, admin and service-account keys once; reuse them after that (a
    restarted simulator keeps each cluster's kubeconfig valid). The serving certificate also
    names ``addresses``."""
    pki = ClusterPki(root)
    if pki.service_account_pub.exists():
        _serving_cert(pki, addresses)
        return pki
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    _new_key(pki.ca_key)
    _openssl("req", "-x509", "-new", "-key", pki.ca_key.name, "-days", _DAYS,
             "-subj", f"/CN=together-sim-ca-{cluster_id[:8]}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
             "-out", pki.ca_cert.name, cwd=root)  # fmt: skip
    _serving_cert(pki, addresses)
    _new_key(pki.admin_key)
    _signed(
        pki,
        pki.admin_key,
        pki.admin_cert,
        "/O=system:masters/CN=together-admin",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=clientAuth\n",
    )
    _new_key(pki.service_account_key)
    _openssl("pkey", "-in", pki.service_account_key.name, "-pubout",
             "-out", pki.service_account_pub.name, cwd=root)  # fmt: skip
    return pki


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def kubeconfig_yaml(pki: ClusterPki, name: str, server: str) -> str:
    """The admin kubeconfig of a control plane: its CA and a client certificate, embedded."""
    user = {
        "client-certificate-data": _b64(pki.admin_cert),
        "client-key-data": _b64(pki.admin_key),
    }
    return kubeconfig(name, server, _b64(pki.ca_cert), user)
