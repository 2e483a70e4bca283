"""Turn the ``kube_config`` field of a cluster into kubeconfig YAML, leniently, since no document
pins its encoding. Pure: no I/O."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from together_facts.errors import TogetherError
from together_facts.hints import FixHints

__all__ = ["KubeconfigError", "decode_kube_config", "looks_like_kubeconfig"]

_KUBECONFIG_KEY: Final = re.compile(r"""(?:^|[{,])\s*["']?(apiVersion|clusters)["']?\s*:""", re.M)


class KubeconfigError(TogetherError):
    """``kube_config`` is neither base64-encoded kubeconfig YAML nor kubeconfig YAML."""


def looks_like_kubeconfig(text: str) -> bool:
    """A kubeconfig document has an ``apiVersion`` or ``clusters`` key (YAML or JSON).

    Deliberately loose: it only has to tell a kubeconfig from base64 and from garbage;
    pulumi-kubernetes and kubectl judge the rest."""
    return _KUBECONFIG_KEY.search(text) is not None


def decode_kube_config(
    value: str | None, *, cluster_id: str | None = None, hints: FixHints | None = None
) -> str:
    """The kubeconfig YAML inside ``value``: base64 decoded, or ``value`` itself if it is YAML.

    Together's API returns ``kube_config`` base64-encoded: the official CLI (``tg clusters
    get-credentials``, together 3.1.1) base64-decodes it before writing the file. No document pins
    the encoding, though, so a value that already is a kubeconfig (YAML, or its JSON form) is
    accepted as it is. An empty value stays empty (a cluster may have none before its control
    plane is up). Raises :class:`KubeconfigError` when neither reading gives a kubeconfig; its fix
    names where the caller's user sets the base URL (``hints``, as the client's). The error never
    echoes the value: it is a secret.
    """
    if not value or not value.strip():
        return ""
    compact = "".join(value.split())
    try:
        raw: bytes | None = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raw = None
    try:
        decoded = raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        decoded = None
    if decoded is not None and looks_like_kubeconfig(decoded):
        return decoded
    if looks_like_kubeconfig(value):
        return value
    if raw is None:
        kind = "not base64"
    elif decoded is None:
        kind = "base64 of something that is not UTF-8 text"
    else:
        kind = "base64 of text that is not a kubeconfig"
    where = f"cluster {cluster_id}: " if cluster_id else ""
    raise KubeconfigError(
        f"{where}kube_config from Together is {kind}, and not kubeconfig YAML either "
        f"({len(value)} characters; the value is a secret and is not shown)",
        field="kube_config",
        fix=f"check that the base URL ({(hints or FixHints()).base_url}) points at Together's API; "
        "compare with `tg clusters get-credentials <cluster id> --file -`",
    )
