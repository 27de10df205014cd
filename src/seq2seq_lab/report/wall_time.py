"""A grid's wall time, read from the ``wall_time.txt`` its script wrote beside the runs.

``experiments/queue.sh`` appends one line per pass of a resumable queue (``run_real.sh``,
``run_quality.sh``), ``experiments/run_cpu.sh`` writes one for its single pass; each carries
``wall_seconds: <s>``. The grid's wall time is the time its passes covered:

    wall time = | union over passes of [end - wall_seconds, end] |

the sum of ``wall_seconds`` when no two passes ran at once (a queue pass's line gives its end;
a line without one counts whole). Passes run side by side (a ``SWEEP=`` queue beside the grid's,
``run_real.sh``) count once; the report then also names the sum. Each pass's command, end, runs
finished and hardware stay in the file, linked from the report.
A grid run in stages (``experiments/run_synthetic_v2.sh``: one results folder, so one file, per
stage and comparison) gets a table of its stages, the total their sum (``stages_rows``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

FILE = "wall_time.txt"
_SECONDS = re.compile(r"\bwall_seconds: (\d+)\b")
# a queue's pass (experiments/queue.sh writes it)
_PASS = re.compile(
    r"^pass: finished (?P<end>\S+), wall_seconds: (?P<seconds>\d+), "
    r"runs finished: (?P<finished>\d+) of (?P<jobs>\d+), .*?cpu: (?P<cpu>.*?), gpu: ",
    re.MULTILINE,
)


@dataclass(frozen=True)
class WallTime:
    path: Path
    seconds: int
    passes: int
    summed: int | None = None  # the passes' sum where some ran at once (> seconds)

    @property
    def span(self) -> str:
        """ "2 h 5 min", "7 min"."""
        return _span(self.seconds)

    def text(self, link: str) -> str:
        """One line for a report: the time covered, the passes, the file (at the relative
        ``link``)."""
        passes = f"{self.passes} passes" if self.passes != 1 else "one pass"
        side = f", some side by side (their sum: {_span(self.summed)})" if self.summed else ""
        return (
            f"{self.span} ({self.seconds:,} s) in {passes} of the grid's script{side} "
            f"([{FILE}]({link}): each pass's command, end, runs finished and hardware)"
        )


def _span(seconds: int) -> str:
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def find_wall_time(runs_root: Path) -> WallTime | None:
    """The wall time of the grid whose runs lie under ``runs_root`` (its scripts write the file
    beside the runs' directory, or in it); None when neither holds a pass."""
    for path in (runs_root.parent / FILE, runs_root / FILE):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            seconds = [int(s) for s in _SECONDS.findall(text)]
            if seconds:
                covered = _covered(text)
                summed = sum(seconds) if covered < sum(seconds) else None
                return WallTime(path, covered, len(seconds), summed)
    return None


def _covered(text: str) -> int:
    """Seconds covered by the file's passes: the union of the queue passes' intervals
    [end - wall_seconds, end], plus every other line's wall_seconds."""
    intervals = []
    for found in _PASS.finditer(text):
        end = datetime.fromisoformat(found["end"].replace("Z", "+00:00")).timestamp()
        intervals.append((end - int(found["seconds"]), end))
    others = sum(int(s) for s in _SECONDS.findall(text)) - sum(b - a for a, b in intervals)
    covered, reach = 0.0, -math.inf
    for start, end in sorted(intervals):
        covered += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return round(covered + others)


STAGES_HEADER = ("stage", "comparison", "passes", "wall time", "runs finished", "CPU")


def stages_rows(files: Sequence[Path], link: Callable[[Path], str]) -> list[list[object]]:
    """A staged grid's wall time: one row per queue file (a stage of one comparison) in the
    order its first pass ended, with its passes, sum, runs finished at its last pass and the
    CPUs its passes ran on, then the total (the sum of every pass of every stage). ``link``
    gives a file's relative link from where the table is written."""
    stages = []
    for path in files:
        passes = list(_PASS.finditer(path.read_text(encoding="utf-8")))
        if passes:
            stages.append((passes[0]["end"], path, passes))
    rows = []
    for _, path, passes in sorted(stages, key=lambda stage: stage[0]):
        wall = WallTime(path, sum(int(p["seconds"]) for p in passes), len(passes))
        cpus = ", ".join(dict.fromkeys(p["cpu"] for p in passes))
        last = passes[-1]
        rows.append(
            [
                f"[{path.parent.name}]({link(path)})",
                path.parent.parent.parent.name,  # experiments/<name>/results/<folder>/FILE
                wall.passes,
                f"{wall.span} ({wall.seconds:,} s)",
                f"{last['finished']} of {last['jobs']}",
                cpus,
            ]
        )
    total = sum(int(p["seconds"]) for _, _, passes in stages for p in passes)
    count = sum(len(passes) for _, _, passes in stages)
    span = WallTime(Path(), total, count).span
    rows.append(["**total**", "", count, f"**{span}** ({total:,} s)", "", ""])
    return rows
