"""Run settings: which rules, which entry point, which extra glue ops."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()  # code prefixes; empty = all rules
    ignore: tuple[str, ...] = ()
    entry_class: str = "ModelNew"
    entry_method: str = "forward"
    allow_glue: frozenset[str] = frozenset()  # extra torch.* names TL003 lets through
    exclude: tuple[str, ...] = ()  # glob patterns for folder walks

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)
