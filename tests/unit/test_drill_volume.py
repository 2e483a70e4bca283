"""The two ways the drill reads the checkpoint volume give the same observation: the reader pod's
lister (run here as the pod runs it) and the local reader agree on every file and on
together_worker's status files; the reader pod lands on a node no reclaim takes, mounts the claim
read-only, and is deleted at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.unit.test_drill_remote import Api, _cluster
from together_drill.manifest import DrillInputError, checkpointing_job
from together_drill.reader import (
    READER_LABEL,
    PodReader,
    checkpoint_claim,
    is_kwok,
    reader_node,
    reader_pod,
)
from together_drill.volume import LISTER, NOTHING, LocalReader, observe, parse_line, runs_from
from together_drill.waits import CouldNotDrill


def _volume(root: Path) -> None:
    for index in ("0", "1"):
        (root / index).mkdir()
        (root / index / "step-4.pt").write_bytes(b"x" * (10 + int(index)))
        runs = {"runs": [{"pod": f"drill-{index}-a", "signal_at": 5.0, "checkpointed_step": 4}]}
        (root / index / "status.json").write_text(json.dumps(runs))
    (root / "0" / ".partial-step-8.pt").write_bytes(b"yy")
    (root / "top.txt").write_text("not json")
    os.symlink(root / "top.txt", root / "link")


def test_the_reader_pods_lister_sees_what_the_local_reader_sees(tmp_path: Path) -> None:
    _volume(tmp_path)
    printed = subprocess.run(
        [sys.executable, "-c", LISTER.replace("time.sleep(tick)", "break"), str(tmp_path),
         "0.25"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    (line,) = printed.stdout.splitlines()
    seen = parse_line(line)
    assert seen is not None
    local = observe(tmp_path)
    assert seen.files == local.files
    assert seen.runs == local.runs
    assert set(local.files) == {
        "0/step-4.pt", "0/status.json", "0/.partial-step-8.pt", "1/step-4.pt", "1/status.json",
        "top.txt",
    }  # fmt: skip
    assert local.files["1/step-4.pt"].size == 11
    assert local.files["0/step-4.pt"].inode == (tmp_path / "0" / "step-4.pt").stat().st_ino
    assert local.runs["1"] == [{"pod": "drill-1-a", "signal_at": 5.0, "checkpointed_step": 4}]
    assert LocalReader(tmp_path).read().files == local.files


def test_status_files_are_read_by_their_index_and_garbage_skipped() -> None:
    runs = runs_from(
        {
            "3/status.json": json.dumps({"runs": [{"pod": "p"}, "junk"]}),
            "4/status.json": "{not json",
            "5/status.json": json.dumps({"runs": "nope"}),
        }
    )
    assert runs == {"3": [{"pod": "p"}]}
    assert parse_line("a log line of something else") is None
    assert parse_line(json.dumps({"t": 1.0, "files": [["a", 1, 2, 3.0]], "status": {}})) == (
        {"a": (1, 2, 3.0)},
        {},
        1.0,
    )


def _node(
    name: str, cls: str, *, ready: bool = True, kwok: bool = False, cordoned: bool = False
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {"together.ai/compute-class": cls},
            "annotations": {"kwok.x-k8s.io/node": "fake"} if kwok else {},
        },
        "spec": {"unschedulable": cordoned},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "nodeInfo": {"kubeletVersion": "v1.36.3"},
        },
    }


def test_the_reader_runs_on_a_node_no_reclaim_takes() -> None:
    p1, p2 = _node("p1", "preemptible"), _node("p2", "preemptible")
    std = _node("std", "standard")
    other = _node("cpu", "cpu")
    assert reader_node([p1, p2, other, std], {"p1", "p2"}) == ("std", False)
    assert reader_node([p1, p2, other], {"p1", "p2"}) == ("cpu", False)
    # only reclaimable nodes: one of them, left out of the reclaims, while another is left
    assert reader_node([p1, p2], {"p1", "p2"}) == ("p1", True)
    assert reader_node([p1], {"p1"}) is None
    # never a KWOK stand-in, a cordoned or an unready node
    fakes = [
        _node("k", "standard", kwok=True),
        _node("c", "standard", cordoned=True),
        _node("u", "standard", ready=False),
    ]
    assert reader_node([p1, *fakes], {"p1"}) is None
    kwok_version = _node("v", "preemptible")
    kwok_version["status"]["nodeInfo"]["kubeletVersion"] = "kwok-v0.6.1"
    assert is_kwok(kwok_version) and not is_kwok(p1)


def test_the_reader_pod_mounts_the_jobs_checkpoint_claim_read_only() -> None:
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    assert checkpoint_claim(job) == "drill-checkpoints"
    pod = reader_pod(job, "drill-checkpoints", "std", "img:1")
    spec = pod["spec"]
    (volume,) = spec["volumes"]
    assert volume["persistentVolumeClaim"] == {"claimName": "drill-checkpoints", "readOnly": True}
    (container,) = spec["containers"]
    assert container["volumeMounts"][0]["readOnly"] is True
    assert container["image"] == "img:1" and container["command"][:2] == ["python3", "-c"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["std"]
    assert "job-name" not in pod["metadata"]["labels"]  # never taken for one of the Job's pods
    assert "securityContext" not in spec and "securityContext" not in container
    job.pod_spec["securityContext"] = {"runAsUser": 1000, "fsGroup": 1000}
    job.pod_spec["containers"][0]["securityContext"] = {"allowPrivilegeEscalation": False}
    secured = reader_pod(job, "drill-checkpoints", "std", "img:1")["spec"]
    assert secured["securityContext"] == {"runAsUser": 1000, "fsGroup": 1000}
    assert secured["containers"][0]["securityContext"] == {"allowPrivilegeEscalation": False}


class ReaderApi(Api):
    """The remote API with Ready nodes, and pods that can be created and deleted."""

    def __init__(self, nodes: dict[str, dict[str, Any]]) -> None:
        super().__init__({})
        self.nodes = nodes
        self.pods: dict[str, Any] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/pods") and request.method == "POST":
            body = json.loads(request.content)
            self.sent.append(("POST", path, body))
            if body["metadata"]["name"] in self.pods:
                return httpx.Response(409, json={})
            self.pods[body["metadata"]["name"]] = body
            return httpx.Response(201, json=body)
        if "/pods/" in path and "eviction" not in path:
            name = path.rsplit("/", 1)[1]
            self.sent.append((request.method, path, None))
            if request.method == "DELETE":
                self.pods.pop(name, None)
                return httpx.Response(200, json={})
            if name in self.pods:
                return httpx.Response(200, json=self.pods[name])
            return httpx.Response(404, json={})
        return super().__call__(request)


def test_a_cluster_without_volume_dir_reads_through_a_reader_pod_it_deletes(
    tmp_path: Path,
) -> None:
    api = ReaderApi({"p1": _node("p1", "preemptible"), "std": _node("std", "standard")})
    cluster = _cluster(tmp_path, api)
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    said: list[str] = []
    cluster.prepare(job, said.append)
    assert list(api.pods) == ["drill-volume-reader"]
    assert cluster.pod_reader is not None and cluster.reader is cluster.pod_reader
    assert cluster.eligible() == {"p1"}
    assert any("volume reader pod drill-volume-reader on node std" in s for s in said)
    cluster.close(job, said.append)
    assert api.pods == {}
    assert "cleaning up: volume reader pod drill-volume-reader deleted" in said


def test_a_cluster_with_only_reclaimable_nodes_spares_the_readers_node(tmp_path: Path) -> None:
    api = ReaderApi({"p1": _node("p1", "preemptible"), "p2": _node("p2", "preemptible")})
    cluster = _cluster(tmp_path, api)
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    cluster.prepare(job, lambda line: None)
    assert cluster.eligible() == {"p2"}
    cluster.close(None, lambda line: None)


def test_volume_dir_reads_here_and_makes_no_pod(tmp_path: Path) -> None:
    api = ReaderApi({"p1": _node("p1", "preemptible"), "std": _node("std", "standard")})
    cluster = _cluster(tmp_path, api, volume_dir=tmp_path)
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    cluster.prepare(job, lambda line: None)
    assert api.pods == {} and cluster.reader.readable
    assert isinstance(cluster.reader, LocalReader)


def test_kwok_stand_ins_are_refused_at_once(tmp_path: Path) -> None:
    api = ReaderApi({"p1": _node("p1", "preemptible", kwok=True), "std": _node("std", "standard")})
    cluster = _cluster(tmp_path, api)
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    with pytest.raises(DrillInputError, match=r"p1 .* KWOK stand-ins: no process runs there"):
        cluster.prepare(job, lambda line: None)
    assert api.pods == {}


def test_a_reader_left_by_a_killed_drill_is_replaced_and_another_pod_never_touched(
    tmp_path: Path,
) -> None:
    nodes = {"p1": _node("p1", "preemptible"), "std": _node("std", "standard")}
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    api = ReaderApi(nodes)
    api.pods["drill-volume-reader"] = {"metadata": {"labels": {READER_LABEL: "drill"}}, "old": 1}
    cluster = _cluster(tmp_path, api)
    cluster.prepare(job, lambda line: None)
    assert "old" not in api.pods["drill-volume-reader"]
    cluster.close(None, lambda line: None)
    theirs = ReaderApi(nodes)
    theirs.pods["drill-volume-reader"] = {"metadata": {"labels": {"app": "theirs"}}}
    with pytest.raises(CouldNotDrill, match="not the drill's volume reader"):
        _cluster(tmp_path, theirs).prepare(job, lambda line: None)
    assert theirs.pods["drill-volume-reader"] == {"metadata": {"labels": {"app": "theirs"}}}


def test_a_line_the_runtime_split_into_partial_entries_is_read_whole(tmp_path: Path) -> None:
    """The runtime stores a line past 16 KiB as partial entries and the kubelet's tailLines
    counts each: a volume of many files is still read, from a deeper tail."""
    volume = tmp_path / "volume"
    volume.mkdir()
    for number in range(400):  # about 26 KiB of listing
        (volume / f"shard-{number:04d}.pt").write_bytes(b"x")
    lister = LISTER.replace("time.sleep(tick)", "break")
    printed = subprocess.run(
        [sys.executable, "-c", lister, str(volume), "0.25"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert len(printed) > 16384
    chunks = [printed[i : i + 16384] for i in range(0, len(printed), 16384)]
    entries = ["old line\n", *chunks]  # each chunk but the last has no newline: partial
    api = ReaderApi({"p1": _node("p1", "preemptible"), "std": _node("std", "standard")})
    asked: list[int] = []

    def kubelet(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/log"):
            depth = int(request.url.params["tailLines"])
            asked.append(depth)
            return httpx.Response(200, text="".join(entries[-depth:]))
        return api(request)

    cluster = _cluster(tmp_path, api)
    cluster.kube.http = httpx.Client(
        base_url="https://api.example", transport=httpx.MockTransport(kubelet)
    )
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    reader = PodReader(cluster.kube, reader_pod(job, "drill-checkpoints", "std", "img:1"), print)
    api.pods[reader.name]["status"] = {"containerStatuses": [{"state": {"running": {}}}]}
    seen = reader.read()
    assert reader.readable and len(seen.files) == 400
    assert seen.files == observe(volume).files
    assert asked == [1, 8]  # one deeper look, not one per entry


@pytest.mark.parametrize("reason", ["ErrImageNeverPull", "ErrImagePull", "InvalidImageName"])
def test_a_reader_pod_that_cannot_start_is_given_up_at_once_in_one_sentence(
    tmp_path: Path, reason: str
) -> None:
    """The reasons that keep the Job's pods from starting keep the reader from it too: the drill
    says so at once (no None where the runtime gives no message) and reads nothing."""
    api = ReaderApi({"std": _node("std", "standard")})
    cluster = _cluster(tmp_path, api)
    job = checkpointing_job("img:1", ["python3", "train.py"], 10, local=False)
    said: list[str] = []
    reader = PodReader(cluster.kube, reader_pod(job, "c", "std", "img:1"), said.append)
    waiting = {"waiting": {"reason": reason}}
    api.pods[reader.name]["status"] = {"containerStatuses": [{"state": waiting}]}
    assert reader.read() == NOTHING and not reader.readable
    (line,) = said
    assert f"(image img:1, node std) cannot start: {reason}; the Job's checkpoint" in line
    assert "None" not in line
