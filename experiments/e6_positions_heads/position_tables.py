"""How strong and how smooth an absolute position table is beside the token embeddings it is
added to: x_0 = Embed(tokens) * sqrt(D) + PE(positions) (``models/transformer/network.py``).

Over the first n rows of a [max_positions, D] table PE and the embedding matrix E of the same
side (source or target):

    position rms   = sqrt(mean_{p < n, d} PE[p, d]^2)
    token rms      = sqrt(mean_{v, d} E[v, d]^2) * sqrt(D)
    cos(distance k) = mean_{p < n - k} cos(PE[p], PE[p + k])

A sinusoidal table has position rms sqrt(1/2) (each sin/cos pair has squared norm 1) and
cos(distance k) = (2 / D) sum_i cos(k w_i) with w_i = 10000^(-2i/D), whatever the position. A
learned table starts at its initialisation (Xavier uniform: rms sqrt(2 / (max_positions + D)))
and grows only on the rows that training lengths reach; a small position rms beside the token
rms means the stack above sees little of where a token is.

    python experiments/e6_positions_heads/position_tables.py RUN/checkpoints/best.ckpt ... [--rows 40]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.errors import CheckpointError

FAR = 10  # the second distance reported: about a third of a Multi30k sentence


@dataclass(frozen=True)
class TableStatistics:
    """One side's table over its first ``rows`` positions (formulas in the module docstring)."""

    side: str  # "source" | "target"
    rows: int
    position_rms: float
    token_rms: float
    cos_next: float  # cos(distance 1)
    cos_far: float  # cos(distance FAR)

    @property
    def ratio(self) -> float:
        """position rms / token rms: the share of x_0 that says where, against what."""
        return self.position_rms / self.token_rms


def _rms(values: Tensor) -> float:
    return float(values.float().pow(2).mean().sqrt())


def _mean_cosine(table: Tensor, distance: int) -> float:
    return float(F.cosine_similarity(table[:-distance], table[distance:], dim=-1).mean())


def table_statistics(network: nn.Module, rows: int) -> list[TableStatistics]:
    """The statistics of the source and target tables of a Transformer with absolute positions
    (``src_positions``/``tgt_positions``); none for relative or no positions."""
    if rows <= FAR:
        raise ValueError(f"rows={rows}: need more than {FAR} rows for the distance-{FAR} cosine")
    statistics = []
    sides = (("source", "src_positions", "src_embed"), ("target", "tgt_positions", "tgt_embed"))
    for side, positions_name, embed_name in sides:
        positions = getattr(network, positions_name, None)
        if positions is None:
            continue
        table = positions.table().detach()[:rows]
        embed = getattr(network, embed_name).weight.detach()
        statistics.append(
            TableStatistics(
                side=side,
                rows=len(table),
                position_rms=_rms(table),
                token_rms=_rms(embed) * math.sqrt(embed.shape[1]),
                cos_next=_mean_cosine(table, 1),
                cos_far=_mean_cosine(table, FAR),
            )
        )
    return statistics


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python experiments/e6_positions_heads/position_tables.py",
        description="Scale and smoothness of the absolute position tables of checkpoints.",
    )
    parser.add_argument("checkpoints", nargs="+", help="Transformer training checkpoints")
    parser.add_argument(
        "--rows", type=int, default=40, help="first positions to measure (default 40: no "
        "Multi30k training sentence is longer than 40 words)"
    )  # fmt: skip
    args = parser.parse_args(argv)
    print(f"checkpoint | side | position rms | token rms | ratio | cos(next) | cos({FAR} apart)")
    for path in args.checkpoints:
        try:
            network = load_checkpoint(path).module.network
            statistics = table_statistics(network, args.rows)
        except (CheckpointError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        if not statistics:
            print(f"{path} | - | no absolute position table (relative or no positions)")
        for s in statistics:
            print(
                f"{path} | {s.side} | {s.position_rms:.3f} | {s.token_rms:.3f} | "
                f"{s.ratio:.3f} | {s.cos_next:.3f} | {s.cos_far:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
