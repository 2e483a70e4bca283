"""SQLite persistence of the simulated world, so state survives a restart."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from together_sim.catalogue import Capacity
from together_sim.clusters.state import SimCluster
from together_sim.model import World
from together_sim.volumes import SimVolume

__all__ = ["DB_FILENAME", "Store"]

DB_FILENAME = "simulator.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS clusters (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    cluster_id TEXT UNIQUE NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Store:
    """``<state_dir>/simulator.sqlite3``, or an in-memory database without a state dir."""

    def __init__(self, state_dir: Path | None) -> None:
        target = ":memory:"
        if state_dir is not None:
            state_dir.mkdir(parents=True, exist_ok=True)
            target = str(state_dir / DB_FILENAME)
        self._db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        self._db.executescript(_SCHEMA)

    def load(self, world: World) -> bool:
        """Fill ``world`` from disk; False when there was nothing saved yet."""
        rows = self._db.execute("SELECT body FROM clusters ORDER BY seq").fetchall()
        for (body,) in rows:
            cluster = SimCluster.model_validate_json(body)
            world.clusters[cluster.cluster_id] = cluster
        meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        for entry in json.loads(meta.get("capacity", "[]")):
            world.capacity[(entry["region"], entry["gpu_type"])] = Capacity(
                standard_gpus=entry["standard_gpus"], preemptible_gpus=entry["preemptible_gpus"]
            )
        for entry in json.loads(meta.get("volumes", "[]")):
            volume = SimVolume.model_validate(entry)
            world.volumes.by_id[volume.volume_id] = volume
        if "now" in meta:
            world.now = float(meta["now"])
            return True
        return False

    def save(self, world: World) -> None:
        """The whole world, in one ``BEGIN IMMEDIATE`` transaction per request: a simulator holds
        tens of clusters, and whole-world writes keep the code obviously consistent."""
        capacity = [
            {
                "region": region,
                "gpu_type": gpu,
                "standard_gpus": c.standard_gpus,
                "preemptible_gpus": c.preemptible_gpus,
            }
            for (region, gpu), c in world.capacity.items()
        ]
        volumes = [v.model_dump(mode="json") for v in world.volumes.by_id.values()]
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM clusters")
            db.executemany(
                "INSERT INTO clusters (cluster_id, body) VALUES (?, ?)",
                [(c.cluster_id, c.model_dump_json()) for c in world.clusters.values()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [
                    ("now", repr(world.now)),
                    ("capacity", json.dumps(capacity)),
                    ("volumes", json.dumps(volumes)),
                ],
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
