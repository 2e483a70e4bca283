"""The command, ``python -m together_autoscaler`` (also the ``together-autoscaler`` script): flags,
environment and signals, with the API's fixes worded in their terms (see docs/autoscaling.md)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Final

from together_facts.hints import FixHints
from together_facts.values import GPUS_PER_NODE

if TYPE_CHECKING:
    from lightkube import KubeConfig

    from together_autoscaler.controller import Controller

__all__ = ["EXIT_GRACE_SECONDS", "FIXES", "SERVICE_ACCOUNT", "kube_config", "main", "parse_args"]

SERVICE_ACCOUNT: Final = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where a pod's service account token is mounted: the in-cluster config without --kubeconfig."""

EXIT_GRACE_SECONDS: Final = 8.0
"""How long a SIGTERM waits for the scan in progress (Kubernetes allows 30 s; we promise 10)."""

FIXES: Final = FixHints(
    api_key="set TOGETHER_API_KEY to the cluster's API key",
    base_url="TOGETHER_BASE_URL",
    not_found="check --cluster-id, and that the base URL (TOGETHER_BASE_URL) is Together's API",
)
"""The fixes of the API's errors in this command's terms: its flag and its environment."""

log = logging.getLogger("together_autoscaler")


def _gpus(flag: str) -> type[int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{flag} must be a whole number, got {text!r}"
            ) from None
        if value < 0 or value % GPUS_PER_NODE:
            raise argparse.ArgumentTypeError(
                f"{flag}={value}: preemptible GPUs come in whole {GPUS_PER_NODE}-GPU nodes; "
                f"use a multiple of {GPUS_PER_NODE} (0, 8, 16, ...)"
            )
        return value

    parse.__name__ = flag
    return parse  # type: ignore[return-value]


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


_EPILOG = """\
environment:
  TOGETHER_API_KEY   the cluster's API key (required)
  TOGETHER_BASE_URL  Together's API host, e.g. https://api.together.ai (default; the client
                     adds /v1)

exit codes:
  0  stopped by SIGTERM or SIGINT (the scan in progress finished, or was dropped after 8 s)
  1  cannot start: Together refused the key or has no such cluster, or no Kubernetes config
     (a bad --kubeconfig, or none outside a pod); the message names the fix
  2  bad flags, or TOGETHER_API_KEY not set
"""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="together-autoscaler",
        description="Raise and lower a Together cluster's preemptible target from pending pods.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cluster-id", required=True, help="the Together cluster to scale")
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="FILE",
        help="kubeconfig of the cluster (default: the in-cluster config, from the pod's service "
        f"account at {SERVICE_ACCOUNT})",
    )
    parser.add_argument("--min-preemptible-gpus", type=_gpus("--min-preemptible-gpus"),
                        required=True, metavar="GPUS",
                        help="the floor, in GPUs (a multiple of 8)")  # fmt: skip
    parser.add_argument("--max-preemptible-gpus", type=_gpus("--max-preemptible-gpus"),
                        required=True, metavar="GPUS",
                        help="the ceiling, in GPUs (a multiple of 8)")  # fmt: skip
    parser.add_argument("--scan-interval-seconds", type=_positive, default=10.0,
                        metavar="SECONDS",
                        help="seconds between scans (default: %(default)g)")  # fmt: skip
    parser.add_argument("--scale-down-unneeded-seconds", type=_positive, default=600.0,
                        metavar="SECONDS",
                        help="seconds a preemptible node stands without workload pods before it "
                        "is removed (default: %(default)g)")  # fmt: skip
    parser.add_argument("--max-hourly-usd", type=_positive, default=None, metavar="USD",
                        help="cap on the cluster's cost in USD per hour: its standard GPUs on "
                        "demand plus a full preemptible target at 50%% of the on-demand rate, "
                        "from the bundled together_facts/prices.json (placeholder rates; a "
                        "stack's pricesPerGpuHour does not reach here) "
                        "(default: no cap)")  # fmt: skip
    parser.add_argument("--max-node-provision-seconds", type=_positive, default=900.0,
                        metavar="SECONDS",
                        help="seconds allocated may stay below the target before it counts as "
                        "scarcity and raises stop for as long again "
                        "(default: %(default)g)")  # fmt: skip
    parser.add_argument("--metrics-port", type=int, default=8085, metavar="PORT",
                        help="port of the Prometheus /metrics server; 0: none "
                        "(default: %(default)s)")  # fmt: skip
    parser.add_argument("--lease-namespace", metavar="NAMESPACE",
                        help="namespace of the leader-election Lease (default: the kubeconfig "
                        "context's; in a pod, its own)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.min_preemptible_gpus > args.max_preemptible_gpus:
        parser.error(
            f"--min-preemptible-gpus={args.min_preemptible_gpus} is above "
            f"--max-preemptible-gpus={args.max_preemptible_gpus}; the floor must not exceed "
            "the ceiling"
        )
    return args


class _Redact(logging.Filter):
    """Replaces the API key in every log record: it must never reach a log, whatever logs it."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secret:
            message = record.getMessage()
            if self.secret in message:
                record.msg, record.args = message.replace(self.secret, "***"), None
        return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run the controller until SIGTERM or SIGINT: then the scan in progress finishes (or is
    abandoned after :data:`EXIT_GRACE_SECONDS`), the Lease is released and the process exits 0."""
    args = parse_args(argv)
    key = os.environ.get("TOGETHER_API_KEY", "")
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_Redact(key))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    for chatty in ("httpx", "httpx2"):  # a line per request; their warnings still show
        logging.getLogger(chatty).setLevel(logging.WARNING)
    if not key:
        log.error("TOGETHER_API_KEY is not set; give the controller the cluster's API key")
        return 2

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        controller = _build(args, stop)
    except Exception as error:  # a bad key, cluster id or kubeconfig: say which, exit 1
        log.error("cannot start: %s: %s", type(error).__name__, error)
        return 1
    worker = threading.Thread(target=controller.run, args=(stop,), name="scan", daemon=True)
    worker.start()
    while worker.is_alive() and not stop.wait(0.5):
        pass
    worker.join(EXIT_GRACE_SECONDS)
    if worker.is_alive():
        log.warning("the scan in progress did not end in %.0f s; exiting without it",
                    EXIT_GRACE_SECONDS)  # fmt: skip
        # Its thread would release the Lease only when the scan ends, after this process is
        # gone; released here, a successor takes over at its next try instead of after the
        # lease. release() first forgets the renewal, so the dropped scan writes nothing more.
        controller.elector.release()
    log.info("stopped")
    return 0


