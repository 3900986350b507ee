"""Progress of an evaluation: rich bars (overall and per task, with ETA) on a
terminal, one plain line per finished job otherwise (CI logs, pipes)."""

from __future__ import annotations

import sys
import time
from collections import Counter


class Progress:
    def __init__(self, rich: bool, stream=None):
        self.rich, self.stream = rich, stream or sys.stderr
        self.total = self.finished = 0
        self.t0 = time.monotonic()
        self._bars = None

    def start(self, jobs: list[tuple[str, str]], reused: int = 0) -> None:
        """jobs: (job key, task key) for every job still to run."""
        self.total, self.finished, self.t0 = len(jobs), 0, time.monotonic()
        per_task = Counter(task for _, task in jobs)
        if reused:
            self._line(f"resuming: {reused} finished job(s) reused, {len(jobs)} to run")
        if self.rich and jobs:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bars

            from rich.console import Console

            console = Console(file=self.stream, force_terminal=True) if self.stream is not sys.stderr else None
            self._bars = Bars(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("{task.fields[last]}"), TimeRemainingColumn(), transient=False, console=console)
            self._overall = self._bars.add_task("all", total=len(jobs), last="")
            self._tasks = {t: self._bars.add_task(t, total=n, last="") for t, n in sorted(per_task.items())}
            self._bars.start()

    def done(self, key: str, task: str, label: str) -> None:
        self.finished += 1
        if self._bars is not None:
            self._bars.update(self._tasks[task], advance=1, last=label)
            self._bars.update(self._overall, advance=1, last=key)
            return
        elapsed = time.monotonic() - self.t0
        eta = elapsed / self.finished * (self.total - self.finished)
        self._line(f"[{self.finished}/{self.total}] {key}: {label} (elapsed {elapsed:.0f} s, ETA {eta:.0f} s)")

    def finish(self) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
