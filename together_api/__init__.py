"""Together's GPU clusters API as Python: wire schema, httpx client, retry policy, errors.

This layer knows nothing of Pulumi or of the provider: the provider and the
simulator both build on it, and importing it loads neither.
"""
