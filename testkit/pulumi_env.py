"""An isolated Pulumi environment for tests that drive the real engine, so a test never reads or
writes the developer's Pulumi home, backend or plugins."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pulumi import automation as auto

from testkit.builds import where

if TYPE_CHECKING:
    from testkit.sim import SimulatorProcess

REPO = Path(__file__).resolve().parent.parent
PASSPHRASE = "test-passphrase"


TOOLS: dict[str, tuple[str, str]] = {
    "pulumi-engine": ("TOGETHER_ENGINE_BIN", "pulumi"),
    "k8s-provider": ("TOGETHER_K8S_PROVIDER_BIN", "pulumi-resource-kubernetes"),
    "kube": ("TOGETHER_KUBE_BIN", "kube-apiserver"),
    "yaml-langhost": ("TOGETHER_YAML_LANGHOST_BIN", "pulumi-language-yaml"),
    "nodejs-langhost": ("TOGETHER_NODEJS_LANGHOST_BIN", "pulumi-language-nodejs"),
    "ts-codegen": ("TOGETHER_TS_CODEGEN_BIN", "ts-codegen"),
    "go-langhost": ("TOGETHER_GO_LANGHOST_BIN", "pulumi-language-go"),
    "go-codegen": ("TOGETHER_GO_CODEGEN_BIN", "go-codegen"),
    "act": ("TOGETHER_ACT_BIN", "act"),
    "actionlint": ("TOGETHER_ACTIONLINT_BIN", "actionlint"),
    # Not binaries: the images real nodes run, a docker-archive tar each (with_real_nodes).
    "images": ("TOGETHER_IMAGES_DIR", "images.txt"),
}
"""Each tools/<name>/build.sh: the variable `make test` exports its bin directory in (the
Makefile's BUILDS), and a binary that proves the build is there."""


def tool_bin(tool: str) -> Path:
    """The bin directory of the tools/ build `tool`: `$VARIABLE` under make, else what its
    build.sh names (`--where`); fails with the fix when the build is not there."""
    variable, binary = TOOLS[tool]
    configured = os.environ.get(variable)
    path = Path(configured) if configured else where(tool)
    if not (path / binary).exists():
        raise RuntimeError(f"no {binary} in {path}: run `make engine` (or tools/{tool}/build.sh)")
    return path


def engine_bin() -> Path:
    """The directory holding ``pulumi`` and the Python language host."""
    return tool_bin("pulumi-engine")


def k8s_plugin_bin() -> Path:
    """The directory holding ``pulumi-resource-kubernetes``."""
    return tool_bin("k8s-provider")


def install_k8s_plugin(home: Path) -> Path:
    """Put the built ``pulumi-resource-kubernetes`` into the plugin cache of the Pulumi home
    `home` (a symlink, at the version the installed pulumi_kubernetes SDK asks for), as
    ``pulumi plugin install resource kubernetes <version> --file ...`` would: found there, the
    engine prints no "using pulumi-resource-kubernetes from $PATH" warning. Returns the link."""
    version = importlib.metadata.version("pulumi_kubernetes")
    link = home / "plugins" / f"resource-kubernetes-v{version}" / "pulumi-resource-kubernetes"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink():
        link.symlink_to(k8s_plugin_bin() / "pulumi-resource-kubernetes")
    return link


def fresh_clone(destination: Path) -> Path:
    """The repository's files as a clone has them (tracked and new, nothing ignored): what a
    test that runs the repository as a user would (`pulumi install`, act) starts from."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@dataclass
class PulumiEnv:
    """One isolated Pulumi home + backend; `stack()` opens stacks of a local program in it.

    Each has its own PULUMI_HOME, a ``file://`` backend in a temp dir, a passphrase, no update
    check and no plugin downloads, with the engine built by ``tools/pulumi-engine/build.sh``
    first on PATH."""

    root: Path
    bin_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    # Where state lives; None means a `file://` backend under `root` (see `backend_dir`).
    backend_url: str | None = None

    @property
    def home(self) -> Path:
        return self.root / "pulumi-home"

    @property
    def backend_dir(self) -> Path:
        return self.root / "state"

    @property
    def env_vars(self) -> dict[str, str]:
        return {
            "PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PULUMI_HOME": str(self.home),
            "PULUMI_BACKEND_URL": self.backend_url or self.backend_dir.as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_DISABLE_REGISTRY_RESOLVE": "true",
            "PULUMI_CREDENTIAL_STORE": "plaintext",
            "PULUMI_SKIP_CONFIRMATIONS": "true",
            **self.extra_env,
        }

    def cli_root(self) -> Path:
        """A directory whose `bin/pulumi` is this engine's CLI, which is how the Automation API
        wants it: the engine directory itself when it is named `bin` (our build), otherwise a
        symlink to it (a release install in, say, ~/.pulumi-3.280/ or /usr/local/pulumi/)."""
        if self.bin_dir.name == "bin":
            return self.bin_dir.parent
        root = self.root / "pulumi-cli"
        if not (root / "bin").exists():
            root.mkdir(parents=True, exist_ok=True)
            (root / "bin").symlink_to(self.bin_dir.resolve(), target_is_directory=True)
        return root

    def project(self, source: Path, name: str | None = None) -> Path:
        """Copy a program directory into this environment and point it at the repo's venv."""
        work = self.root / "projects" / (name or source.name)
        shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__"))
        settings_file = work / "Pulumi.yaml"
        settings: dict[str, Any] = (
            yaml.safe_load(settings_file.read_text()) if settings_file.exists() else {}
        )
        settings.setdefault("name", name or source.name)
        runtime = settings.get("runtime")
        if not isinstance(runtime, dict):
            runtime = {"name": "python"}
        runtime["options"] = {
            **runtime.get("options", {}),
            "toolchain": "pip",
            "virtualenv": str(Path(sys.prefix)),
        }
        settings["runtime"] = runtime
        settings_file.write_text(yaml.safe_dump(settings, sort_keys=False))
        return work

    def stack(
        self, work_dir: Path, stack_name: str = "test", config: Mapping[str, Any] | None = None
    ) -> auto.Stack:
        """Create or select `stack_name` of the program in `work_dir`, with `config` set.

        A *local* program (a work dir holding Pulumi.yaml), never an inline one: inline programs
        cannot load a dynamic provider by reference (pulumi/pulumi#7960)."""
        self.backend_dir.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        opts = auto.LocalWorkspaceOptions(
            work_dir=str(work_dir),
            pulumi_home=str(self.home),
            env_vars=self.env_vars,
            pulumi_command=auto.PulumiCommand(root=str(self.cli_root())),
        )
        stack = auto.create_or_select_stack(stack_name, work_dir=str(work_dir), opts=opts)
        for key, value in (config or {}).items():
            secret = isinstance(value, Secret)
            raw = value.value if isinstance(value, Secret) else value
            stack.set_config(key, auto.ConfigValue(value=str(raw), secret=secret), path=False)
        return stack

    @classmethod
    def for_user(
        cls, root: Path, bin_dir: Path, *, base_url: str, api_key: str, passphrase: str
    ) -> PulumiEnv:
        """A home and backend under `root` (both made) with what a user's shell holds: the key
        and base URL as TOGETHER_API_KEY and TOGETHER_BASE_URL, and the stacks' passphrase."""
        env = cls(
            root=root,
            bin_dir=bin_dir,
            extra_env={
                "TOGETHER_API_KEY": api_key,
                "TOGETHER_BASE_URL": base_url,
                "PULUMI_CONFIG_PASSPHRASE": passphrase,
            },
        )
        env.home.mkdir()
        env.backend_dir.mkdir()
        return env

    def succeed(self, work_dir: Path, *args: str) -> str:
        """`pulumi *args` in `work_dir`, which must succeed: its stdout and stderr together
        (a failure shows both)."""
        done = self.run(work_dir, *args, check=False)
        assert done.returncode == 0, f"pulumi {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def run(
        self, work_dir: Path, *args: str, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run the `pulumi` CLI itself (for commands the Automation API does not wrap)."""
        env = {**os.environ, **self.env_vars}
        return subprocess.run(
            [str(self.bin_dir / "pulumi"), *args, "--non-interactive"],
            cwd=work_dir,
            env=env,
            capture_output=True,
            text=True,
            check=check,
        )

    def exported_state(self, work_dir: Path, stack_name: str = "test") -> dict[str, Any]:
        """`pulumi stack export` as a user runs it: secrets stay encrypted.

        (The Automation API's `export_stack` passes --show-secrets, so it is not what is stored.)
        """
        out = self.run(work_dir, "stack", "export", "--stack", stack_name)
        state: dict[str, Any] = json.loads(out.stdout)
        return state

    def resource_outputs(
        self, work_dir: Path, type_: str, stack_name: str = "test"
    ) -> list[dict[str, Any]]:
        """The stored outputs of every resource of `type_` (what refresh updates; stack outputs
        only change when the program runs)."""
        resources = self.exported_state(work_dir, stack_name)["deployment"].get("resources", [])
        return [r.get("outputs", {}) for r in resources if r["type"] == type_]


@dataclass(frozen=True)
class Secret:
    """A config value to set as a Pulumi secret."""

    value: str


PLUGIN_DIR = Path(sys.executable).parent
"""Where the package installed `pulumi-resource-together` (beside this interpreter)."""


def native_pulumi_env(root: Path, engine: Path) -> PulumiEnv:
    """A `PulumiEnv` whose PATH also holds the plugin."""
    path = os.pathsep.join([str(engine), str(PLUGIN_DIR), os.environ.get("PATH", "")])
    return PulumiEnv(root=root, bin_dir=engine, extra_env={"PATH": path})


def provider_config(sim: SimulatorProcess, api_key: str | None = None) -> dict[str, Any]:
    """The `together:` provider config that points a stack at `sim` (the key as a secret)."""
    return {"together:apiKey": Secret(api_key or sim.api_key), "together:baseUrl": sim.base_url}
