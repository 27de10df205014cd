"""results.json: the record of one run that the report generator reads.

Written at the end of every run, whatever happened, with at least ``status``, the test scores
and their sacrebleu signature, the seed, timings, versions and hardware. Statuses:
"completed" and "diverged" (:data:`FINISHED`: the run ended by itself, with a result), "failed"
(an error: ``error`` holds it) and "interrupted" (stopped from outside by a signal, named in
``status_reason``; resume it or run it again). Writing is atomic (:func:`write_text_atomic`)
so a sweep's report never reads half a file.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

STATUSES = ("completed", "diverged", "failed", "interrupted")
FINISHED = ("completed", "diverged")


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; set back at once (at import, one thread)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


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
    return write_text_atomic(path, json.dumps(_clean(results), indent=2, sort_keys=False) + "\n")


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` so that readers see the old file or the new one, never
    a part: through a temporary file of its own in the same directory (a unique name, so two
    writers never share one), then ``os.replace``. The temporary file never outlives a failure.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it 0600; open() would honour the umask
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_results(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
