"""Checkpoint averaging (Vaswani et al. 2017, sec. 6.1; fairseq's ``average_checkpoints.py``).

    theta_avg = (1 / N) * sum_{i=1..N} theta_i

over the parameters and floating-point buffers of N checkpoints of one training run (the last
few epoch or wall-clock snapshots). The average sits nearer the centre of the region the
optimiser wanders in at the end of training, which usually scores a little higher than any
single point. Integer buffers (counters) are taken from the last checkpoint.

    python -m seq2seq_lab.average_checkpoints RUN/snapshots/minute-03*.ckpt \\
        RUN/snapshots/minute-040.ckpt --out RUN/averaged.ckpt
    python -m seq2seq_lab.eval ckpt_path=RUN/averaged.ckpt

or, as fairseq's ``--num-update-checkpoints N``, the N latest updates a run kept
(``callbacks.last_checkpoint.keep_last``: ``RUN/checkpoints/step-<update>.ckpt``)::

    python -m seq2seq_lab.average_checkpoints RUN --last 5 --out RUN/averaged.ckpt

The output holds the model, its hyper-parameters and the tokenizers, not the optimiser: it is
for evaluation and translation, not for resuming.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from seq2seq_lab.checkpoint import DATAMODULE_KEY, load_checkpoint
from seq2seq_lab.errors import CheckpointError


def _read(path: Path) -> dict[str, Any]:
    load_checkpoint(path)  # the same checks (and messages) as eval: readable, ours, loadable
    return torch.load(path, map_location="cpu", weights_only=True)


def average_checkpoints(paths: Sequence[str | Path]) -> dict[str, Any]:
    """A checkpoint whose weights are the mean of ``paths``' (same network and tokenizers)."""
    if not paths:
        raise CheckpointError("average_checkpoints: no checkpoint given")
    paths = [Path(p) for p in paths]
    first = _read(paths[0])
    network = first["hyper_parameters"]["network"]
    tokenizers = first.get(DATAMODULE_KEY, {})
    total = {k: v.double() for k, v in first["state_dict"].items() if v.is_floating_point()}
    last = first
    for path in paths[1:]:
        raw = _read(path)
        if raw["hyper_parameters"]["network"] != network:
            raise CheckpointError(
                f"{path}: its model config differs from {paths[0]}'s; only checkpoints of one "
                "run (same network) can be averaged"
            )
        if raw.get(DATAMODULE_KEY, {}) != tokenizers:
            raise CheckpointError(
                f"{path}: its tokenizers differ from {paths[0]}'s; the average would mix "
                "vocabularies"
            )
        if raw["state_dict"].keys() != first["state_dict"].keys():
            raise CheckpointError(f"{path}: its parameter names differ from {paths[0]}'s")
        for key in total:
            total[key] += raw["state_dict"][key].double()
        last = raw
    state = dict(last["state_dict"])
    for key, summed in total.items():
        state[key] = (summed / len(paths)).to(first["state_dict"][key].dtype)
    return {
        "hyper_parameters": last["hyper_parameters"],
        "state_dict": state,
        DATAMODULE_KEY: tokenizers,
        "averaged_from": [str(p) for p in paths],
        "global_step": last.get("global_step"),
        "epoch": last.get("epoch"),
    }


KEPT = "step-*.ckpt"  # the updates a run keeps (seq2seq_lab/callbacks/last_checkpoint.py)


def last_checkpoints(run_dir: str | Path, n: int) -> list[Path]:
    """The ``n`` latest ``step-<update>.ckpt`` of ``run_dir`` (a run directory or its
    ``checkpoints/``), oldest first; a one-line CheckpointError where it keeps fewer."""
    folder = Path(run_dir)
    if (folder / "checkpoints").is_dir():
        folder = folder / "checkpoints"
    if not folder.is_dir():
        raise CheckpointError(f"{run_dir}: no such run directory")
    if n < 1:
        raise CheckpointError(f"--last {n}: expected a number of checkpoints >= 1")
    kept = sorted(folder.glob(KEPT))  # step-<update> is zero-padded: sorted by update
    if len(kept) < n:
        raise CheckpointError(
            f"--last {n}: {folder} keeps {len(kept)} checkpoints ({KEPT}); train with "
            f"callbacks.last_checkpoint.keep_last={n} to keep {n}"
        )
    return kept[-n:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.average_checkpoints",
        description="Average the weights of checkpoints of one run into a new checkpoint.",
    )
    parser.add_argument(
        "checkpoints", nargs="+", help="checkpoints of one run; with --last, its directory"
    )
    parser.add_argument(
        "--last",
        type=int,
        metavar="N",
        help=f"average the N latest checkpoints the run directory keeps ({KEPT}, "
        "callbacks.last_checkpoint.keep_last), as fairseq's --num-update-checkpoints",
    )
    parser.add_argument("--out", required=True, help="where to write the averaged checkpoint")
    args = parser.parse_args(argv)
    if args.last is not None and len(args.checkpoints) != 1:
        parser.error("--last N takes one run directory, e.g. RUN --last 5")
    try:
        paths = None if args.last is None else last_checkpoints(args.checkpoints[0], args.last)
        averaged = average_checkpoints(paths or args.checkpoints)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(averaged, out)
    names = ", ".join(Path(p).name for p in paths) if paths else ""
    print(f"averaged {len(averaged['averaged_from'])} checkpoints{f' ({names})' if names else ''}"
          f" -> {out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
