"""The seven comparisons of comparisons.md as report specs, one module each: a comparison's
roles (read from each run's resolved config, never from the variant string), its verdict
quality floor, checks and thresholds, the contrasts tested across seeds and its plots.

Adding an experiment is one more module with an ``ExperimentSpec`` and one entry in ``SPECS``.
A comparison made from another experiment's runs (the length probe on E1's) goes in
``READERS`` under that experiment: its report is written beside the experiment's own.
"""

from __future__ import annotations

from seq2seq_lab.report.experiments.e1_attention import E1
from seq2seq_lab.report.experiments.e1_length_probe import LENGTH_PROBE
from seq2seq_lab.report.experiments.e2_reversal import E2
from seq2seq_lab.report.experiments.e3_scores import E3
from seq2seq_lab.report.experiments.e4_norm_warmup import E4
from seq2seq_lab.report.experiments.e5_scaling import E5
from seq2seq_lab.report.experiments.e6_positions_heads import E6
from seq2seq_lab.report.experiments.e7_cells import E7
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.spec import ExperimentSpec

SPECS: dict[str, ExperimentSpec] = {spec.name: spec for spec in (E1, E2, E3, E4, E5, E6, E7)}
# experiment name -> the further comparisons its runs make (spec.reads names the experiment)
READERS: dict[str, tuple[ExperimentSpec, ...]] = {}
for _reader in (LENGTH_PROBE,):
    assert _reader.reads in SPECS, _reader.name
    READERS[_reader.reads] = (*READERS.get(_reader.reads, ()), _reader)


def spec_for(name: str) -> ExperimentSpec:
    """The spec of a documented comparison; for any other experiment name (or runs with
    none) a plain one: results table, BLEU by length and loss curves, no contrasts, no rule."""
    if name in SPECS:
        return SPECS[name]
    return ExperimentSpec(
        name=name,
        title=name,
        published="(not one of the documented comparisons)",
        expected="",
        role=lambda run: {},
        plots=(BleuByLength(), LossCurves()),
    )
