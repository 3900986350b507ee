"""Name resolution, scoping, the call graph and tensor inference on real libcst trees."""

from __future__ import annotations

import textwrap

import libcst as cst

from tritonlint.config import Config
from tritonlint.engine import lint_source
from tritonlint.model import ModuleModel

HEAD = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x):
    out = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out
"""


def findings(body: str) -> list[tuple[str, int]]:
    """Degradation findings only: these tests are about resolution and tensor-ness."""
    src = HEAD + textwrap.dedent(body)
    offset = HEAD.count("\n")
    result = lint_source(src, "t.py", Config(select=("TL00",)))
    return sorted((d.code, d.line - offset) for d in result.diagnostics)


def model_of(src: str) -> ModuleModel:
    return ModuleModel(cst.parse_module(textwrap.dedent(src)))


def test_qualified_names_through_every_import_spelling():
    m = model_of(
        """
        import torch.nn.functional as fn
        from torch.nn import functional as G
        from torch.nn.functional import softmax as sm
        import torch as th
        from triton import language as tl
        alias = fn.relu
        """
    )
    scope = m.module_scope
    body = m.module.body
    assert m.qualname(cst.parse_expression("fn.gelu"), scope) == "torch.nn.functional.gelu"
    assert m.qualname(cst.parse_expression("G.silu"), scope) == "torch.nn.functional.silu"
    assert m.qualname(cst.parse_expression("sm"), scope) == "torch.nn.functional.softmax"
    assert m.qualname(cst.parse_expression("th.ops.aten.add"), scope) == "torch.ops.aten.add"
    assert m.qualname(cst.parse_expression("tl.load"), scope) == "triton.language.load"
    assert m.qualname(cst.parse_expression("alias"), scope) == "torch.nn.functional.relu"
    assert len(body) == 6


def test_class_scope_is_invisible_to_methods():
    # `F` inside forward is the module-level import, not the class attribute
    assert findings(
        """
        import torch.nn.functional as F


        class ModelNew(nn.Module):
            F = None

            def forward(self, x):
                return F.relu(launch(x))
        """
    ) == [("TL003", 9)]


def test_local_name_shadows_import():
    assert findings(
        """
        class ModelNew(nn.Module):
            def forward(self, x):
                torch = None
                return launch(x)
        """
    ) == []


def test_integer_shape_maths_not_flagged():
    assert findings(
        """
        class ModelNew(nn.Module):
            def forward(self, x, dim: int = -1, scale=2):
                n = x.shape[0] * x.shape[1] + len(x) - 1
                m = int(x.size(0)) // 2 ** 3 % 7
                blocks = -(-n // 128)
                ok = n > 0 and x.dim() == 2 and dim * scale < 4
                return launch(x.view(n // x.shape[1], -1))
        """
    ) == []


def test_tensor_flows_through_closure_walrus_and_unpacking():
    assert findings(
        """
        class ModelNew(nn.Module):
            def forward(self, x):
                a, b = x.chunk(2)
                def inner():
                    return a * 2
                if (c := launch(b)) is not None:
                    pass
                return inner(), c + 1
        """
    ) == [("TL003", 6), ("TL003", 9)]


def test_helper_params_become_tensors_only_when_fed_tensors():
    assert findings(
        """
        def scaled(t, factor):
            return t * factor


        def count(n):
            return n * 4


        class ModelNew(nn.Module):
            def forward(self, x):
                total = count(x.numel())
                return scaled(launch(x), 2)
        """
    ) == [("TL003", 3)]


def test_global_statement_and_module_level_tensor():
    assert findings(
        """
        TABLE = torch.arange(16)
        calls = 0


        class ModelNew(nn.Module):
            def forward(self, x):
                global calls
                calls += 1
                return launch(x) + TABLE
        """
    ) == [("TL003", 10)]


def test_comprehension_over_tensors():
    assert findings(
        """
        class ModelNew(nn.Module):
            def forward(self, x):
                parts = [launch(t) for t in x.unbind(0)]
                return [p.relu() for p in parts]
        """
    ) == [("TL003", 5)]  # `p` iterates over the kernel outputs, so `p.relu()` runs in PyTorch


def test_recursive_helpers_terminate():
    assert findings(
        """
        def ping(x, n):
            return pong(x, n - 1) if n else launch(x)


        def pong(x, n):
            return ping(x, n)


        class ModelNew(nn.Module):
            def forward(self, x):
                return ping(x, 3)
        """
    ) == []


def test_kernel_returned_by_factory_is_launched():
    assert findings(
        """
        def pick():
            return k


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                pick()[(1,)](x, out, x.numel(), BLOCK=256)
                return out
        """
    ) == []


def test_super_forward_reaches_base_class():
    assert findings(
        """
        class Base(nn.Module):
            def forward(self, x):
                return torch.relu(x)


        class ModelNew(Base):
            def forward(self, x):
                return super().forward(launch(x))
        """
    ) == [("TL003", 4)]


def test_reference_model_and_init_are_not_checked():
    assert findings(
        """
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x) * 2


        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(4) * 2)

            def forward(self, x):
                return launch(x)


        def get_inputs():
            return [torch.randn(4) + 1]
        """
    ) == []


def test_entry_class_is_configurable():
    src = HEAD + "\n\nclass Solution(nn.Module):\n    def forward(self, x):\n        return x.exp()\n"
    assert lint_source(src, "t.py").status == "ok"
    diags = lint_source(src, "t.py", Config(entry_class="Solution")).diagnostics
    assert [d.code for d in diags] == ["TL002", "TL003"]  # Solution launches nothing


def test_identity_and_membership_tests_are_not_tensor_maths():
    assert findings(
        """
        class ModelNew(nn.Module):
            def forward(self, x, bias=None):
                if bias is not None and x is not bias and "k" in {"k": x}:
                    pass
                return launch(x)
        """
    ) == []


def test_query_api_fails_loudly_for_node_types_the_walk_does_not_record():
    import pytest

    from tritonlint.bindings import NotRecorded

    m = model_of(HEAD + "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return launch(x)\n")
    assert [n for n, _ in m.entry.nodes(cst.Call)]  # recorded: a list, never a silent default
    with pytest.raises(NotRecorded, match="If"):
        m.entry.nodes(cst.If)
    with pytest.raises(NotRecorded):
        list(m.nodes(cst.Lambda, m.functions))


def test_calls_carry_the_resolved_names_of_their_callee():
    m = model_of(
        HEAD
        + """
import torch.nn.functional as fn


class ModelNew(nn.Module):
    def forward(self, x):
        y = launch(x)
        return fn.gelu(y) + torch.relu(y)
"""
    )
    names = [site.names for site in m.calls([m.entry])]
    assert ("torch.nn.functional.gelu",) in names and ("torch.relu",) in names
    assert () in names  # `launch` is this module's function: no external name
    assert all(site.function is m.entry for site in m.calls([m.entry]))


def test_binding_kinds_refuse_string_comparison():
    import pytest

    from tritonlint.bindings import BindingKind

    with pytest.raises(TypeError, match="not the string"):
        BindingKind.ASSIGN == "assign"  # noqa: B015 - the comparison itself must raise


def test_tensor_facts_do_not_depend_on_which_rules_ran_first():
    """TL201 alone finds the in-place write into an input that it finds with every rule on."""
    src = HEAD + textwrap.dedent(
        """
        class ModelNew(nn.Module):
            def forward(self, x):
                x.add_(1)
                return launch(x)
        """
    )
    alone = lint_source(src, "t.py", Config(select=("TL201",)))
    everything = lint_source(src, "t.py", Config())
    assert [(d.code, d.line) for d in alone.diagnostics] == [(d.code, d.line) for d in everything.diagnostics if d.code == "TL201"] != []
