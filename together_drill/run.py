"""One drill on real nodes: start the world, run the Job, reclaim the nodes its pods run on (at
random moments with --seed, or --at), watch what each pod does, then judge and clean up."""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from together_drill.cli import DrillArgs
from together_drill.kube import Obj, PodWatch, running, terminated
from together_drill.manifest import DrillInputError
from together_drill.report import as_json, readable
from together_drill.verdict import JobSeen, PodSeen, ReclaimSeen, verdict
from together_drill.world import DrillWorldError, World, check_host, wait_for
from together_facts.values import DRAIN_WINDOW_SECONDS

SAFE, UNSAFE, BAD_INPUT = 0, 1, 2
Say = Callable[[str], None]
"""Prints a progress line (stderr)."""
RANDOM_AFTER: Final = (2.0, 12.0)
"""A random reclaim comes this many seconds (uniform) after the pod it hits started running."""
INDEX_LABEL: Final = "batch.kubernetes.io/job-completion-index"
TEMPORARY: Final = (".tmp", ".partial", ".part", "~")
REFILL_WAIT_SECONDS: Final = 180.0
"""How long the drill waits for the refill after a reclaim's pods ended before it moves on."""
SIGNAL_MATCH_SECONDS: Final = 5.0
"""A run whose signal came within this long after a reclaim is taken as the reclaimed pod's."""


def progress(start: float) -> Say:
    def say(text: str) -> None:
        print(f"[drill +{time.monotonic() - start:6.1f}s] {text}", file=sys.stderr, flush=True)

    return say


@dataclass
class Reclaimed:
    node: str
    at: float
    """time.monotonic() of the reclaim."""
    wall: float
    """time.time() of the reclaim (the status file's clock)."""
    at_seconds: float
    pods: list[str]
    sizes: dict[str, FileSeen]
    """The volume's files, their sizes and inodes at the reclaim."""
    ended_sizes: dict[str, dict[str, FileSeen]] = field(default_factory=dict)
    """Per pod: the volume's files when its container was seen terminated."""
    refill_seconds: float | None = None


FileSeen = tuple[int, int]
"""A file's size and inode: a file rewritten in place keeps its inode, one replaced by a rename
(the atomic way) gets another."""


def _files(volume: Path) -> dict[str, FileSeen]:
    found = {}
    for path in volume.rglob("*"):
        name = path.name
        if path.is_file() and not name.startswith(".") and not name.endswith(TEMPORARY):
            try:
                stat = path.stat()
            except OSError:
                continue
            found[str(path.relative_to(volume))] = (stat.st_size, stat.st_ino)
    return found


def shrunk_in_place(before: dict[str, FileSeen], after: dict[str, FileSeen]) -> tuple[str, ...]:
    """The files that got smaller under the same inode: rewritten in place and cut short. A file
    replaced by a rename may well be smaller (a shorter number in a status file) and is whole."""
    return tuple(
        sorted(
            name
            for name, (size, inode) in before.items()
            if name in after and after[name][1] == inode and after[name][0] < size
        )
    )


def run(args: DrillArgs) -> int:
    """The drill's exit code: 0 safe, 1 unsafe, 2 bad input (found before anything starts)."""
    start = time.monotonic()
    say = progress(start)
    try:
        kube_bin, images = check_host(args.job, args.image_archive)
    except DrillInputError as error:
        print(f"together_drill: {error}", file=sys.stderr)
        return BAD_INPUT
    world = World(kube_bin, images, args.real_nodes, args.image_archive)
    try:
        world.start(say)
        report, safe = _drill(world, args, say)
    except DrillWorldError as error:
        # Not a verdict on the workload: the drill could not run it (exit 2, as for bad input).
        print(f"together_drill: {error}; the simulator's last lines:", file=sys.stderr)
        print(_tail(world.log_path), file=sys.stderr)
        return BAD_INPUT
    finally:
        say("cleaning up: stopping the simulator, its control plane and real nodes")
        world.stop()
    print(report)
    return SAFE if safe else UNSAFE


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text().splitlines()[-lines:])
    except OSError:
        return ""


