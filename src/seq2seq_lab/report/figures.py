"""The figures of one report, written beside its report.md: the spec's plots (a plot that
raises becomes a note, never a lost report) and one attention heatmap per variant, copied from
the first finished run that has one."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from seq2seq_lab.report.plots import slug
from seq2seq_lab.report.spec import Comparison, ExperimentSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Heatmap:
    variant: str
    seed: int | None
    source: str  # the image's path inside its run directory
    path: Path  # the copy beside report.md


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
    figures.heatmaps = copy_heatmaps(comparison, out_dir)
    drawn = {heatmap.variant for heatmap in figures.heatmaps}
    if drawn:  # a comparison with no image at all says so in one line (markdown)
        figures.without_heatmap = [v.label for v in comparison.variants if v.label not in drawn]
    return figures


def copy_heatmaps(comparison: Comparison, out_dir: Path) -> list[Heatmap]:
    """One attention heatmap per variant (its first finished run that has one, else any)."""
    heatmaps = []
    for variant in comparison.variants:
        for run in sorted(variant.runs, key=lambda r: not r.finished):
            image = run.attention_heatmap()
            if image is None:
                continue
            target = out_dir / "heatmaps" / f"{slug(variant.label)}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image, target)
            source = image.relative_to(run.path).as_posix()
            heatmaps.append(Heatmap(variant.label, run.seed, source, target))
            break
    return heatmaps
