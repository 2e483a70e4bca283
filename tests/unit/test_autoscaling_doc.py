"""docs/autoscaling.md's Deploying snippet is a whole program: every name it uses is defined in
it, and every argument it passes is one the classes take."""

from __future__ import annotations

import ast
import builtins
import inspect
import re
from pathlib import Path

from together_provider import ClusterArgs
from together_provider.kubernetes import PreemptibleAutoscalerArgs

DOC = Path(__file__).parents[2] / "docs" / "autoscaling.md"


def _snippet() -> ast.Module:
    section = DOC.read_text().split("\n## Deploying it\n", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return ast.parse(str(code))


def test_the_deploying_snippet_defines_every_name_it_uses() -> None:
    tree = _snippet()
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert used - defined == set()


def test_the_deploying_snippet_passes_only_arguments_the_classes_take() -> None:
    classes = {"ClusterArgs": ClusterArgs, "PreemptibleAutoscalerArgs": PreemptibleAutoscalerArgs}
    calls = [
        node
        for node in ast.walk(_snippet())
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in classes
    ]
    assert {call.func.id for call in calls} == set(classes)  # type: ignore[attr-defined]
    for call in calls:
        parameters = inspect.signature(classes[call.func.id]).parameters  # type: ignore[attr-defined]
        given = {keyword.arg for keyword in call.keywords}
        assert given <= parameters.keys()
        required = {n for n, p in parameters.items() if p.default is inspect.Parameter.empty}
        assert required <= given
