"""One drill: make the cluster ready (a local world, or an existing cluster), create the Job,
reclaim nodes its pods run on (at random moments with --seed, or --at), watch what each pod
does, then judge, and leave the cluster as found whatever happens (errors, Ctrl-C, SIGTERM)."""

from __future__ import annotations

import json
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import FrameType
from typing import Any, Final

import httpx

from together_drill.cli import DrillArgs
from together_drill.cluster import Cluster, Say
from together_drill.evidence import Snapshot, StatusRuns, VolumeSeen, judge_save
from together_drill.kube import Kube, Obj, PodWatch, terminated
from together_drill.manifest import DrillInputError, DrillJob, warnings
from together_drill.report import as_json, readable, write_not_drilled
from together_drill.starting import (
    STUCK_SECONDS,
    blocked,
    event_blocked,
    failed_by_itself,
    fails_by_itself,
)
from together_drill.targets import (
    Running,
    choose,
    ended_early,
    random_due,
    running_now,
    starting,
)
from together_drill.verdict import (
    COULD_NOT_DRILL,
    JobSeen,
    PodSeen,
    ReclaimSeen,
    verdict,
)
from together_drill.waits import CouldNotDrill, wait_for
from together_facts.values import DRAIN_WINDOW_SECONDS

INDEX_LABEL: Final = "batch.kubernetes.io/job-completion-index"
JOB_NAME_LABEL: Final = "job-name"
TRACKING_FINALIZER: Final = "batch.kubernetes.io/job-tracking"
"""The Job controller removes it from a pod once it has counted the pod's end."""
COUNTED_WAIT_SECONDS: Final = 15.0


def progress(start: float) -> Say:
    def say(text: str) -> None:
        print(f"[drill +{time.monotonic() - start:6.1f}s] {text}", file=sys.stderr, flush=True)

    return say


class EndedEarly(CouldNotDrill):
    """The Job ended before a reclaim was due: nothing left to drill (exit 2)."""


class WontRun(CouldNotDrill):
    """A pod of the Job cannot start, or the workload fails by itself: nothing to drill (exit 2);
    the message names the object, the reason and the fix."""


EVENTS_EVERY_SECONDS: Final = 2.0


@dataclass
class Reclaimed:
    node: str
    at: float
    """time.monotonic() of the reclaim."""
    wall: float
    """time.time() of the reclaim (the status file's and the volume's clock)."""
    at_seconds: float
    pods: list[str]
    files: Snapshot
    """The volume's files at the reclaim."""
    failed_before: int
    ended_files: dict[str, Snapshot] = field(default_factory=dict)
    """Per pod: the volume's files when its container was seen ended."""
    failed_after: int = 0
    refill_seconds: float | None = None


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does


def run(args: DrillArgs) -> int:
    """The drill's exit code: 0 safe, 1 unsafe, 2 could not drill, 3 unverified. Whatever
    ends it (the Job, an error, Ctrl-C, SIGTERM), the cluster is closed: left as found."""
    say = progress(time.monotonic())
    notes = [f"warning: {w}" for w in warnings(args.job)]
    for note in notes:
        say(note)
    previous = signal.signal(signal.SIGTERM, _interrupted)
    cluster: Cluster | None = None
    created: list[DrillJob] = []
    """The Job, once this drill created it (never one that was there before)."""
    try:
        cluster = _open(args, say)
        report, code = _drill(cluster, args, say, created, notes)
        print(report)
    except (DrillInputError, EndedEarly, WontRun) as error:
        print(f"together_drill: {error}", file=sys.stderr)
        code = _not_drilled(args, str(error))
    except (CouldNotDrill, httpx.HTTPError) as error:
        print(f"together_drill: could not drill: {error}", file=sys.stderr)
        log = getattr(cluster, "log_path", None)
        if log is not None:
            print(f"the simulator's last lines:\n{_tail(log)}", file=sys.stderr)
        code = _not_drilled(args, f"could not drill: {error}")
    except KeyboardInterrupt:
        print("together_drill: interrupted; leaving the cluster as found", file=sys.stderr)
        code = _not_drilled(args, "interrupted (Ctrl-C or SIGTERM)")
    finally:
        # The cleanup runs to its end: a second Ctrl-C or SIGTERM is ignored (SIGKILL is not).
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            if cluster is not None:
                cluster.close(created[0] if created else None, say)
        except (CouldNotDrill, httpx.HTTPError) as error:
            print(f"together_drill: {error}", file=sys.stderr)
            code = COULD_NOT_DRILL
        finally:
            signal.signal(signal.SIGINT, interrupt)
            signal.signal(signal.SIGTERM, previous)
    return code


