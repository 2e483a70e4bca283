"""CLI: ``python -m together_sim [--port 0] [--admin] ...``, how tests, ``make demo`` and people
start the simulator (``--help`` lists the endpoints, errors and admin calls)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Final

try:
    import starlette  # noqa: F401  (the app's framework: checked here for the message below)
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ModuleNotFoundError as missing:  # exercised by tests/integration/test_install.py
    sys.exit(
        f"together_sim: {missing.name} is not installed; the simulator is an extra: "
        "pip install 'together-gpu-clusters[simulator]' (make venv installs it)"
    )

from together_sim.app import ABORT_EXTENSION, create_app
from together_sim.banner import BANNER
from together_sim.runtime import SimulatorConfig, SimulatorRuntime
from together_sim.timings import CONTROL_PLANE_START_SECONDS, Timings

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_API_KEY",
    "api_keys",
    "cleanup",
    "main",
    "parse_args",
    "time_scale_note",
]

API_KEY_ENV = "TOGETHER_SIM_API_KEY"
DEFAULT_API_KEY = "sim-key"

_EPILOG = """\
After a crash (a simulator with --real-nodes killed with SIGKILL): python -m together_sim cleanup
removes what its real nodes left on the machine, and says what it could not.

API: /v1/compute/clusters[/{id}], /v1/compute/regions, /v1/compute/clusters/storage/volumes[/{id}]
and /v3/whoami. Together's SDK and tg want the base URL without /v1 (they add it); ours takes both.
Request bodies: unknown fields are ignored and named in X-Together-Sim-Ignored-Fields; null means
"not given". kube_config is base64-encoded, as Together's is.

errors: every error body is {"error": {"message", "type", "param", "code"}}; 401 for a
missing or unknown bearer key, 409 "Out of stock" when standard capacity runs out, 409 when
deleting a shared volume a cluster still uses.

admin endpoints (with --admin; no auth, never faulted, never in the request log):
  GET  /_sim/clock                       virtual time
  POST /_sim/clock/advance               {"seconds": 60}
  GET|PUT|DELETE /_sim/faults            {"error_rate", "error_statuses", "retry_after",
                                          "latency_ms", "drop_rate", "lost_answer_rate",
                                          "lost_answer_methods", "fail_provisioning"}
  PUT  /_sim/capacity                    {"region", "gpu_type", "standard_gpus"?,
                                          "preemptible_gpus"?}: the pool's total, used and
                                          spare (default 256 standard, 64 preemptible)
  POST /_sim/clusters/{id}/reclaim       {"nodes": 1} or {"node_ids": [...]}, "drain_seconds"?:
                                         notice, drain (300 s unless given), removal
  GET  /_sim/kubernetes                  control planes (--kubernetes): state, server, pids
  POST /_sim/clusters/{id}/fail          provisioning fails (ACCEPTANCE_TESTS_FAILED)
  GET|DELETE /_sim/requests              request log: counts and ordered list
"""


class _EarlySignals:
    """SIGTERM and SIGINT from the first line of :func:`main` until the server takes them over:
    noted, not acted on. A stop asked while the simulator starts (its real-node pool writing its
    journal, claiming the bridge, starting the image seed) lets that start finish, then stops the
    server at once and undoes the pool like any stop, instead of SIGTERM's default action ending
    the process with all of it left on the host (or SIGINT's KeyboardInterrupt cutting the start
    short with nothing to undo it)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._original: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._original = {sig: signal.signal(sig, self._note) for sig in _STOP_SIGNALS}

    def _note(self, sig: int, frame: FrameType | None) -> None:
        self.signal = self.signal or sig

    def restore(self) -> None:
        """Back to the handlers before :meth:`install`: a signal during the stop that follows
        takes the default action, a hard stop."""
        for sig, handler in self._original.items():
            signal.signal(sig, handler)
        self._original = {}


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Server(uvicorn.Server):
    """uvicorn's server, stopping cleanly on SIGTERM or SIGINT:

    * from the signal on, every /v1 request gets 503 "stopping", so a script that finds the
      port answering does not take a stopping simulator for a running one;
    * the signal is not raised again once serving ends. uvicorn does that, and SIGTERM's default
      action then ends the process before ``runtime.close()`` has stopped the control planes
      and removed the files of gone clusters."""

    def __init__(
        self, config: uvicorn.Config, runtime: SimulatorRuntime, early: _EarlySignals
    ) -> None:
        super().__init__(config)
        self._runtime = runtime
        self._early = early

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._runtime.stopping.set()
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in _STOP_SIGNALS}
        if self._early.signal is not None:  # asked while the simulator started: stop now
            self.handle_exit(self._early.signal, None)
        try:
            yield
        finally:  # a second signal during the stop takes the default action: a hard stop
            for sig, handler in original.items():
                signal.signal(sig, handler)


