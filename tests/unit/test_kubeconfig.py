"""kube_config decoding: base64 (what Together sends), plain YAML (accepted), else a clear error."""

from __future__ import annotations

import base64
import json

import pytest

from together_api.kubeconfig import KubeconfigError, decode_kube_config
from together_facts.errors import TogetherError
from together_facts.hints import FixHints

YAML = (
    "apiVersion: v1\nkind: Config\nclusters:\n- name: train\n  cluster:\n"
    "    server: https://k8s.invalid:6443\nusers:\n- name: admin\n  user:\n    token: s3cret\n"
)


def test_base64_is_decoded_to_yaml() -> None:
    assert decode_kube_config(base64.b64encode(YAML.encode()).decode()) == YAML


def test_base64_wrapped_over_lines_is_decoded() -> None:
    encoded = base64.encodebytes(YAML.encode()).decode()  # 76-column lines, as `base64` prints
    assert "\n" in encoded.strip()
    assert decode_kube_config(encoded) == YAML


def test_plain_yaml_and_json_pass_through() -> None:
    assert decode_kube_config(YAML) == YAML
    as_json = json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": []})
    assert decode_kube_config(as_json) == as_json


@pytest.mark.parametrize("empty", ["", None, "  \n"])
def test_no_kubeconfig_yet_is_empty(empty: str | None) -> None:
    assert decode_kube_config(empty) == ""


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("not a kubeconfig: at all", "not base64"),
        (base64.b64encode(b"hello: world\n").decode(), "base64 of text that is not a kubeconfig"),
        (base64.b64encode(b"\x98\x00\xff").decode(), "not UTF-8 text"),
    ],
)
def test_anything_else_is_an_error_naming_the_field_without_the_secret(
    value: str, kind: str
) -> None:
    with pytest.raises(KubeconfigError) as raised:
        decode_kube_config(value, cluster_id="c-1")
    error = raised.value
    assert isinstance(error, TogetherError)
    assert error.field == "kube_config" and error.fix
    assert kind in error.message and error.message.startswith("cluster c-1: kube_config")
    assert value not in str(error)
    assert "the base URL (base_url or TOGETHER_BASE_URL)" in str(error)  # names no caller
    own = FixHints(base_url="--url")
    with pytest.raises(KubeconfigError, match=r"fix: check that the base URL \(--url\)"):
        decode_kube_config(value, hints=own)