def _build(args: argparse.Namespace, stop: threading.Event) -> Controller:
    """The controller with its clients (imported here: `--help` needs none of them)."""
    from lightkube import Client

    from together_api.client import TogetherClient
    from together_api.retry import RetryPolicy
    from together_autoscaler.controller import Controller
    from together_autoscaler.kube import KubeSide
    from together_autoscaler.leader import LeaseElector
    from together_autoscaler.metrics import Metrics
    from together_autoscaler.model import Limits
    from together_facts.prices import load_price_table

    kube = Client(config=kube_config(args.kubeconfig), field_manager="together-autoscaler")
    identity = os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"
    # Short timeouts, and waits that end at SIGTERM, keep a scan in progress under the grace.
    together = TogetherClient(
        timeout=5.0,
        retry=RetryPolicy(attempts=4, deadline=20.0),
        sleep=lambda s: _wait(stop, s),
        hints=FIXES,
    )
    cluster = together.get_cluster(args.cluster_id)
    rate = None
    if args.max_hourly_usd is not None:
        rate = load_price_table().rate(cluster.gpu_type, "--max-hourly-usd")
    metrics = Metrics()
    if args.metrics_port:
        log.info("metrics on port %d", metrics.serve(args.metrics_port))
    lease_seconds = max(15, int(3 * args.scan_interval_seconds))
    elector = LeaseElector(
        kube, args.lease_namespace or kube.namespace, identity, lease_seconds=lease_seconds
    )
    limits = Limits(
        min_gpus=args.min_preemptible_gpus,
        max_gpus=args.max_preemptible_gpus,
        unneeded_seconds=args.scale_down_unneeded_seconds,
        provision_timeout_seconds=args.max_node_provision_seconds,
        max_hourly_usd=args.max_hourly_usd,
        on_demand_rate=rate,
    )
    log.info(
        "cluster %s (%s): preemptible %d-%d GPUs, scan every %g s, as %s",
        args.cluster_id, cluster.gpu_type, limits.min_gpus, limits.max_gpus,
        args.scan_interval_seconds, identity,
    )  # fmt: skip
    return Controller(
        together=together,
        kube=KubeSide(kube, identity),
        elector=elector,
        metrics=metrics,
        cluster_id=args.cluster_id,
        limits=limits,
        scan_interval=args.scan_interval_seconds,
    )


def kube_config(path: Path | None, service_account: Path | None = None) -> KubeConfig:
    """The Kubernetes config: ``--kubeconfig``'s file, else the pod's service account; either
    missing or unreadable is an `InputError` naming ``--kubeconfig`` and the in-cluster case."""
    from lightkube import ConfigError, KubeConfig

    from together_facts.errors import InputError

    service_account = service_account or SERVICE_ACCOUNT
    in_pod = "inside a pod, leave --kubeconfig out to use the pod's service account"
    if path is not None:
        if not path.expanduser().is_file():
            raise InputError(
                f"--kubeconfig {path}: no such file",
                fix=f"pass the path of a kubeconfig file, such as ~/.kube/config; {in_pod}",
            )
        try:
            return KubeConfig.from_file(path)
        except (ConfigError, OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise InputError(
                f"--kubeconfig {path}: not a usable kubeconfig ({type(error).__name__}: {error})",
                fix=f"pass a kubeconfig with a current context (kubectl config view); {in_pod}",
            ) from None
    try:
        return KubeConfig.from_service_account(service_account)
    except (ConfigError, OSError, KeyError) as error:
        raise InputError(
            "no --kubeconfig, and no in-cluster config: this is not a pod with a service account "
            f"(cannot read {service_account}: {error})",
            fix="outside a cluster, pass --kubeconfig FILE; in a pod, mount its ServiceAccount "
            "token (automountServiceAccountToken: true)",
        ) from None


def _wait(stop: threading.Event, seconds: float) -> None:
    stop.wait(seconds)
