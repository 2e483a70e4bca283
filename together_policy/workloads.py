"""Checks of Kubernetes workloads against the drain window of preemptible nodes, over plain dicts of
their inputs, so they hold for workloads declared with plain pulumi-kubernetes too."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from together_policy.provider import (
    COMPUTE_CLASS_LABEL,
    DRAIN_WINDOW_SECONDS,
    GRACE_FIELD,
    WorkloadSpecError,
    check_pod_spec,
    forbids_preemptible,
    is_unknown,
    requires_preemptible,
)
from together_policy.resources import (
    CRON_JOB,
    DEPLOYMENT,
    JOB,
    POD,
    POD_DISRUPTION_BUDGET,
    STATEFUL_SET,
    Res,
    has_preemptible_capacity,
)

CRITICAL_LABEL: Final = "together.ai/critical"
"""The label (value "true") that marks a workload critical: never on preemptible nodes."""

DISRUPTION_TARGET: Final = "DisruptionTarget"
DURABLE_VOLUME_KINDS: Final = ("persistentVolumeClaim", "nfs", "csi")
"""Volume sources that outlive the node, so a checkpoint written to them survives a reclaim."""

OFF_PREEMPTIBLE_FIX: Final = (
    f"add required node affinity {COMPUTE_CLASS_LABEL} NotIn [preemptible] to the pod spec "
    "(together_provider.kubernetes.off_preemptible does it)"
)


@dataclass(frozen=True)
class Violation:
    """One finding: the resource's URN (None: the stack as a whole) and the full message."""

    urn: str | None
    message: str


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def job_spec(res: Res) -> Mapping[str, Any] | None:
    """The Job spec of a Job or a CronJob's job template; None for other kinds."""
    spec = _dict(res.props.get("spec"))
    if res.type == JOB:
        return spec
    if res.type == CRON_JOB:
        return _dict(_dict(spec.get("jobTemplate")).get("spec"))
    return None


def pod_template(res: Res) -> Mapping[str, Any]:
    """The pod (template) of a workload (any Pod, Deployment, StatefulSet, Job or CronJob, its
    inputs in Kubernetes JSON as pulumi-kubernetes sends them): its `metadata` and `spec`."""
    if res.type == POD:
        return res.props
    if res.type in (DEPLOYMENT, STATEFUL_SET):
        return _dict(_dict(res.props.get("spec")).get("template"))
    return _dict((job_spec(res) or {}).get("template"))


def pod_spec(res: Res) -> Mapping[str, Any]:
    return _dict(pod_template(res).get("spec"))


def pod_labels(res: Res) -> Mapping[str, Any]:
    return _dict(_dict(pod_template(res).get("metadata")).get("labels"))


def _namespace(res: Res) -> object:
    return _dict(res.props.get("metadata")).get("namespace") or "default"


def is_marked_critical(res: Res) -> bool:
    """The workload, or its pod template, carries `together.ai/critical: "true"` (a
    PodDisruptionBudget selecting its pods makes it critical too: see
    `disruption_budget_off_preemptible`)."""
    own = _dict(_dict(res.props.get("metadata")).get("labels"))
    return "true" in (
        str(own.get(CRITICAL_LABEL)).lower(),
        str(pod_labels(res).get(CRITICAL_LABEL)).lower(),
    )


def placement_unknown(res: Res) -> bool:
    """The pod's placement is computed by another resource (known only after apply): a preview
    cannot say where its pods land, so the placement policies skip it rather than guess."""
    template = pod_template(res)
    spec = template.get("spec") if isinstance(template, Mapping) else None
    parts = [template, spec]
    if isinstance(spec, Mapping):
        parts += [spec.get("nodeSelector"), spec.get("affinity")]
    return any(is_unknown(part) for part in parts)


def _placement(spec: Mapping[str, Any]) -> str:
    """Why a pod spec that does not forbid preemptible nodes can land on one (for messages)."""
    requires = requires_preemptible(spec)
    if requires:
        return f"selects preemptible nodes ({requires})"
    return f"has no {COMPUTE_CLASS_LABEL} constraint, so it may land on a preemptible node"


# --- resource policies --------------------------------------------------------------------------


