"""GitOps: the GitHub side of the PR preview and the drift check (GitHub's REST client, the poster
of each stack's comment, the drift issue, the commands). What the comment says is `preview`'s."""
