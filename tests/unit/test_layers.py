"""The layers as packages: together_api below everything, the simulator on together_api only."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from testkit.layout import package_dir

ROOT = Path(__file__).resolve().parents[2]


def _imports(package: str, *, skip: tuple[str, ...] = ()) -> set[str]:
    """Every module an absolute import statement in the package names (relative ones skipped),
    but in the files ``skip`` names (paths from the repository's root)."""
    found: set[str] = set()
    sources = [
        s for s in package_dir(package).rglob("*.py") if str(s.relative_to(ROOT)) not in skip
    ]
    assert sources, f"no package {package!r}: a renamed layer must not pass unchecked"
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return found


def _imports_of(source: Path) -> set[str]:
    """The modules one file imports at run time (those under `if TYPE_CHECKING:` skipped)."""
    found: set[str] = set()
    tree = ast.parse(source.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("together_api", {"together_provider", "together_sim", "pulumi", "pulumi_kubernetes"}),
        ("together_sim", {"together_provider", "together_drill", "pulumi", "pulumi_kubernetes"}),
        (
            "together_drill",
            {"together_provider", "together_autoscaler", "pulumi", "pulumi_kubernetes"},
        ),
        (
            "together_autoscaler",
            {"together_provider", "together_sim", "together_policy", "pulumi", "pulumi_kubernetes"},
        ),
    ],
)
def test_a_layer_imports_nothing_above_it(package: str, forbidden: set[str]) -> None:
    assert _top(_imports(package, skip=DRILL_ALIAS)) & forbidden == set()


DRILL_ALIAS: Final = ("together_sim/drill/__main__.py",)
"""`python -m together_sim.drill`, the drill's old name kept as a thin alias: the one file of the
simulator that imports the drill."""


def test_the_drill_alias_is_only_an_alias() -> None:
    (alias,) = DRILL_ALIAS
    assert _imports_of(ROOT / alias) == {"__future__", "sys", "together_drill.__main__"}
    assert "together_drill" in _top(_imports("together_sim"))  # the skip above is needed


def test_the_drill_uses_the_simulator_only_to_start_its_local_world() -> None:
    """The drill is a client of a cluster: only its local world (world.py, which also checks
    the host can run real nodes) knows the simulator exists."""
    users = sorted(
        str(source.relative_to(ROOT))
        for source in (ROOT / "together_drill").rglob("*.py")
        if "together_sim" in _top(_imports_of(source))
    )
    assert users == ["together_drill/world.py"]


def test_the_worker_library_needs_only_the_standard_library() -> None:
    """together_worker goes into any image (the user's, with whatever Python it has): it may
    import the standard library and itself, nothing else, not even this project's other layers."""
    imported = _top(_imports("together_worker")) - {"together_worker", "__future__"}
    assert imported - set(sys.stdlib_module_names) == set()
    # What importing it adds to what any interpreter here loads at start (site's own hooks).
    added = _loaded_after("import together_worker, together_worker.__main__") - _loaded_after("")
    assert added - set(sys.stdlib_module_names) == {"together_worker"}


def test_the_simulator_builds_on_the_wire_schema() -> None:
    assert "together_api.wire" in _imports("together_sim")


def test_the_autoscaler_builds_on_the_api_layer() -> None:
    assert {"together_api.client", "together_facts.prices"} <= _imports("together_autoscaler")


def test_the_autoscalers_decision_needs_no_kubernetes_client() -> None:
    """`decide` is pure: loading it loads neither the Kubernetes client nor HTTP."""
    loaded = _loaded_after("import together_autoscaler.decide")
    assert {"lightkube", "httpx", "httpx2", "prometheus_client", "pulumi"} & loaded == set()


