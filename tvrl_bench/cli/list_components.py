"""`tvrl-bench list [FAMILY]`: every registered component with its description and parameters.

The listing is read from the component modules' source (static_listing.py), so it prints at once without
importing torch: that reading is the one way the command knows the registry (tests/cli/test_list.py holds it to the
registry's own descriptions and parameters). A component the source reading cannot describe is a bug of that
component's declaration, reported in one line naming it.
"""

from __future__ import annotations

import argparse

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


def render(family: str | None = None) -> str:
    """The listing of `family` (every family by default) as `tvrl-bench list` prints it."""
    from tvrl_bench.cli.static_listing import Unreadable, scan

    try:
        components = scan([f.package for f in registry.FAMILIES.values()])
    except Unreadable as exc:
        raise RuntimeError(f"tvrl-bench list cannot read a component from its source: {exc}; declare it with "
                           "@register(\"family\", \"name\") on a module-level class or function whose defaults are "
                           "literals") from None
    lines = []
    for fam in [family] if family else list(registry.FAMILIES):
        family_info = registry.FAMILIES[fam]
        bound = f"  (preset macro: {family_info.macro})" if family_info.macro else ""
        lines.append(f"{fam}: {family_info.description}{bound}")
        members = sorted((c for c in components if c.family == fam), key=lambda c: c.name)
        if not members:
            lines.append("  (none registered)")
        for component in members:
            lines.append(f"  {component.qualified_name:<28} {component.description}")
            for name, default in component.parameters:
                lines.append(f"      {name} = {default}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    print(render(args.family), end="")
    return 0
