"""The figures of one report: the spec's plots, written beside its report.md (a plot that
raises becomes a note, never a lost report), and one attention heatmap per variant, from the
first finished run that has one, in the output folder's store (:mod:`.heatmaps`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from seq2seq_lab.report.heatmaps import Heatmap, copy_heatmaps
from seq2seq_lab.report.spec import Comparison, ExperimentSpec

log = logging.getLogger(__name__)


@dataclass
class Figures:
    plots: list[tuple[str, str, list[Path]]] = field(default_factory=list)  # name, caption, PNGs
    notes: list[str] = field(default_factory=list)  # plots that could not be drawn
    heatmaps: list[Heatmap] = field(default_factory=list)
    without_heatmap: list[str] = field(default_factory=list)  # variants none of whose runs has one


def draw_figures(spec: ExperimentSpec, comparison: Comparison, out_dir: Path) -> Figures:
    figures = Figures()
    for plot in spec.plots:
        try:
            paths = plot.draw(comparison, out_dir)
        except Exception as error:  # a figure must never cost the rest of the report
            log.exception("plot %s of %s failed", plot.name, spec.name)
            figures.notes.append(f"{plot.caption}: not drawn ({type(error).__name__}: {error})")
            continue
        figures.plots.append((plot.name, plot.caption, paths))
    show_heatmaps(figures, copy_heatmaps(comparison, out_dir), comparison)
    return figures


def show_heatmaps(figures: Figures, heatmaps: list[Heatmap], comparison: Comparison) -> None:
    figures.heatmaps = heatmaps
    drawn = {heatmap.variant for heatmap in heatmaps}
    if drawn:  # a comparison with no image at all says so in one line (markdown)
        figures.without_heatmap = [v.label for v in comparison.variants if v.label not in drawn]
