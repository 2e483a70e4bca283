"""`count` trivial dynamic resources: the baseline the Cluster stack's engine time is divided by."""

import pulumi
from noop_provider import Noop

for i in range(pulumi.Config().require_int("count")):
    Noop(f"noop{i:03d}", f"v{i}")
