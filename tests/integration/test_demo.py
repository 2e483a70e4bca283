"""The demo, then docs/walkthrough.md, the Kubernetes walkthrough of docs/workloads.md, the
demo section of docs/policy.md and the burst of docs/burst.md, run as written one after another
in one shell against one demo, in a copy of the project (a git checkout of its own, so the
walkthrough's undo works)."""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.images import images_dir_or_skip
from testkit.kube import control_plane_processes
from testkit.promises import Promise, bash_block, broken, marked, promises
from testkit.pulumi_env import REPO
from testkit.realnodes import real_nodes_or_skip
from tests.kube_helpers import demo_bins_env, free_port

pytestmark = pytest.mark.engine


@pytest.fixture
def project(tmp_path: Path, engine: Path) -> Iterator[Path]:
    """The demo's files in a temp dir, sharing the repo's virtualenv; torn down after."""
    work = tmp_path / "project"
    work.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, work / name)
    for name in ("stacks", "scripts"):
        shutil.copytree(REPO / name, work / name)
    shutil.copytree(
        REPO / "examples" / "sweep",
        work / "examples" / "sweep",
        ignore=shutil.ignore_patterns("__pycache__", "Pulumi.*.yaml"),
    )
    shutil.copytree(REPO / "examples" / "drill", work / "examples" / "drill")  # walkthrough, 5
    shutil.copytree(
        REPO / "policy", work / "policy", ignore=shutil.ignore_patterns("venv", "__pycache__")
    )
    (work / "policy" / "venv").symlink_to(REPO / "policy" / "venv", target_is_directory=True)
    (work / ".venv").symlink_to(Path(sys.prefix))
    git = "git -c user.name=test -c user.email=test@example.invalid"
    _run(work, f"git init -q && {git} add -A && {git} commit -qm 'the demo, as checked out'")
    yield work
    _run(work, "bash scripts/demo.sh down", check=False)


