"""Why a pod of the Job does not run, said in one sentence that names the object and the fix: a
waiting reason, an event of the pod or the Job, a container that failed on its own."""

from __future__ import annotations

from typing import Any

import pytest

from together_drill.starting import blocked, event_blocked, failed_by_itself, fails_by_itself


def _pod(**status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "drill-0-abc"}, "spec": {}, "status": status}


@pytest.mark.parametrize(
    ("reason", "fix"),
    [
        ("ErrImageNeverPull", "--image-archive"),
        ("ImagePullBackOff", "imagePullSecrets"),
        ("CreateContainerConfigError", "put it in the manifest"),
    ],
)
def test_a_waiting_reason_that_will_not_fix_itself_is_named_with_its_fix(
    reason: str, fix: str
) -> None:
    pod = _pod(
        containerStatuses=[
            {
                "name": "worker",
                "image": "img:1",
                "state": {"waiting": {"reason": reason, "message": 'configmap "s" not found'}},
            }
        ]
    )
    found = blocked(pod)
    assert found is not None
    assert found[0] == reason
    assert found[1].startswith("pod drill-0-abc cannot start: container worker (image img:1)")
    assert 'configmap "s" not found' in found[1] and fix in found[1]
    starting = _pod(containerStatuses=[{"name": "w", "state": {"waiting": {"reason": "X"}}}])
    assert blocked(starting) is None
    assert blocked(_pod()) is None


def test_the_latest_warning_event_is_the_reason() -> None:
    events = [
        {"type": "Normal", "reason": "Scheduled", "message": "assigned"},
        {"type": "Warning", "reason": "FailedScheduling", "message": "0/3 nodes are available"},
        {
            "type": "Warning",
            "reason": "FailedMount",
            "message": 'MountVolume.SetUp failed for volume "script" : configmap "train" not found',
        },
    ]
    found = event_blocked(events, "pod p")
    assert found is not None and found[0] == "FailedMount"
    assert found[1].startswith("pod p cannot run: FailedMount (MountVolume.SetUp failed for volume")
    assert "ConfigMaps, Secrets and ServiceAccounts" in found[1]
    scheduling = event_blocked(events[:2], "pod p")
    assert scheduling is not None and "0/3 nodes are available" in scheduling[1]
    assert event_blocked(events[:1], "pod p") is None
    create = event_blocked(
        [{"reason": "FailedCreate", "message": 'serviceaccount "trainer" not found'}], "Job j"
    )
    assert create is not None and create[1].startswith("Job j cannot run: FailedCreate")


def test_a_container_that_ended_non_zero_alone_failed_by_itself() -> None:
    ended = {"name": "w", "state": {"terminated": {"exitCode": 2}}}
    assert failed_by_itself(_pod(containerStatuses=[ended])) == ("w", 2)
    restarted = {
        "name": "w",
        "state": {"running": {}},
        "lastState": {"terminated": {"exitCode": 1}},
    }
    assert failed_by_itself(_pod(containerStatuses=[restarted])) == ("w", 1)
    assert (
        failed_by_itself(
            _pod(containerStatuses=[{"name": "w", "state": {"terminated": {"exitCode": 0}}}])
        )
        is None
    )
    deleted = _pod(containerStatuses=[ended])
    deleted["metadata"]["deletionTimestamp"] = "2026-12-07T00:00:00Z"  # a reclaim, the controller
    assert failed_by_itself(deleted) is None


def test_the_sentence_shows_the_last_log_lines_and_no_none() -> None:
    logs = "\n".join(f"line {i}" for i in range(20)) + "\n"
    text = fails_by_itself("drill", "drill-0-abc", "worker", 2, 0.4, logs)
    assert text.startswith(
        "pod drill-0-abc of Job drill failed by itself (container worker exited 2 at +0.4 s"
    )
    assert "    line 19" in text and "line 9\n" not in text and "    line 10" in text
    assert "None" not in text
    assert "(no output)" in fails_by_itself("drill", "p", "w", 1, 1.0, "")


def test_edges_of_what_the_api_server_shows() -> None:
    """A pod with no status yet, a status with no state, an init container that cannot start,
    a reason with no message: each read as it is."""
    assert blocked({"metadata": {"name": "p"}}) is None
    assert blocked(_pod(containerStatuses=[{"name": "w"}])) is None
    init = _pod(
        initContainerStatuses=[
            {"name": "fetch", "image": "i:2", "state": {"waiting": {"reason": "ErrImageNeverPull"}}}
        ]
    )
    found = blocked(init)
    assert found is not None
    assert found[1].startswith(
        "pod drill-0-abc cannot start: container fetch (image i:2) is waiting with "
        "ErrImageNeverPull; the image is not on the node"
    )
    assert failed_by_itself({"metadata": {"name": "p"}}) is None


def test_only_warnings_of_the_reasons_that_keep_a_pod_from_running_count() -> None:
    assert event_blocked([{"type": "Normal", "reason": "FailedMount", "message": "m"}], "p") is None
    assert event_blocked([{"type": "Warning", "reason": "BackOff", "message": "m"}], "p") is None
    found = event_blocked([{"reason": "FailedMount"}], "pod p")  # no type: a Warning; no message
    assert found is not None
    assert found[1].startswith("pod p cannot run: FailedMount; a volume of the pod")


def test_a_deleted_pod_or_a_container_with_no_exit_code_did_not_fail_by_itself() -> None:
    ended = {"name": "w", "state": {"terminated": {"exitCode": 3}}}
    gone = {**_pod(containerStatuses=[ended]), "_event": "DELETED"}
    assert failed_by_itself(gone) is None
    no_code = {"name": "w", "state": {"terminated": {"reason": "Completed"}}}
    assert failed_by_itself(_pod(containerStatuses=[no_code])) is None


def test_the_log_lines_are_the_last_ten_each_indented() -> None:
    text = fails_by_itself("j", "p", "w", 1, 1.0, "\n\nfirst\nsecond\n")
    assert text.endswith("Its last log lines:\n    \n    \n    first\n    second")
    many = fails_by_itself("j", "p", "w", 1, 1.0, "\n".join(f"n{i}" for i in range(25)))
    assert "    n14" not in many and many.endswith(
        "    n15\n    n16\n    n17\n    n18\n    n19\n    n20\n    n21\n    n22\n    n23\n    n24"
    )
    assert fails_by_itself("j", "p", "w", 1, 1.0, " \n").endswith(
        "Its last log lines:\n    (no output)"
    )


def test_a_mount_the_node_authorizer_refuses_for_a_moment_is_not_a_reason() -> None:
    """The kubelet may not read a pod's claim until the API server's node authorizer has the
    pod on its node (it lags under load, and the kubelet retries): that FailedMount says
    nothing; a later one that does not pass still does."""
    race = {
        "type": "Warning",
        "reason": "FailedMount",
        "message": "error processing PVC default/ckpt: failed to fetch PVC from API server: "
        'persistentvolumeclaims "ckpt" is forbidden: User "system:node:n1" cannot get resource '
        '"persistentvolumeclaims" in API group "" in the namespace "default": no relationship '
        "found between node 'n1' and this object",
    }
    assert event_blocked([race], "pod p") is None
    missing = {**race, "message": 'configmap "train" not found'}
    found = event_blocked([missing, race], "pod p")
    assert found is not None and found[0] == "FailedMount" and 'configmap "train"' in found[1]
