"""The reference page's generated tables, rendered from the field tables and the rules, so docs
and behaviour cannot drift apart: a unit test fails when docs/reference.md's copy differs."""

from __future__ import annotations

import argparse
import functools
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from together_provider.framework.fields import InputField, without_none
from together_provider.framework.kind import Kind
from together_provider.framework.schema import Schema
from together_provider.registry import KINDS

PAGE: Final = "docs/reference.md"
"""The page that holds the tables (`--write` updates it); the README links to it."""


def markers(kind: Kind, table: str) -> tuple[str, str]:
    """The start and end markers of one of a kind's tables (`table`: `rules` or `fields`)."""
    name = f"{kind.docs_marker}{table}-table"
    return (
        f"<!-- {name}:start (python -m together_provider.docs --write {PAGE}) -->\n",
        f"<!-- {name}:end -->",
    )


class _Rule(Protocol):
    @property
    def when(self) -> str: ...
    @property
    def why(self) -> str: ...


def policy_table_markdown(
    schema: Schema[Any] = KINDS[0].schema, rules: Sequence[_Rule] = KINDS[0].rulebook.rules
) -> str:
    """What updates in place, replaces or is rejected: one row per field, then per rule
    (by default the registry's first kind's)."""
    rows = ["| Field | What happens | Why |", "|---|---|---|"]
    rows += [f"| `{f.name}` | {schema.policy_wording(f.policy)} | {f.why} |" for f in schema.inputs]
    rows += [f"| {r.when} | rejected at check | {r.why} |" for r in rules]
    rows.append(
        "| any field of the wrong type, an unknown key or enum value, a negative count, a value "
        "out of range | rejected at check | reported with the valid values, never coerced |"
    )
    return "\n".join(rows) + "\n"


def _type_name(annotation: Any) -> str:
    """`int`, `list[dict[str, Any]]`, or the values of a Literal; `None` is shown as "unset"."""
    annotation = without_none(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if typing.get_origin(annotation) is None:
        return f"`{getattr(annotation, '__name__', annotation)}`"
    return "`" + str(annotation).replace("typing.", "") + "`"


def _default(spec_field: InputField) -> str:
    if spec_field.names_resource:
        return "the resource name"
    if spec_field.required:
        return "required"
    return "unset" if spec_field.default is None else f"`{spec_field.default}`"


def fields_table_markdown(schema: Schema[Any] = KINDS[0].schema) -> str:
    """Every input and output: property, stack-config key, type, default, description (by
    default the registry's first kind's)."""
    rows = ["| Property | Stack config | Type | Default | Description |", "|---|---|---|---|---|"]
    for f in schema.inputs:
        key = f"`{f.config_key}`" if f.config_key else "-"
        if f.per_resource and f.config_key:
            key += f" (per {schema.noun})"
        rows.append(
            f"| `{f.name}` | {key} | {_type_name(f.annotation)} | {_default(f)} | {f.doc} |"
        )
    for o in schema.outputs:
        secret = " Secret." if o.secret else ""
        rows.append(f"| `{o.name}` | output | {_type_name(o.annotation)} | - | {o.doc}{secret} |")
    return "\n".join(rows) + "\n"


TABLES: Final[tuple[tuple[tuple[str, str], Callable[[], str]], ...]] = tuple(
    table
    for kind in KINDS
    for table in (
        (
            markers(kind, "rules"),
            functools.partial(policy_table_markdown, kind.schema, kind.rulebook.rules),
        ),
        (markers(kind, "fields"), functools.partial(fields_table_markdown, kind.schema)),
    )
)
"""Every generated table, each kind's policy table then its fields table, with its markers."""


def render_into(text: str) -> str:
    """`text` with each generated table replaced; `ValueError` when a marker pair is missing."""
    for (start, end), render in TABLES:
        if start not in text or end not in text:
            raise ValueError(f"the page lacks the markers {start.strip()} ... {end}")
        before, rest = text.split(start, 1)
        text = before + start + render() + end + rest.split(end, 1)[1]
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m together_provider.docs",
        description="Print the reference page's generated tables (from the field tables and "
        "the rules); with --write PAGE, replace each table between its markers in PAGE.",
    )
    parser.add_argument("--write", type=Path, metavar="PAGE", help=f"update this file ({PAGE})")
    args = parser.parse_args(argv)
    if args.write is None:
        print("\n".join(render() for _, render in TABLES), end="")
        return 0
    args.write.write_text(render_into(args.write.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
