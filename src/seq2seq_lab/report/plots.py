"""The figures that carry each finding, drawn from the runs' files to PNG.

Each plot is a small frozen dataclass a spec lists (``BleuByLength()``,
``LossCurves(facet=...)``...) with ``draw(comparison, out_dir) -> [paths]``; it returns [] when
the runs lack the data, and the report says so. Lines are keyed by a function of the variant's
role (default: the variant label), so a spec chooses what a line or a panel means.

Figures are drawn on matplotlib's Agg canvas directly (``Figure`` + ``FigureCanvasAgg``): no
pyplot state, no display needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from seq2seq_lab.report.aggregate import Role, Variant, bucket_key
from seq2seq_lab.report.runs import Run

if TYPE_CHECKING:
    from seq2seq_lab.report.spec import Comparison

KeyFn = Callable[[Role], Any]
COLORS = [f"C{i}" for i in range(10)] + ["#7f3b08", "#2d004b", "#00441b", "#67001f"]


def slug(text: str) -> str:
    """A file-name-safe form of a label: "post-LN, 6 layers" -> "post-ln-6-layers"."""
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-") or "x"


def save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)  # attaches the Agg canvas savefig draws on
    figure.savefig(path, format="png", dpi=110)
    return path


def line_label(variant: Variant, line: KeyFn | None) -> str:
    return str(line(variant.role)) if line is not None else variant.label


def line_colors(keys: list[str]) -> dict[str, str]:
    unique = list(dict.fromkeys(keys))
    return {k: COLORS[i % len(COLORS)] for i, k in enumerate(unique)}


# ---------------------------------------------------------------------------- BLEU by length
@dataclass(frozen=True)
class BleuByLength:
    """Test BLEU per source-length bucket (whitespace words), one line per variant, mean over
    seeds with the std as error bars; the longest training source is marked."""

    line: KeyFn | None = None
    name: str = "bleu_by_length"
    caption: str = "Test BLEU by source-length bucket (mean over seeds, bars: std)"
    record: str = "test"  # or "length_probe": the test inputs joined k at a time

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        curves = [(v, v.bleu_by_length(self.record)) for v in comparison.variants]
        curves = [(v, c) for v, c in curves if c]
        if not curves:
            return []
        buckets = sorted({b for _, c in curves for b in c}, key=bucket_key)
        counts: dict[str, int] = {}
        for variant, _ in curves:
            for bucket, n in variant.bucket_counts(self.record).items():
                counts.setdefault(bucket, n)
        figure = Figure(figsize=(7.5, 4.5), layout="constrained")
        ax = figure.add_subplot()
        for variant, curve in curves:
            xs = [buckets.index(b) for b in curve]
            ax.errorbar(
                xs,
                [m.mean for m in curve.values()],
                yerr=[m.std or 0.0 for m in curve.values()],
                marker="o",
                capsize=3,
                label=line_label(variant, self.line),
            )
        train_max = _train_max_source_length(comparison.runs)
        if train_max is not None:
            inside = [i for i, b in enumerate(buckets) if bucket_key(b) <= train_max]
            if inside and inside[-1] < len(buckets) - 1:
                ax.axvline(inside[-1] + 0.5, color="grey", linestyle=":", linewidth=1)
                ax.annotate(
                    f"right: longer than any training source ({train_max} tokens)",
                    xy=(inside[-1] + 0.55, 0.98),
                    xycoords=("data", "axes fraction"),
                    va="top",
                    fontsize=8,
                    color="grey",
                )
        ax.set_xticks(
            range(len(buckets)),
            [f"{b}\n(n={counts[b]})" if b in counts else b for b in buckets],
            fontsize=8,
        )
        ax.set_xlabel("source length (words)")
        ax.set_ylabel("BLEU")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(
            "BLEU by source length" + (" (joined test inputs)" if self.record != "test" else "")
        )
        return [save(figure, out_dir / f"{self.name}.png")]


def _train_max_source_length(runs: list[Run]) -> int | None:
    for run in runs:
        train = ((run.results.get("data") or {}).get("splits") or {}).get("train") or {}
        longest = (train.get("src_len") or {}).get("max")
        if isinstance(longest, int | float):
            return int(longest)
    return None


# ---------------------------------------------------------------------------- loss curves
@dataclass(frozen=True)
class LossCurves:
    """Train (top) and validation (bottom) loss against the step, one colour per line key,
    one thin line per seed; a diverged run is dashed and ends in a cross. ``facet`` splits
    the variants into columns (e.g. one per learning rate and depth)."""

    line: KeyFn | None = None
    facet: KeyFn | None = None
    name: str = "loss_curves"
    caption: str = "Train and validation loss (one line per run; dashed + x: diverged)"

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        variants = [v for v in comparison.variants if any(r.metrics for r in v.runs)]
        if not variants:
            return []
        facets = list(
            dict.fromkeys(str(self.facet(v.role)) if self.facet else "" for v in variants)
        )
        colors = line_colors([line_label(v, self.line) for v in variants])
        figure = Figure(figsize=(4.2 * len(facets) + 2.5, 6.5), layout="constrained")
        axes = figure.subplots(2, len(facets), squeeze=False, sharex="col")
        labelled: set[tuple[int, str]] = set()
        ranges: dict[tuple[int, int], tuple[float, float]] = {}  # (row, col) -> value range
        for variant in variants:
            col = facets.index(str(self.facet(variant.role)) if self.facet else "")
            label = line_label(variant, self.line)
            for run in variant.runs:
                for row, column in enumerate(("train/loss", "val/loss")):
                    steps, values = run.series(column)
                    if not steps:
                        continue
                    ax = axes[row][col]
                    low, high = ranges.get((row, col), (min(values), max(values)))
                    ranges[row, col] = (min(low, *values), max(high, *values))
                    diverged = run.status == "diverged"
                    first = (col, label) not in labelled and row == 0
                    ax.plot(
                        steps,
                        values,
                        color=colors[label],
                        linewidth=1.0,
                        alpha=0.85,
                        linestyle="--" if diverged else "-",
                        marker="o" if row == 1 and len(steps) < 30 else None,
                        markersize=3,
                        label=label if first else None,
                    )
                    if first:
                        labelled.add((col, label))
                    if diverged:
                        ax.plot(steps[-1], values[-1], "x", color="red", markersize=9, mew=2)
        for col, facet in enumerate(facets):
            for row, what in enumerate(("train loss", "validation loss")):
                ax = axes[row][col]
                low, high = ranges.get((row, col), (1.0, 1.0))
                if low > 0 and high / low > 20:  # a blow-up: keep the normal runs readable
                    ax.set_yscale("log")
                ax.grid(alpha=0.3, which="both")
                ax.set_ylabel(what)
                if row == 0:
                    ax.set_title(facet or "loss", fontsize=10)
                    ax.legend(fontsize=7)
                else:
                    ax.set_xlabel("step")
        return [save(figure, out_dir / f"{self.name}.png")]