def grace_period(res: Res) -> list[Violation]:
    """A pod that can land on a preemptible node asks for at most the 300 s drain window."""
    if not res.is_workload:
        return []
    try:
        check_pod_spec(res.name, pod_spec(res))
    except WorkloadSpecError as error:
        if error.field == GRACE_FIELD:
            value = pod_spec(res).get(GRACE_FIELD)
            return [
                Violation(
                    res.urn,
                    f"{res.label}: {GRACE_FIELD}={value} is longer than the "
                    f"{DRAIN_WINDOW_SECONDS} s drain window, and its pods can land on a "
                    f"preemptible node ({_placement(pod_spec(res))}); Together removes a reclaimed "
                    f"node at T+{DRAIN_WINDOW_SECONDS} s whatever its pods are doing (fix: set "
                    f"{GRACE_FIELD} <= {DRAIN_WINDOW_SECONDS} and checkpoint on SIGTERM, or "
                    f"{OFF_PREEMPTIBLE_FIX})",
                )
            ]
    return []


def _critical_violation(res: Res, why: str) -> list[Violation]:
    spec = pod_spec(res)
    if placement_unknown(res) or forbids_preemptible(spec):
        return []
    return [
        Violation(
            res.urn,
            f"{res.label} is critical ({why}) but its pod spec {_placement(spec)}; a reclaim "
            f"drains a preemptible node within {DRAIN_WINDOW_SECONDS} s whatever disruption "
            f"budget or importance its pods have (fix: {OFF_PREEMPTIBLE_FIX}, and remove any "
            f"nodeSelector {COMPUTE_CLASS_LABEL}=preemptible)",
        )
    ]


def critical_off_preemptible(res: Res) -> list[Violation]:
    """A workload labelled critical never selects, or may land on, preemptible nodes."""
    if not res.is_workload or not is_marked_critical(res):
        return []
    return _critical_violation(res, f'label {CRITICAL_LABEL}: "true"')


def _ignores_disruption(job: Mapping[str, Any]) -> bool:
    rules = _dict(job.get("podFailurePolicy")).get("rules")
    for rule in rules if isinstance(rules, list) else []:
        conditions = _dict(rule).get("onPodConditions")
        if _dict(rule).get("action") == "Ignore" and any(
            _dict(c).get("type") == DISRUPTION_TARGET
            for c in (conditions if isinstance(conditions, list) else [])
        ):
            return True
    return False


def _mounts_durable_volume(spec: Mapping[str, Any]) -> bool:
    volumes = spec.get("volumes")
    durable = {
        _dict(v).get("name")
        for v in (volumes if isinstance(volumes, list) else [])
        if any(kind in _dict(v) for kind in DURABLE_VOLUME_KINDS)
    }
    containers = spec.get("containers")
    for container in containers if isinstance(containers, list) else []:
        mounts = _dict(container).get("volumeMounts")
        if any(
            _dict(m).get("name") in durable for m in (mounts if isinstance(mounts, list) else [])
        ):
            return True
    return False


def preemptible_job_checkpoints(res: Res) -> list[Violation]:
    """A Job (or CronJob) pinned to preemptible nodes survives a reclaim: a podFailurePolicy that
    ignores DisruptionTarget (a reclaimed pod is not a failure) and a durable checkpoint mount."""
    job = job_spec(res)
    if job is None or not requires_preemptible(pod_spec(res)):
        return []
    found = []
    if not _ignores_disruption(job):
        found.append(
            Violation(
                res.urn,
                f"{res.label} runs on preemptible nodes but spec.podFailurePolicy has no rule "
                f"ignoring pods with the {DISRUPTION_TARGET} condition (value: "
                f"{job.get('podFailurePolicy')!r}), so every reclaim counts against backoffLimit "
                "(fix: add podFailurePolicy.rules [{action: Ignore, onPodConditions: [{type: "
                f"{DISRUPTION_TARGET}}}]}}] with restartPolicy Never; "
                "together_provider.kubernetes.CheckpointingWorker does it)",
            )
        )
    if not _mounts_durable_volume(pod_spec(res)):
        found.append(
            Violation(
                res.urn,
                f"{res.label} runs on preemptible nodes but no container mounts a checkpoint "
                f"volume (a volumeMount of a {', '.join(DURABLE_VOLUME_KINDS)} volume), so the "
                "work done before a reclaim is lost (fix: mount a PersistentVolumeClaim, e.g. "
                "on the cluster's shared volume, and write checkpoints to it on SIGTERM)",
            )
        )
    return found


SHELLS: Final = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh"})
LAUNCHER_FIX: Final = (
    "run it under the launcher, which passes SIGTERM to the whole process group and exits 143: "
    "command [python, -m, together_worker, run, --, <the same command>]; or end the script with "
    "`exec <the work>`"
)
_SEPARATORS: Final = frozenset({";", "&&", "||", "|", "&", ";;"})


