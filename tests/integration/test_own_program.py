"""What a new user does first: the README's own program, in their own directory, with no stack
config at all, credentials from the environment. It previews, ups and destroys a shared volume and
a cluster with a preemptible target, the volume attached.

(With no config the engine sends no config map; a host that passed that on as
PULUMI_CONFIG=null crashed every such program inside the SDK.)
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest
import yaml
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, state_clusters, together_client
from tests.integration.conftest import PROGRAMS

API_KEY = "sk-own-program-3c9a"
FAST = {"time_scale": 600, "api_key": API_KEY}
pytestmark = pytest.mark.engine

README = Path(__file__).parents[2] / "README.md"


def readme_example() -> dict[str, str]:
    """The README's own example: the fenced `yaml`, `text` and `python` blocks of its "Example"
    section, as `Pulumi.yaml`, `requirements.txt` and `__main__.py`."""
    section = README.read_text().split("\n## Example\n", 1)[1].split("\n## ", 1)[0]
    blocks = dict(re.findall(r"```(yaml|text|python)\n(.*?)```", section, re.S))
    return {
        "Pulumi.yaml": blocks["yaml"],
        "requirements.txt": blocks["text"],
        "__main__.py": blocks["python"],
    }


def users_program(directory: Path) -> Path:
    """The README's three files, as a user writes them. Its virtualenv is ours, which holds
    what its requirements.txt installs (`pulumi install` of it: test_normal_install.py)."""
    directory.mkdir(parents=True)
    files = readme_example()
    settings = yaml.safe_load(files["Pulumi.yaml"])
    assert settings["runtime"]["options"] == {"toolchain": "pip", "virtualenv": "venv"}
    settings["runtime"]["options"]["virtualenv"] = sys.prefix
    (directory / "Pulumi.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    (directory / "__main__.py").write_text(files["__main__.py"])
    return directory


def test_the_readmes_requirements_put_this_clone_into_the_virtualenv() -> None:
    """`-c <clone>/constraints.txt`, `-e <clone>/worker` and `-e <clone>`: the pins, the worker
    library this package depends on (no index serves it) and this package, editable."""
    clone = README.parent
    lines = readme_example()["requirements.txt"].replace("<clone>", str(clone)).splitlines()
    assert lines == [f"-c {clone / 'constraints.txt'}", f"-e {clone / 'worker'}", f"-e {clone}"]
    assert (clone / "constraints.txt").is_file() and (clone / "pyproject.toml").is_file()


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_own_program_without_config_previews_ups_and_destroys(
    tmp_path: Path, engine: Path, simulator: SimulatorProcess
) -> None:
    env = PulumiEnv(
        root=tmp_path,
        bin_dir=engine,
        extra_env={"TOGETHER_API_KEY": API_KEY, "TOGETHER_BASE_URL": simulator.base_url},
    )
    work = users_program(tmp_path / "my-gpus")
    stack = env.stack(work, "dev")
    assert stack.get_all_config() == {}

    # The stack, the volume and the cluster.
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}
    assert live_clusters(simulator) == []

    up = stack.up()
    (cluster,) = live_clusters(simulator)
    assert up.outputs["cluster_id"].value == cluster.cluster_id
    assert state_clusters(env, work, "dev") == {"train": cluster.cluster_id}
    assert (cluster.num_gpus, cluster.desired_preemptible_gpus) == (8, 16)
    assert isinstance(up.outputs["allocated"].value, int)
    with together_client(simulator) as client:
        (volume,) = client.list_volumes()
    assert cluster.attached_volume_id == volume.volume_id

    assert stack.destroy().summary.resource_changes == {"delete": 3}
    assert live_clusters(simulator) == []


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_the_readme_example_installs_and_previews_as_written(
    tmp_path: Path, engine: Path, simulator: SimulatorProcess
) -> None:
    """All three files verbatim (`<clone>`: this repository), `pulumi install` making the
    program's own virtualenv from its requirements.txt, then a preview: what the README says to
    run. Builds a virtualenv: about 20 s with pip's cache warm."""
    env = PulumiEnv.for_user(
        tmp_path, engine, base_url=simulator.base_url, api_key=API_KEY, passphrase="readme-example"
    )
    work = tmp_path / "my-gpus"
    work.mkdir()
    for name, text in readme_example().items():
        (work / name).write_text(text.replace("<clone>", str(README.parent)))

    pulumi = functools.partial(env.succeed, work)

    installed = pulumi("install")
    assert (work / "venv" / "bin" / "python").exists()
    assert "Please be careful with folders" not in installed
    pulumi("stack", "init", "dev")
    previewed = pulumi("preview", "--non-interactive")
    assert "3 to create" in previewed, previewed
    assert live_clusters(simulator) == []


def test_the_harness_takes_an_engine_directory_of_any_name(tmp_path: Path, engine: Path) -> None:
    """A release install keeps the CLI in e.g. ~/.pulumi/bin or /opt/pulumi: not always `bin`."""
    release = tmp_path / "pulumi-3.274"
    release.mkdir()
    for binary in engine.iterdir():
        (release / binary.name).symlink_to(binary)
    env = PulumiEnv(root=tmp_path, bin_dir=release)
    stack = env.stack(env.project(PROGRAMS / "counter"), config={"count": 1})
    assert stack.preview().change_summary == {auto.OpType.CREATE: 2}
