"""Job functions for the worker-pool tests (spawned workers import them by name)."""

import os
import time


def job(j: dict) -> dict:
    if j["do"] == "die":
        os._exit(7)
    if j["do"] == "hang":
        time.sleep(600)
    if j["do"] == "nap":
        time.sleep(0.2)
    return {"pid": os.getpid(), "n": j["n"], "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