def _loaded_after(statement: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after running `statement`."""
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return _top(set(json.loads(out)))


def test_importing_the_api_layer_loads_no_pulumi() -> None:
    loaded = _loaded_after("import together_api.client, together_api.wire, together_facts.errors")
    assert {"pulumi", "grpc", "dill", "together_provider", "together_sim"} & loaded == set()


def test_importing_the_simulator_loads_no_pulumi_and_no_provider() -> None:
    loaded = _loaded_after("import together_sim.app")
    assert {"pulumi", "grpc", "dill", "together_provider"} & loaded == set()


PULUMI_FREE = (
    "together_provider",
    "together_provider.registry",
    "together_provider.extensions",
    "together_provider.native",
    "together_provider.framework.lifecycle",
    "together_provider.cluster.lifecycle",
    "together_provider.cluster.rules",
    "together_provider.volume.lifecycle",
    "together_provider.volume.rules",
    "together_provider.stack_config",
    "together_provider.preview",
    "together_provider.docs",
)


def test_the_provider_package_and_its_pulumi_free_modules_load_no_pulumi() -> None:
    # The resource classes load on first use; everything a native host or the PR preview needs
    # (field tables, rules, lifecycles, stack config, preview) stays free of grpc and dill.
    loaded = _loaded_after(f"import {', '.join(PULUMI_FREE)}")
    assert {"pulumi", "grpc", "dill", "together_sim", "pulumi_kubernetes"} & loaded == set()


def test_the_rules_stay_away_from_the_io_lifecycle() -> None:
    """Each kind's rules are pure: nothing of the API client, the wire models or a lifecycle.
    Its `__init__` imports its lifecycle only in the function its `Kind` calls on an apply path
    (so the type checker sees the class, and importing the kind loads no httpx or pydantic)."""
    for package in ("together_provider/cluster", "together_provider/volume"):
        for rules in ("rules", "table"):
            imported = _imports_of(ROOT / package / f"{rules}.py")
            assert not {m for m in imported if m.endswith(".lifecycle")}, (package, rules)
            assert {"together_api.client", "together_api.wire", "httpx"} & imported == set()
        init = ast.parse((ROOT / package / "__init__.py").read_text())
        at_import = {n.module for n in init.body if isinstance(n, ast.ImportFrom) and n.module}
        assert not {m for m in at_import if m.endswith(".lifecycle")}, package
    loaded = _loaded_after("import together_provider.cluster, together_provider.volume")
    assert {"httpx", "pydantic"} & loaded == set()


def test_the_lazy_public_names_still_resolve() -> None:
    import together_provider
    from together_provider.registry import KINDS

    assert together_provider.Cluster.__name__ == "Cluster"
    assert together_provider.ClusterArgs.__name__ == "ClusterArgs"
    for kind in KINDS:  # every kind of the registry is exported, from the generated module
        for name in kind.exports:
            assert name in together_provider.__all__
            assert getattr(together_provider, name).__module__ == "together_provider.resources"
    with pytest.raises(AttributeError):
        _ = together_provider.Nope  # type: ignore[attr-defined]  # what mypy now catches too


def test_a_preview_loads_neither_pydantic_nor_httpx() -> None:
    # What a preview runs: the program declares Clusters, the provider checks and diffs them.
    # Apply paths (create, update, read, delete) load the API client on first use.
    loaded = _loaded_after(
        "from together_provider import Cluster, ClusterArgs\n"
        "from together_provider.cluster.provider import ClusterProvider\n"
        "from together_provider.volume.provider import VolumeProvider\n"
        "v = {'volume_name': 'ckpt', 'region': 'r', 'size_tib': 1.0}\n"
        "assert not VolumeProvider().check({}, v).failures\n"
        "assert not VolumeProvider().diff('v-1', v, v).changes\n"
        "p = ClusterProvider()\n"
        "news = dict(cluster_name='t', region='r', gpu_type='H100_SXM', num_gpus=8.0,\n"
        "            cuda_version='12.8', nvidia_driver_version='570')\n"
        "assert not p.check({}, news).failures\n"
        "assert not p.diff('c-1', news, news).changes"
    )
    assert {"pydantic", "pydantic_core", "httpx"} & loaded == set()


def test_the_benchmarks_import_no_test_code() -> None:
    """bench/ and the tests share drivers through testkit/, never through each other."""
    assert "tests" not in _top(_imports("bench"))
    assert "tests" not in _top(_imports("testkit"))


def test_the_api_package_exports_its_surface_and_stays_cheap_to_import() -> None:
    import together_api
    from together_api import client, kubeconfig, retry, wire
    from together_facts import errors, hints, values

    assert set(errors.__all__) <= set(together_api.__all__)
    modules = (client, errors, hints, kubeconfig, retry, values, wire)
    for name in together_api.__all__:
        (home,) = [m for m in modules if name in m.__all__]
        assert getattr(together_api, name) is getattr(home, name), name
    # The client and the wire models load on first use: importing the package loads neither.
    assert {"httpx", "pydantic"} & _loaded_after("import together_api") == set()


def _module_graph(*packages: str) -> dict[str, set[str]]:
    """Each module of the packages and the packages' modules it imports anywhere: at run time,
    inside a function, or under `if TYPE_CHECKING:` (a cycle there is still a tangle)."""
    modules = {
        ".".join(
            source.relative_to(package_dir(package).parent).with_suffix("").parts
        ).removesuffix(".__init__"): source
        for package in packages
        for source in package_dir(package).rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for module, source in modules.items():
        graph[module] = set()
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                named = {f"{node.module}.{alias.name}" for alias in node.names}
                graph[module] |= (named & modules.keys()) or {node.module} & modules.keys()
            elif isinstance(node, ast.Import):
                graph[module] |= {alias.name for alias in node.names} & modules.keys()
        graph[module].discard(module)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph (a package's own `__init__` left out: its submodules import
    through it by name only), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for imported in sorted(graph[module]):
            if imported not in graph or module.startswith(f"{imported}."):
                continue
            if found := visit(imported, [*path, module]):
                return found
        done.add(module)
        return None

    for module in sorted(graph):
        if "." in module and (found := visit(module, [])):
            return found
    return None


def test_the_simulator_has_no_import_cycle() -> None:
    """Each module of the simulator can be read on its own: the dependencies run one way, from
    the HTTP layer through the runtime and the control-plane hub down to the model."""
    assert _cycle(_module_graph("together_sim")) is None


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}}) == ["p.a", "p.b", "p.c", "p.a"]


INSTALLED = (
    "together_facts",
    "together_api",
    "together_provider",
    "together_sim",
    "together_autoscaler",
    "together_policy",
    "together_worker",
    "together_drill",
)


def test_no_product_package_has_an_import_cycle() -> None:
    """The five packages as one graph, every import counted (under `TYPE_CHECKING` and inside
    functions too), so no module closes a circle through another, in its package or across."""
    assert _cycle(_module_graph(*INSTALLED)) is None


def test_the_cycle_check_sees_a_cycle_across_packages() -> None:
    graph = _module_graph(*INSTALLED)
    graph["together_facts.errors"] = {*graph["together_facts.errors"], "together_provider.registry"}
    assert _cycle(graph) is not None


def test_the_provider_and_the_controller_share_one_placement_rule() -> None:
    """Where a pod may run is one pure rule (`together_facts.placement`): the provider's workload
    helpers and the autoscaler's controller both import it, and the autoscaler no Pulumi."""
    placement = ROOT / "together_provider" / "kubernetes" / "placement.py"
    assert "together_facts.placement" in _imports_of(placement)
    assert "together_facts.placement" in _imports_of(ROOT / "together_autoscaler" / "pods.py")
    assert _imports_of(ROOT / "together_facts" / "placement.py") <= {
        "__future__",
        "collections.abc",
        "typing",
        "together_facts.values",
    }


def test_the_framework_imports_no_feature() -> None:
    """The framework (`Kind`, the table, the rules, the lifecycle contract) is the core every
    feature builds on: it imports nothing from preview, stack_config, native, codegen, the hosts
    or the registry, anywhere in a module, so a new feature edits no file of it."""
    imported = {m for m in _imports("together_provider/framework") if m.startswith("together_")}
    assert {
        m for m in imported if not m.startswith(("together_api.", "together_facts.", FRAMEWORK))
    } == set()


FRAMEWORK: Final = "together_provider.framework"


def _levels_up(node: ast.AST, parents: dict[int, ast.AST]) -> int:
    """How many directories above the file ``Path(__file__)`` at `node` climbs (``.parent``,
    ``.parents[k]``; ``.resolve()`` and ``.absolute()`` stay)."""
    levels = 0
    while (up := parents.get(id(node))) is not None:
        if isinstance(up, ast.Attribute) and up.attr == "parent":
            levels += 1
        elif isinstance(up, ast.Attribute) and up.attr == "parents":
            index = parents.get(id(up))
            if not (isinstance(index, ast.Subscript) and isinstance(index.slice, ast.Constant)):
                return 10**6  # parents[i]: anywhere
            levels, up = levels + int(str(index.slice.value)) + 1, index
        elif isinstance(up, ast.Attribute) and up.attr in {"resolve", "absolute"}:
            up = parents.get(id(up), up)  # the call
        else:
            return levels
        node = up
    return levels


def _outside_reaches(package: str) -> list[str]:
    """Each ``Path(__file__)`` in the package that climbs above the package's own directory."""
    reaches = []
    for source in (ROOT / package).rglob("*.py"):
        tree = ast.parse(source.read_text())
        parents = {
            id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
        }
        depth = len(source.relative_to(ROOT / package).parts)  # ups that reach the package
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node) == "Path(__file__)"
                and _levels_up(node, parents) > depth
            ):
                reaches.append(f"{source.relative_to(ROOT)}:{node.lineno}")
    return reaches


