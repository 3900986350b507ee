"""The gate's options and their defaults, in one place that imports no torch: the lint
CLI, `tritonlint eval`, verify and benchmark all take them from here, so `tritonlint
PATH` can offer `--run`'s choices without importing the gate."""

from __future__ import annotations

import dataclasses

POLICIES = ("mere_mare", "allclose", "seed001_strict", "exact", "three_term")  # compare.py says what each checks
BACKENDS = ("auto", "npu", "cuda", "cpu")  # the first is the default; auto picks npu, then cuda (backends.get_backend)
BASELINES = ("eager", "compile")  # the first is the default: time the reference as written, or through torch.compile


def baseline_name(baseline: str) -> str:
    """How reports name what a speedup is against."""
    return "torch.compile" if baseline == "compile" else "eager PyTorch"


@dataclasses.dataclass(frozen=True)
class GateOptions:
    """One gate run's options. The field order is the order of the keys eval writes (to_json)."""

    reference: str | None = None  # the reference task file; None: found by name (gate.find_reference)
    seeds: int = 3  # input seeds, one verify case each
    timeout: float = 900.0  # seconds per case in a child process (seed 002's default)
    policy: str = "mere_mare"  # one of POLICIES; seed 002's precision rule
    warmup: int = 5  # untimed calls before the timed ones (seed 002's --warmup)
    repeats: int = 50  # timed calls per shape (seed 002's --repeats)
    operators: bool = False  # add the torch profiler's per-operator breakdown
    fresh_cache: bool = False  # compile in a private, empty Triton cache
    probe_state: bool = False  # Model's parameters and buffers must be reproduced bit-exactly
    baseline: str = BASELINES[0]  # one of BASELINES: the reference is timed as written or compiled (timing.py)

    def __post_init__(self) -> None:
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, not {self.baseline!r}")

    def to_json(self) -> dict:
        """The options that hold for a whole run, as plain data: eval's jobs carry them, its
        resume fingerprint hashes them and summary.json lists them. No `reference` (each job
        has its own), `probe_state` only when set and `baseline` only when not eager: eval's
        fingerprints were made without these keys, so leaving the defaults out keeps them unchanged."""
        data = dataclasses.asdict(self)
        del data["reference"]
        if not self.probe_state:
            del data["probe_state"]
        if self.baseline == BASELINES[0]:
            del data["baseline"]
        return data

    @classmethod
    def from_json(cls, data: dict, reference: str | None = None) -> GateOptions:
        return cls(reference=reference, **data)


DEFAULTS = GateOptions()
