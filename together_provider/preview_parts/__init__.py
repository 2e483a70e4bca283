"""What each kind's part of the PR comment builds on (the kind protocol, steps, cells, prices,
guardrails), free of the registry: the kinds lean on it while `preview/`'s plan loops over them."""
