"""The drill in a pull request (`python -m together_drill.ci`): where it runs, said in one line,
and a JSON report for every outcome, which the PR comment's drill section reads."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import together_drill.__main__ as drill_cli
from together_drill import world
from together_drill.ci import KUBECONFIG_ENV, Mode, choose, main
from together_provider.preview.drill import read_drill_report, render_drill

ROOT_NEEDED = "real nodes need root (network namespaces, cgroups and mounts); run as root"


@pytest.mark.parametrize(
    ("unavailable", "kubeconfig", "mode", "says"),
    [
        ("", False, Mode.REAL_NODES, "drilling on real nodes: this runner is root"),
        ("", True, Mode.REAL_NODES, "drilling on real nodes"),  # real nodes first
        (
            ROOT_NEEDED,
            True,
            Mode.CLUSTER,
            f"drilling on the cluster of the {KUBECONFIG_ENV} secret (--kubeconfig): this runner "
            f"cannot run real nodes ({ROOT_NEEDED})",
        ),
        (
            ROOT_NEEDED,
            False,
            Mode.SKIP,
            f"not drilled: this runner cannot run real nodes ({ROOT_NEEDED}), and no "
            f"{KUBECONFIG_ENV} secret names a cluster; run the workflow on a self-hosted runner "
            "as root, or set the secret to a kubeconfig",
        ),
    ],
)
def test_real_nodes_then_the_secrets_cluster_then_one_line_why_not(
    unavailable: str, kubeconfig: bool, mode: Mode, says: str
) -> None:
    choice = choose(unavailable, kubeconfig)
    assert choice.mode is mode
    assert choice.why.startswith(says) and "\n" not in choice.why


@pytest.fixture
def no_real_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "host_unavailable", lambda: ROOT_NEEDED)


@pytest.mark.usefixtures("no_real_nodes")
def test_choose_prints_the_mode_and_the_line_for_the_workflow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["choose"], environ={KUBECONFIG_ENV: "apiVersion: v1"}) == 0
    out, err = capsys.readouterr()
    expected = choose(ROOT_NEEDED, True)
    assert out == f"mode=cluster\nwhy={expected.why}\n"
    assert err == f"{expected.why}\n"
    assert main(["choose"], environ={KUBECONFIG_ENV: " \n"}) == 0  # an empty secret is none
    assert capsys.readouterr().out.startswith("mode=skip\n")


@pytest.mark.usefixtures("no_real_nodes")
def test_a_skipped_drill_leaves_a_report_the_comment_shows(tmp_path: Path) -> None:
    report = tmp_path / "drill.json"
    assert main(["run", "--json", str(report), "--", "--manifest", "rendered"], environ={}) == 0
    section = render_drill(read_drill_report(report))
    assert "**could not drill**" in section
    assert f"> {choose(ROOT_NEEDED, False).why}" in section


@pytest.mark.usefixtures("no_real_nodes")
def test_on_the_cluster_the_secret_becomes_a_private_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}

    def drill(argv: list[str]) -> int:
        kubeconfig = Path(argv[argv.index("--kubeconfig") + 1])
        seen.update(
            argv=argv,
            text=kubeconfig.read_text(),
            mode=stat.S_IMODE(kubeconfig.stat().st_mode),
        )
        Path(argv[argv.index("--json") + 1]).write_text('{"verdict": "safe"}')
        return 0

    monkeypatch.setattr(drill_cli, "main", drill)
    report = tmp_path / "drill.json"
    argv = ["run", "--json", str(report), "--", "--image", "i", "--command", "python", "--json"]
    assert main(argv, environ={KUBECONFIG_ENV: "apiVersion: v1\n"}) == 0
    assert seen["text"] == "apiVersion: v1\n" and seen["mode"] == 0o600
    kubeconfig = seen["argv"][5]  # type: ignore[index]
    # Every flag of the drill before --command; the command (its own --json too) left whole.
    assert seen["argv"] == ["--image", "i", "--json", str(report), "--kubeconfig", kubeconfig,
                            "--command", "python", "--json"]  # fmt: skip
    assert not Path(str(kubeconfig)).exists()  # removed with the drill


@pytest.mark.parametrize("form", ["--json F", "--json=F", "--js F"])
def test_bad_input_still_writes_the_report(tmp_path: Path, form: str) -> None:
    """Every spelling argparse takes (a unique prefix too) names the report."""
    report = tmp_path / "drill.json"
    missing = tmp_path / "job.yaml"
    flag = [w.replace("F", str(report)) for w in form.split()]
    assert drill_cli.main(["--manifest", str(missing), *flag]) == 2
    written = json.loads(report.read_text())
    assert written["verdict"] == "not_drilled" and written["exit_code"] == 2
    assert written["reason"] == f"--manifest {missing}: no such file or directory"


def test_a_drill_that_cannot_start_writes_why_in_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused after parsing (here: no kube binaries named), before anything starts."""
    from together_drill.cli import parse
    from together_drill.run import run

    monkeypatch.delenv("TOGETHER_KUBE_BIN", raising=False)
    report = tmp_path / "drill.json"
    assert run(parse(["--image", "i:1", "--json", str(report), "--command", "true"])) == 2
    written = json.loads(report.read_text())
    assert written["verdict"] == "not_drilled"
    assert written["reason"].startswith("the drill needs the Kubernetes binaries and a kubelet")


def test_a_flag_the_drill_refuses_still_leaves_a_report(tmp_path: Path) -> None:
    """argparse refuses with SystemExit before the drill can write anything: the CI step still
    leaves the report the comment step reads, and exits as the drill did."""
    report = tmp_path / "drill.json"
    argv = ["run", "--json", str(report), "--", "--bogus"]
    assert main(argv, environ={KUBECONFIG_ENV: "apiVersion: v1\n"}) == 2
    written = json.loads(report.read_text())
    assert written["verdict"] == "not_drilled"
    assert written["reason"] == "the drill refused its arguments (exit 2); see the job's log"


def test_a_report_path_that_cannot_be_written_is_said_not_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "missing" / "drill.json"
    assert drill_cli.main(["--manifest", str(tmp_path / "job.yaml"), "--json", str(nowhere)]) == 2
    assert f"--json {nowhere}: No such file or directory" in capsys.readouterr().err
