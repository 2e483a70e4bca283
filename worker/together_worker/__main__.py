"""`python -m together_worker run -- CMD...`: run CMD under the reclaim-forwarding launcher (the
container's PID 1), so a shell-wrapped command still checkpoints and exits non-zero on SIGTERM."""

from __future__ import annotations

import argparse
import sys

from together_worker.launcher import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m together_worker",
        description="Tools for workloads on Together's preemptible nodes.",
    )
    commands = parser.add_subparsers(dest="action", required=True)
    launcher = commands.add_parser(
        "run",
        help="run a command as PID 1: forward SIGTERM to its process group, reap, exit 143",
        description="Run CMD in a process group of its own, forward SIGTERM and SIGINT to the "
        "whole group, wait for every process of it, and exit with CMD's code (128 + the signal "
        "if a signal stopped it, and never 0 after a forwarded reclaim signal).",
    )
    launcher.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    args = parser.parse_args(argv)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        parser.error("run: no command given; write it after --, e.g. run -- python train.py")
    return run(command)


if __name__ == "__main__":
    sys.exit(main())
