"""CLI: ``python -m together_sim [--port 0] [--admin] ...``.

Prints exactly one line, ``together simulator listening on <base url>``, once
the socket accepts connections, so a parent process can read the URL. The URL is the host only
(``http://127.0.0.1:8787``), the form Together's SDK and ``tg`` read from TOGETHER_BASE_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
from together_sim.model import Timings
from together_sim.runtime import SimulatorConfig

__all__ = ["main", "parse_args", "time_scale_note"]

_EPILOG = """\
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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m together_sim",
        description="Local simulator of Together's GPU clusters API (/v1/compute/...).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to bind (default %(default)s)"
    )
    parser.add_argument(
        "--port", type=int, default=8787, help="port; 0 picks a free one (default %(default)s)"
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="directory for simulator.sqlite3; state survives restarts (default: in memory)",
    )
    parser.add_argument(
        "--api-key",
        action="append",
        dest="api_keys",
        metavar="KEY",
        help="accepted bearer key; repeatable (default: sim-key)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=None,
        help="simulated seconds per real second; 0 freezes time (default 1: real time, so a "
        "create takes --provisioning-seconds of real time; 60 makes 360 s take 6 s)",
    )
    parser.add_argument(
        "--admin", action="store_true", help="enable the /_sim admin endpoints (off by default)"
    )
    parser.add_argument(
        "--reclaim-rate",
        type=float,
        default=0.0,
        help="random reclaims per preemptible node per simulated hour (default %(default)s)",
    )
    parser.add_argument(
        "--provisioning-seconds",
        type=float,
        default=Timings.provisioning,
        help="simulated seconds from create to Ready (default %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for faults and reclaims")
    parser.add_argument(
        "--kubernetes",
        action="store_true",
        help="give each cluster a real Kubernetes control plane (etcd, kube-apiserver, "
        "controller manager, scheduler, KWOK nodes) on loopback; its kube_config works "
        "(docs/kubernetes-sim.md)",
    )
    parser.add_argument(
        "--kube-bin",
        type=Path,
        default=None,
        help="directory with etcd, kube-apiserver, ... (default: $TOGETHER_KUBE_BIN, else "
        "where tools/kube/build.sh caches them)",
    )
    return parser.parse_args(argv)


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


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    note = time_scale_note(args.time_scale, args.provisioning_seconds)
    if note:
        print(note, file=sys.stderr, flush=True)
    config = SimulatorConfig(
        state_dir=args.state_dir,
        api_keys=tuple(args.api_keys or ["sim-key"]),
        time_scale=1.0 if args.time_scale is None else args.time_scale,
        admin=args.admin,
        reclaim_rate=args.reclaim_rate,
        seed=args.seed,
        timings=Timings(provisioning=args.provisioning_seconds),
        kubernetes=args.kubernetes,
        kube_bin=args.kube_bin,
    )
    app = create_app(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)
    host, port = sock.getsockname()[:2]
    server = uvicorn.Server(
        uvicorn.Config(
            app, http=_AbortableH11Protocol, log_level="warning", access_log=False, lifespan="off"
        )
    )
    print(f"together simulator listening on http://{host}:{port}", flush=True)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        app.state.runtime.close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
