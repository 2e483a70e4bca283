"""What the Job needs beside itself: the manifest's ConfigMaps, Secrets and ServiceAccounts,
created in the Job's namespace before the Job. Only what is missing is created, and only what
this drill created is deleted at the end (on a cluster, the user's own are never touched)."""

from __future__ import annotations

import httpx

from together_drill.cluster import Say
from together_drill.kube import Kube
from together_drill.manifest import DrillJob


def create_missing(kube: Kube, job: DrillJob, say: Say, created: list[str]) -> None:
    """Create each of the Job's objects its namespace lacks, adding the API path of each to
    ``created`` as soon as it is made (an error half-way leaves the list right for the cleanup)."""
    for path, obj in job.paths():
        if kube.http.get(path).status_code != 404:
            say(f"{obj['kind']} {obj['metadata']['name']} already in namespace {job.namespace}: "
                "used as it is")  # fmt: skip
            continue
        kube.request("POST", path.rsplit("/", 1)[0], obj)
        created.append(path)
        say(f"{obj['kind']} {obj['metadata']['name']} of the manifest created")


def delete_created(kube: Kube, paths: list[str]) -> list[str]:
    """Delete what :func:`create_missing` created; the errors, each naming its object."""
    errors = []
    for path in paths:
        try:
            response = kube.http.request("DELETE", path)
            if response.status_code != 404:
                response.raise_for_status()
        except httpx.HTTPError as error:
            errors.append(f"delete {path}: {error}")
    return errors
