"""results.json: the record of one run that the report generator reads.

Written at the end of every run, whatever happened, with at least ``status`` ("completed",
"diverged" or "failed"), the test scores and their sacrebleu signature, the seed, timings,
versions and hardware. Writing is atomic so a sweep's report never reads half a file.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

STATUSES = ("completed", "diverged", "failed")


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
    if results.get("status") not in STATUSES:
        raise ValueError(f"results status must be one of {STATUSES}, got {results.get('status')!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(_clean(results), indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_results(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
