"""Every `together_provider...` name a message or a doc tells the user about imports.

A fix hint that names a class which does not exist sends the user to an `ImportError`. The
names are collected from every string literal of the product's packages (error and fix messages,
policy violations, and the docstrings too: a stricter net than messages alone) and from README.md
and docs/*.md; each is imported as the longest module prefix that exists, then the rest is looked
up attribute by attribute.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from tests.source_literals import string_literals

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("together_provider", "together_policy", "together_api")
DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
DOTTED = re.compile(r"\btogether_provider(?:\.[A-Za-z_]\w*)+")


def _named() -> dict[str, str]:
    """Each dotted name, with one place that mentions it."""
    names: dict[str, str] = {}
    for package in PACKAGES:
        for module in sorted((REPO / package).rglob("*.py")):
            for literal in string_literals(module, docstrings=True):
                for name in (name for text in literal for name in DOTTED.findall(text)):
                    names.setdefault(name, str(module.relative_to(REPO)))
    for page in DOCS:
        for name in DOTTED.findall(page.read_text()):
            names.setdefault(name, str(page.relative_to(REPO)))
    return names


NAMED = _named()


def resolve(dotted: str) -> Any:
    """The object `dotted` names: the longest importable module prefix, then attributes.

    A module that exists but fails to import (a missing dependency) fails here, rather than
    being mistaken for an attribute of its package.
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            found: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as missing:
            if missing.name != module_name:
                raise
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_names_are_found_in_messages_and_docs() -> None:
    # The collection itself works: the policy pack's fix hint and the workloads docs name these.
    worker = "together_provider.kubernetes.CheckpointingWorker"
    assert NAMED[worker] == "together_policy/workloads.py"
    assert "together_provider.kubernetes.off_preemptible" in NAMED


@pytest.mark.parametrize("name", sorted(NAMED), ids=str)
def test_every_named_symbol_imports(name: str) -> None:
    try:
        resolve(name)
    except (ImportError, AttributeError) as error:
        pytest.fail(f"{NAMED[name]} names {name}, which does not import: {error}")
