"""Builds example submissions for rule docs and tests, so that rules share one
clean kernel and launch instead of each re-typing it. Only the lines a rule is
about appear in the rule's module."""

from __future__ import annotations

import textwrap

IMPORTS = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"

KERNEL = '''
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
'''

LAUNCH = '''
out = torch.empty_like(x)
k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
return out
'''


def submission(forward: str = LAUNCH, *, kernel: str = KERNEL, imports: str = "", prelude: str = "",
               init: str = "", after: str = "", signature: str = "self, x") -> str:
    """A complete submission: imports, optional prelude, kernel, ModelNew."""
    parts = [IMPORTS + textwrap.dedent(imports)]
    if prelude:
        parts.append(textwrap.dedent(prelude).strip("\n") + "\n")
    parts.append(textwrap.dedent(kernel).strip("\n") + "\n")
    body = ["class ModelNew(nn.Module):"]
    if init:
        body += ["    def __init__(self):", "        super().__init__()", textwrap.indent(textwrap.dedent(init).strip("\n"), " " * 8), ""]
    body += [f"    def forward({signature}):", textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8)]
    parts.append("\n".join(body) + "\n")
    if after:
        parts.append(textwrap.dedent(after).strip("\n") + "\n")
    return "\n\n".join(parts)
