"""`python -m together_sim` as a user starts it from the docs: the URL it prints is the host-only
base URL that Together's SDK, `tg` and this provider all take, and a simulator started without
`--time-scale` (real time: minutes per create) says so instead of leaving a first `up` hanging."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from together_sim.__main__ import api_keys, parse_args, time_scale_note


def test_no_time_scale_warns_with_the_flag_to_pass() -> None:
    args = parse_args([])
    note = time_scale_note(args.time_scale, args.provisioning_seconds)
    assert note is not None
    assert "real time" in note and "360 s" in note and "--time-scale 60" in note


def test_an_explicit_time_scale_gives_no_warning() -> None:
    for value in ("1", "60", "0"):
        args = parse_args(["--time-scale", value])
        assert time_scale_note(args.time_scale, args.provisioning_seconds) is None


def test_the_start_line_is_the_host_only_base_url() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "together_sim", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=20)
    prefix = "together simulator listening on http://127.0.0.1:"
    assert line.startswith(prefix), line
    assert line[len(prefix) :].isdigit(), f"the URL has a path: {line}"
    assert "--time-scale 60" in stderr


def test_the_api_key_comes_from_a_file_then_the_flag_then_the_environment(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("from-file\n\nsecond\n")
    env = {"TOGETHER_SIM_API_KEY": "from-env"}
    assert api_keys(parse_args(["--api-key-file", str(keys), "--api-key", "x"]), env) == (
        ("from-file", "second"),
        "",
    )
    flag, warning = api_keys(parse_args(["--api-key", "on-the-line"]), env)
    assert flag == ("on-the-line",) and "(ps)" in warning and "TOGETHER_SIM_API_KEY" in warning
    assert api_keys(parse_args([]), env) == (("from-env",), "")
    assert api_keys(parse_args([]), {}) == (("sim-key",), "")


def test_an_unreadable_key_file_names_the_flag_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"--api-key-file: cannot read .*missing.*one key a line"):
        api_keys(parse_args(["--api-key-file", str(tmp_path / "missing")]), {})


def test_a_port_in_use_is_one_sentence_and_leaves_no_state_dir(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        state = tmp_path / ".sim"
        done = subprocess.run(
            [sys.executable, "-m", "together_sim", "--port", str(port), "--state-dir", str(state),
             "--time-scale", "60"],
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"together_sim: port {port} on 127.0.0.1 is in use: another simulator (`make demo` runs "
        "one on 8787) or another server has it; stop it (`make demo-down`), or pass another "
        "--port (0: any free port)"
    )
    assert "Traceback" not in done.stderr
    assert not state.exists()


def test_a_stop_asked_while_the_simulator_starts_stops_the_server_once_it_serves() -> None:
    """SIGTERM before the server takes the signals over is noted, not acted on (the start, with
    whatever it made on the host, finishes), and the server stops as soon as it takes them."""
    import signal
    from types import SimpleNamespace
    from typing import Any, cast

    import uvicorn

    from together_sim.__main__ import _EarlySignals, _Server

    early = _EarlySignals()
    early.install()
    try:
        signal.raise_signal(signal.SIGTERM)  # the default action would end this test's process
        assert early.signal == signal.SIGTERM
        runtime = SimpleNamespace(stopping=SimpleNamespace(set=lambda: None))
        server = _Server(uvicorn.Config(app="together_sim.app:nothing"), cast(Any, runtime), early)
        assert not server.should_exit
        with server.capture_signals():
            assert server.should_exit  # stops at once, then closes the runtime as any stop
    finally:
        early.restore()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_without_an_early_stop_the_server_serves() -> None:
    from types import SimpleNamespace
    from typing import Any, cast

    import uvicorn

    from together_sim.__main__ import _EarlySignals, _Server

    early = _EarlySignals()
    server = _Server(
        uvicorn.Config(app="together_sim.app:nothing"), cast(Any, SimpleNamespace()), early
    )
    with server.capture_signals():
        assert not server.should_exit


def test_the_control_plane_timeout_is_seconds_above_zero() -> None:
    assert parse_args([]).control_plane_timeout == 90.0
    given = parse_args(["--kubernetes", "--control-plane-timeout", "600"])
    assert given.control_plane_timeout == 600
    for bad in ("0", "-5"):
        with pytest.raises(SystemExit):
            parse_args(["--kubernetes", "--control-plane-timeout", bad])