@pytest.mark.parametrize("package", INSTALLED)
def test_an_installed_package_reads_only_its_own_files(package: str) -> None:
    """A wheel holds no tools/, tests/ or docs/: what a package reads is package data beside
    it, and anything else (a binary directory, a page to write) an explicit setting."""
    assert _outside_reaches(package) == []


def test_the_reach_check_sees_a_climb_out_of_the_package() -> None:
    tree = ast.parse('A = Path(__file__).resolve().parents[2] / "tools"\nB = Path(__file__).parent')
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n) == "Path(__file__)"
    ]
    assert sorted(_levels_up(call, parents) for call in calls) == [1, 3]


LAZY_EXPORTS: Final = {
    "together_api": "together_api/__init__.py",
    "together_provider": "together_provider/__init__.py",
    "together_provider.native": "together_provider/native.py",
    "together_provider.registry": "together_provider/registry.py",
    "together_sim": "together_sim/__init__.py",
}
"""Every `__getattr__` left in the product: a module's lazy export (PEP 562), each with its
reason in CONTRIBUTING.md ("Lazy exports only")."""


def _hooks_in(source: str, path: str) -> list[str]:
    """Each run-time `__getattr__` in `source` (defined or assigned), as `path` for a module's
    and `path:Class` for a class's; one under `if TYPE_CHECKING:` declares a type for the
    checker and is skipped."""
    tree = ast.parse(source)
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for statement in node.body
        for inner in ast.walk(statement)
    }
    owners = {
        id(child): node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for child in node.body
    }
    hooks = []
    for node in ast.walk(tree):
        defined = isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
        assigned = isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__getattr__" for target in node.targets
        )
        if (defined or assigned) and id(node) not in typing_only:
            owner = owners.get(id(node))
            hooks.append(f"{path}:{owner}" if owner else path)
    return hooks


