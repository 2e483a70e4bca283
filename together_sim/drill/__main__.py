"""`python -m together_sim.drill ...` runs `python -m together_drill ...`: the one module of the
simulator allowed to import the drill (tests/unit/test_layers.py names it), so old scripts keep
working."""

from __future__ import annotations

import sys

from together_drill.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
