"""The figures of one report, written beside its report.md: the spec's plots (a plot that
raises becomes a note, never a lost report) and one attention heatmap per variant, from the
first finished run that has one."""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from seq2seq_lab.record.portable_paths import relative
from seq2seq_lab.report.plots import slug
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison, ExperimentSpec

log = logging.getLogger(__name__)


# heatmaps/sources.json: image name -> the run it was copied from (path relative to the report),
# its variant, seed and the image's path inside the run
SOURCES = "sources.json"


@dataclass(frozen=True)
class Heatmap:
    variant: str
    seed: int | None
    source: str  # the image's path inside its run directory
    path: Path  # the copy beside report.md
    run: str  # the run directory, relative to the report's directory
    kept: bool = False  # kept from an earlier report: the run's own images are not here


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
    """One attention heatmap per variant, from its first run (finished ones first) that has
    one: the run's own image, or the copy an earlier report kept of it while that run is
    still one of the variant's runs. Run images are not committed (.gitignore), so in a clone
    that did not make a run the kept copy is its only picture; ``heatmaps/sources.json``
    records which run each copy came from. Every other image in ``heatmaps/`` is removed."""
    directory = out_dir / "heatmaps"
    earlier = read_sources(directory)
    heatmaps = []
    for variant in comparison.variants:
        name = f"{slug(variant.label)}.png"
        for run in sorted(variant.runs, key=lambda r: not r.finished):
            heatmap = own_heatmap(variant.label, run, directory / name, out_dir) or kept_heatmap(
                variant.label, run, directory / name, earlier.get(name), out_dir
            )
            if heatmap is not None:
                heatmaps.append(heatmap)
                break
    write_sources(directory, heatmaps)
    return heatmaps


def own_heatmap(variant: str, run: Run, target: Path, out_dir: Path) -> Heatmap | None:
    image = run.attention_heatmap()
    if image is None:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(image, target)
    source = image.relative_to(run.path).as_posix()
    return Heatmap(variant, run.seed, source, target, relative(run.path, out_dir))


def kept_heatmap(
    variant: str, run: Run, target: Path, entry: dict | None, out_dir: Path
) -> Heatmap | None:
    """The earlier report's copy, when it came from this very run of this variant."""
    if not entry or entry.get("variant") != variant or not target.is_file():
        return None
    if (out_dir / str(entry.get("run", ""))).resolve() != run.path.resolve():
        return None
    return Heatmap(variant, run.seed, str(entry.get("source")), target, entry["run"], kept=True)


def read_sources(directory: Path) -> dict[str, dict]:
    try:
        sources = json.loads((directory / SOURCES).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: no earlier copy can be kept
        return {}
    return sources if isinstance(sources, dict) else {}


def write_sources(directory: Path, heatmaps: list[Heatmap]) -> None:
    """Record the chosen images and remove every other one (a model no longer compared, or a
    copy whose run is gone)."""
    chosen = {heatmap.path.name: heatmap for heatmap in heatmaps}
    for image in directory.glob("*.png"):
        if image.name not in chosen:
            image.unlink()
    if not chosen:
        (directory / SOURCES).unlink(missing_ok=True)
        return
    sources = {
        name: {"variant": h.variant, "run": h.run, "seed": h.seed, "source": h.source}
        for name, h in sorted(chosen.items())
    }
    text = json.dumps(sources, indent=2, sort_keys=True) + "\n"
    (directory / SOURCES).write_text(text, encoding="utf-8")
