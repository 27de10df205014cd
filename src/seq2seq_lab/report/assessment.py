"""What the runs of one experiment show, computed without writing a file: the variants, the
verdict of the spec's rule, the sweep commands that made the runs and the paired significance
tests of the spec's contrasts. Rendering (markdown, plots, runs.csv) reads an
:class:`Assessment` and never computes a number itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seq2seq_lab.report.commands import SweepCommand, sweep_commands
from seq2seq_lab.report.experiments import spec_for
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.significance import DEFAULT_SAMPLES, PairTest, significance_tests
from seq2seq_lab.report.spec import Comparison, ExperimentSpec, Verdict


@dataclass
class Assessment:
    name: str  # the experiment name the runs record
    spec: ExperimentSpec
    comparison: Comparison
    verdict: Verdict
    commands: list[SweepCommand]
    root: Path  # the PATH the runs were found under (run paths are shown relative to it)
    significance: list[PairTest] = field(default_factory=list)
    significance_notes: list[str] = field(default_factory=list)


def assess(
    name: str,
    runs: list[Run],
    root: Path,
    *,
    bootstrap_samples: int = DEFAULT_SAMPLES,
    metrics: Sequence[str] = ("bleu",),
) -> Assessment:
    """The assessment of the runs of experiment ``name`` (no bootstrap when 0 samples)."""
    spec = spec_for(name)
    comparison = Comparison(spec, runs)
    assessment = Assessment(
        name=name,
        spec=spec,
        comparison=comparison,
        verdict=spec.verdict(comparison),
        commands=sweep_commands(runs),
        root=root,
    )
    if bootstrap_samples > 0:
        assessment.significance, assessment.significance_notes = significance_tests(
            comparison, bootstrap_samples, metrics
        )
    return assessment
