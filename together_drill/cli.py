"""The drill's command line, checked before anything starts: every bad input is an exit 2 with a
message naming the flag and the fix, and leaves nothing running."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from together_drill.manifest import (
    DrillInputError,
    DrillJob,
    checkpointing_job,
    load_job,
    on_cluster,
)
from together_drill.waits import START_TIMEOUT_SECONDS
from together_facts.values import DRAIN_WINDOW_SECONDS

DEFAULT_REAL_NODES = 2


@dataclass(frozen=True)
class ClusterArgs:
    """An existing cluster to drill on (``--kubeconfig``), instead of a local world."""

    kubeconfig: Path
    context: str | None
    node_selector: dict[str, str] | None
    """The nodes a reclaim may drain; None: ``together.ai/compute-class=preemptible``."""
    keep: bool
    volume_dir: Path | None
    """Where the Job's checkpoint volume is mounted on this machine (None: a reader pod reads
    it in the cluster)."""
    reader_image: str | None = None
    """The reader pod's image (None: the Job's own)."""


@dataclass(frozen=True)
class DrillArgs:
    job: DrillJob
    reclaims: int
    at_seconds: tuple[float, ...] | None
    seed: int | None
    json_path: Path | None
    image_archive: Path | None
    real_nodes: int
    timeout_seconds: float
    workload: dict[str, object]
    """What was drilled, as given (the JSON report repeats it)."""
    cluster: ClusterArgs | None = None
    start_timeout_seconds: float = START_TIMEOUT_SECONDS
    """How long a pod of the Job may take to start running before the drill gives up, and each
    part of its local world (simulator, control plane, real nodes) to come up."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m together_drill",
        description="Run a workload on a local cluster with real nodes (or on an existing "
        "cluster with --kubeconfig), reclaim the nodes its pods run on, and report whether it "
        "survives Together's drain window. Exit 0: safe, 1: unsafe, 2: could not drill (bad "
        "input, a Job that ended before a reclaim), 3: unverified (no save seen).",
    )
    p.add_argument("--manifest", type=Path, help="a Job manifest: a YAML file or a directory")
    p.add_argument("--image", help="run this image as CheckpointingWorker's Job (with --command)")
    p.add_argument(
        "--grace-seconds",
        type=int,
        default=DRAIN_WINDOW_SECONDS,
        help="the grace period of --image's Job (default 300, the drain window)",
    )
    p.add_argument("--image-archive", type=Path, help="a docker-archive tar of the image to import")
    p.add_argument("--reclaims", type=int, default=None, help="reclaims at random moments (1)")
    p.add_argument("--seed", type=int, default=None, help="seed of the random moments and nodes")
    p.add_argument("--at", default=None, help="reclaim at these seconds after the first pod starts")
    p.add_argument("--json", type=Path, dest="json_path", help="also write the JSON report here")
    p.add_argument(
        "--real-nodes", type=int, default=DEFAULT_REAL_NODES, help="real preemptible nodes (2)"
    )
    p.add_argument(
        "--timeout", type=float, default=900.0, help="give up on the Job after these seconds"
    )
    p.add_argument(
        "--start-timeout",
        type=float,
        default=START_TIMEOUT_SECONDS,
        help="give up when no pod of the Job runs after these seconds (300), or when a part of "
        "the local world (its simulator, control plane, real nodes) takes longer to come up; a "
        "slow host (a VM without KVM) needs more; a pod that cannot start for a reason that "
        "will not fix itself ends the drill within 60 s",
    )
    remote = p.add_argument_group(
        "an existing cluster (a Together cluster, kind...): Together's drain done by hand"
    )
    remote.add_argument(
        "--kubeconfig",
        type=Path,
        help="drill on this cluster: cordon a preemptible node, evict only the Job's pods "
        "(Eviction API), uncordon; never deletes a node or touches another pod",
    )
    remote.add_argument("--context", help="the kubeconfig's context (default: its current one)")
    remote.add_argument("--namespace", help="run the Job in this namespace (default: its own)")
    remote.add_argument(
        "--node-selector",
        help="KEY=VALUE[,...]: the nodes a reclaim may drain "
        "(default together.ai/compute-class=preemptible)",
    )
    remote.add_argument("--keep", action="store_true", help="leave the Job there at the end")
    remote.add_argument(
        "--volume-dir",
        type=Path,
        help="where the Job's checkpoint volume is mounted on this machine, for the drill to "
        "read its files (default: a reader pod of the drill's own reads the claim in the cluster)",
    )
    remote.add_argument(
        "--reader-image",
        help="the volume reader pod's image, with python3 (default: the Job's own image)",
    )
    p.add_argument(
        "--command",
        nargs=argparse.REMAINDER,
        default=None,
        help="with --image: the command; everything after it is the command",
    )
    return p


def _at(raw: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in raw.split(",") if part.strip())
    except ValueError as error:
        raise DrillInputError(
            f"--at {raw}: give seconds after the first pod starts, comma-separated, e.g. --at 10,40"
        ) from error
    if not values or any(v < 0 for v in values):
        raise DrillInputError(f"--at {raw}: give one or more seconds >= 0, e.g. --at 10,40")
    return values


