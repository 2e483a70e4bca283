"""`python -m together_drill`: exit 0 when the workload is safe, 1 when unsafe, 2 on bad
input (a message naming the flag and the fix, and nothing left running)."""

from __future__ import annotations

import sys

from together_drill.cli import parse
from together_drill.manifest import DrillInputError
from together_drill.report import write_not_drilled

BAD_INPUT = 2


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse(argv)
    except DrillInputError as error:
        print(f"together_drill: {error}", file=sys.stderr)
        if error.json_path is not None:  # CI reads a report for every outcome, bad input too
            write_not_drilled(error.json_path, str(error))
        return BAD_INPUT
    from together_drill.run import run  # the simulator and real nodes: only for a real run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
