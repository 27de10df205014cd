"""Benchmark records a stranger can read: no directory of the machine they were measured on.

Every absolute path in a record, alone or inside free text (a command line), is written by the
rule of :mod:`seq2seq_lab.record.portable_paths`: relative to the repository root when it is in the
checkout (``experiments/benchmarks/torch_reference.py``, ``.cache/peer/logs/...``), relative to
it when it lies beside the checkout (``../shared/data/multi30k``), else its last component.

    python experiments/benchmarks/portable_json.py experiments/benchmarks/results/*.json

rewrites records written before this rule in place.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

# an absolute path: "/" not glued to a word, a relative path or a ${...} (a separator starts it)
ABSOLUTE = re.compile(r"(?<![\w.~$}/-])/[^\s\"'=,;\[\]{}()]+")


def portable(value: Any) -> Any:
    """``value`` (a JSON-able record) with every absolute path in its strings made portable."""
    from seq2seq_lab.record.portable_paths import portable_path

    if isinstance(value, dict):
        return {key: portable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [portable(item) for item in value]
    if isinstance(value, str):
        return ABSOLUTE.sub(lambda match: portable_path(match.group()), value)
    return value


def write_json(path: Path, record: Any) -> None:
    """``record`` as indented JSON at ``path``, its paths portable."""
    Path(path).write_text(json.dumps(portable(record), indent=2))


def main(paths: list[str]) -> int:
    for path in paths:
        write_json(Path(path), json.loads(Path(path).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