def _not_drilled(args: DrillArgs, reason: str) -> int:
    """Exit 2, with the JSON report saying why when ``--json`` was given: CI reads a report for
    every outcome (a PR comment shows this reason)."""
    if args.json_path is not None:
        write_not_drilled(args.json_path, reason)
    return COULD_NOT_DRILL


def _open(args: DrillArgs, say: Say) -> Cluster:
    """The cluster to drill on, checked and ready (exit 2 otherwise)."""
    if args.cluster is not None:
        from together_drill.remote import RemoteCluster

        return RemoteCluster(args.cluster)
    from together_drill.world import DrillWorldError, World, check_host

    kube_bin, images = check_host(args.job, args.image_archive)
    world = World(kube_bin, images, args.real_nodes, args.image_archive, args.start_timeout_seconds)
    try:
        world.start(say)
    except DrillWorldError as error:
        tail = _tail(world.log_path)  # before close removes the log with the state directory
        world.close(None, say)
        raise DrillWorldError(f"{error}; the simulator's last lines:\n{tail}") from error
    except BaseException:
        world.close(None, say)
        raise
    return world


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text().splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class _State:
    """What one poll saw: the Job's status, and its live pods by node."""

    status: Obj
    now: Running
    at: float

    @cached_property
    def _end(self) -> tuple[str, str] | None:
        """The Job's end as (Complete or Failed, its reason or ""), None while it runs: read
        once per poll (a state is what one poll saw and never changes)."""
        for condition in self.status.get("conditions") or []:
            if condition["status"] == "True" and condition["type"] in ("Complete", "Failed"):
                return condition["type"], condition.get("reason") or ""
        return None

    @property
    def ended(self) -> str | None:
        """How the Job ended (Complete, Failed: reason), None while it runs."""
        if self._end is None:
            return None
        kind, reason = self._end
        return f"{kind}: {reason}" if reason else kind

    @property
    def failure(self) -> str | None:
        """Why the Job failed (its Failed condition's reason, or "Failed" when the condition gives
        none, as a Job controller may), None when it did not fail."""
        if self._end is None or self._end[0] != "Failed":
            return None
        return self._end[1] or "Failed"


