"""The drill in a pull request (examples/gitops/workflows/together-drill.yml): where it can run,
said in one line, then the drill itself, with a JSON report for every outcome.

    python -m together_drill.ci choose
        mode=real-nodes|cluster|skip and why=<the line>, for $GITHUB_OUTPUT (the line on stderr)
    python -m together_drill.ci run --json REPORT.json -- DRILL ARGUMENTS...
        the drill (python -m together_drill DRILL ARGUMENTS --json REPORT.json) where `choose`
        says, with --kubeconfig on the cluster; its exit code (0 when skipped)

Real nodes when this runner can run them (root, the node packages: the same check the local
world makes), else the cluster whose kubeconfig the `TOGETHER_DRILL_KUBECONFIG` secret holds,
else no drill, with the line saying why and how to get one."""

from __future__ import annotations

import argparse
import enum
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from together_drill.report import write_not_drilled

KUBECONFIG_ENV: Final = "TOGETHER_DRILL_KUBECONFIG"
"""The secret (passed as this variable) holding the kubeconfig of the cluster to drill on."""


class Mode(enum.StrEnum):
    REAL_NODES = "real-nodes"
    CLUSTER = "cluster"
    SKIP = "skip"


@dataclass(frozen=True)
class Choice:
    mode: Mode
    why: str
    """One line: where the drill runs and why, or why it does not and how to make it."""


def choose(real_nodes_unavailable: str, kubeconfig_given: bool) -> Choice:
    """Where the drill runs: ``real_nodes_unavailable`` is why this runner cannot run real nodes
    ("" when it can), ``kubeconfig_given`` whether the secret names a cluster."""
    if not real_nodes_unavailable:
        return Choice(Mode.REAL_NODES, "drilling on real nodes: this runner is root and has the "
                      "node packages")  # fmt: skip
    cannot = f"this runner cannot run real nodes ({real_nodes_unavailable.rstrip('.')})"
    if kubeconfig_given:
        return Choice(Mode.CLUSTER, f"drilling on the cluster of the {KUBECONFIG_ENV} secret "
                      f"(--kubeconfig): {cannot}")  # fmt: skip
    return Choice(
        Mode.SKIP,
        f"not drilled: {cannot}, and no {KUBECONFIG_ENV} secret names a cluster; run the "
        f"workflow on a self-hosted runner as root, or set the secret to a kubeconfig",
    )


def _choice(environ: Mapping[str, str]) -> Choice:
    from together_drill.world import host_unavailable  # the simulator's check, loaded late

    return choose(host_unavailable(), bool(environ.get(KUBECONFIG_ENV, "").strip()))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m together_drill.ci",
        description="The drill in a pull request: choose where it runs, then run it.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("choose", help="print mode=... and why=... for $GITHUB_OUTPUT")
    run = commands.add_parser("run", help="run the drill where `choose` says")
    run.add_argument("--json", type=Path, required=True, metavar="REPORT.json")
    run.add_argument("drill", nargs=argparse.REMAINDER, help="-- then the drill's arguments")
    return parser


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = os.environ if environ is None else environ
    choice = _choice(env)
    print(choice.why, file=sys.stderr)
    if args.command == "choose":
        print(f"mode={choice.mode.value}\nwhy={choice.why}")
        return 0
    drill = args.drill[1:] if args.drill[:1] == ["--"] else list(args.drill)
    if not drill:
        print("error: run: give the drill's arguments after --, e.g. -- --manifest rendered/",
              file=sys.stderr)  # fmt: skip
        return 2
    args.json.unlink(missing_ok=True)
    if choice.mode is Mode.SKIP:
        write_not_drilled(args.json, choice.why)
        return 0
    from together_drill.__main__ import main as drill_main

    split = drill.index("--command") if "--command" in drill else len(drill)
    before, command = [*drill[:split], "--json", str(args.json)], drill[split:]
    with tempfile.TemporaryDirectory(prefix="drill-kubeconfig-") as scratch:
        if choice.mode is Mode.CLUSTER:
            kubeconfig = Path(scratch, "kubeconfig")
            kubeconfig.touch(mode=0o600)  # a secret: never readable by another user
            kubeconfig.write_text(env[KUBECONFIG_ENV])
            before += ["--kubeconfig", str(kubeconfig)]
        try:
            code = drill_main([*before, *command])
        except SystemExit as stopped:  # argparse's refusal: exit 2, before any report
            code = stopped.code if isinstance(stopped.code, int) else 2
    if not args.json.exists():  # an argparse refusal, before the drill could write one
        refused = f"the drill refused its arguments (exit {code}); see the job's log"
        write_not_drilled(args.json, refused)
    return code


if __name__ == "__main__":
    sys.exit(main())
