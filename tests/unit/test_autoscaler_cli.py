"""The autoscaler command's own words: an API error it cannot start past names its flag and its
environment, never the Pulumi stack config the provider's users set."""

from __future__ import annotations

import http.server
import logging
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from together_autoscaler.cli import main

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
"""


class _Refusing(http.server.BaseHTTPRequestHandler):
    """Together refusing the command: every request answered with the test's `status`."""

    status = 404

    def do_GET(self) -> None:
        body = b'{"error": {"message": "no such cluster"}}'
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def together(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Refusing]]:
    """The refusing server as TOGETHER_BASE_URL; what `main` sets up for a process (the signal
    handlers, the logging) is put back after."""
    handlers = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    root = logging.getLogger()
    logged = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in ("httpx", "httpx2")}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("TOGETHER_API_KEY", "sk-autoscaler-cli")
    monkeypatch.setenv("TOGETHER_BASE_URL", f"http://127.0.0.1:{server.server_port}")
    try:
        yield _Refusing
    finally:
        server.shutdown()
        server.server_close()
        for number, handler in handlers.items():
            signal.signal(number, handler)
        root.handlers[:], root.level = logged
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@pytest.mark.parametrize(
    ("status", "error", "fix"),
    [
        (
            404,
            "NotFoundError",
            "(fix: check --cluster-id, and that the base URL (TOGETHER_BASE_URL) is Together's",
        ),
        (
            401,
            "AuthenticationError",
            "(fix: check the API key; set TOGETHER_API_KEY to the cluster's API key)",
        ),
    ],
)
def test_an_api_error_at_start_names_the_commands_flag_and_environment(
    together: type[_Refusing],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    status: int,
    error: str,
    fix: str,
) -> None:
    monkeypatch.setattr(together, "status", status)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    flags = ["--cluster-id", "c-gone", "--kubeconfig", str(kubeconfig), "--metrics-port", "0"]
    assert main([*flags, "--min-preemptible-gpus", "0", "--max-preemptible-gpus", "8"]) == 1
    printed = capsys.readouterr().err
    assert f"cannot start: {error}: GET http://127.0.0.1:" in printed
    assert fix in printed
    assert "pulumi" not in printed.lower() and "together:" not in printed
