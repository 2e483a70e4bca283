"""A soak of `decide()` against a model of Together and the scheduler: 30 simulated minutes and
more of random bursts and reclaims, scan by scan (10 s), on seeded randomness.

The model: Together adds one preemptible node per minute toward the target, drains a marked
node or a reclaimed one for 300 s before removing it, and refills a reclaimed one; the
scheduler binds a pending pod to any Ready, uncordoned node with 8 free GPUs; a pod runs 5 to 20
minutes; a reclaim evicts its pod, which comes back pending (a Job's replacement). Invariants:
a node named for scale-down never ran a workload pod; the target stays in the range; PUTs stay
few (one per burst up, at most one per scaled-down node down)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from together_autoscaler.decide import decide
from together_autoscaler.model import ClusterState, Limits, Memory, NodeState, Observed, PendingPod

LIMITS = Limits(min_gpus=8, max_gpus=80, unneeded_seconds=120, provision_timeout_seconds=900)


@dataclass
class SimNode:
    name: str
    pod_ends: float | None = None  # the pod it runs (one 8-GPU pod per node)
    pod: str | None = None
    draining_until: float | None = None
    marked: bool = False
    reclaimed: bool = False


@dataclass
class World:
    rng: random.Random
    desired: int = 8
    nodes: list[SimNode] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    seq: int = 0
    next_fill: float = 0.0

    def step(self, now: float) -> None:
        for node in list(self.nodes):
            if node.draining_until is not None and now >= node.draining_until:
                self.nodes.remove(node)
            elif node.pod_ends is not None and now >= node.pod_ends:
                node.pod, node.pod_ends = None, None
        live = [n for n in self.nodes if not n.marked and not n.reclaimed]
        wanted = self.desired // 8
        if len([n for n in self.nodes if not n.marked]) < wanted and now >= self.next_fill:
            self.seq += 1
            self.nodes.append(SimNode(f"n{self.seq}"))
            self.next_fill = now + 60
        for node in live:
            if node.pod is None and node.draining_until is None and self.pending:
                node.pod = self.pending.pop(0)
                node.pod_ends = now + self.rng.uniform(300, 1200)

    def reclaim(self, now: float) -> None:
        busy = [n for n in self.nodes if n.pod and not n.reclaimed and not n.marked]
        if busy:
            node = self.rng.choice(busy)
            node.reclaimed, node.draining_until = True, now + 300
            self.pending.append(f"{node.pod}-again")
            node.pod, node.pod_ends = None, None

    def observe(self, now: float, memory: Memory) -> Observed:
        nodes = tuple(
            NodeState(n.name, 8, cordoned=n.marked or n.reclaimed, marked=n.marked,
                      reclaimed=n.reclaimed, used_gpus=8 if n.pod else 0,
                      workload_pods=1 if n.pod else 0)
            for n in self.nodes
        )  # fmt: skip
        pending = tuple(PendingPod("d", p, p, 8, True) for p in self.pending)
        allocated = 8 * len(self.nodes)
        return Observed(now, ClusterState(self.desired, allocated), LIMITS, nodes, pending, memory)


@pytest.mark.parametrize("seed", range(4))
def test_a_soak_of_bursts_and_reclaims_keeps_every_invariant(seed: int) -> None:
    rng = random.Random(seed)
    world, memory = World(rng), Memory()
    bursts = puts_up = puts_down = nodes_down = 0
    for scan in range(1, 6 * 60 * 1 + 1):  # 60 simulated minutes, a scan every 10 s
        now = scan * 10.0
        if rng.random() < 0.01:  # a burst about every 17 minutes
            bursts += 1
            world.pending += [f"b{scan}-{i}" for i in range(rng.randint(1, 6))]
        if rng.random() < 0.01:
            world.reclaim(now)
        world.step(now)
        observed = world.observe(now, memory)
        decision = decide(observed)
        memory = decision.memory
        busy = {n.name for n in observed.nodes if n.workload_pods}
        assert not busy & set(decision.scale_down_nodes), "a node with a running pod was named"
        assert LIMITS.min_gpus <= decision.target <= LIMITS.max_gpus
        if decision.target > world.desired:
            puts_up += 1
        elif decision.target < world.desired:
            puts_down += 1
            nodes_down += len(decision.scale_down_nodes)
            for node in world.nodes:
                if node.name in decision.scale_down_nodes:
                    node.marked, node.draining_until = True, now + 300
        world.desired = decision.target
    assert bursts >= 2 and nodes_down >= 1, (bursts, nodes_down)  # it did scale both ways
    assert puts_up <= bursts + 1  # +1: the floor, raised at the first scan
    assert puts_down <= nodes_down
