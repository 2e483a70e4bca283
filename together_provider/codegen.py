"""The typed Python classes of every kind, generated from the registry's field tables, because
editors and mypy need classes they can read (`make sdk-python` writes them)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from together_provider.extensions import ProgramExtension
from together_provider.framework.fields import InputField, without_none
from together_provider.framework.kind import Kind
from together_provider.hosts.native.package_schema import python_type
from together_provider.registry import KINDS

__all__ = ["DYNAMIC", "NATIVE", "dynamic_module", "generated", "main", "native_module"]

ROOT: Final = Path(__file__).resolve().parent
DYNAMIC: Final = ROOT / "resources.py"
NATIVE: Final = ROOT / "hosts" / "native" / "resources.py"
WIDTH: Final = 100
HEADER: Final = (
    "# Generated from the field tables by `make sdk-python` (python -m together_provider.codegen\n"
    "# --write): do not edit; tests/unit/test_codegen.py fails while this file differs.\n"
)
SIGNATURE: Final = (
    "    def __init__(\n"
    "        self, resource_name: str, args: {args}, opts: pulumi.ResourceOptions | None = None\n"
    "    ) -> None:\n"
    "        super().__init__(resource_name, args, opts)\n"
)


def _type(annotation: Any) -> str:
    """Source text of a table type as a program sees it (a `Literal` of strings is `str`)."""
    plain, optional = without_none(annotation)
    text = _plain(python_type(plain))
    return f"{text} | None" if optional else text


def _plain(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(map(_plain, typing.get_args(annotation)))}]"
    return "Any" if annotation is Any else str(annotation.__name__)


def _literal(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _doc(text: str, indent: int) -> str:
    """A docstring, wrapped to the line length."""
    pad = " " * indent
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if len(pad) + len(text) + 6 <= WIDTH:
        return f'{pad}"""{text}"""\n'
    paragraphs = text.split("\n\n")
    wrapped = [
        textwrap.fill(
            p, WIDTH, initial_indent=pad + ('"""' if i == 0 else ""), subsequent_indent=pad
        )
        for i, p in enumerate(paragraphs)
    ]
    return "\n\n".join(wrapped) + f'\n{pad}"""\n'


def _optional_in_args(f: InputField) -> bool:
    """Left unset in the Args: the name input (the resource name) or a None default."""
    return f.names_resource or (not f.required and f.default is None)


def _flags(kind: Kind) -> Mapping[str, str]:
    """The kind's program-side booleans (`ProgramExtension.flags`), none when it declares none."""
    program = kind.get(ProgramExtension)
    return program.flags if program else {}


def _args_class(kind: Kind) -> str:
    required = [f for f in kind.schema.inputs if f.required and not f.names_resource]
    rest = [f for f in kind.schema.inputs if f not in required]
    table = f"{kind.package}.table"
    lines = [
        "@dataclass\n",
        f"class {kind.type_name}Args:\n",
        _doc(f"{kind.doc}\n\nThe typed inputs of `{table}`, one field per table entry.", 4),
    ]
    for f in [*required, *rest]:
        base = _type(without_none(f.annotation)[0])
        if _optional_in_args(f):
            lines.append(f"\n    {f.name}: pulumi.Input[{base}] | None = None\n")
        elif f.required:
            lines.append(f"\n    {f.name}: pulumi.Input[{base}]\n")
        else:
            lines.append(f"\n    {f.name}: pulumi.Input[{base}] = {_literal(f.default)}\n")
        lines.append(_doc(f.doc, 4))
    for flag, field in _flags(kind).items():
        lines += [
            "\n    @property\n",
            f"    def {flag}(self) -> bool:\n",
            _doc(
                f"Whether `{field}` is set: known in the program, even while its value is not.", 8
            ),
            f"        return self.{field} is not None\n",
        ]
    return "".join(lines)


def _outputs(kind: Kind) -> str:
    """Every input and output as the resource's typed attribute, with its table doc."""
    lines = []
    for f in kind.schema.inputs:
        text = _type(f.annotation)
        if f.names_resource or f.default is not None:
            text = _type(without_none(f.annotation)[0])
        lines += [f"\n    {f.name}: pulumi.Output[{text}]\n", _doc(f.doc, 4)]
    for o in kind.schema.outputs:
        lines += [f"\n    {o.name}: pulumi.Output[{_type(o.annotation)}]\n", _doc(o.doc, 4)]
    for flag, field in _flags(kind).items():
        lines += [f"\n    {flag}: bool\n", _doc(f"Whether `{field}` is set.", 4)]
    return "".join(lines)


def _attributes_class(kind: Kind) -> str:
    """`<Kind>Attributes`: the typed attributes both hosts' resources share (written once)."""
    return (
        f"class {kind.type_name}Attributes(Attributes):\n"
        + _doc(
            f"The typed attributes of a `{kind.type_name}` on either host: every input and "
            "output of its table, with its doc.",
            4,
        )
        + _outputs(kind)
    )


