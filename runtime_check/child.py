"""One model run in its own process: `python -m tritonlint.runtime_check.child ...`.

Loads the module, builds the model from the init inputs, calls it on the inputs
(both read from a file the parent wrote), and writes back the outputs and the
inputs as they are after the call, all moved to the CPU. Anything that is not a
tensor, a number or a container of those is replaced by a type tag, so the
parent can load the file with `torch.load(weights_only=True)`."""

from __future__ import annotations

import argparse
import sys
import traceback


def _portable(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").clone()
    if isinstance(value, (list, tuple)):
        return [_portable(v) for v in value]
    if isinstance(value, (int, float, bool, str)) or value is None:
        return value
    return {"__type__": type(value).__name__}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--cls", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", required=True)
    args = ap.parse_args(argv)
    import torch

    from tritonlint.runtime_check.tasks import load_module

    payload = torch.load(args.inputs, weights_only=True)
    try:
        module = load_module(args.module)
        inputs = [v.to(args.device) if isinstance(v, torch.Tensor) else v for v in payload["inputs"]]
        model = getattr(module, args.cls)(*payload["init"])
        if isinstance(model, torch.nn.Module):
            model = model.to(args.device)
        with torch.no_grad():
            out = model(*inputs)
        if args.device != "cpu":
            getattr(torch, args.device).synchronize()
        result = {"ok": True, "outputs": _portable(out), "inputs_after": _portable(inputs)}
    except BaseException as e:  # the parent records it as this case's failure
        tb = traceback.format_exc(limit=-3)
        result = {"ok": False, "error_type": type(e).__name__, "error_msg": f"{e}\n{tb}"[-4000:]}
    torch.save(result, args.out)
    return 0 if result["ok"] else 3


if __name__ == "__main__":
    sys.exit(main())
