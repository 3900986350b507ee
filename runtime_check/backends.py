"""Where submissions run: npu (torch_npu + triton-ascend), cuda, or cpu (Triton's
interpreter, correctness only). Code that runs on the device reaches it as
`torch.<name>` and through the device-agnostic `torch.Event`, so the NPU path is the
CUDA path with another device type."""

from __future__ import annotations

import dataclasses
import importlib.util
import os


class BackendUnavailable(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str  # npu | cuda | cpu
    times: bool  # whether timings on it mean anything

    @property
    def device(self) -> str:
        return self.name

    def child_env(self, cache_dir: str | None = None) -> dict[str, str]:
        """The children's environment; `cache_dir` gives them a private Triton cache."""
        env = dict(os.environ)
        # Named, always: each child's HOME is a private folder that goes with it, so Triton's
        # default cache under HOME would make every child compile from scratch.
        env["TRITON_CACHE_DIR"] = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
        if self.name == "cpu":
            env["TRITON_INTERPRET"] = "1"
        if cache_dir:
            env["TRITON_CACHE_DIR"] = str(cache_dir)
        return env


VISIBLE = {"cuda": "CUDA_VISIBLE_DEVICES", "npu": "ASCEND_RT_VISIBLE_DEVICES"}


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def likely_backend(name: str = "auto") -> str:
    """What get_backend(name) will pick where it succeeds, without importing torch: for work that
    may start before it has decided (eval's first worker)."""
    if name == "auto":
        return "npu" if _has("torch_npu") else "cuda"
    return name


def get_backend(name: str = "auto") -> Backend:
    """`auto` picks npu, then cuda; cpu only when asked for. Raises with one clear line."""
    import torch

    if name in ("auto", "npu"):
        if _has("torch_npu"):
            import torch_npu  # noqa: F401  (registers torch.npu)

            if torch.npu.is_available():
                return Backend("npu", True)
            if name == "npu":
                raise BackendUnavailable("--run-npu: torch_npu is installed but no NPU is available")
        elif name == "npu":
            raise BackendUnavailable("--run-npu: torch_npu is not installed")
    if name in ("auto", "cuda"):
        if torch.cuda.is_available():
            return Backend("cuda", True)
        if name == "cuda":
            raise BackendUnavailable("--backend cuda: no CUDA device is available")
    if name == "cpu":
        if not _has("triton"):
            raise BackendUnavailable("--backend cpu: triton is not installed")
        return Backend("cpu", False)
    raise BackendUnavailable("--run: no NPU or CUDA device found (use --backend cpu for a correctness-only run)")
