"""One-off device probe: which erf makes the gelu solution match PyTorch's CUDA GELU.

Variants of cases/t1/gelu's solution, verified by the gate (mere_mare, 6 input seeds):
tl.erf as shipped; tl.erf with FMA contraction off; the backend's libdevice erf through
triton.language.extra.libdevice (dispatches to CUDA's __nv_erff on NVIDIA)."""
import json, tempfile
from pathlib import Path

from tritonlint.runtime_check.backends import get_backend
from tritonlint.runtime_check.verify import verify

ROOT = Path(__file__).resolve().parents[2]
src = (ROOT / "cases/t1/gelu/gelu_triton_ascend_impl.py").read_text()
variants = {
    "shipped": src,
    "no_fma": src.replace("BLOCK=block, num_warps=4)", "BLOCK=block, num_warps=4, enable_fp_fusion=False)"),
    "libdevice": src.replace("import triton.language as tl\n", "import triton.language as tl\nfrom triton.language.extra import libdevice\n")
                    .replace("tl.erf(", "libdevice.erf("),
}
out = {}
with tempfile.TemporaryDirectory() as tmp:
    for name, text in variants.items():
        p = Path(tmp) / f"gelu_{name}.py"
        p.write_text(text)
        r = verify(ROOT / "cases/t1/gelu/gelu_torch.py", p, get_backend("cuda"), seeds=6, timeout=300)
        out[name] = {"passed": f"{r['passed_cases']}/{r['total_cases']}", "max_abs_diff": r["max_abs_diff"],
                     "failures": [(f["case_idx"], f.get("stats", {}).get("mare"), f.get("stats", {}).get("mere")) for f in r["failures"]]}
        print(name, json.dumps(out[name]), flush=True)