def _drill(world: World, args: DrillArgs, say: Say) -> tuple[str, bool]:
    assert world.kube is not None
    job = args.job
    rng = random.Random(args.seed)
    for claim in job.claims:
        world.claim(claim, job.namespace)
    watch = PodWatch(world.kube, job.namespace)
    known_nodes = set(world.ready_real_nodes())
    try:
        world.kube.request("POST", f"/apis/batch/v1/namespaces/{job.namespace}/jobs", job.manifest)
        say(f"Job {job.name} created ({job.completions} completion(s)); waiting for a pod to run")
        deadline = time.monotonic() + args.timeout_seconds
        first = wait_for(
            lambda: _first_running(watch), "a pod of the Job to run", args.timeout_seconds
        )
        reclaims: list[Reclaimed] = []
        for number in range(args.reclaims):
            target = _next_target(watch, args, number, first, rng, deadline)
            if target is None:
                say(f"reclaim {number + 1}: no pod of the Job runs any more; none made")
                break
            node, pods = target
            sizes = _files(world.volume_dir)
            now, wall = time.monotonic(), time.time()
            world.reclaim(node)
            reclaims.append(Reclaimed(node, now, wall, round(now - first, 1), pods, sizes))
            say(f"reclaim {number + 1}: node {node} (pods: {', '.join(pods)})")
            _follow(world, watch, reclaims[-1], known_nodes, deadline, say)
        job_seen = _finish(world, watch, job.name, job.namespace, job.completions, deadline, say)
        seen = [
            ReclaimSeen(
                r.node,
                r.at_seconds,
                tuple(_pod_seen(world, watch, r, pod) for pod in r.pods),
                r.refill_seconds,
            )
            for r in reclaims
        ]
    finally:
        watch.stop()
    result = verdict(seen, job_seen, DRAIN_WINDOW_SECONDS)
    if args.json_path is not None:
        report = as_json(result, seen, job_seen, args.workload, DRAIN_WINDOW_SECONDS)
        args.json_path.write_text(json.dumps(report, indent=2) + "\n")
    return readable(result, seen, job_seen, DRAIN_WINDOW_SECONDS), result.safe


def _first_running(watch: PodWatch) -> float | None:
    for seen_at, pod in list(watch.seen):
        if running(pod):
            return seen_at
    return None


def _running_pods(watch: PodWatch) -> dict[str, list[tuple[str, float]]]:
    """Per node: its running pods of the Job and when each was first seen running."""
    started: dict[str, float] = {}
    for seen_at, pod in list(watch.seen):
        if running(pod):
            started.setdefault(pod["metadata"]["name"], seen_at)
    nodes: dict[str, list[tuple[str, float]]] = {}
    for name, pod in watch.latest().items():
        if running(pod) and not pod["metadata"].get("deletionTimestamp"):
            nodes.setdefault(pod["spec"]["nodeName"], []).append((name, started[name]))
    return nodes


def _next_target(
    watch: PodWatch,
    args: DrillArgs,
    number: int,
    first: float,
    rng: random.Random,
    deadline: float,
) -> tuple[str, list[str]] | None:
    """The node to reclaim and its running pods: at ``--at`` after the first pod ran, or a
    random moment (``--seed``) into a running pod's life; None once nothing runs."""
    if args.at_seconds is not None:
        due = first + args.at_seconds[number]
        _sleep_until(due, deadline)
        pick = wait_for(
            lambda: _running_pods(watch) or None,
            "a running pod to reclaim",
            deadline - time.monotonic(),
        )
    else:
        pick = wait_for(
            lambda: _running_pods(watch) or None,
            "a running pod to reclaim",
            deadline - time.monotonic(),
        )
        node = rng.choice(sorted(pick))
        started = min(t for _, t in pick[node])
        _sleep_until(started + rng.uniform(*RANDOM_AFTER), deadline)
        pick = _running_pods(watch) or pick
    if not pick:
        return None
    node = rng.choice(sorted(pick))
    return node, sorted(name for name, _ in pick[node])


def _sleep_until(when: float, deadline: float) -> None:
    time.sleep(max(0.0, min(when, deadline) - time.monotonic()))


def _follow(
    world: World,
    watch: PodWatch,
    reclaimed: Reclaimed,
    known_nodes: set[str],
    deadline: float,
    say: Say,
) -> None:
    """Until the reclaimed pods ended and Together's refill brought a new real node Ready:
    snapshot the volume as each pod ends (to see a checkpoint cut off mid-write)."""
    pending = set(reclaimed.pods)
    refill_by = time.monotonic() + REFILL_WAIT_SECONDS
    while (pending or reclaimed.refill_seconds is None) and time.monotonic() < deadline:
        if not pending and time.monotonic() > refill_by:
            say(f"  no refill within {REFILL_WAIT_SECONDS:.0f} s (Together may lack capacity)")
            break
        for name in list(pending):
            history = watch.history(name)
            if any(terminated(p) or p.get("_event") == "DELETED" for _, p in history):
                reclaimed.ended_sizes[name] = _files(world.volume_dir)
                pending.discard(name)
                say(f"  pod {name} ended")
        if reclaimed.refill_seconds is None:
            new = set(world.ready_real_nodes()) - known_nodes
            if new:
                reclaimed.refill_seconds = round(time.monotonic() - reclaimed.at, 1)
                known_nodes.update(new)
                say(f"  refill: node {sorted(new)[0]} Ready after {reclaimed.refill_seconds} s")
        time.sleep(0.1)


