"""The drill's input, checked before anything starts: kubectl YAML (multi-document), the
directory renderYamlToDirectory writes, the Job --image --command makes; exit 2 on bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from together_drill.__main__ import main
from together_drill.cli import parse, parser
from together_drill.manifest import CLAIM_NAME, DrillInputError, load_job, warnings

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {
        "completions": 2,
        "template": {
            "metadata": {"labels": {"app": "train"}},
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 120,
                "containers": [{"name": "t", "image": "trainer:1", "command": ["python", "t.py"]}],
                "volumes": [{"name": "c", "persistentVolumeClaim": {"claimName": "ckpt"}}],
            },
        },
    },
}
CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "ckpt"}}


def _write(path: Path, *documents: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(documents))
    return path


def test_plain_kubectl_yaml_with_several_documents(tmp_path: Path) -> None:
    manifest = _write(tmp_path / "job.yaml", CLAIM, JOB, None)
    job = load_job(manifest)
    assert (job.name, job.namespace, job.completions, job.grace_seconds) == ("train", "ml", 2, 120)
    assert job.claims == ("ckpt",)
    pod = job.manifest["spec"]["template"]
    # placed on the preemptible nodes the drill reclaims, labelled, never pulled
    assert pod["spec"]["nodeSelector"] == {"together.ai/compute-class": "preemptible"}
    assert pod["metadata"]["labels"] == {"app": "train", "together.ai/compute-class": "preemptible"}
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    assert JOB["spec"]["template"]["spec"].get("nodeSelector") is None  # the input is not touched


def test_the_directory_render_yaml_to_directory_writes(tmp_path: Path) -> None:
    rendered = tmp_path / "rendered"
    _write(rendered / "1-manifest" / "v1-persistentvolumeclaim-default-ckpt.yaml", CLAIM)
    job = {**JOB, "metadata": {**JOB["metadata"], "resourceVersion": "7", "uid": "u"}}
    _write(rendered / "1-manifest" / "batch_v1-job-ml-train.yaml", job)
    loaded = load_job(rendered)
    assert loaded.name == "train" and "resourceVersion" not in loaded.manifest["metadata"]


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ([CLAIM], "holds no Job (found: PersistentVolumeClaim)"),
        ([JOB, {**JOB, "metadata": {"name": "other"}}], "holds 2 Jobs (train, other); give"),
        ([{**JOB, "apiVersion": "batch/v1beta1"}], "apiVersion 'batch/v1beta1'"),
        ([{**JOB, "metadata": {}}], "the Job has no metadata.name"),
        (
            [{**JOB, "spec": {"template": {"spec": {"restartPolicy": "Never"}}}}],
            "Job train has no spec.template.spec.containers",
        ),
        (
            [{**JOB, "spec": {"template": {"spec": {"containers": [{"name": "t"}]}}}}],
            "restartPolicy not set; a Job's pods need Never",
        ),
        (
            [
                {
                    **JOB,
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "t"}],
                                "nodeSelector": {"together.ai/compute-class": "standard"},
                            }
                        }
                    },
                }
            ],
            "selects together.ai/compute-class=standard; the drill reclaims preemptible nodes",
        ),
        (["just a string"], "document 1 is a str, not a Kubernetes object"),
    ],
)
def test_a_manifest_that_is_not_one_drillable_job(
    tmp_path: Path, documents: list[object], message: str
) -> None:
    with pytest.raises(DrillInputError, match=r"--manifest|job\.yaml") as error:
        load_job(_write(tmp_path / "job.yaml", *documents))
    assert message in str(error.value)


def test_unreadable_manifests(tmp_path: Path) -> None:
    with pytest.raises(DrillInputError, match="no such file or directory"):
        load_job(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n")
    with pytest.raises(DrillInputError, match=r"bad\.yaml: not YAML"):
        load_job(tmp_path / "bad.yaml")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DrillInputError, match=r"the directory holds no \.yaml file"):
        load_job(tmp_path / "empty")


def test_image_and_command_make_checkpointing_workers_job() -> None:
    args = parse(["--image", "localhost/t:1", "--grace-seconds", "60", "--command", "python",
                  "-m", "train", "--lr", "3"])  # fmt: skip
    job = args.job
    assert job.claims == (CLAIM_NAME,) and job.grace_seconds == 60
    spec = job.manifest["spec"]
    assert spec["completionMode"] == "Indexed" and spec["backoffLimit"] == 3
    (container,) = spec["template"]["spec"]["containers"]
    assert container["command"] == ["python", "-m", "train", "--lr", "3"]  # all after --command
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["CHECKPOINT_DIR"] == "/checkpoints" and env["DRAIN_WINDOW_SECONDS"] == "60"
    assert args.workload == {
        "image": "localhost/t:1",
        "command": ["python", "-m", "train", "--lr", "3"],
        "grace_seconds": 60,
    }
    assert parse(["--image", "i", "--command", "x"]).job.grace_seconds == 300  # the default
    launched = ["python3", "-m", "together_worker", "run", "--", "sh", "-c", "a; b", "--seed"]
    assert parse(["--image", "i", "--command", *launched]).workload["command"] == launched


def test_reclaims_at_given_times_or_at_random(tmp_path: Path) -> None:
    manifest = str(_write(tmp_path / "job.yaml", JOB))
    timed = parse(["--manifest", manifest, "--at", "10,42.5"])
    assert timed.at_seconds == (10.0, 42.5) and timed.reclaims == 2
    seeded = parse(["--manifest", manifest, "--reclaims", "3", "--seed", "7", "--json", "r.json"])
    assert (seeded.reclaims, seeded.seed, seeded.at_seconds) == (3, 7, None)
    assert seeded.json_path == Path("r.json")
    assert parse(["--manifest", manifest]).reclaims == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give either --manifest FILE (a Job) or --image IMAGE --command"),
        (["--manifest", "{m}", "--image", "i", "--command", "x"], "give either --manifest"),
        (["--manifest", "{m}", "--command", "x"], "--command goes with --image IMAGE"),
        (["--image", "i"], "--image: give the command after --command"),
        (["--image", "i", "--command"], "--image: give the command after --command"),
        (["--image", "i", "--grace-seconds", "0", "--command", "x"], "--grace-seconds 0"),
        (["--manifest", "{m}", "--at", "ten"], "--at ten: give seconds"),
        (["--manifest", "{m}", "--at", "-1"], "--at -1: give one or more seconds >= 0"),
        (["--manifest", "{m}", "--at", "1,2", "--reclaims", "3"], "--reclaims 3 and --at with 2"),
        (["--manifest", "{m}", "--reclaims", "0"], "a drill needs at least one reclaim"),
        (["--manifest", "{m}", "--real-nodes", "0"], "--real-nodes 0: give 1 to 8"),
        (["--manifest", "{m}", "--image-archive", "/nope.tar"], "--image-archive /nope.tar: no"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    manifest = str(_write(tmp_path / "job.yaml", JOB))
    with pytest.raises(DrillInputError) as error:
        parse([a.replace("{m}", manifest) for a in argv])
    assert message in str(error.value)


def test_bad_input_is_exit_2_from_main_with_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--manifest", str(tmp_path / "missing.yaml")]) == 2
    assert "together_drill: --manifest" in capsys.readouterr().err
    assert main(["--manifest", str(_write(tmp_path / "j.yaml", JOB)), "--reclaims", "0"]) == 2
    assert "a drill needs at least one reclaim" in capsys.readouterr().err


def test_a_yml_file_and_a_directory_of_yml_files_are_read(tmp_path: Path) -> None:
    assert load_job(_write(tmp_path / "job.yml", JOB)).name == "train"
    rendered = tmp_path / "rendered"
    _write(rendered / "1-manifest" / "batch_v1-job-ml-train.yml", JOB)
    assert load_job(rendered).name == "train"


def test_an_existing_cluster_through_a_kubeconfig(tmp_path: Path) -> None:
    manifest = str(_write(tmp_path / "job.yaml", JOB))
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\n")
    args = parse(["--manifest", manifest, "--kubeconfig", str(config), "--context", "c",
                  "--namespace", "drills", "--node-selector", "pool=spot,zone=a",
                  "--keep"])  # fmt: skip
    assert args.cluster is not None and args.cluster.keep and args.cluster.context == "c"
    assert args.cluster.node_selector == {"pool": "spot", "zone": "a"}
    assert args.job.namespace == "drills"
    spec = args.job.manifest["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"pool": "spot", "zone": "a"}  # the nodes it may drain
    assert "imagePullPolicy" not in spec["containers"][0]  # a real cluster pulls
    plain = parse(["--manifest", manifest, "--kubeconfig", str(config)]).job
    assert plain.manifest["spec"]["template"]["spec"]["nodeSelector"] == {
        "together.ai/compute-class": "preemptible"
    }
    assert "--kubeconfig" in parser().format_help()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--keep"], "--keep go with --kubeconfig FILE"),
        (["--namespace", "x", "--context", "c"], "--context, --namespace go with --kubeconfig"),
        (["--kubeconfig", "/nope"], "--kubeconfig /nope: no such file"),
        (["--kubeconfig", "{k}", "--node-selector", "pool"], "--node-selector pool: give KEY="),
        (["--kubeconfig", "{k}", "--image-archive", "{k}"], "--image-archive is for the local"),
        (["--kubeconfig", "{k}", "--volume-dir", "/nope"], "--volume-dir /nope: no such"),
    ],
)
def test_bad_cluster_arguments_are_refused(tmp_path: Path, argv: list[str], message: str) -> None:
    manifest = str(_write(tmp_path / "job.yaml", JOB))
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\n")
    with pytest.raises(DrillInputError) as error:
        parse(["--manifest", manifest, *(a.replace("{k}", str(config)) for a in argv)])
    assert message in str(error.value)


def test_a_job_that_counts_reclaims_as_failures_is_warned_before_the_run(tmp_path: Path) -> None:
    bare = load_job(
        _write(tmp_path / "job.yaml", {**JOB, "spec": {**JOB["spec"], "backoffLimit": 0}})
    )
    (warning,) = warnings(bare)
    assert warning.startswith(
        "Job train has no podFailurePolicy rule that ignores DisruptionTarget"
    )
    assert "backoffLimit=0 (RECLAIM_COUNTED_AS_FAILURE)" in warning
    ignores = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    kept = {**JOB, "spec": {**JOB["spec"], "podFailurePolicy": ignores}}
    assert warnings(load_job(_write(tmp_path / "kept.yaml", kept))) == []
    other = {"rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    wrong = {**JOB, "spec": {**JOB["spec"], "podFailurePolicy": other}}
    assert len(warnings(load_job(_write(tmp_path / "wrong.yaml", wrong)))) == 1
    assert warnings(parse(["--image", "i", "--command", "x"]).job) == []  # CheckpointingWorker's
