"""A committed grid's test outputs, gzip-compressed: the same lines in a sixth of the bytes.

A run writes its translations as plain text, ``hypotheses.<split>.txt``, one per line, where a
user reads them. A grid committed to the repository keeps one per run and split, and the
reports need every one (the paired bootstrap resamples their sentences), so they cannot be
left out; on the synthetic task's 4,000 test sentences one is about 320 KB, and a five-seed
grid of sixty runs would outgrow what a lent GPU machine can carry of the checkout (64 MiB).
``experiments/run_real.sh`` therefore compresses them in the runs it made, once they have
finished (:func:`compress_finished_runs`), into ``hypotheses.<split>.txt.gz``:

- gzip at level 9 with no file name and a zero timestamp, so that the same text always gives
  the same bytes (a grid run again commits no change);
- a run still training, or one without a final record (``results.json`` with a finished
  status), is not touched: a resumed run appends nothing to these files, but the queue may
  still be writing them;
- :func:`seq2seq_lab.data.test_set.read_test_lines` reads ``<kind>.<split>.txt`` where it
  exists and its ``.txt.gz`` otherwise, so reports, the reuse of identical runs and the
  alignment analysis read either; ``zcat`` shows one.

Only ``hypotheses.*.txt`` of a run's own directory is compressed: the other text records
(results.json, the Hydra record, the log) stay readable as they are, and are small.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from seq2seq_lab.record.atomic import write_bytes
from seq2seq_lab.record.results import FINISHED, read_results

PATTERN = "hypotheses.*.txt"
SUFFIX = ".gz"


def compressed_bytes(text: bytes) -> bytes:
    """``text`` gzip'd reproducibly: level 9, no file name, timestamp 0."""
    return gzip.compress(text, compresslevel=9, mtime=0)


def compress(path: Path) -> Path:
    """``path`` replaced by ``path.gz`` (written atomically before ``path`` is removed)."""
    target = path.with_name(path.name + SUFFIX)
    write_bytes(target, compressed_bytes(path.read_bytes()))
    path.unlink()
    return target


def compress_finished_runs(root: str | Path) -> list[Path]:
    """Compress ``hypotheses.*.txt`` in every finished run directory ``root/*/`` (one that holds a
    results.json with a finished status); returns the files written."""
    written = []
    for record in sorted(Path(root).glob("*/results.json")):
        results = read_results(record)
        if (results or {}).get("status") not in FINISHED:
            continue
        written += [compress(path) for path in sorted(record.parent.glob(PATTERN))]
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.record.compressed_outputs",
        description="gzip the hypotheses.*.txt of every finished run under each directory "
        "(a grid's runs/), for committing; reports read either form.",
    )
    parser.add_argument("roots", nargs="+", type=Path, help="directories holding run dirs")
    for root in parser.parse_args(argv).roots:
        written = compress_finished_runs(root)
        if written:
            print(f"{root}: {len(written)} hypotheses files compressed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