def _getattr_hooks(package: str) -> list[str]:
    return [
        hook
        for source in (ROOT / package).rglob("*.py")
        for hook in _hooks_in(source.read_text(), str(source.relative_to(ROOT)))
    ]


def test_every_getattr_left_is_a_listed_lazy_export() -> None:
    found = sorted(hook for package in INSTALLED for hook in _getattr_hooks(package))
    assert found == sorted(LAZY_EXPORTS.values())
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    lazy = contributing[contributing.index("**Lazy exports only.**") :]
    for module in LAZY_EXPORTS:
        assert f"`{module}`" in lazy, module


def test_the_getattr_scan_sees_hooks_and_skips_declarations() -> None:
    source = (
        "class Hidden:\n"
        "    def __getattr__(self, name): ...\n"
        "class Typed:\n"
        "    if TYPE_CHECKING:\n"
        "        def __getattr__(self, name): ...\n"
        "__getattr__ = make()\n"
    )
    assert sorted(_hooks_in(source, "m.py")) == ["m.py", "m.py:Hidden"]


PRODUCT = (
    "together_api",
    "together_provider",
    "together_sim",
    "together_autoscaler",
    "together_policy",
)


def test_the_shared_facts_are_pure_and_below_every_layer() -> None:
    """`together_facts` imports no HTTP, no pydantic, no Pulumi and nothing of ours: every
    layer may import it, so the policy pack and the autoscaler price and pack without a client."""
    imported = _top(_imports("together_facts"))
    assert imported & {"httpx", "pydantic", "pydantic_core", "pulumi", *PRODUCT} == set()
    loaded = _loaded_after(
        "import together_facts.errors, together_facts.hints, together_facts.packing, "
        "together_facts.prices, together_facts.resend, together_facts.values"
    )
    assert loaded & {"httpx", "pydantic", "pulumi", *PRODUCT} == set()


