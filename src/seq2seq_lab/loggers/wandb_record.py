"""What results.json records, in the W&B run: the figures a comparison reads in the run
summary, and the test hypotheses as a table.

The summary key of a figure is its path in results.json with ``/`` between the levels, and
its value is results.json's own number (not the value Lightning logged during the test, a
float32 copy), so a dashboard and a report read the same figures:

    status                                  results["status"]
    test/{bleu,chrf,ter}                    results["test"][...]
    test/bleu_by_length/<bucket>/{bleu,count}  results["test"]["bleu_by_length"][bucket][...]
    training/{steps,stopped_by,late_val_gain,best_val_bleu}  results["training"][...]
    training/best_val_step                  the step of the first validation in
                                            results["training"]["validations"] with the
                                            highest BLEU (the best checkpoint's)

A figure the run did not reach (a failed run has no test) is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

HYPOTHESES_KEY = "test/hypotheses"
HYPOTHESES_COLUMNS = ("source", "hypothesis", "reference")
TEST_FIGURES = ("bleu", "chrf", "ter")
TRAINING_FIGURES = ("steps", "stopped_by", "late_val_gain", "best_val_bleu")
BEST_STEP_KEY = "training/best_val_step"
# every figure of a run that is not per length bucket, in the order a runs table shows them
FIGURE_KEYS = (
    "status",
    *(f"test/{k}" for k in TEST_FIGURES),
    *(f"training/{k}" for k in TRAINING_FIGURES),
    BEST_STEP_KEY,
)


def bucket_key(bucket: str, figure: str) -> str:
    """The summary key of ``figure`` (bleu, count) of one length bucket of the test split."""
    return f"test/bleu_by_length/{bucket}/{figure}"


def summary_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """The run-summary entries of ``results`` (module docstring)."""
    summary: dict[str, Any] = {"status": results["status"]}
    test = results.get("test") or {}
    summary.update({f"test/{k}": test[k] for k in TEST_FIGURES if k in test})
    for bucket, figures in (test.get("bleu_by_length") or {}).items():
        summary.update({bucket_key(bucket, k): v for k, v in figures.items()})
    training = results.get("training") or {}
    summary.update({f"training/{k}": training[k] for k in TRAINING_FIGURES if k in training})
    if training.get("validations"):
        summary[BEST_STEP_KEY] = best_step(training["validations"])
    return summary


def best_step(validations: Sequence[Sequence[float]]) -> int:
    """The step of the first of ``[(step, bleu), ...]`` with the highest BLEU: the one the
    best checkpoint kept (it is replaced only by a strictly higher score)."""
    step, _ = max(validations, key=lambda v: v[1])  # max keeps the first of equal scores
    return int(step)


def log_hypotheses(loggers: Sequence[Any], test_results: Mapping[str, Any]) -> None:
    """The tested split's (source, hypothesis, reference) rows, in corpus order, as the W&B
    table ``test/hypotheses`` of every W&B logger in ``loggers``."""
    from lightning.pytorch.loggers import WandbLogger

    rows = [
        list(row)
        for row in zip(
            test_results["sources"], test_results["hypotheses"], test_results["references"]
        )
    ]
    for logger in loggers:
        if isinstance(logger, WandbLogger):
            logger.log_table(key=HYPOTHESES_KEY, columns=list(HYPOTHESES_COLUMNS), data=rows)