class _AbortableH11Protocol(H11Protocol):
    """Lets the app drop a connection without any response (the ``drop_rate`` fault)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inner = self.app

        async def app(scope: Any, receive: Any, send: Any) -> None:
            scope.setdefault("extensions", {})[ABORT_EXTENSION] = self._abort
            await inner(scope, receive, send)

        self.app = app

    def _abort(self) -> None:
        self.transport.abort()


_PARSER: Final[dict[str, Any]] = {
    "prog": "python -m together_sim",
    "description": "Local simulator of Together's GPU clusters API (/v1/compute/...).",
    "epilog": _EPILOG,
    "formatter_class": argparse.RawDescriptionHelpFormatter,
}
_OPTIONS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("--host", dict(default="127.0.0.1", help="interface to bind (default %(default)s)")),
    ("--port", dict(type=int, default=8787, help="port; 0 picks a free one (default %(default)s)")),
    (
        "--state-dir",
        dict(
            type=Path,
            default=None,
            help="directory for simulator.sqlite3; state survives restarts (default: in memory)",
        ),
    ),
    (
        "--api-key-file",
        dict(
            type=Path,
            default=None,
            metavar="PATH",
            help=f"file with the accepted bearer keys, one a line (default: ${API_KEY_ENV}, else "
            f"{DEFAULT_API_KEY})",
        ),
    ),
    (
        "--api-key",
        dict(
            action="append",
            dest="api_keys",
            metavar="KEY",
            help=f"accepted bearer key, repeatable; deprecated: every local user sees it in ps, so "
            f"set ${API_KEY_ENV} or use --api-key-file",
        ),
    ),
    (
        "--time-scale",
        dict(
            type=float,
            default=None,
            help="simulated seconds per real second; 0 freezes time (default 1: real time, so a "
            "create takes --provisioning-seconds of real time; 60 makes 360 s take 6 s)",
        ),
    ),
    (
        "--admin",
        dict(action="store_true", help="enable the /_sim admin endpoints (off by default)"),
    ),
    (
        "--reclaim-rate",
        dict(
            type=float,
            default=0.0,
            help="random reclaims per preemptible node per simulated hour (default %(default)s)",
        ),
    ),
    (
        "--provisioning-seconds",
        dict(
            type=float,
            default=Timings.provisioning,
            help="simulated seconds from create to Ready (default %(default)s)",
        ),
    ),
    ("--seed", dict(type=int, default=None, help="seed for faults and reclaims")),
    (
        "--kubernetes",
        dict(
            action="store_true",
            help="give each cluster a real Kubernetes control plane (etcd, kube-apiserver, "
            "controller manager, scheduler, KWOK nodes) on loopback; its kube_config works "
            "(docs/kubernetes-sim.md)",
        ),
    ),
    (
        "--control-plane-timeout",
        dict(
            type=float,
            default=CONTROL_PLANE_START_SECONDS,
            metavar="SECONDS",
            help="with --kubernetes: how long each step of a cluster's control-plane start "
            "(etcd healthy, the API server ready) may take before the cluster's control plane "
            "fails; a slow host (a VM without KVM: about 156 s) needs more (default %(default)s)",
        ),
    ),
    (
        "--kube-bin",
        dict(
            type=Path,
            default=None,
            help="directory with etcd, kube-apiserver, ... (default: $TOGETHER_KUBE_BIN; "
            'in a checkout: "$(tools/kube/build.sh)")',
        ),
    ),
    (
        "--real-nodes",
        dict(
            type=int,
            default=0,
            metavar="N",
            help="with --kubernetes: back up to N nodes at a time (standard and preemptible, over "
            "every cluster) with a real kubelet and containerd, so pods run real processes; the "
            "rest stay KWOK nodes; needs root (default %(default)s)",
        ),
    ),
    (
        "--real-nodes-once",
        dict(
            action="store_true",
            help="with --real-nodes N: a slot a real node freed is not given again, so only the "
            "first N nodes made are real and every later one is a KWOK node (make demo: its "
            "first up's nodes are real, the nodes a burst or another stack makes are not)",
        ),
    ),
    (
        "--images",
        dict(
            type=Path,
            default=None,
            metavar="DIR",
            help="the real nodes' image archives (pause.tar and the rest; default: "
            '$TOGETHER_IMAGES_DIR; in a checkout: "$(tools/images/build.sh)")',
        ),
    ),
    (
        "--image-archive",
        dict(
            type=Path,
            action="append",
            default=[],
            dest="image_archives",
            metavar="FILE",
            help="an image archive of your own (docker save, skopeo copy ... docker-archive:) "
            "imported into every real node; repeatable",
        ),
    ),
)
"""Each option of `python -m together_sim` and its `add_argument` settings, in `--help` order."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(**_PARSER)
    for flag, settings in _OPTIONS:
        parser.add_argument(flag, **settings)
    args = parser.parse_args(argv)
    if args.real_nodes and not args.kubernetes:
        parser.error("--real-nodes needs --kubernetes (real nodes join a cluster's control plane)")
    if args.real_nodes_once and not args.real_nodes:
        parser.error("--real-nodes-once needs --real-nodes N (the slots it gives once)")
    if args.control_plane_timeout <= 0:
        parser.error(
            f"--control-plane-timeout {args.control_plane_timeout:g}: give seconds, more than 0"
        )
    if args.real_nodes < 0:
        parser.error(f"--real-nodes {args.real_nodes}: give a count of nodes, 0 or more")
    return args


