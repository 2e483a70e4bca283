"""pyproject.toml's metadata builds without setuptools' deprecation warnings, which `pulumi install`
(and every `pip install -e .`) would otherwise print: `license` is an SPDX expression, and the
build requires a setuptools that reads one (77.0.0, PEP 639)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())


def test_license_is_an_spdx_expression_not_a_table() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"


def test_the_build_requires_a_setuptools_that_reads_spdx_licenses() -> None:
    (setuptools,) = [
        Requirement(r)
        for r in PYPROJECT["build-system"]["requires"]
        if Requirement(r).name == "setuptools"
    ]
    assert "76.9" not in setuptools.specifier and "77.0.0" in setuptools.specifier
