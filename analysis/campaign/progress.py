"""How a running campaign reports its progress on stderr.

On a terminal: one tqdm bar that redraws in place. Otherwise (output redirected to a file, a
notebook, a CI log): one plain line per finished run, since a bar's redraws would each become
a line of their own there.
"""

from __future__ import annotations

import sys


class CampaignProgress:
    """``start(run_id)`` before a run, ``finish(run_id, state, seconds)`` after it, ``close()``."""

    def __init__(self, name: str, total: int, already: int, enabled: bool = True):
        self.name, self.total, self.count = name, total, already
        self.stream = sys.stderr
        self.enabled = enabled
        self._bar = None
        if enabled and self.stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=already, unit="run", desc=name,
                             file=self.stream)

    def start(self, run_id: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(run_id)

    def finish(self, run_id: str, state: str, seconds: float) -> None:
        self.count += 1
        if self._bar is not None:
            self._bar.update(1)
        elif self.enabled:
            print(f"{self.name}: [{self.count}/{self.total}] {run_id} {state} in {seconds:.1f} s",
                  file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
