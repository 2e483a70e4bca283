import pulumi
from counter_provider import Counter

config = pulumi.Config()
counter = Counter("counter", config.require_int("count"))
pulumi.export("count", counter.count)
pulumi.export("seen_type", counter.seen_type)
pulumi.export("created_at", counter.created_at)
