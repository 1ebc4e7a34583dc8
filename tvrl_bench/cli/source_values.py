"""Values read from a syntax tree without running it: literals, module constants and arithmetic on them, and a
parameter default as `tvrl-bench list` prints it."""

from __future__ import annotations

import ast

REQUIRED = "REQUIRED"


_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Pow: lambda a, b: a ** b}


def evaluate(node: ast.expr, constants: dict[str, object]) -> object:
    """A literal, a module constant, or arithmetic on them; ValueError for anything else."""
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](evaluate(node.left, constants), evaluate(node.right, constants))
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [evaluate(e, constants) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    return ast.literal_eval(node)


def module_constants(tree: ast.Module) -> dict[str, object]:
    """NAME -> value of the module's top-level `NAME = <literal>` assignments (annotated or not)."""
    constants: dict[str, object] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is not None:
            try:
                constants[target] = evaluate(value, constants)
            except (ValueError, TypeError, SyntaxError, ZeroDivisionError, RecursionError):
                pass
    return constants


def render_default(node: ast.expr | None, constants: dict[str, object] | None = None) -> str:
    """A default as `tvrl-bench list` prints it: repr of its value, REQUIRED for none or gin.REQUIRED."""
    if node is None:
        return REQUIRED
    text = ast.unparse(node)
    if text in ("gin.REQUIRED", "REQUIRED"):
        return REQUIRED
    try:
        return repr(evaluate(node, constants or {}))
    except (ValueError, TypeError, SyntaxError, ZeroDivisionError, RecursionError):
        return text
