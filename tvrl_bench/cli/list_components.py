"""`tvrl-bench list [FAMILY]`: every registered component with its description and parameters.

The listing is read from the component modules' source (static_listing), so it prints at once without importing
torch; where the source cannot be read that way, the modules are imported and the registry is listed.
"""

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
    import gin

    if value is inspect.Parameter.empty or value is gin.REQUIRED:
        return "REQUIRED"
    return repr(value)


def _members(fam: str, static: list | None) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(qualified name, description, [(parameter, rendered default)]) of a family's components, sorted by name."""
    if static is not None:
        found = sorted((c for c in static if c.family == fam), key=lambda c: c.name)
        return [(c.qualified_name, c.description, list(c.parameters)) for c in found]
    return [(c.qualified_name, c.description, [(n, format_default(d)) for n, d in c.parameters()])
            for c in registry.components(fam)]


def render(family: str | None = None, static: bool = True) -> str:
    from tvrl_bench.cli.static_listing import scan

    read = scan([f.package for f in registry.FAMILIES.values()]) if static else None
    if read is None:
        registry.import_components()
    lines = []
    for fam in [family] if family else list(registry.FAMILIES):
        family_info = registry.FAMILIES[fam]
        bound = f"  (preset macro: {family_info.macro})" if family_info.macro else ""
        lines.append(f"{fam}: {family_info.description}{bound}")
        members = _members(fam, read)
        if not members:
            lines.append("  (none registered)")
        for qualified, description, parameters in members:
            lines.append(f"  {qualified:<28} {description}")
            for name, default in parameters:
                lines.append(f"      {name} = {default}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    print(render(args.family), end="")
    return 0
