"""Replay stopping at convergence on committed runs: where ``stopping=convergence`` would have
stopped each run, and how much its training loss still fell over its last quarter.

    python experiments/e1_attention/replay_stopping.py experiments/e1_attention/results/synthetic_v2-8k/runs

Reads each run's ``results.json`` (``training.validations``) and ``csv/metrics.csv.bz2``
(``train/loss``); prints one markdown row a run (NOTES.md, "Stopping at convergence, replayed").
The loss fall compares the mean training loss over the eighth of the updates ending at 0.75 S
with the eighth ending at S, S the run's last update.
"""

from __future__ import annotations

import argparse
import bz2
import csv
import json
from pathlib import Path

from seq2seq_lab.callbacks.convergence_stopping import ConvergenceStopping
from seq2seq_lab.training.convergence import late_gain


def loss_fall(losses: list[tuple[int, float]], last: int) -> float | None:
    width = last / 8

    def mean(end: float) -> float | None:
        window = [loss for step, loss in losses if end - width < step <= end]
        return sum(window) / len(window) if window else None

    then, now = mean(0.75 * last), mean(last)
    return None if then is None or now is None else (then - now) / then


def first_stop(validations: list[list[float]], patience: int, min_updates: int) -> int | None:
    rule = ConvergenceStopping(min_updates=min_updates, patience=patience, stalled_bleu=1.0)
    for i in range(1, len(validations) + 1):
        rule.observe(int(validations[i - 1][0]), validations[:i])
        if rule.stop_reason is not None:
            return int(validations[i - 1][0])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="a folder of run directories")
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--min-updates", type=int, default=0)
    args = parser.parse_args()
    print("| variant | seed | late gain | loss fall | test BLEU | stopped at (rule alone) |")
    print("|---|---:|---:|---:|---:|---:|")
    runs = [d for d in args.runs.iterdir() if (d / "results.json").is_file()]
    for run in sorted(runs, key=lambda d: int(d.name) if d.name.isdigit() else 0):
        record = json.loads((run / "results.json").read_text())
        validations = record["training"]["validations"]
        with bz2.open(run / "csv" / "metrics.csv.bz2", "rt") as f:
            losses = [(int(r["step"]), float(r["train/loss"])) for r in csv.DictReader(f) if r.get("train/loss")]  # fmt: skip
        last = max(step for step, _ in validations)
        fall = loss_fall(losses, last)
        stop = first_stop(validations, args.patience, args.min_updates)
        print(
            f"| {record['variant']} | {record['config']['seed']} | {late_gain(validations):.2f} "
            f"| {'-' if fall is None else f'{fall:.1%}'} | {record['test']['bleu']:.2f} "
            f"| {'-' if stop is None else f'{stop:,}'} |"
        )


if __name__ == "__main__":
    main()