def time_scale_note(time_scale: float | None, provisioning_seconds: float) -> str | None:
    """The warning for a simulator started without `--time-scale`: its clock is then real time,
    and a user's first `pulumi up` waits minutes for provisioning with nothing saying why."""
    if time_scale is not None:
        return None
    return (
        f"together_sim: no --time-scale given, so the clock runs in real time: a create takes "
        f"{provisioning_seconds:g} s to provision. Pass --time-scale 60 (one real second is one "
        "simulated minute), as make demo does."
    )


def api_keys(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[tuple[str, ...], str]:
    """The accepted keys and a warning (or ""): ``--api-key-file``, else ``--api-key``, else
    ``$TOGETHER_SIM_API_KEY``, else ``sim-key``.

    The environment and a file keep the key out of the command line, which any local user can
    read (``ps``, ``/proc/<pid>/cmdline``); a process's environment only its owner can."""
    if args.api_key_file is not None:
        try:
            text = args.api_key_file.read_text()
        except OSError as exc:
            raise SystemExit(
                f"together_sim: --api-key-file: cannot read {exc.filename}: "
                f"{exc.strerror}; give a readable file with one key a line"
            ) from None
        keys = tuple(line.strip() for line in text.splitlines() if line.strip())
        if not keys:
            raise SystemExit(
                f"together_sim: --api-key-file {args.api_key_file} holds no key; "
                "write one key a line"
            )
        return keys, ""
    if args.api_keys:
        return tuple(args.api_keys), (
            "together_sim: --api-key puts the key on the command line, where every local user "
            f"can read it (ps); set {API_KEY_ENV}=KEY or use --api-key-file PATH instead"
        )
    key = environ.get(API_KEY_ENV, "").strip()
    return (key or DEFAULT_API_KEY,), ""


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket; a port that cannot be had is one sentence and exit 1, not a
    traceback (say, `make demo`'s simulator already on 8787)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        taken = error.errno == errno.EADDRINUSE
        why = "is in use" if taken else f"cannot be used ({error.strerror})"
        sys.exit(
            f"together_sim: port {port} on {host} {why}: another simulator (`make demo` runs "
            "one on 8787) or another server has it; stop it (`make demo-down`), or pass another "
            "--port (0: any free port)"
        )
    return sock


def _pod_sockets(runtime: SimulatorRuntime, host: str, port: int) -> list[socket.socket]:
    """With real nodes, the API also on the real nodes' bridge (same port), so a pod reaches it
    as a workload on Together reaches Together's API: the autoscaler's pod in the demo. A
    simulator on loopback is otherwise out of a pod's reach (its own network namespace)."""
    pool = runtime.kube.pool if runtime.kube is not None else None
    if pool is None or host == pool.gateway or host in ("0.0.0.0", "::"):
        return []
    extra = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    extra.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    extra.bind((pool.gateway, port))
    extra.listen(128)
    print(
        f"together_sim: pods on real nodes reach this API at http://{pool.gateway}:{port}",
        file=sys.stderr,
        flush=True,
    )
    return [extra]


def cleanup(argv: Sequence[str] = ()) -> int:
    """``python -m together_sim cleanup``: the one command after a crash. It undoes the journal
    of every simulator on the machine that is gone (a SIGKILL, a crash, a kept failed undo),
    never a running one's, prints what it removed, and exits 1 when something is left."""
    parser = argparse.ArgumentParser(
        prog="python -m together_sim cleanup",
        description="Remove from this machine what stopped simulators' real nodes left (their "
        "journals under /run/together-sim/journals); running simulators are left alone. Exit "
        "status 1 when something could not be removed.",
    )
    parser.parse_args(list(argv))
    from together_sim.host import journal, shared

    if not shared.RUN_DIR.exists():
        print("together_sim cleanup: nothing to remove (no /run/together-sim)")
        return 0
    if os.geteuid() != 0:
        print(
            "together_sim cleanup: real nodes' leftovers can only be removed as root; "
            "run: sudo -E python -m together_sim cleanup",
            file=sys.stderr,
        )
        return 1
    done = journal.sweep()
    for item in done.removed:
        print(f"removed {item}")
    for item in done.left:
        print(f"left {item}", file=sys.stderr)
    if done.left:
        print(
            f"together_sim cleanup: {len(done.left)} left (see above); they stay in their "
            "journals: run it again, or remove them by hand",
            file=sys.stderr,
        )
        return 1
    if not done.removed:
        print("together_sim cleanup: nothing to remove")
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["cleanup"]:
        sys.exit(cleanup(argv[1:]))
    early = _EarlySignals()
    early.install()  # before anything is made: a stop from here on undoes what the start made
    try:
        _serve(argv, early)
    finally:
        early.restore()


def _serve(argv: list[str], early: _EarlySignals) -> None:
    args = parse_args(argv)
    keys, key_note = api_keys(args, os.environ)
    for note in (key_note, time_scale_note(args.time_scale, args.provisioning_seconds)):
        if note:
            print(note, file=sys.stderr, flush=True)
    config = SimulatorConfig(
        state_dir=args.state_dir,
        api_keys=keys,
        time_scale=1.0 if args.time_scale is None else args.time_scale,
        admin=args.admin,
        reclaim_rate=args.reclaim_rate,
        seed=args.seed,
        timings=Timings(provisioning=args.provisioning_seconds),
        kubernetes=args.kubernetes,
        kube_bin=args.kube_bin,
        real_nodes=args.real_nodes,
        real_nodes_once=args.real_nodes_once,
        images_dir=args.images,
        image_archives=tuple(args.image_archives),
        control_plane_timeout=args.control_plane_timeout,
    )
    sock = _listen(args.host, args.port)  # before the app: a taken port leaves no state dir
    app = create_app(config)
    runtime: SimulatorRuntime = app.state.runtime
    try:
        _run_server(app, runtime, sock, early)
    finally:
        early.restore()  # a second signal during the stop is a hard stop
        began = time.monotonic()
        runtime.close()
        if config.kubernetes:
            print(f"together_sim: stopped in {time.monotonic() - began:.1f} s", file=sys.stderr)
        sys.stdout.flush()


def _run_server(
    app: Any, runtime: SimulatorRuntime, sock: socket.socket, early: _EarlySignals
) -> None:
    """Serve on ``sock`` (and the real nodes' bridge) until a signal, the runtime started."""
    host, port = sock.getsockname()[:2]
    sockets = [sock, *_pod_sockets(runtime, host, port)]
    server = _Server(
        uvicorn.Config(
            app,
            http=_AbortableH11Protocol,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,  # a request still running after that is cancelled
        ),
        runtime,
        early,
    )
    # Exactly one line, once the socket accepts connections, so a parent process can read the
    # URL. The host only (no /v1): the form Together's SDK and `tg` read from TOGETHER_BASE_URL.
    print(f"{BANNER}http://{host}:{port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(sockets=sockets))


if __name__ == "__main__":
    main()
