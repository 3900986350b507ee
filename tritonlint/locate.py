"""Line/column positions for the nodes being reported, and only those.

libcst's PositionProvider records every node and costs about one parse; a
file with three findings needs three positions. The locator runs libcst's
own code generator once and notes the character offsets of the requested
nodes, which costs about a third of a parse.
"""

from __future__ import annotations

import bisect
from contextlib import contextmanager, nullcontext
from typing import Iterable

import libcst as cst

try:  # private in libcst, stable since 0.3; fall back to the public provider
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - exercised only on an unknown libcst
    CodegenState = None

Position = tuple[int, int, int, int]  # line, col, end_line, end_col (1-based lines, 0-based cols)
_NULL = nullcontext()

if CodegenState is not None:

    class _Locator(CodegenState):
        __slots__ = ("targets", "found", "offset")

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            self.offset += len(value)

        def add_indent_tokens(self) -> None:
            for t in self.indent_tokens:
                self.tokens.append(t)
                self.offset += len(t)

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            if node in self.targets:
                return self._record(node)
            return _NULL

        @contextmanager
        def _record(self, node):
            start = self.offset
            yield
            self.found.setdefault(node, (start, self.offset))


def locate(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, Position]:
    targets = set(nodes)
    if not targets:
        return {}
    if CodegenState is None:  # pragma: no cover
        from libcst.metadata import MetadataWrapper, PositionProvider

        pos = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return {
            n: (r.start.line, r.start.column, r.end.line, r.end.column)
            for n in targets
            if (r := pos.get(n)) is not None
        }
    state = _Locator(default_indent=module.default_indent, default_newline=module.default_newline)
    state.targets, state.found, state.offset = targets, {}, 0
    module._codegen(state)
    code = "".join(state.tokens)
    starts = [0]
    nl = module.default_newline
    i = code.find(nl)
    while i != -1:
        starts.append(i + len(nl))
        i = code.find(nl, i + len(nl))

    def to_line_col(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1]

    out = {}
    for node, (a, b) in state.found.items():
        out[node] = (*to_line_col(a), *to_line_col(b))
    return out