class _Drill:
    """The observe/act loop of one drill: everything it acts on goes through ``cluster``."""

    def __init__(self, cluster: Cluster, args: DrillArgs, say: Say) -> None:
        self.cluster, self.args, self.say, self.job = cluster, args, say, args.job
        self.kube: Kube = cluster.kube
        self.rng = random.Random(args.seed)
        self.deadline = time.monotonic() + args.timeout_seconds
        self.job_path = f"/apis/batch/v1/namespaces/{self.job.namespace}/jobs/{self.job.name}"
        self.watch = PodWatch(self.kube, self.job.namespace, f"{JOB_NAME_LABEL}={self.job.name}")
        self.eligible = cluster.eligible()
        self.first = 0.0
        self.created_at = 0.0
        """time.monotonic() when the Job was created."""
        self.started = False
        """A pod of the Job ran: a pod pending after that waits for capacity (a refill)."""
        self.reclaimed: set[str] = set()
        self.stuck_since: dict[str, float] = {}
        self.events: list[Obj] = []
        self.events_at = -EVENTS_EVERY_SECONDS
        self.job_uid = ""
        self.due: float | None = None
        """time.monotonic() when the next reclaim was due."""
        self.late: list[str] = []
        """Why that reclaim came later than due."""

    def state(self) -> _State:
        status = self.kube.request("GET", self.job_path).get("status", {})
        return _State(status, running_now(list(self.watch.seen), self.eligible), time.monotonic())

    def wait(self, what: str, until: Any) -> _State:
        """Poll the Job and its pods until ``until(state)`` or the Job ended; a pod that cannot
        start or fails by itself ends the drill (WontRun)."""

        def check() -> _State | None:
            state = self.state()
            self.failed_alone(state)
            if state.ended or until(state):
                return state
            self.trouble(state)
            return None

        return wait_for(check, what, max(0.0, self.deadline - time.monotonic()))

    def failed_alone(self, state: _State) -> None:
        """Raise WontRun when a pod the drill did not reclaim ended non-zero by itself."""
        for name, pod in sorted(self.watch.latest().items()):
            failed = None if name in self.reclaimed else failed_by_itself(pod)
            if failed is not None:
                container, code = failed
                raise WontRun(
                    fails_by_itself(
                        self.job.name, name, container, code, state.at - self.first,
                        self.logs(name, container),
                    )
                )  # fmt: skip

    def trouble(self, state: _State) -> None:
        """Raise WontRun when (before any pod ran) a pod has a reason not to start that has
        lasted STUCK_SECONDS, or no pod ran within --start-timeout."""
        if self.started:
            return
        latest = self.watch.latest()
        problems: dict[str, str] = {}
        pods = {n: p for n, p in latest.items() if p.get("_event") != "DELETED"}
        for name, pod in pods.items():
            found = blocked(pod)
            if found is not None:
                problems[f"{name}/{found[0]}"] = found[1]
        if state.at - self.events_at >= EVENTS_EVERY_SECONDS:
            self.events_at = state.at
            try:  # a cluster may not let the drill list events: the pods' reasons still count
                self.events = self.kube.items(f"/api/v1/namespaces/{self.job.namespace}/events")
            except httpx.HTTPError:
                self.events = []
        for name, pod in pods.items():
            uid = pod["metadata"].get("uid")
            mine = [e for e in self.events if e.get("involvedObject", {}).get("uid") == uid]
            found = event_blocked(mine, f"pod {name}")
            if found is None:
                continue
            scheduled = bool(pod["spec"].get("nodeName"))
            if (found[0] == "FailedScheduling") != scheduled:
                problems[f"{name}/{found[0]}"] = found[1]
        if not pods:
            mine = [
                e for e in self.events if e.get("involvedObject", {}).get("uid") == self.job_uid
            ]
            found = event_blocked(mine, f"Job {self.job.name}")
            if found is not None:
                problems[f"job/{found[0]}"] = found[1]
        for key in set(self.stuck_since) - set(problems):
            del self.stuck_since[key]
        for key, sentence in sorted(problems.items()):
            if state.at - self.stuck_since.setdefault(key, state.at) >= STUCK_SECONDS:
                raise WontRun(sentence)
        timeout = self.args.start_timeout_seconds
        if state.at - self.created_at >= timeout:
            last = "; ".join(problems.values()) or "no reason shown by its pods or events"
            raise WontRun(
                f"no pod of Job {self.job.name} ran within --start-timeout {timeout:.0f} s of "
                f"its creation ({last}); find why with kubectl describe pods -l "
                f"{JOB_NAME_LABEL}={self.job.name}, or give a longer --start-timeout"
            )

    def logs(self, pod: str, container: str) -> str:
        """The last lines of ``container`` of ``pod`` (its previous run's when it restarted)."""
        path = f"/api/v1/namespaces/{self.job.namespace}/pods/{pod}/log"
        for previous in ("false", "true"):
            try:
                response = self.kube.http.get(
                    path,
                    params={"container": container, "tailLines": "10", "previous": previous},
                )
            except httpx.HTTPError:
                continue
            if response.status_code == 200 and response.text.strip():
                return response.text
        return ""

    def ended_before(self, state: _State, number: int, due: float | None) -> EndedEarly:
        return EndedEarly(
            ended_early(
                self.job.name,
                state.at - self.first,
                number,
                self.args.reclaims,
                None if due is None else due - self.first,
                str(state.ended),
            )
        )

    def target(self, number: int) -> tuple[str, list[str]] | None:
        """The node of reclaim ``number`` (0-based) and its live pods, picked once when the
        reclaim is due; raises EndedEarly if the Job ended first (None: it failed after an
        earlier reclaim, and the verdict says why)."""
        due: float | None = None
        if self.args.at_seconds is not None:
            due = self.first + self.args.at_seconds[number]
        else:
            state = self.wait("a running pod of the Job", lambda s: bool(s.now))
            if state.ended:
                self._ended(state, number, due)
                return None
            due = random_due(state.now, self.rng)
        when = due
        self.due, self.late = due, []
        state = self.wait(f"reclaim {number + 1}", lambda s: s.at >= when)
        if not state.ended and not state.now:
            waiting = sorted(n for n, pod in self.watch.latest().items() if starting(pod))
            why = (
                f"pod(s) {', '.join(waiting)} of the Job were still starting (a reclaim takes a "
                "node with every pod on it)"
                if waiting
                else "no pod of the Job was running"
            )
            self.say(f"reclaim {number + 1} due; {why}: waiting for a node to reclaim")
            self.late.append(f"{why} when it was due")
            state = self.wait("a running pod to reclaim", lambda s: bool(s.now))
        if state.ended:
            self._ended(state, number, due)
            return None
        return choose(state.now, self.rng)

    def _ended(self, state: _State, number: int, due: float | None) -> None:
        """A Job that failed after a reclaim goes to the verdict (which says why); any other end
        before a reclaim was due ends the drill (EndedEarly)."""
        if number > 0 and str(state.ended).startswith("Failed"):
            self.say(f"Job {self.job.name} {state.ended} before reclaim {number + 1}")
            return
        raise self.ended_before(state, number + 1, due)

    def files(self, after: float | None = None) -> Snapshot:
        """The volume's files now (with ``after``, a ``time.time()``: read no earlier)."""
        return self.cluster.reader.read(after).files

    def failed(self) -> int:
        return int(self.kube.request("GET", self.job_path).get("status", {}).get("failed", 0))

    def reclaim(self, number: int, node: str, pods: list[str]) -> Reclaimed:
        files, failed = self.files(), self.failed()
        self.reclaimed.update(pods)
        now, wall = time.monotonic(), time.time()
        self.cluster.reclaim(node, pods, self.job.namespace, self.say)
        timing = ""
        if self.due is not None:
            timing = f"; due at +{self.due - self.first:.1f} s, done at +{now - self.first:.1f} s"
            if self.late:
                timing += f" ({'; '.join(self.late)})"
        self.say(f"reclaim {number + 1}: node {node} (pods: {', '.join(pods)}){timing}")
        reclaimed = Reclaimed(node, now, wall, round(now - self.first, 1), pods, files, failed)
        self.follow(reclaimed)
        return reclaimed

    def follow(self, reclaimed: Reclaimed) -> None:
        """Until the reclaimed pods ended (the volume looked at as each ends, to see a save cut
        off), the Job counted them, and capacity came back."""
        pending = set(reclaimed.pods)

        def ended() -> bool:
            for name in sorted(pending):
                if any(
                    terminated(p) or p.get("_event") == "DELETED" for _, p in self.history(name)
                ):
                    reclaimed.ended_files[name] = self.files(time.time())
                    pending.discard(name)
                    self.say(f"  pod {name} ended")
            return not pending

        wait_for(ended, "the reclaimed pods to end", max(0.0, self.deadline - time.monotonic()))

        def counted() -> bool:
            return all(self.counted(name) for name in reclaimed.pods)

        try:
            wait_for(counted, "the Job to count the reclaimed pods", COUNTED_WAIT_SECONDS)
        except CouldNotDrill:
            self.say("  the Job did not count the reclaimed pods in time; its failed count as is")
        reclaimed.failed_after = self.failed()
        reclaimed.refill_seconds = self.cluster.refill(
            reclaimed.node, reclaimed.at, self.deadline, self.say
        )

    def history(self, name: str) -> list[tuple[float, Obj]]:
        return self.watch.history(name)

    def counted(self, name: str) -> bool:
        history = self.history(name)
        last = history[-1][1] if history else {}
        finalizers = last.get("metadata", {}).get("finalizers") or []
        return last.get("_event") == "DELETED" or TRACKING_FINALIZER not in finalizers

    def finish(self) -> JobSeen:
        self.say(f"waiting for Job {self.job.name} to finish")
        try:
            state = self.wait(f"Job {self.job.name} to finish", lambda s: False)
        except CouldNotDrill:
            status = self.kube.request("GET", self.job_path).get("status", {})
            return JobSeen(
                self.job.name, self.job.completions, int(status.get("succeeded", 0)), timed_out=True
            )
        return JobSeen(
            self.job.name,
            self.job.completions,
            int(state.status.get("succeeded", 0)),
            state.failure,
        )

    def pod_seen(
        self, reclaimed: Reclaimed, name: str, rise: int, position: int, runs: StatusRuns
    ) -> PodSeen:
        """What ``name`` did when ``reclaimed`` took it; ``runs``: together_worker's status files
        as the volume shows them once the Job finished (read once for every pod)."""
        history = self.history(name)
        pod = history[-1][1]
        ended = next(((t, p) for t, p in history if terminated(p)), None)
        state = terminated(ended[1]) if ended else None
        conditions = {
            c["type"] for c in pod.get("status", {}).get("conditions", []) if c["status"] == "True"
        }
        delivered = "DisruptionTarget" in conditions or any(
            p["metadata"].get("deletionTimestamp") for _, p in history
        )
        index = pod["metadata"].get("labels", {}).get(INDEX_LABEL)
        files = (
            VolumeSeen(reclaimed.files, reclaimed.ended_files.get(name, {}))
            if self.cluster.reader.readable
            else None
        )
        judged = judge_save(name, index, reclaimed.wall, files, runs)
        return PodSeen(
            pod=name,
            node=reclaimed.node,
            index=index,
            grace_seconds=float(pod["spec"].get("terminationGracePeriodSeconds", 30)),
            sigterm_delivered=delivered,
            exit_code=int(state["exitCode"]) if state else None,
            sigterm_to_exit_seconds=round(ended[0] - reclaimed.at, 1) if ended else None,
            counted_success=pod.get("status", {}).get("phase") == "Succeeded",
            counted_as_failure=position < rise,
            uses_library=judged.uses_library,
            checkpointed_step=judged.checkpointed_step,
            reached_step=judged.reached_step,
            saving_when_killed=judged.saving_when_killed,
            next_pod=judged.next_pod,
            next_resumed_from=judged.next_resumed_from,
            checkpoint_every=judged.checkpoint_every,
            shrunk_files=judged.shrunk_files,
            save=judged.save,
            save_source=judged.save_source,
            volume_readable=judged.volume_readable,
        )


