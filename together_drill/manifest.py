"""The Job a drill runs: read from the user's YAML (kubectl YAML, multi-document, or the directory
pulumi-kubernetes' renderYamlToDirectory writes), or built the way CheckpointingWorker builds it."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import yaml

from together_facts.values import DRAIN_WINDOW_SECONDS
from together_worker import job as worker_job

Obj = dict[str, Any]
APPLIED_KINDS: Final = {
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "ServiceAccount": "serviceaccounts",
}
"""The manifest's objects the drill creates beside the Job (in its namespace), by their API's
plural: what the Job's pods mount, read or run as."""
SILENT_KINDS: Final = frozenset({"PersistentVolumeClaim", "Namespace", "Job"})
"""Kinds neither created nor warned about: the drill makes the claims and the namespace itself."""
CLAIM_NAME: Final = "drill-checkpoints"
MOUNT_PATH: Final = "/checkpoints"


class DrillInputError(ValueError):
    """Bad input: the drill exits 2 with this message and starts nothing."""

    json_path: Path | None = None
    """The run's ``--json`` (set by :func:`together_drill.cli.parse`): CI reads a report for
    every outcome, so bad input writes one too."""


@dataclass(frozen=True)
class DrillJob:
    """The Job to run, and the claims its pods mount (each bound to the drill's shared volume)."""

    manifest: Obj
    claims: tuple[str, ...]
    objects: tuple[Obj, ...] = ()
    """The manifest's ConfigMaps, Secrets and ServiceAccounts, to create in the Job's namespace."""
    ignored: tuple[str, ...] = ()
    """The manifest's other objects, as "Kind name": the drill does not create them."""

    def paths(self) -> list[tuple[str, Obj]]:
        """Each object of :attr:`objects` with its API path, in the Job's namespace."""
        found = []
        for obj in self.objects:
            placed = copy.deepcopy(obj)
            placed["metadata"]["namespace"] = self.namespace
            plural = APPLIED_KINDS[str(obj["kind"])]
            name = obj["metadata"]["name"]
            found.append((f"/api/v1/namespaces/{self.namespace}/{plural}/{name}", placed))
        return found

    @property
    def name(self) -> str:
        return str(self.manifest["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.manifest["metadata"].get("namespace") or "default")

    @property
    def pod_spec(self) -> Obj:
        spec: Obj = self.manifest["spec"]["template"]["spec"]
        return spec

    @property
    def completions(self) -> int:
        return int(self.manifest["spec"].get("completions") or 1)

    @property
    def grace_seconds(self) -> int:
        return int(self.pod_spec.get("terminationGracePeriodSeconds", 30))


def _documents(path: Path) -> list[tuple[str, Obj]]:
    """Every YAML document of ``path`` (a file, or a directory of *.yaml / *.yml, walked the way
    renderYamlToDirectory lays it out: 0-crd/, 1-manifest/), with where it came from."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        if not files:
            raise DrillInputError(f"--manifest {path}: the directory holds no .yaml file")
    elif path.is_file():
        files = [path]
    else:
        raise DrillInputError(f"--manifest {path}: no such file or directory")
    found = []
    for file in files:
        try:
            documents = list(yaml.safe_load_all(file.read_text()))
        except yaml.YAMLError as error:
            raise DrillInputError(f"--manifest {file}: not YAML: {error}") from error
        for number, document in enumerate(documents, 1):
            if document is None:
                continue  # an empty document (a trailing ---)
            if not isinstance(document, dict):
                raise DrillInputError(
                    f"--manifest {file}: document {number} is a {type(document).__name__}, "
                    "not a Kubernetes object"
                )
            found.append((f"{file} (document {number})", document))
    return found


def load_job(path: Path, *, local: bool = True) -> DrillJob:
    """The one Job in ``path``, checked: a batch/v1 Job with a name, containers and a
    restartPolicy a Job accepts, whose pods can land on the preemptible nodes the drill
    reclaims. The manifest's ConfigMaps, Secrets and ServiceAccounts come with it (the drill
    creates them); its claims are the drill's to make; anything else is named in a warning."""
    documents = _documents(path)
    jobs = [(where, d) for where, d in documents if d.get("kind") == "Job"]
    if not jobs:
        kinds = ", ".join(sorted({str(d.get("kind")) for _, d in documents})) or "nothing"
        raise DrillInputError(
            f"--manifest {path}: holds no Job (found: {kinds}); the drill runs a batch/v1 Job, "
            "e.g. the one CheckpointingWorker renders, or use --image IMAGE --command ..."
        )
    if len(jobs) > 1:
        names = ", ".join(str(d.get("metadata", {}).get("name")) for _, d in jobs)
        raise DrillInputError(
            f"--manifest {path}: holds {len(jobs)} Jobs ({names}); give a file with one"
        )
    where, manifest = jobs[0]
    if manifest.get("apiVersion") != "batch/v1":
        raise DrillInputError(
            f"{where}: apiVersion {manifest.get('apiVersion')!r}; the drill runs batch/v1 Jobs"
        )
    name = manifest.get("metadata", {}).get("name")
    if not name:
        raise DrillInputError(f"{where}: the Job has no metadata.name; give it one")
    spec = manifest.get("spec", {}).get("template", {}).get("spec", {})
    if not spec.get("containers"):
        raise DrillInputError(f"{where}: Job {name} has no spec.template.spec.containers")
    if spec.get("restartPolicy") not in ("Never", "OnFailure"):
        raise DrillInputError(
            f"{where}: Job {name}: restartPolicy "
            + (f"{spec['restartPolicy']!r}" if spec.get("restartPolicy") else "not set")
            + "; a Job's pods need Never (what a pod failure policy needs) or OnFailure"
        )
    selector = spec.get("nodeSelector", {}).get(worker_job.COMPUTE_CLASS_LABEL)
    if selector not in (None, worker_job.PREEMPTIBLE):
        raise DrillInputError(
            f"{where}: Job {name} selects {worker_job.COMPUTE_CLASS_LABEL}={selector}; the "
            "drill reclaims preemptible nodes, so it needs a Job that runs on them"
        )
    claims = tuple(
        str(v["persistentVolumeClaim"]["claimName"])
        for v in spec.get("volumes", [])
        if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)
    )
    objects, ignored = [], []
    for _, document in documents:
        kind = str(document.get("kind"))
        name = (document.get("metadata") or {}).get("name")
        if kind in APPLIED_KINDS and name and document.get("apiVersion") == "v1":
            obj = copy.deepcopy(document)
            for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
                obj["metadata"].pop(key, None)
            objects.append(obj)
        elif kind not in SILENT_KINDS:
            ignored.append(f"{kind} {name or '(no name)'}")
    return DrillJob(_drillable(manifest, local=local), claims, tuple(objects), tuple(ignored))


