"""Run the Together simulator as a subprocess and drive its ``/_sim`` admin API, so tests talk to it
over real HTTP as a user would, and move its virtual clock instead of sleeping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from testkit.realnodes import done_beside_others, real_nodes_beside_others, real_nodes_or_skip
from testkit.wait import wait_for
from together_sim.banner import read_banner

__all__ = ["SimulatorProcess"]


class SimulatorProcess:
    """``python -m together_sim --port 0 --admin`` on 127.0.0.1.

    ``base_url`` ends in ``/v1`` (for :class:`TogetherClient`); ``root_url`` has
    no path (for the official SDK, which adds ``/v1`` itself). Used by the ``simulator`` fixture
    in ``tests/conftest.py``::

        def test_something(simulator: SimulatorProcess) -> None:
            client = TogetherClient(simulator.api_key, simulator.base_url)
            cluster = client.create_cluster(...)
            simulator.advance(360)            # provisioning takes 6 simulated minutes
            assert client.get_cluster(cluster.cluster_id).is_ready

    For another time scale use indirect parametrisation::

        @pytest.mark.parametrize("simulator", [{"time_scale": 60}], indirect=True)

    ``kubernetes=True`` runs ``--kubernetes`` (a real control plane per cluster; pass ``kube_bin``,
    e.g. :func:`testkit.kube.kube_bin_or_skip`); :meth:`control_plane` waits for one cluster's,
    and ``testkit.kube.KubeClient`` talks to it.
    """

    def __init__(
        self,
        state_dir: Path,
        *,
        time_scale: float = 1.0,
        api_key: str = "sim-key",
        extra_args: tuple[str, ...] = (),
        startup_timeout: float = 20.0,
        kubernetes: bool = False,
        kube_bin: Path | None = None,
        persist: bool = True,
        own_session: bool = False,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.persist = persist
        """Whether the simulator keeps its state in ``state_dir`` (``--state-dir``); without,
        the directory holds only its log, and the state lives in memory and a temporary dir."""
        self.own_session = own_session
        """Start it in a session (and process group) of its own: a test may kill the group."""
        self._tests_lock: int | None = None
        self.time_scale = time_scale
        self.api_key = api_key
        self.extra_args = extra_args
        self.startup_timeout = startup_timeout
        self.kubernetes = kubernetes
        self.kube_bin = kube_bin
        self.base_url = ""
        self.root_url = ""
        self._proc: subprocess.Popen[str] | None = None
        self.returncode: int | None = None
        """The exit status of the last stop: 0 for a clean stop on SIGTERM, -9 if it was killed."""
        self._admin: httpx.Client | None = None

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> SimulatorProcess:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "together_sim",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--admin",
            *(("--state-dir", str(self.state_dir)) if self.persist else ()),
            "--time-scale",
            str(self.time_scale),
            *self.extra_args,
        ]
        if self.kubernetes:
            command.append("--kubernetes")
            if self.kube_bin is not None:
                command += ["--kube-bin", str(self.kube_bin)]
        if "--real-nodes" in self.extra_args and self._tests_lock is None:
            self._tests_lock = real_nodes_beside_others()
        log = (self.state_dir / "simulator.log").open("a")
        # The key goes in the environment, as docs/simulator.md says: never on a command line.
        env = {**os.environ, "TOGETHER_SIM_API_KEY": self.api_key}
        self._proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            start_new_session=self.own_session,
        )
        log.close()
        self.root_url = self._read_banner().rstrip("/").removesuffix("/v1")
        self.base_url = f"{self.root_url}/v1"
        self._admin = httpx.Client(base_url=self.root_url, timeout=10.0)
        return self

    def _read_banner(self) -> str:
        assert self._proc is not None
        url = read_banner(self._proc, self.startup_timeout, 0.1)
        if url is not None:
            return url
        self.stop()
        log = (self.state_dir / "simulator.log").read_text()
        raise RuntimeError(f"simulator did not start; its log:\n{log}")

    @property
    def started_pid(self) -> int | None:
        """The process's pid once it is spawned, even before its banner (None before)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def pid(self) -> int:
        assert self._proc is not None, "simulator is not running"
        return self._proc.pid

    def wait(self, timeout: float) -> int:
        """Wait for the process to end by itself (a test signalled it) and return its status;
        :meth:`stop` then sends nothing more (a second SIGTERM during a stop is a hard stop)."""
        assert self._proc is not None, "simulator is not running"
        return self._proc.wait(timeout)

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        if self._proc is not None:
            self._proc.terminate()
            try:
                # With --kubernetes the simulator first stops every control plane.
                self._proc.wait(timeout=40 if self.kubernetes else 10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self.returncode = self._proc.returncode
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        done_beside_others(self._tests_lock)
        self._tests_lock = None

    def __enter__(self) -> SimulatorProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -------------------------------------------------------------------- admin

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        assert self._admin is not None, "simulator is not running"
        response = self._admin.request(method, path, json=body)
        response.raise_for_status()
        return response.json()

    def advance(self, seconds: float) -> None:
        """Move the virtual clock forward; due lifecycle events happen at once."""
        self._call("POST", "/_sim/clock/advance", {"seconds": seconds})

    def set_faults(self, **faults: Any) -> None:
        """error_rate, error_statuses, retry_after, latency_ms, drop_rate, lost_answer_rate,
        fail_provisioning."""
        self._call("PUT", "/_sim/faults", faults)

    def clear_faults(self) -> None:
        self._call("DELETE", "/_sim/faults")

    def set_capacity(
        self,
        region: str,
        gpu_type: str,
        *,
        standard_gpus: int | None = None,
        preemptible_gpus: int | None = None,
    ) -> dict[str, Any]:
        body = {
            "region": region,
            "gpu_type": gpu_type,
            "standard_gpus": standard_gpus,
            "preemptible_gpus": preemptible_gpus,
        }
        result: dict[str, Any] = self._call("PUT", "/_sim/capacity", body)
        return result

    def reclaim(
        self,
        cluster_id: str,
        nodes: int = 1,
        node_ids: list[str] | None = None,
        drain_seconds: float | None = None,
    ) -> list[str]:
        """Reclaim preemptible nodes now (the oldest ``nodes``, or exactly ``node_ids``), with
        a drain window of ``drain_seconds`` (None: Together's 300 s); returns the node ids that
        start draining."""
        body: dict[str, Any] = {"nodes": nodes}
        if node_ids is not None:
            body["node_ids"] = node_ids
        if drain_seconds is not None:
            body["drain_seconds"] = drain_seconds
        result: list[str] = self._call("POST", f"/_sim/clusters/{cluster_id}/reclaim", body)[
            "reclaimed"
        ]
        return result

    def now(self) -> float:
        """The simulated time (epoch seconds)."""
        return float(self._call("GET", "/_sim/clock")["epoch"])

    def mirrored(self, cluster_id: str, timeout: float = 30.0) -> None:
        """Wait (real time) until the cluster's Kubernetes side has caught up with the simulated
        world as it is now: a pass that started after this call has finished. The pass in flight
        may have started before the call, so this waits for two more complete passes (the
        simulator's ``passes``), over a world at least as late as now: with a frozen clock,
        ``mirrored_at`` alone is the same for a pass before the call and one after it."""
        now = self.now()
        seen = self.kubernetes_status().get(cluster_id, {}).get("passes", 0)

        def passed_twice() -> bool:
            status = self.kubernetes_status().get(cluster_id, {})
            return status.get("passes", 0) >= seen + 2 and (status.get("mirrored_at") or 0.0) >= now

        wait_for(
            passed_twice,
            f"the Kubernetes side of {cluster_id} to pass twice over {now}",
            timeout=timeout,
            interval=0.05,
        )

    def kubernetes_status(self) -> dict[str, dict[str, Any]]:
        """Per cluster id: {"state", "server", "start_seconds", "pids", "mirrored_at", "error",
        "passes"} (--kubernetes)."""
        result: dict[str, dict[str, Any]] = self._call("GET", "/_sim/kubernetes")["clusters"]
        return result

    def control_plane(self, cluster_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Wait (real time: processes starting) until the cluster's control plane is running.

        It starts once the cluster's data plane is up, so advance the clock through provisioning
        first. Raises with the state and error when it failed or never came up."""

        def running() -> dict[str, Any] | None:
            status: dict[str, Any] = self.kubernetes_status().get(cluster_id, {})
            if status.get("state") == "failed":
                raise RuntimeError(f"control plane of {cluster_id} failed: {status}")
            return status if status.get("state") == "running" else None

        return wait_for(running, f"the control plane of {cluster_id} running", timeout=timeout)

    def fail(self, cluster_id: str) -> None:
        """Make the cluster's provisioning fail now."""
        self._call("POST", f"/_sim/clusters/{cluster_id}/fail")

    def autoscale(self, cluster_id: str, num_gpus: int) -> None:
        """Move an `auto_scale` cluster's standard count as Together's autoscaler would (only
        inside its bounds)."""
        self._call("POST", f"/_sim/clusters/{cluster_id}/autoscale", {"num_gpus": num_gpus})

    def requests(self) -> list[dict[str, Any]]:
        """Every /v1 request so far, in order: {"method", "path" (template), "status"}, and a
        PUT's "body" (its JSON)."""
        result: list[dict[str, Any]] = self._call("GET", "/_sim/requests")["requests"]
        return result

    def request_counts(self) -> dict[tuple[str, str, int], int]:
        """Counts per (method, path template, status); status 0 = dropped connection."""
        counts = self._call("GET", "/_sim/requests")["counts"]
        return {(c["method"], c["path"], c["status"]): c["count"] for c in counts}

    def reset_requests(self) -> None:
        self._call("DELETE", "/_sim/requests")


def real_node_simulator(
    state_dir: Path,
    kube_bin: Path,
    real_nodes: int,
    *extra: str,
    persist: bool = True,
    own_session: bool = False,
) -> SimulatorProcess:
    """A simulator at the demo's 60x with up to ``real_nodes`` real nodes (skips, with the
    reason, where real nodes cannot run)."""
    images = real_nodes_or_skip(kube_bin)
    return SimulatorProcess(
        state_dir,
        time_scale=60,
        kubernetes=True,
        kube_bin=kube_bin,
        persist=persist,
        own_session=own_session,
        extra_args=(
            "--provisioning-seconds", "60", "--real-nodes", str(real_nodes),
            "--images", str(images), *extra,
        ),
    )  # fmt: skip
