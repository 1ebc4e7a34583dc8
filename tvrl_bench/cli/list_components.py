"""`tvrl-bench list [FAMILY]`: every registered component with its description and parameters."""

from __future__ import annotations

import argparse
import inspect

from tvrl_bench import registry


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list registered components",
        description="Print every registered component (gin name, description, parameters with defaults).",
    )
    parser.add_argument(
        "family", nargs="?", choices=list(registry.FAMILIES), help="only this family (default: all families)"
    )
    parser.set_defaults(run=run)


def format_default(value: object) -> str:
    if value is inspect.Parameter.empty:
        return "REQUIRED"
    return repr(value)


def render(family: str | None = None) -> str:
    registry.import_components()
    lines = []
    for fam in [family] if family else list(registry.FAMILIES):
        macro, description = registry.FAMILIES[fam]
        bound = f"  (preset macro: {macro})" if macro else ""
        lines.append(f"{fam}: {description}{bound}")
        members = registry.components(fam)
        if not members:
            lines.append("  (none registered)")
        for c in members:
            lines.append(f"  {c.qualified_name:<28} {c.description}")
            for name, default in c.parameters():
                lines.append(f"      {name} = {format_default(default)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    print(render(args.family), end="")
    return 0