def shell_wrapped(argv: Sequence[object]) -> str | None:
    """How ``argv`` (a container's command + args) wraps its work in a shell that would be PID 1
    and keep SIGTERM from it, or None: ``sh -c`` / ``bash -c`` (any shell, any flags ending in c)
    whose script runs more than one command and does not ``exec`` the last one. A single
    command is exec'd by the shell itself; a script that sets a ``trap`` handles the signal."""
    if len(argv) < 3 or not all(isinstance(a, str) for a in argv[:3]):
        return None
    shell, flags, script = str(argv[0]), str(argv[1]), str(argv[2])
    name = shell.rsplit("/", 1)[-1]
    if name not in SHELLS or not (flags.startswith("-") and flags.endswith("c")):
        return None
    commands = _commands(script)
    if commands is None or len(commands) < 2 or commands[-1][:1] == ["exec"]:
        return None
    if any(command[:1] == ["trap"] for command in commands):
        return None
    return f"{name} {flags} with {len(commands)} commands and no exec"


def _commands(script: str) -> list[list[str]] | None:
    """The simple commands of a shell script, split at ; && || | & and newlines (None when the
    script does not parse, e.g. an unbalanced quote: no guess)."""
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def preemptible_job_shell_wrapper(res: Res) -> list[Violation]:
    """A Job (or CronJob) on preemptible nodes whose container wraps its work in a shell: the
    shell is PID 1, which drops SIGTERM without a handler, so the work gets no signal at a
    reclaim, writes no checkpoint, and is killed at the end of the grace period."""
    if job_spec(res) is None or not requires_preemptible(pod_spec(res)):
        return []
    containers = pod_spec(res).get("containers")
    found = []
    for container in containers if isinstance(containers, list) else []:
        command, args = _dict(container).get("command"), _dict(container).get("args")
        argv = [
            *(command if isinstance(command, list) else []),
            *(args if isinstance(args, list) else []),
        ]
        wrapper = shell_wrapped(argv)
        if wrapper is None:
            continue
        found.append(
            Violation(
                res.urn,
                f"{res.label} runs on preemptible nodes, and container "
                f"'{_dict(container).get('name')}' wraps its work in a shell ({wrapper}: "
                f"{argv[2]!r}); as PID 1 the shell does not pass SIGTERM on, so at a reclaim the "
                "work gets no signal and writes no checkpoint, and is killed at the end of the "
                f"grace period with exit code 137 (fix: {LAUNCHER_FIX})",
            )
        )
    return found


# --- stack policies -----------------------------------------------------------------------------


def _selects(budget: Res, workload: Res) -> bool:
    selector = _dict(_dict(budget.props.get("spec")).get("selector"))
    match = _dict(selector.get("matchLabels"))
    if not match or _namespace(budget) != _namespace(workload):
        return False
    labels = pod_labels(workload)
    return all(labels.get(k) == v for k, v in match.items())


def disruption_budget_off_preemptible(resources: Iterable[Res]) -> list[Violation]:
    """A workload whose pods a PodDisruptionBudget in the program selects is critical, kept off
    preemptible nodes: a budget says "do not take these pods down", which a reclaim ignores."""
    everything = list(resources)
    budgets = [r for r in everything if r.type == POD_DISRUPTION_BUDGET]
    found = []
    for workload in (r for r in everything if r.is_workload):
        budget = next((b for b in budgets if _selects(b, workload)), None)
        if budget is not None:
            found += _critical_violation(
                workload, f"PodDisruptionBudget '{budget.name}' selects its pods"
            )
    return found


def unconstrained_compute_class(resources: Iterable[Res]) -> list[Violation]:
    """On a stack whose cluster has a preemptible target, every workload says where it runs."""
    everything = list(resources)
    preemptible = [c for c in everything if c.is_cluster and has_preemptible_capacity(c)]
    if not preemptible:
        return []
    clusters = ", ".join(f"'{c.name}'" for c in preemptible)
    found = []
    for workload in (r for r in everything if r.is_workload):
        spec = pod_spec(workload)
        if placement_unknown(workload) or requires_preemptible(spec) or forbids_preemptible(spec):
            continue
        found.append(
            Violation(
                workload.urn,
                f"{workload.label}: its pod spec has no {COMPUTE_CLASS_LABEL} constraint "
                f"(nodeSelector and required node affinity: none), and cluster {clusters} has a "
                "preemptible target, so its pods may be scheduled on a node that is reclaimed "
                f"with {DRAIN_WINDOW_SECONDS} s notice (fix: nodeSelector "
                f"{COMPUTE_CLASS_LABEL}=preemptible for interruptible work, or "
                f"{OFF_PREEMPTIBLE_FIX})",
            )
        )
    return found
