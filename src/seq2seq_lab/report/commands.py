"""The exact command(s) that produced a set of runs, rebuilt from their Hydra overrides.

Every run records its task overrides (``hydra.overrides.task``: the command line plus, in a
sweep, the job's swept values). Runs of one sweep directory share the overrides that were not
swept; the swept keys take one value per job. So one sweep is rebuilt as

    python -m seq2seq_lab.train -m <common overrides> <key=v1,v2,...>

and a run outside any sweep as ``python -m seq2seq_lab.train <its overrides>``. The one key
that may differ between the passes of one resumable queue without being swept, ``reuse_from``
(the other grids' runs that existed at each pass), is written once as the union of its
values: run with it, the sweep finds every run the passes reused.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from seq2seq_lab.added_settings import partly_added, remake_note
from seq2seq_lab.record.run_reuse import POOLS_KEY
from seq2seq_lab.report.runs import Run

ENTRY_POINT = "python -m seq2seq_lab.train"


@dataclass(frozen=True)
class SweepCommand:
    directory: Path  # the sweep directory (or the run directory of a single run)
    command: str
    runs: int


def split_override(override: str) -> tuple[str, str | None]:
    """ "model.norm=post" -> ("model.norm", "post"); "~callbacks.x" -> ("~callbacks.x", None)."""
    key, sep, value = override.partition("=")
    return key, (value if sep else None)


def _natural(path: Path) -> list:
    """Sort key putting sweep job 2 before job 10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(path))]


def _quote(token: str) -> str:
    return shlex.quote(token)


def _union_of_pools(values: list[str | None]) -> str:
    """``reuse_from`` overrides of several passes -> one listing every directory, in order."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(
        [f"{POOLS_KEY}={v}" for v in values if v is not None]
    )
    pools = dict.fromkeys(str(p) for override in parsed for p in override.value())
    return "[" + ",".join(f"'{p}'" for p in pools) + "]"


def sweep_command(runs: Iterable[Run], multirun: bool = True) -> str:
    """The command line that runs ``runs`` (one sweep, or one run when ``multirun`` is
    False): keys with one value everywhere are written once, the others as a sweep."""
    runs = sorted(runs, key=lambda r: _natural(r.path))
    # options added since the runs were made, at the values they were made with
    every, some = partly_added([run.config for run in runs], [run.scale for run in runs])
    parsed = [dict(split_override(o) for o in run.overrides) for run in runs]
    for overrides in parsed:  # replaces a recorded value of the key (data=synthetic), or adds
        overrides.update(split_override(o) for o in every)
    keys: list[str] = []
    for overrides in parsed:
        keys.extend(k for k in overrides if k not in keys)
    parts = [ENTRY_POINT] + (["-m"] if multirun else [])
    swept = []
    for key in keys:
        values = list(dict.fromkeys(o.get(key) for o in parsed))
        if key == POOLS_KEY and len(values) > 1:
            values = [_union_of_pools(values)]
        if len(values) == 1:
            value = values[0]
            parts.append(_quote(key if value is None else f"{key}={value}"))
        else:
            # a key missing from some jobs cannot be written as a sweep; show every value
            swept.append(
                _quote(f"{key}=" + ",".join("<unset>" if v is None else v for v in values))
            )
    notes = [
        remake_note(override, [str(runs[i].variant) for i in which])
        for override, which in some.items()
    ]
    return "\n".join([" ".join(parts + swept), *notes])


def sweep_commands(runs: Iterable[Run]) -> list[SweepCommand]:
    """One command per sweep directory the runs come from (single runs: one each)."""
    groups: dict[Path, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.sweep_root, []).append(run)
    commands = []
    for directory in sorted(groups, key=_natural):
        members = groups[directory]
        multirun = directory != members[0].path
        commands.append(SweepCommand(directory, sweep_command(members, multirun), len(members)))
    return commands