@pytest.mark.parametrize("package", ["together_autoscaler", "together_policy"])
def test_the_autoscaler_and_the_policy_pack_take_the_facts_from_the_pure_package(
    package: str,
) -> None:
    """Never a constant through `together_api.wire`'s models (which load pydantic)."""
    sources = list((ROOT / package).rglob("*.py"))
    through_wire = [
        f"{source.relative_to(ROOT)}: {node.names[0].name}"
        for source in sources
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.ImportFrom)
        and node.module == "together_api.wire"
        and any(alias.name.isupper() for alias in node.names)
    ]
    assert through_wire == []
    assert "together_facts" in _top(_imports(package))


def test_the_comment_imports_nothing_of_gitops() -> None:
    """The PR comment (`preview`, its CLI aside: `__main__` and its GitHub `commands`) imports no
    GitOps module and no HTTP client: talking to GitHub is `gitops`'s."""
    for source in (ROOT / "together_provider" / "preview").glob("*.py"):
        if source.name in CLI:
            continue
        imported = _imports_of(source)
        assert {m for m in imported if m.startswith("together_provider.gitops")} == set(), source
        assert "httpx" not in imported, source


CLI: Final = ("__main__.py", "commands.py")
"""The preview's CLI: where the comment meets the poster (`gitops/`, which imports no preview)."""


def test_the_poster_imports_nothing_of_the_comment() -> None:
    """`gitops/` takes what it posts as text and numbers: it imports no `preview` module, so the
    CLI (which imports both) closes no circle."""
    imported = _imports("together_provider/gitops")
    assert {m for m in imported if m.startswith("together_provider.preview")} == set()


GITHUB_FACTS: Final = re.compile(r"github|65[_,]?536|comment limit|<!--|step summary", re.I)
"""What only the poster knows: GitHub's name, its comment limit (in any spelling), the hidden
marker's HTML comment, the job's step summary."""


def test_the_comment_renderer_names_no_github_fact() -> None:
    """The comment (`preview`, its CLI aside, and each kind's `preview.py`) renders Markdown; the
    limit it is cut to, the words of its trim note and the marker come from `gitops.post`."""
    package = ROOT / "together_provider"
    sources = [
        *(s for s in (package / "preview").glob("*.py") if s.name not in CLI),
        *package.glob("*/preview.py"),
    ]
    assert len(sources) > 8  # the renderer's modules and both kinds' parts are scanned
    named = [
        f"{source.relative_to(ROOT)}:{number}: {line.strip()}"
        for source in sources
        for number, line in enumerate(source.read_text().splitlines(), 1)
        if GITHUB_FACTS.search(line)
    ]
    assert named == []


SIMULATOR_FLOORS: Final = (
    (
        "facts",
        (
            "together_sim.errors",
            "together_sim.clock",
            "together_sim.timings",
            "together_sim.catalogue",
            "together_sim.echo",
            "together_sim.requests",
            "together_sim.targeting",
            "together_sim.faults",
        ),
    ),
    (
        "world",
        (
            "together_sim.clusters",
            "together_sim.volumes",
            "together_sim.scheduler",
            "together_sim.capacity",
            "together_sim.model",
            "together_sim.autoscale",
            "together_sim.store",
        ),
    ),
    ("host plumbing", ("together_sim.host",)),
    ("control plane's client", ("together_sim.plane",)),
    ("nodes", ("together_sim.nodes",)),
    ("control plane and mirror", ("together_sim.kube",)),
    ("runtime", ("together_sim.runtime",)),
    (
        "api",
        (
            "together_sim.web",
            "together_sim.admin",
            "together_sim.app",
            "together_sim.__main__",
            "together_sim",
        ),
    ),
    ("drill", ("together_sim.drill",)),
)
"""The simulator's floors, lowest first: the host plumbing (network, cgroups, mounts, kernel
settings, the journal) knows nothing of Kubernetes; the nodes (the protocol, KWOK and real) stand
on it and on the control plane's client; the mirror drives nodes only through the protocol."""


def _floor(module: str) -> int:
    """The floor of ``module``: the one whose longest prefix names it."""
    best = (-1, -1)
    for index, (_, prefixes) in enumerate(SIMULATOR_FLOORS):
        for prefix in prefixes:
            if module == prefix or module.startswith(f"{prefix}."):
                best = max(best, (len(prefix), index))
    assert best[1] >= 0, f"{module} is on no floor of SIMULATOR_FLOORS: add it"
    return best[1]


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {imported}"
        for module, imports in graph.items()
        for imported in imports
        if _floor(imported) > _floor(module)
    )


def test_no_module_of_the_simulator_imports_from_a_floor_above_its_own() -> None:
    """Every import, under `TYPE_CHECKING` and inside functions too, goes down or sideways."""
    assert _upward(_module_graph("together_sim")) == []