def _resource_class(kind: Kind, base: str, host_doc: str) -> str:
    name = kind.type_name
    return (
        f'class {name}({name}Attributes, {base}, kind=registry.BY_NAME["{name}"]):\n'
        + _doc(f"{kind.doc}\n\n{host_doc}", 4)
        + "\n"
        + SIGNATURE.format(args=f"{name}Args")
    )


def _module(
    doc: str, stdlib: list[str], first_party: list[str], names: Sequence[str], classes: list[str]
) -> str:
    body = "\n\n".join(classes)
    annotations = [line for line in body.splitlines() if ": pulumi." in line]
    if any(re.search(r"\bAny\b", line) for line in annotations):
        stdlib = [*stdlib, "from typing import Any\n"]
    # No `from __future__ import annotations`: Pulumi's SDK calls `typing.get_type_hints` on a
    # resource's class each time it registers one, and string annotations are evaluated anew on
    # every call (a third of the program's per-cluster CPU against mocks, `bench.registration`).
    groups = ["".join(stdlib), "import pulumi\n"]
    groups.append("".join(first_party))
    exported = "\n".join(f'    "{name}",' for name in sorted(names))
    return (
        HEADER
        + _doc(doc, 0)
        + "\n"
        + "\n".join(g for g in groups if g)
        + f"\n__all__ = [\n{exported}\n]\n\n\n"
        + body
    )


def _import_line(module: str, names: Sequence[str]) -> str:
    """`from module import a, b`, parenthesised one name a line when it is too long (as ruff
    formats it)."""
    line = f"from {module} import {', '.join(names)}\n"
    if len(line) <= WIDTH + 1:
        return line
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"


def _registry_import(registry: str) -> str:
    parent, _, leaf = registry.rpartition(".")
    if not parent:
        return f"import {registry} as registry\n"
    return f"from {parent} import {leaf}" + ("\n" if leaf == "registry" else " as registry\n")


def dynamic_module(kinds: Sequence[Kind], registry: str = "together_provider.registry") -> str:
    """`together_provider/resources.py` for `kinds` (whose `BY_NAME` lives in `registry`): the
    Args dataclasses, each kind's typed attributes (inputs and outputs with their table docs, which
    the native resources share) and the dynamic resources.
    Checked in, like `hosts/native/resources.py` from `native_module`; `tests/unit/test_codegen.py`
    fails while either differs from what the tables give now, as the TypeScript SDK's test does."""
    classes = []
    for kind in kinds:
        host = (
            f"Served by the dynamic-provider host (`{kind.dynamic_type}`); Pulumi's "
            "`custom_timeouts` do not reach it."
        )
        classes += [
            _args_class(kind),
            _attributes_class(kind),
            _resource_class(kind, "DynamicResource", host),
        ]
    first_party = [
        _registry_import(registry),
        "from together_provider.dynamic.resource import Attributes, DynamicResource\n",
    ]
    names = [name for kind in kinds for name in kind.exports]
    doc = "The typed Args and dynamic-host resources of every kind, from its field table."
    return _module(doc, ["from dataclasses import dataclass\n"], first_party, names, classes)


def native_module(
    kinds: Sequence[Kind],
    registry: str = "together_provider.registry",
    args_module: str = "together_provider.resources",
) -> str:
    """`together_provider/hosts/native/resources.py`: the native resources, with the same Args and
    attributes."""
    classes = []
    for kind in kinds:
        host = (
            f"Served by the native plugin (`{kind.token}`): it honours `custom_timeouts`, can be "
            "imported with `pulumi import`, and one `pulumi up` waits on any number at once."
        )
        classes.append(_resource_class(kind, "NativeResource", host))
    args = [f"{kind.type_name}{part}" for kind in kinds for part in ("Args", "Attributes")]
    first_party = [
        _registry_import(registry),
        "from together_provider.hosts.native._base import NativeResource\n",
        _import_line(args_module, args),
    ]
    names = [name for kind in kinds for name in kind.exports]
    doc = (
        "The native-plugin resources of every kind, from its field table, with the same Args and "
        "attributes."
    )
    return _module(doc, [], first_party, names, classes)


def generated() -> dict[Path, str]:
    """Each checked-in module and what the registry's tables give for it now."""
    return {DYNAMIC: dynamic_module(KINDS), NATIVE: native_module(KINDS)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m together_provider.codegen")
    parser.add_argument("--write", action="store_true", help="write the modules (else: check)")
    options = parser.parse_args(argv)
    stale = [path for path, text in generated().items() if _read(path) != text]
    if options.write:
        for path, text in generated().items():
            path.write_text(text)
        return 0
    for path in stale:
        print(f"{path} differs from its field tables: run `make sdk-python`", file=sys.stderr)
    return 1 if stale else 0


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


if __name__ == "__main__":
    sys.exit(main())
