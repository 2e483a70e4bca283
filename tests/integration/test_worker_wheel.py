"""The worker library installs alone (docs/workloads.md#installing-the-worker-library): its wheel,
built by scripts/worker-wheel.sh (`make worker-wheel`), goes into a bare virtualenv with no
index to fetch from, `pip list` there shows it and nothing else, and its launcher runs. The
COPY-only way, for an image without pip, works the same. About 10 s (pip builds the wheel)."""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from testkit.layout import REPO, WORKER_DISTRIBUTION

WORKER = tomllib.loads((WORKER_DISTRIBUTION / "pyproject.toml").read_text())["project"]
pytestmark = pytest.mark.install


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    pip = Path(sys.executable).parent / "pip"
    built = subprocess.run(
        ["bash", str(REPO / "scripts" / "worker-wheel.sh"), str(out)],
        env={**os.environ, "PIP": str(pip)},
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return Path(built.stdout.strip())


def _bare_venv(directory: Path) -> Path:
    """A virtualenv with nothing installed, not even pip: its python."""
    venv.create(directory, with_pip=False)
    return directory / "bin" / "python"


def _pip(python: Path, *args: str) -> str:
    """This interpreter's pip acting on the virtualenv of `python` (`pip --python`)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *args,
         "--disable-pip-version-check"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -I ...`: no PYTHONPATH, no user site, not this clone's directory."""
    return subprocess.run([str(python), "-I", *args], capture_output=True, text=True, cwd=cwd)


def _imports_and_launches(python: Path, cwd: Path) -> str:
    """The file together_worker is imported from; its launcher passes the command's exit on."""
    imported = _run(
        python, "-c", "import together_worker; print(together_worker.__file__)", cwd=cwd
    )
    assert imported.returncode == 0, imported.stderr
    launched = _run(python, "-m", "together_worker", "run", "--", "sh", "-c", "exit 3", cwd=cwd)
    assert launched.returncode == 3, launched.stderr
    return imported.stdout.strip()


def test_the_wheel_holds_the_worker_package_alone_with_no_dependencies(wheel: Path) -> None:
    assert wheel.name == f"together_gpu_clusters_worker-{WORKER['version']}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(info))
    assert {n.split("/")[0] for n in names} == {
        "together_worker",
        f"together_gpu_clusters_worker-{WORKER['version']}.dist-info",
    }
    assert "together_worker/py.typed" in names
    assert (metadata["Name"], metadata["Version"]) == (WORKER["name"], WORKER["version"])
    assert metadata.get_all("Requires-Dist") is None


def test_the_wheel_installs_alone_into_a_bare_virtualenv_and_its_launcher_runs(
    wheel: Path, tmp_path: Path
) -> None:
    python = _bare_venv(tmp_path / "venv")
    assert json.loads(_pip(python, "list", "--format", "json")) == []
    _pip(python, "install", "--quiet", "--no-index", str(wheel))
    installed = json.loads(_pip(python, "list", "--format", "json"))
    assert installed == [{"name": WORKER["name"], "version": WORKER["version"]}]
    site_packages = tmp_path / "venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert _imports_and_launches(python, tmp_path).startswith(str(site_packages))


def test_the_package_copied_without_pip_imports_and_launches(tmp_path: Path) -> None:
    """The COPY-only way: the package directory into site-packages, no install step."""
    python = _bare_venv(tmp_path / "venv")
    (site_packages,) = (tmp_path / "venv" / "lib").glob("python3.*/site-packages")
    shutil.copytree(
        WORKER_DISTRIBUTION / "together_worker",
        site_packages / "together_worker",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    file = _imports_and_launches(python, tmp_path)
    assert file == str(site_packages / "together_worker" / "__init__.py")
