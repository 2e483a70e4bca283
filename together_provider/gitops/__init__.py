"""GitOps: the GitHub side of the PR preview and the drift check (GitHub's REST client, the poster
with GitHub's comment limit and marker, the drift issue, the commands). What the comment says
is `preview`'s Markdown."""
