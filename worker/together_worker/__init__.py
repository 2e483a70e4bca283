"""The worker side of Together's drain window, standard library only so it goes into any image:
the reclaim as a value, atomic checkpoints, a status file and a PID 1 launcher (docs/workloads.md).
"""

from together_worker.checkpoints import Checkpoint, CheckpointStore, index_directory
from together_worker.reclaim import DRAIN_WINDOW_ENV, Reclaim, grace_from_env
from together_worker.status import Run, StatusFile
from together_worker.worker import Worker, helper_ignores_reclaim

__all__ = [
    "DRAIN_WINDOW_ENV",
    "Checkpoint",
    "CheckpointStore",
    "Reclaim",
    "Run",
    "StatusFile",
    "Worker",
    "grace_from_env",
    "helper_ignores_reclaim",
    "index_directory",
]