def parse(argv: list[str] | None = None) -> DrillArgs:
    """The checked arguments; raises DrillInputError (or SystemExit 2 from argparse).

    Everything after the first ``--command`` is the command, split off before argparse sees it
    (argparse would take a ``--`` in it, as in ``together_worker run -- CMD``, for its own)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] | None = None
    if "--command" in argv:
        split = argv.index("--command")
        argv, command = argv[:split], argv[split + 1 :]
    args = parser().parse_args(argv)
    args.command = command
    try:
        return _checked(args)
    except DrillInputError as error:
        error.json_path = args.json_path
        raise


def _checked(args: argparse.Namespace) -> DrillArgs:
    """What argparse cannot check: the flags together, the cluster's and the Job's."""
    if (args.manifest is None) == (args.image is None):
        raise DrillInputError(
            "give either --manifest FILE (a Job) or --image IMAGE --command ..., one of the two"
        )
    if args.command is not None and args.image is None:
        raise DrillInputError("--command goes with --image IMAGE (the image that runs it)")
    if args.image is not None and not args.command:
        raise DrillInputError(
            "--image: give the command after --command, e.g. --command python train.py"
        )
    if args.grace_seconds <= 0:
        raise DrillInputError(
            f"--grace-seconds {args.grace_seconds}: give seconds > 0 (300 by default)"
        )
    at = _at(args.at) if args.at is not None else None
    if at is not None and args.reclaims is not None and args.reclaims != len(at):
        raise DrillInputError(
            f"--reclaims {args.reclaims} and --at with {len(at)} time(s): give one of them"
        )
    reclaims = len(at) if at is not None else (1 if args.reclaims is None else args.reclaims)
    if reclaims < 1:
        raise DrillInputError(f"--reclaims {reclaims}: a drill needs at least one reclaim")
    if not 1 <= args.real_nodes <= 8:
        raise DrillInputError(f"--real-nodes {args.real_nodes}: give 1 to 8")
    if args.image_archive is not None and not args.image_archive.is_file():
        raise DrillInputError(f"--image-archive {args.image_archive}: no such file")
    if args.timeout <= 0:
        raise DrillInputError(f"--timeout {args.timeout}: give seconds > 0")
    if args.start_timeout <= 0:
        raise DrillInputError(f"--start-timeout {args.start_timeout}: give seconds > 0")
    cluster = _cluster(args)
    if args.manifest is not None:
        job = load_job(args.manifest, local=cluster is None)
        workload: dict[str, object] = {"manifest": str(args.manifest)}
    else:
        job = checkpointing_job(args.image, args.command, args.grace_seconds, local=cluster is None)
        workload = {
            "image": args.image,
            "command": list(args.command),
            "grace_seconds": args.grace_seconds,
        }
    if cluster is not None:
        job = on_cluster(job, args.namespace, cluster.node_selector)
    return DrillArgs(
        job=job,
        reclaims=reclaims,
        at_seconds=at,
        seed=args.seed,
        json_path=args.json_path,
        image_archive=args.image_archive,
        real_nodes=args.real_nodes,
        timeout_seconds=args.timeout,
        workload=workload,
        cluster=cluster,
        start_timeout_seconds=args.start_timeout,
    )


def _selector(raw: str) -> dict[str, str]:
    pairs = [part.strip() for part in raw.split(",") if part.strip()]
    if not pairs or any(p.count("=") != 1 or p.startswith("=") for p in pairs):
        raise DrillInputError(
            f"--node-selector {raw}: give KEY=VALUE pairs, comma-separated, e.g. "
            "--node-selector pool=spot"
        )
    return dict(p.split("=", 1) for p in pairs)


def _cluster(args: argparse.Namespace) -> ClusterArgs | None:
    """The existing cluster's arguments, checked; None for the local world (whose flags are
    then the only ones allowed)."""
    remote = ("context", "namespace", "node_selector", "volume_dir", "reader_image")
    if args.kubeconfig is None:
        given = [f"--{n.replace('_', '-')}" for n in remote if getattr(args, n) is not None]
        if args.keep:
            given.append("--keep")
        if given:
            raise DrillInputError(f"{', '.join(given)} go with --kubeconfig FILE (a cluster)")
        return None
    if not args.kubeconfig.is_file():
        raise DrillInputError(f"--kubeconfig {args.kubeconfig}: no such file")
    if args.image_archive is not None:
        raise DrillInputError(
            "--image-archive is for the local world; on an existing cluster the nodes pull the "
            "Job's images"
        )
    if args.volume_dir is not None and not args.volume_dir.is_dir():
        raise DrillInputError(f"--volume-dir {args.volume_dir}: no such directory")
    if args.volume_dir is not None and args.reader_image is not None:
        raise DrillInputError(
            "--reader-image is the image of the pod that reads the volume in the cluster; with "
            "--volume-dir the drill reads it here: give one of them"
        )
    return ClusterArgs(
        kubeconfig=args.kubeconfig,
        context=args.context,
        node_selector=_selector(args.node_selector) if args.node_selector else None,
        keep=args.keep,
        volume_dir=args.volume_dir,
        reader_image=args.reader_image,
    )
