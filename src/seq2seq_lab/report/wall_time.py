"""A grid's wall time, read from the ``wall_time.txt`` its script wrote beside the runs.

``experiments/queue.sh`` appends one line per pass of a resumable queue (``run_real.sh``,
``run_quality.sh``), ``experiments/run_cpu.sh`` writes one for its single pass; each carries
``wall_seconds: <s>``. The grid's wall time is their sum:

    wall time = sum over passes of wall_seconds

(each pass's command, end, runs finished and hardware stay in the file, linked from the report).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FILE = "wall_time.txt"
_SECONDS = re.compile(r"\bwall_seconds: (\d+)\b")


@dataclass(frozen=True)
class WallTime:
    path: Path
    seconds: int
    passes: int

    def text(self, link: str) -> str:
        """One line for a report: the sum, the passes, the file (at the relative ``link``)."""
        hours, minutes = divmod(round(self.seconds / 60), 60)
        span = f"{hours} h {minutes} min" if hours else f"{minutes} min"
        passes = f"{self.passes} passes" if self.passes != 1 else "one pass"
        return (
            f"{span} ({self.seconds:,} s) in {passes} of the grid's script "
            f"([{FILE}]({link}): each pass's command, end, runs finished and hardware)"
        )


def find_wall_time(runs_root: Path) -> WallTime | None:
    """The wall time of the grid whose runs lie under ``runs_root`` (its scripts write the file
    beside the runs' directory, or in it); None when neither holds a pass."""
    for path in (runs_root.parent / FILE, runs_root / FILE):
        if path.is_file():
            seconds = [int(s) for s in _SECONDS.findall(path.read_text(encoding="utf-8"))]
            if seconds:
                return WallTime(path, sum(seconds), len(seconds))
    return None
