"""What the runs of one experiment show, computed without writing a file: the variants, the
verdict of the spec's rule, the sweep commands that made the runs and the across-seed tests of
the spec's contrasts. Rendering (markdown, plots, runs.csv) reads an :class:`Assessment` and
never computes a number itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from seq2seq_lab.report.commands import SweepCommand, sweep_commands
from seq2seq_lab.report.evidence import Difference, difference
from seq2seq_lab.report.grid import grid_settings
from seq2seq_lab.report.rule_versions import Declared
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison, ExperimentSpec, Verdict
from seq2seq_lab.report.specs import spec_for


@dataclass
class Assessment:
    name: str  # the experiment name the runs record
    spec: ExperimentSpec
    comparison: Comparison
    verdict: Verdict
    commands: list[SweepCommand]
    root: Path  # the PATH the runs were found under (run paths are shown relative to it)
    differences: list[Difference] = field(default_factory=list)  # the spec's contrasts
    # the rule its results folder was declared under (report/rule_versions.py; None: none
    # recorded, as for a report outside a results folder)
    declared: Declared | None = None


def assess(
    name: str, runs: list[Run], root: Path, spec: ExperimentSpec | None = None
) -> Assessment:
    """The assessment of the runs of experiment ``name`` by its own spec, or by ``spec`` (a
    comparison that reads them: ``specs.readers``)."""
    spec = spec or spec_for(name)
    scales = {run.scale for run in runs}
    made_with = [run.overrides for run in runs if run.finished]
    one_scale = len(scales) == 1 and spec.checks
    grid = grid_settings(name, scales.pop(), made_with) if one_scale else None
    comparison = Comparison(spec, runs, grid=grid)
    contrasts = {(id(a), id(b)): (a, b) for a, b in spec.contrasts(comparison)}.values()
    tests = [difference(a, b) for a, b in contrasts]
    return Assessment(
        name=name,
        spec=spec,
        comparison=comparison,
        verdict=spec.verdict(comparison),
        commands=sweep_commands(runs),
        root=root,
        differences=[t for t in tests if t is not None],
    )