def test_the_floor_check_sees_an_upward_import() -> None:
    graph = {"together_sim.host.journal": {"together_sim.nodes.real"}}
    assert _upward(graph) == ["together_sim.host.journal -> together_sim.nodes.real"]


def test_the_mirror_knows_nodes_only_through_their_provider() -> None:
    """The mirror makes, finds and deletes nodes only by asking the cluster's node provider: it
    imports no kind of node, holds no note of which kind a node is, and reads no node's
    internals (kind's provider model)."""
    graph = _module_graph("together_sim")
    nodes = {m for m in graph["together_sim.kube.mirror"] if m.startswith("together_sim.nodes")}
    assert nodes == {"together_sim.nodes", "together_sim.nodes.provider"}
    source = (ROOT / "together_sim" / "kube" / "mirror.py").read_text()
    for internal in ("KwokNode", "RealNode", "._real", "kwok_only", ".kind", ".journal"):
        assert internal not in source, internal


def test_the_nodes_import_nothing_of_kube() -> None:
    """The nodes stand on the control plane's client (`plane/`) and the host plumbing; `kube/`
    (the control plane's processes, the hub, the mirror) stands on them, so nothing of it is
    theirs to import."""
    graph = _module_graph("together_sim")
    upward = {
        f"{module} -> {imported}"
        for module, imports in graph.items()
        if module.startswith("together_sim.nodes")
        for imported in imports
        if imported.startswith(("together_sim.kube", "together_sim.runtime"))
    }
    assert upward == set()


def _unit_of(folder: str, module: str) -> str | None:
    """The child of ``folder`` (a module, or a subfolder with everything below it) that holds
    ``module``; None outside ``folder``."""
    if not module.startswith(f"{folder}."):
        return None
    return f"{folder}.{module[len(folder) + 1 :].split('.')[0]}"


def _mutual_pairs(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every two children of one folder (modules, or subfolders as one whole) that import each
    other, directly or through other children of that folder."""
    folders = {m.rsplit(".", 1)[0] for m in graph if "." in m}
    pairs: list[tuple[str, str]] = []
    for folder in sorted(folders):
        edges: dict[str, set[str]] = {}
        for module, imports in graph.items():
            unit = _unit_of(folder, module)
            if unit is None:
                continue
            edges.setdefault(unit, set())
            edges[unit] |= {u for i in imports if (u := _unit_of(folder, i)) not in (None, unit)}
        reach: dict[str, set[str]] = {}
        for unit in edges:
            seen, todo = set(), [unit]
            while todo:
                for nxt in edges.get(todo.pop(), ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            reach[unit] = seen
        pairs += [
            (a, b)
            for a in sorted(edges)
            for b in sorted(edges)
            if a < b and b in reach[a] and a in reach[b]
        ]
    return pairs


@pytest.mark.parametrize("package", ["together_sim", "together_drill", "together_provider"])
def test_no_two_folders_or_modules_import_each_other(package: str) -> None:
    """Inside each package, no two modules or folders of one folder import each other, directly
    or through others: a folder is read as one whole, so its modules may not lean on a sibling
    that leans back on any of them. (Each kind's PR-comment part, `cluster/preview.py`, builds
    on `preview_parts/`, which is free of the registry; only `preview/`'s plan loops over the
    kinds.)"""
    pairs = _mutual_pairs(_module_graph(package))
    direct = [
        (a, b) for a, b in pairs if _imports_unit(package, a, b) and _imports_unit(package, b, a)
    ]
    assert direct == []
    assert pairs == []


def _imports_unit(package: str, a: str, b: str) -> bool:
    """Whether a module in unit ``a`` imports one in unit ``b`` (siblings of one folder)."""
    return any(
        i == b or i.startswith(f"{b}.")
        for m, imports in _module_graph(package).items()
        if m == a or m.startswith(f"{a}.")
        for i in imports
    )


def test_the_pair_check_sees_two_folders_that_import_each_other() -> None:
    graph = {
        "p.a": set(),
        "p.a.x": {"p.b.y"},
        "p.b": set(),
        "p.b.y": {"p.c"},
        "p.c": {"p.a"},
        "p.d": {"p.c"},
    }
    assert _mutual_pairs(graph) == [("p.a", "p.b"), ("p.a", "p.c"), ("p.b", "p.c")]
