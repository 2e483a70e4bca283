"""``python -m together_autoscaler``: see `together_autoscaler.cli`."""

from together_autoscaler.cli import main

raise SystemExit(main())
