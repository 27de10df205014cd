"""Alignment heatmaps: attention weights (target x source) drawn to PNG.

Shapes: T target tokens (rows), S source tokens (columns).

Figures are drawn on matplotlib's Agg canvas directly (``Figure`` + ``FigureCanvasAgg``), so
nothing here touches the global pyplot state or needs a display. Attention weights show which
source positions a query mixed, not why the model decided (architectures.md section 7).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

CELL_INCHES = 0.32  # figure size grows with the sentence so labels stay readable
MIN_PANEL_INCHES = 3.0


def _as_matrix(weights: Any, src_tokens: Sequence[str], tgt_tokens: Sequence[str]) -> np.ndarray:
    """Any [T, S] array-like (tensor included) -> float array, checked against the tokens."""
    if hasattr(weights, "detach"):  # a torch tensor, possibly on a GPU
        weights = weights.detach().float().cpu().numpy()
    matrix = np.asarray(weights, dtype=float)
    expected = (len(tgt_tokens), len(src_tokens))
    if matrix.shape != expected:
        raise ValueError(
            f"attention weights of shape {matrix.shape} do not match {expected[0]} target x "
            f"{expected[1]} source tokens"
        )
    return matrix


def _draw(ax: Any, matrix: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str]):
    image = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(src_tokens)), labels=list(src_tokens), rotation=60, ha="right")
    ax.set_yticks(range(len(tgt_tokens)), labels=list(tgt_tokens))
    ax.tick_params(labelsize=8)
    ax.set_xlabel("source")
    ax.set_ylabel("target")
    return image


def _panel_size(n_src: int, n_tgt: int) -> tuple[float, float]:
    return (
        max(MIN_PANEL_INCHES, CELL_INCHES * n_src + 1.5),  # + room for labels and colorbar
        max(MIN_PANEL_INCHES, CELL_INCHES * n_tgt + 1.2),
    )


def _save(figure: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)  # attaches the Agg canvas used by savefig
    figure.savefig(path, format="png", dpi=120, bbox_inches="tight")
    return path


def plot_alignment(
    weights: Any,
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    path: str | Path,
    title: str | None = None,
) -> Path:
    """Draw one alignment matrix ``weights`` [T, S] (rows = target tokens) to the PNG ``path``.

    Colours span [0, 1] so figures of different sentences compare; source labels are rotated.
    Returns the written path.
    """
    matrix = _as_matrix(weights, src_tokens, tgt_tokens)
    figure = Figure(figsize=_panel_size(len(src_tokens), len(tgt_tokens)), layout="constrained")
    ax = figure.add_subplot()
    image = _draw(ax, matrix, src_tokens, tgt_tokens)
    figure.colorbar(image, ax=ax, fraction=0.05, label="attention weight")
    if title:
        ax.set_title(title, fontsize=10)
    return _save(figure, path)


def plot_alignment_grid(
    matrices: Sequence[Any],
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    path: str | Path,
    titles: Sequence[str] | None = None,
    ncols: int | None = None,
    title: str | None = None,
) -> Path:
    """Several [T, S] matrices of one sentence pair (e.g. per layer/head cross-attention) in a
    grid of panels sharing one colour scale; ``titles`` labels the panels. Returns the path."""
    if not matrices:
        raise ValueError("plot_alignment_grid needs at least one matrix")
    if titles is not None and len(titles) != len(matrices):
        raise ValueError(f"{len(titles)} titles for {len(matrices)} matrices")
    mats = [_as_matrix(m, src_tokens, tgt_tokens) for m in matrices]
    ncols = ncols or min(len(mats), 4)
    nrows = math.ceil(len(mats) / ncols)
    width, height = _panel_size(len(src_tokens), len(tgt_tokens))
    figure = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = figure.subplots(nrows, ncols, squeeze=False).ravel()
    image = None
    for i, ax in enumerate(axes):
        if i >= len(mats):
            ax.set_axis_off()  # unused panel of the last row
            continue
        image = _draw(ax, mats[i], src_tokens, tgt_tokens)
        if titles is not None:
            ax.set_title(titles[i], fontsize=10)
    figure.colorbar(image, ax=list(axes), fraction=0.02, label="attention weight")
    if title:
        figure.suptitle(title)
    return _save(figure, path)
