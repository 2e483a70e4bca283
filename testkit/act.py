"""Run a GitHub Actions workflow under nektos/act (tools/act) in host mode and read what it did, so
the example GitOps workflows are tested as GitHub would run them, with no GitHub."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testkit.pulumi_env import REPO, tool_bin

STANDINS = REPO / "tests" / "gitops" / "actions"
_USES = re.compile(r"uses:\s*actions/([a-z-]+)@(\S+)")


def standins(workflow: Path) -> list[str]:
    """``--local-repository`` values: each ``actions/<name>@<ref>`` the workflow uses, mapped to
    its stand-in; a GitHub action without one fails here, naming it (act would fetch it)."""
    mapped = []
    for name, ref in sorted(set(_USES.findall(workflow.read_text()))):
        local = STANDINS / name
        if not (local / "action.yml").exists():
            raise RuntimeError(f"{workflow.name} uses actions/{name}@{ref}: add {local}/action.yml")
        mapped.append(f"actions/{name}@{ref}={local}")
    return mapped


def _dotenv(path: Path, values: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    path.chmod(0o600)
    return path


@dataclass
class ActRun:
    """One act run: its exit code, its JSON log records and its stderr."""

    returncode: int
    records: list[dict[str, Any]]
    stderr: str

    @staticmethod
    def _key(record: dict[str, Any]) -> str | None:
        """The matrix stack a record is of, or its job's id for a job without that matrix."""
        stack = (record.get("matrix") or {}).get("stack")
        return str(stack) if stack is not None else record.get("jobID")

    def _of(self, stack: str) -> list[dict[str, Any]]:
        return [r for r in self.records if self._key(r) == stack]

    def jobs(self) -> dict[str, str]:
        """Matrix stack (or, for a job without a stack matrix, its id) -> its job's result:
        failure when a step failed, success when the job completed without one. (act's own
        `jobResult` is one for the whole matrix: once an entry fails, the entries finishing
        after it report failure too.)"""
        results: dict[str, str] = {}
        for record in self.records:
            stack = self._key(record)
            if stack is None or "stepResult" not in record:
                continue
            if record["stepResult"] == "failure":
                results[stack] = "failure"
            elif record.get("step") == "Complete job":
                results.setdefault(stack, "success")
        return results

    def steps(self, stack: str) -> dict[str, str]:
        """The named top-level steps of `stack`'s job (or of the job of that id) -> results."""
        return {
            r["step"]: r["stepResult"]
            for r in self._of(stack)
            if "stepResult" in r and r.get("stage") == "Main" and len(r.get("stepID", [])) == 1
        }

    def output(self, stack: str) -> str:
        """Everything `stack`'s job printed, and act's messages about it."""
        return "".join(
            r["msg"] if r.get("raw_output") else f"{r['msg']}\n" for r in self._of(stack)
        )

    def log(self) -> str:
        """The whole run, for assertion messages."""
        return (
            "".join(
                f"[{(r.get('matrix') or {}).get('stack', '-')}] {r.get('msg', '')}".rstrip() + "\n"
                for r in self.records
            )
            + self.stderr
        )


def run_act(
    workflow: Path,
    event_name: str,
    event: Mapping[str, Any],
    *,
    root: Path,
    checkout: Path,
    env: Mapping[str, str],
    secrets: Mapping[str, str],
    variables: Mapping[str, str],
    github_env: Mapping[str, str],
    matrix: Sequence[str] = (),
    timeout: float = 900,
) -> ActRun:
    """Run `workflow` for `event_name` with `event` as its payload (one job at a time; the
    entries of a matrix in parallel, as its strategy allows, each in its own workspace).

    `env` is the environment act (and so every step) runs with; `github_env` goes to act's
    ``--env`` (GITHUB_REPOSITORY, GITHUB_API_URL, ...); `matrix` restricts the matrix
    (``stack:dev``). Secrets and variables go through files, not the command line. The
    upload-artifact stand-in puts the artifacts in `root`/artifacts/<name>/.

    Host mode (``-P ubuntu-latest=-self-hosted``) runs each job's steps as processes on this
    machine, each job in a fresh workspace under act's cache directory, with the environment act
    itself was started with. The actions the workflows use from GitHub are replaced through
    ``--local-repository`` by the stand-ins in tests/gitops/actions (`standins`);
    ``--no-skip-checkout`` makes act run the checkout stand-in, which copies the tree `checkout`
    names into the job's workspace, instead of its own copy of the working directory. ``--json``
    logs one record per line, which :class:`ActRun` reads.
    """
    root.mkdir(parents=True, exist_ok=True)
    event_file = root / "event.json"
    event_file.write_text(json.dumps(event))
    args = [
        str(tool_bin("act") / "act"),
        event_name,
        "--workflows",
        str(workflow),
        "--eventpath",
        str(event_file),
        "--directory",
        str(root),
        "--platform",
        "ubuntu-latest=-self-hosted",
        "--json",
        "--concurrent-jobs",
        "1",
        "--no-cache-server",
        "--action-cache-path",
        str(root / "act-cache"),
        "--no-skip-checkout",
        "--secret-file",
        str(_dotenv(root / "secrets.env", secrets)),
        "--var-file",
        str(_dotenv(root / "vars.env", variables)),
    ]
    for mapping in standins(workflow):
        args += ["--local-repository", mapping]
    for key, value in github_env.items():
        args += ["--env", f"{key}={value}"]
    for selector in matrix:
        args += ["--matrix", selector]
    done = subprocess.run(
        args,
        cwd=root,
        # ACT_DISABLE_VERSION_CHECK: act would otherwise ask its project's server for notices.
        env={
            **env,
            "TOGETHER_ACT_CHECKOUT": str(checkout),
            "TOGETHER_ACT_ARTIFACTS": str(root / "artifacts"),  # the upload-artifact stand-in's
            "ACT_DISABLE_VERSION_CHECK": "1",
        },
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return ActRun(done.returncode, records, done.stderr)
