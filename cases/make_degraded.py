"""Writes cases/<tier>/<task>/degraded/: one fixture per degradation type (1-4) and one
other anti-pattern per task, each line that must be reported labelled `# expect: CODE`.

    python cases/make_degraded.py

The labels are the intent of each edit, written here by hand: a torch expression with
N operators carries N TL003 labels. tests/test_cases.py checks the linter against them.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
HEAD = "import torch\nimport torch.nn as nn\n"

# task: (init params, forward params, PyTorch body lines with their labels)
TASKS = {
    "t1/gelu": ("", "x", ["return torch.nn.functional.gelu(x)  # expect: TL003"]),
    "t1/fused_silu_and_mul": ("", "combined", [
        "a, b = combined.chunk(2, dim=-1)",
        "return torch.nn.functional.silu(a) * b  # expect: TL003 TL003"]),
    "t1/matmul_basic": ("", "a, b", ["return torch.matmul(a, b)  # expect: TL003"]),
    "t1/matmul_biasadd": ("", "a, b, bias", ["return torch.addmm(bias, a, b)  # expect: TL003"]),
    "t1/softmax": ("dim", "x", ["return torch.softmax(x, dim=self.dim)  # expect: TL003"]),
    "t1/sigmoid_scale_sum": ("", "x, bias", [
        "s = torch.sigmoid(2.0 * x + bias)  # expect: TL003 TL003 TL003",
        "return torch.sum(s, dim=-1, keepdim=True)  # expect: TL003"]),
    "t2/rope": ("", "x, cos, sin", [
        "x1, x2 = x.chunk(2, dim=-1)",
        "rotated = torch.cat((-x2, x1), dim=-1)  # expect: TL003 TL003",
        "return x * cos + rotated * sin  # expect: TL003 TL003 TL003"]),
    "t2/add_rmsnorm_cast": ("eps, out_dtype", "x, residual, gamma", [
        "h = x + residual  # expect: TL003",
        "var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003",
        "return (h * torch.rsqrt(var + self.eps) * gamma).half()  # expect: TL003 TL003 TL003 TL003 TL003"]),
    "t2/add_rmsnorm_quant": ("eps", "x, residual, gamma, scale, zero_point", [
        "h = x + residual  # expect: TL003",
        "var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003",
        "y = h * torch.rsqrt(var + self.eps) * gamma  # expect: TL003 TL003 TL003 TL003",
        "return torch.round(y / scale + zero_point).clamp(-128, 127).to(torch.int8)  # expect: TL003 TL003 TL003 TL003 TL003"]),
    "t2/moe_topk_softmax": ("k", "logits", [
        "p = torch.softmax(logits, dim=-1)  # expect: TL003",
        "values, indices = torch.topk(p, self.k, dim=-1)  # expect: TL003",
        "return values / values.sum(dim=-1, keepdim=True), indices  # expect: TL003 TL003"]),
    "t3/causal_conv1d": ("activation", "x, conv_state, weight, bias, conv_state_indices", [
        "xp = torch.cat([conv_state, x.unsqueeze(-1)], dim=-1)  # expect: TL003",
        "out = torch.nn.functional.silu(torch.sum(xp * weight, dim=-1) + bias)  # expect: TL003 TL003 TL003 TL003",
        "conv_state.copy_(xp[..., 1:])  # expect: TL201",
        "return out"]),
    "t3/decode_mla": ("sm_scale, page_size", "q, k_nope, k_rope, v, seq_lens, block_table", [
        "pages = block_table.long()  # expect: TL003",
        "kn = k_nope[pages].flatten(1, 3).float()  # expect: TL003 TL003",
        "kr = k_rope[pages].flatten(1, 3).float()  # expect: TL003 TL003",
        "vv = v[pages].flatten(1, 3)  # expect: TL003",
        "d = kn.shape[-1]",
        'scores = (torch.einsum("bhd,bnd->bhn", q[..., :d].float(), kn) + torch.einsum("bhd,bnd->bhn", q[..., d:].float(), kr)) * self.sm_scale  # expect: TL003 TL003 TL003 TL003 TL003 TL003',
        "p = torch.softmax(scores, dim=-1).to(q.dtype)  # expect: TL003 TL003",
        'return torch.einsum("bhn,bnd->bhd", p, vv)  # expect: TL003']),
    "t3/layernorm_gated": ("eps, norm_before_gate, is_rms_norm", "x, weight, z", [
        "rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # expect: TL003 TL003 TL003 TL003",
        "return x * rstd * weight * torch.sigmoid(z)  # expect: TL003 TL003 TL003 TL003"]),
}

# One more anti-pattern per task, rotating through the catalog: (module-level lines, forward line).
OTHERS = [
    ([], "torch.cuda.synchronize()  # expect: TL205"),
    ([], 'print("forward", flush=True)  # expect: TL304'),
    ([], "_device = torch.cuda.current_device()  # expect: TL305"),
    ([], "_side = torch.cuda.Stream()  # expect: TL103"),
    (["import os", 'os.environ["TRITON_CACHE_DIR"] = "/tmp/tritonlint-cache"  # expect: TL104'], None),
]

COPY_KERNEL = '''import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):  # expect: TL004
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _copy(t):
    out = torch.empty_like(t)
    copy_kernel[(triton.cdiv(t.numel(), 1024),)](t, out, t.numel(), BLOCK=1024)
    return out
'''


def init_block(params: str) -> list[str]:
    lines = [f"    def __init__(self{', ' + params if params else ''}):", "        super().__init__()"]
    lines += [f"        self.{p.strip()} = {p.strip()}" for p in params.split(",") if p.strip()]
    return lines + [""]


def model(params: str, sig: str, body: list[str], cls_mark: str = "", fwd_mark: str = "") -> str:
    lines = [f"class ModelNew(nn.Module):{cls_mark}", *init_block(params), f"    def forward(self, {sig}):{fwd_mark}"]
    return "\n".join(lines + ["        " + b for b in body]) + "\n"


def split_solution(src: str) -> tuple[str, str]:
    """(everything before ModelNew.forward, the forward method)."""
    i = src.index("    def forward(")
    return src[:i], src[i:]


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)


def main() -> None:
    for n, (key, (params, sig, body)) in enumerate(TASKS.items()):
        tier, name = key.split("/")
        case = ROOT / tier / name
        out = case / "degraded"
        solution = (case / f"{name}_triton_ascend_impl.py").read_text()
        before, forward = split_solution(solution)
        first = sig.split(",")[0].strip()
        # type 1: no kernel at all
        write(out, f"{name}_type1.py", HEAD + "\n\n" + model(params, sig, body, "  # expect: TL001"))
        # type 2: the kernels are there, forward never launches them
        write(out, f"{name}_type2.py", before + f"    def forward(self, {sig}):  # expect: TL002\n"
              + "".join("        " + b + "\n" for b in body))
        # type 3: the solution, plus PyTorch maths in forward
        head, rest = forward.split("\n", 1)
        write(out, f"{name}_type3.py", before + head + f"\n        _ = torch.relu({first})  # expect: TL003\n" + rest)
        # type 4: a copy kernel launched, the maths in PyTorch
        last = body[-1]
        if key == "t2/moe_topk_softmax":
            last = "return _copy(values / values.sum(dim=-1, keepdim=True)), indices  # expect: TL003 TL003"
        else:
            expr, _, mark = last[len("return "):].partition("  #")
            last = f"return _copy({expr})" + (f"  #{mark}" if mark else "")
        write(out, f"{name}_type4.py", HEAD + COPY_KERNEL + "\n\n" + model(params, sig, body[:-1] + [last]))
        # one other anti-pattern
        module_lines, forward_line = OTHERS[n % len(OTHERS)]
        text = before + head + (f"\n        {forward_line}" if forward_line else "") + "\n" + rest
        if module_lines:
            text = text.replace("import torch\n", "import torch\n" + "\n".join(module_lines) + "\n", 1)
        write(out, f"{name}_other.py", text)


if __name__ == "__main__":
    main()
