"""A committed grid's test outputs and metrics histories, bzip2-compressed: the same text in
a fraction of the bytes.

A run writes its translations as plain text, ``hypotheses.<split>.txt``, one per line, where a
user reads them (and the length probe's, ``length_probe/join-<k>.txt``, one file per join). A grid committed to the repository keeps one per run and split, and the
reports need every one (the paired bootstrap resamples their sentences), so they cannot be
left out; on the synthetic task's 4,000 test sentences one is about 320 KB, and a five-seed
grid of sixty runs would outgrow what a lent GPU machine can carry of the checkout (64 MiB).
``experiments/run_real.sh`` therefore compresses them in the runs it made, once they have
finished (:func:`compress_finished_runs`), into ``hypotheses.<split>.txt.bz2``:

- bzip2 at level 9, which records no file name nor time, so that the same text always gives
  the same bytes (a grid run again commits no change). On these word-level texts it is
  smaller than gzip at level 9, which the runs used before (the figures: the commit that
  changed it); :func:`compress_finished_runs` re-compresses such a ``.txt.gz`` too;
- a run still training, or one without a final record (``results.json``, or an evaluation's
  ``eval_results.json``, with a finished status), is not touched: a resumed run appends nothing to these files, but the queue may
  still be writing them;
- :func:`read_kept_lines` reads a file where it exists and its ``.bz2`` (or ``.gz``)
  otherwise, so reports (through :func:`seq2seq_lab.data.test_set.read_test_lines`), the reuse
  of identical runs, the alignment analysis and the probe's rescoring read any form; ``bzcat``
  shows one.

The metrics history, ``csv/metrics.csv`` (Lightning's CSVLogger), is compressed too: a row
per logging interval with every float at full precision, one file per run, it grows with the
budget. Reports and a resumed run's history read it through
:func:`read_kept_text`. The probe's joins are its largest files on Multi30k (six joins of
test2016 a run). Nothing else is compressed (:data:`PATTERNS`, under a run's own directory):
the other text records (results.json, the Hydra record, the log) stay readable as they are.
"""

from __future__ import annotations

import bz2
import gzip
import sys
from pathlib import Path

from seq2seq_lab.data.lines import decode_lines, decode_utf8
from seq2seq_lab.record.atomic import write_bytes
from seq2seq_lab.record.results import ABANDONED, FINISHED, read_results

# relative to a run's directory
PATTERNS = ("hypotheses.*.txt", "length_probe/join-*.txt", "csv/metrics.csv")
# the record a run writes last: a training run's, an evaluation's (python -m seq2seq_lab.eval)
RECORDS = ("results.json", "eval_results.json")
SUFFIX = ".bz2"
OLD_SUFFIX = ".gz"  # what runs compressed before bzip2 (re-compressed when a grid passes)
DECOMPRESS = {SUFFIX: bz2.decompress, OLD_SUFFIX: gzip.decompress}


def compressed_bytes(text: bytes) -> bytes:
    """``text`` bzip2'd reproducibly: level 9 (bzip2 stores no name nor time)."""
    return bz2.compress(text, compresslevel=9)


def compress(path: Path) -> Path:
    """``path`` (plain, or an old ``.gz``) replaced by its ``.bz2`` (written atomically before
    ``path`` is removed)."""
    if path.name.endswith(OLD_SUFFIX):
        text = gzip.decompress(path.read_bytes())
        target = path.with_name(path.name.removesuffix(OLD_SUFFIX) + SUFFIX)
    else:
        text = path.read_bytes()
        target = path.with_name(path.name + SUFFIX)
    write_bytes(target, compressed_bytes(text))
    path.unlink()
    return target


def _kept(path: Path) -> tuple[bytes, Path] | None:
    """(the bytes ``path`` was written with, the file they were read from), from ``path``
    itself, else from its ``.bz2`` or ``.gz``; None when none exists."""
    if path.is_file():
        return path.read_bytes(), path
    for suffix, decompress in DECOMPRESS.items():
        compressed = path.with_name(path.name + suffix)
        if compressed.is_file():
            return decompress(compressed.read_bytes()), compressed
    return None


def read_kept_lines(path: Path) -> list[str] | None:
    """The lines of ``path`` as a run wrote it, else of its ``.bz2`` (:func:`compress`) or an
    older run's ``.gz``; None when none exists."""
    kept = _kept(path)
    return None if kept is None else decode_lines(*kept)


def read_kept_text(path: Path) -> str | None:
    """The text of ``path`` (UTF-8, line ends as written), else of its ``.bz2`` or ``.gz``;
    None when none exists. For files read whole, such as a CSV."""
    kept = _kept(path)
    return None if kept is None else decode_utf8(*kept)


def discard_compressed(path: Path) -> None:
    """Remove ``path``'s ``.bz2`` and ``.gz``, if any: for a file written again in full (a
    resumed run's metrics history), whose older compressed form would be stale."""
    for suffix in DECOMPRESS:
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def compress_finished_runs(root: str | Path) -> list[Path]:
    """Compress the files of :data:`PATTERNS` in every finished run directory under ``root``
    (one whose record, one of :data:`RECORDS`, has a finished status), at any depth, as a
    report finds runs: a queue's ``SWEEP`` puts its jobs in ``runs/<sweep>/<job>/``. Runs set
    aside under ``abandoned/`` are left as they are. Returns the files written."""
    root = Path(root)
    records = (r for name in RECORDS for r in root.rglob(name))
    written = []
    for record in sorted(r for r in records if ABANDONED not in r.relative_to(root).parts):
        results = read_results(record)
        if (results or {}).get("status") not in FINISHED:
            continue
        for pattern in PATTERNS:
            for form in (pattern, pattern + OLD_SUFFIX):
                written += [compress(path) for path in sorted(record.parent.glob(form))]
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.record.compressed_outputs",
        description="bzip2 the translations (hypotheses.*.txt, length_probe/join-*.txt) and the "
        "metrics history (csv/metrics.csv) of every finished run under each directory (a grid's "
        "runs/), for committing; reports read any form (plain, .bz2, an older run's .gz); old "
        ".gz files are re-compressed.",
    )
    parser.add_argument("roots", nargs="+", type=Path, help="directories holding run dirs")
    for root in parser.parse_args(argv).roots:
        written = compress_finished_runs(root)
        if written:
            print(f"{root}: {len(written)} files compressed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
