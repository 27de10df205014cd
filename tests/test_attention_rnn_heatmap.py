"""Alignment heatmaps are written as PNG files and check their inputs."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lab.analysis.heatmap import plot_alignment, plot_alignment_grid

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_plot_alignment_writes_a_png(tmp_path):
    torch.manual_seed(0)
    weights = torch.randn(4, 6).softmax(-1)  # [T, S], a tensor is accepted as is
    src = ["ein", "Mann", "liest", "ein", "Buch", "</s>"]
    tgt = ["a", "man", "reads", "</s>"]
    path = plot_alignment(weights, src, tgt, tmp_path / "sub" / "a.png", title="step 10")
    assert path == tmp_path / "sub" / "a.png"
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000


def test_longer_sentences_get_larger_figures(tmp_path):
    from PIL import Image

    short = plot_alignment([[1.0, 0.0], [0.0, 1.0]], ["a", "b"], ["x", "y"], tmp_path / "s.png")
    n = 30
    eye = torch.eye(n).tolist()
    long = plot_alignment(
        eye, [f"w{i}" for i in range(n)], [f"v{i}" for i in range(n)], tmp_path / "l.png"
    )
    assert Image.open(long).size[0] > Image.open(short).size[0]


def test_plot_alignment_grid_writes_one_png_for_several_maps(tmp_path):
    maps = [torch.rand(3, 5) for _ in range(6)]
    path = plot_alignment_grid(
        maps,
        list("abcde"),
        list("xyz"),
        tmp_path / "grid.png",
        titles=[f"layer {i // 2} head {i % 2}" for i in range(6)],
        ncols=4,
        title="cross-attention",
    )
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def test_shape_must_match_the_tokens(tmp_path):
    with pytest.raises(ValueError, match="do not match 2 target x 3 source tokens"):
        plot_alignment(torch.rand(3, 2), ["a", "b", "c"], ["x", "y"], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="2 titles for 1 matrices"):
        plot_alignment_grid([torch.rand(1, 1)], ["a"], ["x"], tmp_path / "g.png", titles=["1", "2"])
