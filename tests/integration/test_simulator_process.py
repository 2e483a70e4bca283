"""``python -m together_sim`` as a process: its API key never on a command line, and a SIGTERM
that is a clean stop (the stop code runs, the process exits 0)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from testkit.sim import SimulatorProcess

KEY = "sk-sim-secret-4f1c9e"


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _status(sim: SimulatorProcess, key: str) -> int:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{sim.base_url}/compute/regions", headers=headers, timeout=10).status_code


def test_the_documented_start_keeps_the_key_out_of_the_command_line(tmp_path: Path) -> None:
    # SimulatorProcess starts it as docs/simulator.md does: the key in TOGETHER_SIM_API_KEY.
    with SimulatorProcess(tmp_path / "env", time_scale=0, api_key=KEY) as sim:
        assert KEY not in _cmdline(sim.pid)
        assert _status(sim, KEY) == 200
        assert _status(sim, "sim-key") == 401  # the default is not accepted besides it
        assert _status(sim, KEY + "x") == 401


def test_a_key_file_is_read_and_the_command_line_flag_warns(tmp_path: Path) -> None:
    key_file = tmp_path / "keys"
    key_file.write_text(f"{KEY}\n\nsecond-key\n")
    with SimulatorProcess(
        tmp_path / "file",
        time_scale=0,
        api_key="unused",
        extra_args=("--api-key-file", str(key_file)),
    ) as sim:
        assert KEY not in _cmdline(sim.pid)
        assert (_status(sim, KEY), _status(sim, "second-key")) == (200, 200)
        assert (_status(sim, "unused"), _status(sim, "wrong")) == (401, 401)  # the file wins

    with SimulatorProcess(
        tmp_path / "flag", time_scale=0, api_key="unused", extra_args=("--api-key", "on-the-line")
    ) as sim:
        assert _status(sim, "on-the-line") == 200
    log = (tmp_path / "flag" / "simulator.log").read_text()
    assert "--api-key puts the key on the command line" in log and "TOGETHER_SIM_API_KEY" in log


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_an_empty_key_file_is_refused_with_the_fix(tmp_path: Path, content: str) -> None:
    key_file = tmp_path / "keys"
    key_file.write_text(content)
    sim = SimulatorProcess(tmp_path / "s", extra_args=("--api-key-file", str(key_file)))
    with pytest.raises(RuntimeError, match="holds no key; write one key a line"):
        sim.start()


def test_sigterm_runs_the_stop_and_exits_0(tmp_path: Path) -> None:
    """uvicorn raises a caught SIGTERM again once it stops serving; its default action would end
    the process before the simulator stops its control planes and removes their files."""
    sim = SimulatorProcess(tmp_path / "s", time_scale=0).start()
    sim.stop()
    assert sim.returncode == 0
