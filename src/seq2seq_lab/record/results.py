"""results.json: the record of one run that the report generator reads.

Written at the end of every run, whatever happened, with at least ``status``, the test scores
and their sacrebleu signature, the seed, timings, versions and hardware. Statuses:
"completed" and "diverged" (:data:`FINISHED`: the run ended by itself, with a result), "failed"
(an error: ``error`` holds it) and "interrupted" (stopped from outside by a signal, named in
``status_reason``; resume it or run it again). Writing is atomic (:func:`seq2seq_lab.record.atomic.write_text`)
so a sweep's report never reads half a file. Paths are written portably, free of the machine's
directories (:mod:`seq2seq_lab.record.portable_paths`: ``${paths.output_dir}/checkpoints``,
``../shared/data/multi30k``...), so the record can be committed as it is.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from seq2seq_lab.record.atomic import write_text
from seq2seq_lab.record.portable_paths import portable_record

STATUSES = ("completed", "diverged", "failed", "interrupted")
FINISHED = ("completed", "diverged")
# A run that can neither be continued nor counted (killed, failed or interrupted before its
# first checkpoint) is moved to ABANDONED/<time>/ inside its directory when a resumable queue
# (``train resume=true``) or the same command comes back to it (record/run_dir.py): kept, but
# not a run (the report leaves it out).
ABANDONED = "abandoned"
# test sets scored apart from the test split: {split: record} (pipeline/extra_tests.py)
EXTRA_TESTS = "extra_tests"


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: they become null (a diverged loss is recorded as null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def write_results(path: str | Path, results: dict[str, Any]) -> Path:
    """Write ``results`` to ``path`` (the run's directory is the file's), paths made portable."""
    if results.get("status") not in STATUSES:
        raise ValueError(f"results status must be one of {STATUSES}, got {results.get('status')!r}")
    record = portable_record(results, run_dir=Path(path).parent.absolute())
    return write_text(path, json.dumps(_clean(record), indent=2, sort_keys=False) + "\n")


def read_results(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