def _drillable(manifest: Obj, *, local: bool = True) -> Obj:
    """The Job as the drill applies it: rendered-only metadata dropped, the pods placed on
    preemptible nodes (as CheckpointingWorker places them) and, in the local world, images never
    pulled (its nodes have no registry: images come from --image-archive or the node's own); on
    an existing cluster the pods pull as the manifest says."""
    manifest = copy.deepcopy(manifest)
    metadata = manifest["metadata"]
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
        metadata.pop(key, None)
    template = manifest["spec"]["template"]
    placed = worker_job.preemptible_template(
        template["spec"],
        template.get("metadata", {}).get("labels"),
        template.get("metadata", {}).get("annotations"),
    )
    template["metadata"] = {**template.get("metadata", {}), **placed["metadata"]}
    template["spec"] = placed["spec"]
    if local:
        for container in template["spec"]["containers"]:
            container["imagePullPolicy"] = "Never"
    return manifest


def on_cluster(
    job: DrillJob, namespace: str | None, node_selector: dict[str, str] | None
) -> DrillJob:
    """The Job for an existing cluster: in ``namespace`` (else its own), its pods on the nodes
    ``node_selector`` names (else the preemptible ones, as placed already)."""
    manifest = copy.deepcopy(job.manifest)
    if namespace:
        manifest["metadata"]["namespace"] = namespace
    if node_selector:
        spec = manifest["spec"]["template"]["spec"]
        spec["nodeSelector"] = {
            k: v for k, v in spec["nodeSelector"].items() if k != worker_job.COMPUTE_CLASS_LABEL
        } | node_selector
    return replace(job, manifest=manifest)


def ignores_disruption(manifest: Obj) -> bool:
    """Whether the Job's podFailurePolicy has a rule ``Ignore`` on ``DisruptionTarget``: without
    it, a reclaimed pod counts against backoffLimit."""
    rules = (manifest["spec"].get("podFailurePolicy") or {}).get("rules") or []
    return any(
        isinstance(rule, dict)
        and rule.get("action") == "Ignore"
        and any(
            isinstance(c, dict) and c.get("type") == "DisruptionTarget"
            for c in rule.get("onPodConditions") or []
        )
        for rule in rules
    )


def warnings(job: DrillJob) -> list[str]:
    """What the manifest already shows will go wrong, said before the run."""
    spec = job.manifest["spec"]
    found = []
    if not ignores_disruption(job.manifest):
        found.append(
            f"Job {job.name} has no podFailurePolicy rule that ignores DisruptionTarget, so each "
            f"reclaim counts against its backoffLimit={spec.get('backoffLimit', 6)} "
            "(RECLAIM_COUNTED_AS_FAILURE): add the rule {action: Ignore, onPodConditions: "
            "[{type: DisruptionTarget}]} and podReplacementPolicy: Failed"
        )
    if job.ignored:
        found.append(
            f"the manifest's {', '.join(job.ignored)} not created: the drill creates only the "
            "Job, its claims and the ConfigMaps, Secrets and ServiceAccounts of the manifest; "
            "create the rest in the cluster first if the Job needs it"
        )
    return found


def checkpointing_job(
    image: str,
    command: Sequence[str],
    grace_seconds: int = DRAIN_WINDOW_SECONDS,
    *,
    local: bool = True,
) -> DrillJob:
    """The Job CheckpointingWorker makes for ``image`` and ``command`` (one index, its default
    backoffLimit), built by the same functions it uses (together_worker.job)."""
    if not command:
        raise DrillInputError(
            "--command: give the command to run after it, e.g. --command python train.py"
        )
    container = worker_job.worker_container(
        image,
        command,
        mount_path=MOUNT_PATH,
        drain_seconds=grace_seconds,
        compute_class=worker_job.PREEMPTIBLE,
    )
    pod_spec = worker_job.worker_pod_spec(
        container, drain_seconds=grace_seconds, claim_name=CLAIM_NAME
    )
    labels = {"app.kubernetes.io/name": "drill", "app.kubernetes.io/component": "worker"}
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "drill", "labels": labels},
        "spec": worker_job.indexed_job_spec(
            worker_job.preemptible_template(pod_spec, labels),
            completions=1,
            parallelism=1,
            backoff_limit=BACKOFF_LIMIT,
        ),
    }
    return DrillJob(_drillable(manifest, local=local), (CLAIM_NAME,))


BACKOFF_LIMIT: Final = 3
"""CheckpointingWorkerArgs' default backoff_limit (a unit test holds them equal)."""
