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

from together_autoscaler import cli
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


def _start(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    code = main(["--cluster-id", "c-1", "--min-preemptible-gpus", "0",
                 "--max-preemptible-gpus", "8", "--metrics-port", "0", *flags])  # fmt: skip
    return code, capsys.readouterr().err


def test_a_missing_kubeconfig_names_the_flag_and_the_in_cluster_case(
    together: type[_Refusing], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, printed = _start(capsys, "--kubeconfig", str(tmp_path / "nonexistent"))
    assert code == 1
    assert f"cannot start: InputError: --kubeconfig {tmp_path / 'nonexistent'}: no such file" in (
        printed
    )
    assert "pass the path of a kubeconfig file, such as ~/.kube/config" in printed
    assert "inside a pod, leave --kubeconfig out to use the pod's service account" in printed


def test_a_file_that_is_no_kubeconfig_names_the_flag(
    together: type[_Refusing], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("just: [a, list]\n")
    code, printed = _start(capsys, "--kubeconfig", str(bad))
    assert code == 1
    assert f"--kubeconfig {bad}: not a usable kubeconfig" in printed
    assert "leave --kubeconfig out" in printed


def test_outside_a_pod_without_kubeconfig_says_to_pass_one(
    together: type[_Refusing],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cli, "SERVICE_ACCOUNT", tmp_path / "serviceaccount")  # no pod here
    code, printed = _start(capsys)
    assert code == 1
    assert "no --kubeconfig, and no in-cluster config: this is not a pod" in printed
    assert "outside a cluster, pass --kubeconfig FILE" in printed
    assert "Traceback" not in printed


def test_a_missing_api_key_exits_2_as_the_help_says(
    together: type[_Refusing], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOGETHER_API_KEY")
    code, printed = _start(capsys)
    assert code == 2
    assert "TOGETHER_API_KEY is not set" in printed


def test_help_shows_every_default_and_unit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for words in (
        "seconds between scans (default: 10)",
        "(default: 600)",
        "(default: 900)",
        "(default: 8085)",
        "USD per hour",
        "50% of the on-demand rate",
        "placeholder rates",
        "(default: no cap)",
        "2 bad flags, or TOGETHER_API_KEY not set",
    ):
        assert words in shown


class _StuckScan:
    """A controller whose scan never ends: stop is asked for at once, and the scan ignores it."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop, self.unstick = stop, threading.Event()
        self.elector = self
        self.released = 0

    def run(self, stop: threading.Event) -> None:
        stop.set()  # SIGTERM, as the signal handler would
        self.unstick.wait()

    def release(self) -> None:
        self.released += 1


def test_a_dropped_scan_still_releases_the_lease(
    together: type[_Refusing], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[_StuckScan] = []

    def build(args: object, stop: threading.Event) -> _StuckScan:
        built.append(_StuckScan(stop))
        return built[0]

    monkeypatch.setattr(cli, "_build", build)
    monkeypatch.setattr(cli, "EXIT_GRACE_SECONDS", 0.01)
    try:
        code, printed = _start(capsys)
    finally:
        built[0].unstick.set()
    assert code == 0
    assert "did not end" in printed
    assert built[0].released == 1