def _drill(
    cluster: Cluster, args: DrillArgs, say: Say, created: list[DrillJob], notes: list[str]
) -> tuple[str, int]:
    job = args.job
    # Prepared first: the nodes a reclaim may take are known only then (less the node a reader
    # pod runs on), so the drill lists them once, and its --timeout counts from there.
    cluster.prepare(job, say)
    drill = _Drill(cluster, args, say)
    try:
        made = drill.kube.request(
            "POST", f"/apis/batch/v1/namespaces/{job.namespace}/jobs", job.manifest
        )
        created.append(job)
        drill.job_uid = str(made.get("metadata", {}).get("uid", ""))
        drill.first = drill.created_at = time.monotonic()  # "+N s" from here until a pod runs
        say(f"Job {job.name} created ({job.completions} completion(s)); waiting for a pod to run")
        first = drill.wait("a pod of the Job to run", lambda s: bool(s.now))
        if first.ended:
            raise drill.ended_before(first, 1, None)
        drill.first = min(t for pods in first.now.values() for _, t in pods)
        drill.started = True
        reclaims: list[Reclaimed] = []
        for number in range(args.reclaims):
            target = drill.target(number)
            if target is None:
                break
            reclaims.append(drill.reclaim(number, *target))
        job_seen = drill.finish()
        runs = cluster.reader.read().runs  # NOTHING's: {} when the volume cannot be read
        seen = []
        for r in reclaims:
            rise = r.failed_after - r.failed_before
            pods = tuple(drill.pod_seen(r, pod, rise, i, runs) for i, pod in enumerate(r.pods))
            seen.append(ReclaimSeen(r.node, r.at_seconds, pods, r.refill_seconds))
    finally:
        drill.watch.stop()
    result = verdict(seen, job_seen, DRAIN_WINDOW_SECONDS)
    if args.json_path is not None:
        report = as_json(result, seen, job_seen, args.workload, DRAIN_WINDOW_SECONDS, notes)
        args.json_path.write_text(json.dumps(report, indent=2) + "\n")
    return readable(result, seen, job_seen, DRAIN_WINDOW_SECONDS), result.exit_code


__all__ = ["EndedEarly", "run"]
