"""Small questions about libcst nodes, asked by the walk and by rules."""

from __future__ import annotations

import dataclasses
from typing import Iterator

import libcst as cst

_SKIP_FIELDS = frozenset(
    "lpar rpar leading_lines lines_after_decorators header footer comma "
    "semicolon colon equal star operator dot lbracket rbracket lbrace rbrace "
    "newline asynchronous arrow walrus body_whitespace".split()
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    f = _FIELDS.get(t)
    if f is None:
        f = tuple(
            x.name
            for x in dataclasses.fields(t)
            if not x.name.startswith("whitespace") and x.name not in _SKIP_FIELDS
        )
        _FIELDS[t] = f
    return f


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Child nodes that can hold code (whitespace and punctuation skipped)."""
    for name in _fields(type(node)):
        v = getattr(node, name)
        if isinstance(v, cst.CSTNode):
            yield v
        elif type(v) in (list, tuple):
            for i in v:
                if isinstance(i, cst.CSTNode):
                    yield i


def iter_subtree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Pre-order walk of one expression's subtree (iterative: deep nesting is fine)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def constant_truth(expr: cst.BaseExpression) -> bool | None:
    """True/False for a test whose value is fixed in the source (`if False:`, `if 0:`), else None."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, (cst.Integer, cst.Float)):
        return bool(expr.evaluated_value)
    if isinstance(expr, cst.SimpleString):
        return bool(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        inner = constant_truth(expr.expression)
        return None if inner is None else not inner
    return None