def _finish(
    world: World,
    watch: PodWatch,
    name: str,
    namespace: str,
    completions: int,
    deadline: float,
    say: Say,
) -> JobSeen:
    assert world.kube is not None
    say(f"waiting for Job {name} to finish")
    path = f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}"
    status: Obj = {}
    while time.monotonic() < deadline:
        status = world.kube.request("GET", path).get("status", {})
        failed = [
            c
            for c in status.get("conditions", [])
            if c["type"] == "Failed" and c["status"] == "True"
        ]
        if failed:
            return JobSeen(
                name, completions, int(status.get("succeeded", 0)), failed[0].get("reason")
            )
        if int(status.get("succeeded", 0)) >= completions:
            return JobSeen(name, completions, int(status["succeeded"]))
        time.sleep(0.5)
    return JobSeen(name, completions, int(status.get("succeeded", 0)), timed_out=True)


def _status_runs(volume: Path) -> list[list[dict[str, object]]]:
    """Every together_worker status file on the volume: each index's runs, oldest first."""
    found = []
    for path in volume.rglob("status.json"):
        try:
            runs = json.loads(path.read_text()).get("runs", [])
        except (OSError, ValueError):
            continue
        found.append([r for r in runs if isinstance(r, dict)])
    return found


def _pod_seen(world: World, watch: PodWatch, reclaimed: Reclaimed, name: str) -> PodSeen:
    history = watch.history(name)
    pod = history[-1][1]
    ended = next(((t, p) for t, p in history if terminated(p)), None)
    state = terminated(ended[1]) if ended else None
    conditions = {
        c["type"] for c in pod.get("status", {}).get("conditions", []) if c["status"] == "True"
    }
    delivered = "DisruptionTarget" in conditions or any(
        p["metadata"].get("deletionTimestamp") for _, p in history
    )
    before, after = reclaimed.sizes, reclaimed.ended_sizes.get(name, {})
    shrunk = shrunk_in_place(before, after)
    seen = PodSeen(
        pod=name,
        node=reclaimed.node,
        index=pod["metadata"].get("labels", {}).get(INDEX_LABEL),
        grace_seconds=float(pod["spec"].get("terminationGracePeriodSeconds", 30)),
        sigterm_delivered=delivered,
        exit_code=int(state["exitCode"]) if state else None,
        sigterm_to_exit_seconds=round(ended[0] - reclaimed.at, 1) if ended else None,
        counted_success=pod.get("status", {}).get("phase") == "Succeeded",
        shrunk_files=shrunk,
    )
    for runs in _status_runs(world.volume_dir):
        mine = _run_of(runs, name, reclaimed.wall)
        if mine is None:
            continue
        run = runs[mine]
        following = runs[mine + 1] if mine + 1 < len(runs) else None
        return PodSeen(
            **{
                **seen.__dict__,
                "uses_library": True,
                "checkpointed_step": _int(run.get("checkpointed_step")),
                "reached_step": _int(run.get("step")),
                "saving_when_killed": run.get("exit_reason") == "saving",
                "checkpoint_every": _int(run.get("checkpoint_every")),
                "next_pod": str(following["pod"]) if following else None,
                "next_resumed_from": _int(following.get("resumed_from")) if following else None,
            }
        )
    return seen


def _run_of(runs: list[dict[str, object]], pod: str, reclaimed_at: float) -> int | None:
    """Which run of an index's status file is ``pod``'s: by its name (POD_NAME, which
    CheckpointingWorker sets), else the run that got its signal just after the reclaim (an
    Indexed Job's pods all have the hostname <job>-<index>)."""
    named = [i for i, r in enumerate(runs) if r.get("pod") == pod]
    if named:
        return named[-1]
    signalled = [
        i
        for i, r in enumerate(runs)
        if isinstance(r.get("signal_at"), int | float)
        and 0 <= float(r["signal_at"]) - reclaimed_at < SIGNAL_MATCH_SECONDS  # type: ignore[arg-type]
    ]
    return signalled[0] if signalled else None


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) else None