def _run(work: Path, command: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    result = subprocess.run(
        ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{command!r} failed:\n{result.stdout}\n{result.stderr}")
    return result


OUTER_REAL_NODES = os.environ.get("REAL_NODES")
"""As make test set it (0 where real nodes cannot run), before `_demo_env` sets 0."""


@pytest.fixture(autouse=True)
def _demo_env(monkeypatch: pytest.MonkeyPatch, engine: Path) -> None:
    monkeypatch.setenv("TOGETHER_ENGINE_BIN", str(engine))
    # KWOK nodes only, the autoscaler a local process, as a user's REAL_NODES=0 asks (not as
    # make's, which has said why already): what these pages show on any machine. A test that
    # wants real nodes asks for `real_nodes`.
    monkeypatch.setenv("REAL_NODES", "0")
    monkeypatch.delenv("REAL_NODES_UNAVAILABLE", raising=False)
    monkeypatch.setenv("DEMO_SIM_PORT", str(free_port()))
    for name, value in demo_bins_env().items():
        monkeypatch.setenv(name, value)


def test_demo_comes_up_then_changes_nothing_the_second_time(project: Path) -> None:
    first = _run(project, "bash scripts/demo.sh up")
    assert "+ 3 created" in first.stdout  # the stack, the checkpoint volume, the cluster
    assert '"status":"Ready"' in first.stdout
    second = _run(project, "bash scripts/demo.sh up")
    assert _resources(second.stdout, "Updating") == ["3 unchanged"], second.stdout
    # The Kubernetes plugin is linked into the demo's plugin cache, at the version the SDK asks
    # for, and the link leads to the built plugin: the engine finds it there, not on $PATH.
    version = importlib.metadata.version("pulumi_kubernetes")
    link = (
        project / ".demo" / "pulumi-home" / "plugins" / f"resource-kubernetes-v{version}"
        / "pulumi-resource-kubernetes"
    )  # fmt: skip
    assert link.is_symlink(), link
    plugin = link.resolve(strict=True)
    assert plugin.is_file() and os.access(plugin, os.X_OK), plugin


def _resources(out: str, verb: str) -> list[str]:
    """The lines of the Resources summary after the first `<verb> (dev):` header in ``out``
    (`Updating` for an up, `Refreshing` for a refresh): ["3 unchanged"] when nothing changed,
    ["~ 1 updated", "2 unchanged"] when one did. A bare "3 unchanged" anywhere in ``out`` could
    come from another command, or another count's "13 unchanged"."""
    found = re.search(rf"^{verb} \(dev\):\n.*?^Resources:\n((?:    \S[^\n]*\n)+)", out, re.M | re.S)
    assert found is not None, f"no Resources summary after {verb} (dev):\n{out}"
    return [line.strip() for line in found[1].splitlines()]


def test_demo_down_then_demo_again_comes_up_each_time(project: Path) -> None:
    """`make demo-down && make demo`, back to back: down returns once the autoscaler, the
    simulator and its control planes are gone, having freed what the demo made, so the next up
    never finds a stopping simulator answering on the port."""
    demo = project / ".demo"
    _run(project, "bash scripts/demo.sh up")
    # What is left is read in the same shell the moment `down` returns: its stop takes well
    # under a second, so a `down` that does not wait would be seen here.
    after = (
        'pid=$(cat .demo/simulator.pid) && bash scripts/demo.sh down && echo "left:'
        ' $(cut -d" " -f3 /proc/$pid/stat 2>/dev/null || echo gone)'
        ' $(ls .demo/simulator/kube | wc -l)"'
    )
    for attempt in range(3):
        down = _run(project, after)
        assert "simulator stopped" in down.stdout, down.stdout
        assert "demo.sh" not in down.stderr, down.stderr  # no noise from processes that went
        simulator, directories = down.stdout.rsplit("left: ", 1)[1].split()
        assert simulator in ("gone", "Z") and directories == "0", f"down {attempt}: {down.stdout}"
        assert control_plane_processes(demo / "simulator") == []
        assert _controllers(project) == [] and "autoscaler stopped" in down.stdout, down.stdout
        assert not (demo / "simulator.pid").exists() and not (demo / "kubeconfig").exists()
        if attempt == 1:  # a simulator of this demo that has not finished stopping
            out = _up_past_a_stopping_simulator(project)
        else:
            up = _run(project, "bash scripts/demo.sh up")
            out = up.stdout + up.stderr
        assert "already running" not in out, out
        assert "+ 3 created" in out, f"up {attempt}:\n{out}"


def _up_past_a_stopping_simulator(project: Path) -> str:
    """`demo.sh up` (its output) while a process that is this demo's simulator by its pid file
    and command line lives on without serving, as a stopping simulator does. The process ends
    only when the test writes to its FIFO, once up has said it waits for it: up must say nothing
    more while it lives (no simulator of its own started), and go on once it has ended."""
    demo = project / ".demo"
    fifo = demo / "stopping.fifo"
    os.mkfifo(fifo)
    argv = ["bash", "-c", 'read -r _ <"$3"', "together_sim", "--state-dir", f"{demo}/simulator"]
    stopping = subprocess.Popen([*argv, str(fifo)])
    (demo / "simulator.pid").write_text(f"{stopping.pid}\n")
    up = subprocess.Popen(
        ["bash", "scripts/demo.sh", "up"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert up.stdout is not None
        for line in up.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    out: list[str] = []
    try:
        while (line := lines.get(timeout=300)) is not None:
            out.append(line)
            if "the previous simulator is still stopping" in line:
                try:  # up waits, saying nothing, while it lives
                    early = lines.get(timeout=2) or "<end of output>"
                except queue.Empty:
                    pass
                else:
                    raise AssertionError(f"up went on before it ended: {''.join(out)}{early}")
                # Non-blocking: ENXIO rather than a hang, should the process have gone already.
                release = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.write(release, b"stop\n")
                os.close(release)
                assert stopping.wait(timeout=10) == 0
        up.wait(timeout=60)
    finally:
        for process in (stopping, up):
            if process.poll() is None:
                process.kill()
                process.wait()
    text = "".join(out)
    assert "the previous simulator is still stopping" in text, text
    return text


PAGES = (
    ("walkthrough", "walkthrough.md", "demo"),
    ("workloads", "workloads.md", "kubernetes"),
    ("policy", "policy.md", "policy"),
    ("burst", "burst.md", "burst"),
    ("done", "walkthrough.md", "done"),
)
"""The pages' blocks in the order a newcomer runs them: the walkthrough's last block, which takes
the demo down, comes after the other pages."""

PRELUDE = f"""
export CI=1   # only stops tg installing shell completion in ~/.bashrc
# The copy has no Makefile: `make` stands for what the Makefile runs (the builds come from the
# environment, TOGETHER_*_BIN).
make() {{
  case "$*" in
    demo) bash scripts/demo.sh up ;;
    demo-down) bash scripts/demo.sh down ;;
    policy) command make -s -C {REPO} policy ;;
    *) echo "test_demo: no stand-in for make $*" >&2; return 2 ;;
  esac
}}
"""


def _promises(page: str, marker: str) -> list[Promise]:
    """The `#>` lines of a page's block."""
    block, first_line = bash_block(REPO / "docs" / page, marker)
    return promises(block, first_line, f"docs/{page}")


def _pages(out: str) -> dict[str, str]:
    """The shell's output split by page (each page's block starts with an echoed marker)."""
    found = {}
    for name, text in re.findall(r"^=== page (\w+)\n(.*?)(?=^=== page |\Z)", out, re.M | re.S):
        found[name] = text
    assert list(found) == [name for name, _, _ in PAGES], out[-3000:]
    return found


@pytest.fixture
def real_nodes(monkeypatch: pytest.MonkeyPatch, _demo_env: None) -> None:
    """Real nodes on again (the default of `make demo`), after `_demo_env` turned them off;
    skipped where they cannot run (failed under make test where they must)."""
    if OUTER_REAL_NODES == "0":
        pytest.skip("REAL_NODES=0: real nodes are off (make test printed why)")
    images = images_dir_or_skip()  # built when needed; skipped where real nodes cannot run
    monkeypatch.setenv("TOGETHER_IMAGES_DIR", str(images))
    real_nodes_or_skip(Path(demo_bins_env()["TOGETHER_KUBE_BIN"]))
    monkeypatch.setenv("REAL_NODES", "1")


def test_the_walkthroughs_compose_in_one_shell_against_one_demo(
    project: Path, tmp_path: Path
) -> None:
    """With KWOK nodes; with real nodes: test_demo_autoscaler_pod.py (a file of its own, so
    that make test's workers run the two at once)."""
    walk_the_pages(project, "kwok", tmp_path)


def walk_the_pages(project: Path, nodes: str, tmp_path: Path) -> None:
    """The pages' blocks run as written in one shell, on `nodes` ("real" or "kwok"): every
    promise of theirs kept, and what holds between the lines."""
    # The autoscaler's log as each page begins (.demo/autoscaler.before-<page>.log).
    script = PRELUDE + "".join(
        f"cp .demo/autoscaler.log .demo/autoscaler.before-{name}.log 2>/dev/null\n"
        f"echo '=== page {name}'\n"
        + marked(*bash_block(REPO / "docs" / page, marker), f"docs/{page}")
        for name, page, marker in PAGES
    )
    # Not `set -e`: some steps fail on purpose (the previews the provider refuses). Every wait in
    # the pages is bounded, and so is this run. Both streams in one, as a terminal shows them.
    screen = tmp_path / f"screen-{nodes}.txt"
    try:
        out = subprocess.run(
            ["bash", "-c", script],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=1500,
        ).stdout
    except subprocess.TimeoutExpired as timeout:
        # What the shell printed so far says which step it was in: kept, and its end shown.
        partial = timeout.output or b""
        out = partial.decode(errors="replace") if isinstance(partial, bytes) else partial
        screen.write_text(out)
        pytest.fail(
            f"the pages ran over {timeout.timeout} s; the screen ({screen}), "
            f"its end:\n{out[-8000:]}"
        )
    screen.write_text(out)
    pages = _pages(out)
    context = f"\n--- the screen ({screen}), its end ---\n{out[-8000:]}"
    walk, kube, policy, burst, _ = (pages[name] for name, _, _ in PAGES)

    # What docs/walkthrough.md and docs/burst.md promise (their `#>` lines), on this node kind.
    unkept = [
        f"{broken_promise}\n"
        for name, page, marker in PAGES
        for broken_promise in broken(_promises(page, marker), pages[name], nodes)
    ]
    assert not unkept, (
        f"{len(unkept)} promise(s) of the pages not kept on {nodes} nodes "
        f"(the page's line, then the closest line the screen shows):\n"
        + "\n".join(unkept)
        + context
    )

    # Beyond the promises, what holds between the lines. docs/walkthrough.md, step 2: what
    # Together allocated of the target. (`Kubeconfig written to`, promised, says tg wrote the
    # file: it writes only into a 0600 one, as the demo's is, and on any other prints a note,
    # writes nothing and exits 0; together 3.1.1.)
    desired, allocated = (int(n) for n in re.search(r"^(24) (\d+)$", walk, re.M).groups())  # type: ignore[union-attr]
    assert 0 <= allocated <= desired and allocated % 8 == 0, context
    # The PUT sets the pool's total; spare is that total minus what the dev cluster holds.
    scarce = json.loads(re.search(r'^\{"region".*"preemptible_gpus":16.*\}$', walk, re.M)[0])  # type: ignore[index]
    assert 16 - desired <= scarce["preemptible_spare"] <= 16 - allocated, scarce
    # Step 3: the node reclaimed is the one seen cordoned, with the Warning event.
    node = re.search(r"^reclaimed (gpu-preemptible-dp-\S+)$", walk, re.M)
    assert node is not None, context
    assert re.search(rf"^{node[1]}\s+Ready,SchedulingDisabled\s", walk, re.M), context
    assert re.search(rf"Warning\s+TogetherPreemptionNotified\s+node/{node[1]}", walk), context

    # docs/workloads.md, against the same simulator after the walkthrough.
    assert re.search(r"gpu-preemptible-dp-\S+\s+Ready\s.*\spreemptible", kube), context
    reclaimed = re.search(r"reclaiming (\S+), which runs index (\d+)", kube)
    assert reclaimed is not None, context
    sweep_node, index = reclaimed.groups()
    assert re.search(rf"{sweep_node}\s+Ready,SchedulingDisabled", kube), context
    assert re.search(rf"Warning\s+TogetherPreemptionNotified\s+node/{sweep_node}", kube), context
    again = re.search(rf"index {index} runs again on (\S+)", kube)
    assert again is not None and again.group(1) not in ("", sweep_node), context
    assert "failed: \n" in kube, context

    # docs/policy.md: the dev stack passes; a target above dev's cap is an advisory violation.
    previews = policy.split("Policies:")
    assert len(previews) == 3, context
    first, second = previews[1:]
    assert "gpu-budget" not in first, context
    assert "gpu-budget" in second and "advisory" in second, context

    log = ""
    if nodes == "kwok":  # the local process's log (the pod's, with real nodes, is in the page)
        _the_autoscaler_kept_to_the_floors_the_walkthrough_set(project / ".demo")
        log = (project / ".demo" / "autoscaler.log").read_text()
    _the_burst_went_as_the_page_says(burst, log, nodes)

    assert _controllers(project) == [], context  # demo-down waited until it was gone


def _controllers(project: Path) -> list[str]:
    """The pids of this project's autoscaler script and controller that are still running."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        mine = str(project / "scripts" / "demo-autoscaler.sh") in cmd or (
            "together_autoscaler" in cmd and str(project / ".demo" / "kubeconfig") in cmd
        )
        if mine and state != "Z":
            found.append(proc.name)
    return found


def _the_autoscaler_kept_to_the_floors_the_walkthrough_set(demo: Path) -> None:
    """No controller of an old range undid what an up PUT: the autoscaler stops while the stack
    is locked, so none lowered the floor the walkthrough raised to 24 (ScaleDown) for the next
    one to raise it again (BelowMinimum). After the walkthrough's undo (floor 16, live 24), one
    lowering to 16 is the autoscaler's to make, as the page says; nothing ever goes below a
    floor."""
    walked = (demo / "autoscaler.before-workloads.log").read_text()
    before_burst = (demo / "autoscaler.before-burst.log").read_text()
    context = f"\n--- autoscaler log before the burst page ---\n{before_burst[-6000:]}"
    assert not re.findall(r": (?:BelowMinimum|ScaleDown): ", walked), context
    assert "stack dev is locked" in walked, context  # each up and refresh paused it
    assert ": BelowMinimum: " not in before_burst, context
    lowered = re.findall(r": ScaleDown: .*: target (\d+ -> \d+)$", before_burst, re.M)
    assert set(lowered) <= {"24 -> 16"}, context


def _raises(log: str) -> list[tuple[int, int, int]]:
    """The burst's TriggeredScaleUp decisions in a controller's log, as (nodes missing, target
    before, target after): those after it first started with the burst-only range 0-32."""
    _, _, burst_on = log.partition("preemptible 0-32 GPUs")
    found = re.findall(
        r"TriggeredScaleUp: \d+ pending pod\(s\) need (\d+) more preemptible node\(s\): "
        r"target (\d+) -> (\d+)",
        burst_on,
    )
    return [(int(missing), int(start), int(to)) for missing, start, to in found]


def _the_burst_went_as_the_page_says(burst: str, log: str, nodes: str) -> None:
    """docs/burst.md, beyond its promises: the target 0 -> 24 -> 0 moved by the autoscaler
    alone, the pods run and done on the nodes it asked for, each on its own, no change at any
    step. `log`: the local process's whole log ("" with real nodes, where the page prints the
    pod's). Up, one PUT a scan that found pods without room, each by exactly the nodes then
    missing: 0 -> 24 when the scheduler marked the 3 pods before a scan, else 0 -> 16 -> 24 (a
    machine's load decides, with either node kind)."""
    context = f"\n--- burst page ---\n{burst[-8000:]}\n--- autoscaler log ---\n{log[-4000:]}"
    steps = re.findall(r"^target (\d+) allocated (\d+)$", burst, re.M)
    assert steps == [("0", "0"), ("24", "24"), ("0", "0"), ("16", "16")], context
    assert "timed out" not in burst, context
    raises = _raises(log or burst)
    assert 1 <= len(raises) <= 3 and raises[0][1] == 0 and raises[-1][2] == 24, context
    assert all(to == start + 8 * missing for missing, start, to in raises), context
    assert all(a[2] == b[1] for a, b in itertools.pairwise(raises)), context  # each from the last
    told = set(re.findall(r"TriggeredScaleUp\s+pod/(burst-\S+)\s", burst))
    pods = set(re.findall(r"^(burst-\S+)\s+0/1\s+Completed\s", burst, re.M))
    # Pods heard why the target rose; not each: a pod the scheduler marked late may take a node
    # a raise made for another, which then waits for the next raise (told already, not again).
    assert len(pods) == 3 and told and told <= pods, context
    ran = set(re.findall(r"^burst-\S+\s+0/1\s+Completed\s+0\s+\S+\s+\S+\s+(\S+)", burst, re.M))
    listed = set(re.findall(r"^(gpu-preemptible-dp-\S+)\s+Ready\s.*\spreemptible$", burst, re.M))
    assert len(ran) == 3 and ran == listed, context  # a pod on each new node, which was listed
    lowered = set(re.findall(r"ScaleDown\s+node/(\S+)\s+.*cordoned for targeted scale-down", burst))
    # Step 4 lists the ScaleDown Events of the burst's nodes, not step 1's of the floor's nodes.
    assert ran == lowered, context
    # Before the undo, every preview with --refresh --expect-no-changes passed: none failed or
    # planned an update (the counts are promised). The one update planned is step 1's up of the
    # floor, with real nodes: the autoscaler's Deployment, rolled with the new range.
    before, _ = burst.split('job.batch "burst" deleted', 1)
    assert "error:" not in before, context
    assert before.count("to update") == (1 if nodes == "real" else 0), context
    assert "sim-key" not in log + burst, context  # the key never in the controller's log
