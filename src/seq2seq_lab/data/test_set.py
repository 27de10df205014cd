"""The test set a run was scored on: named by file, line range and checksum, not copied.

A run keeps what it made (``hypotheses.<split>.txt``). The sentences it scored, its sources
and references, are a data set's lines: when they are a block of lines of files the
repository can name (a path in the checkout or beside it, as :mod:`seq2seq_lab.record.portable_paths`
writes them: ``../shared/data/multi30k/test2016.de``), the run directory holds
``test_set.json`` instead of copies::

    {"split": "test",
     "sources":    {"path": "../shared/data/multi30k/test2016.de", "start": 0,
                    "lines": 1000, "sha256": "4be6b5b3..."},
     "references": {"path": "../shared/data/multi30k/test2016.en", ...}}

``start`` is the number of the file's lines before the first one scored (not 0 for a test
split held out of train, ``data.test_from_train_lines``), ``lines`` how many were scored and
``sha256`` the checksum of exactly that text: the lines joined with ``\\n`` and a final
``\\n``, byte for byte what a copy ``<kind>.<split>.txt`` held. A relative path is relative to
the repository root.

A generated data set (the embedded synthetic task: its source's ``generated``) is named by
the data config that generates it, with each side's line count and checksum::

    {"split": "test",
     "generated": {"_target_": "seq2seq_lab.data.datamodule.TranslationDataModule",
                   "source": {"_target_": "seq2seq_lab.data.synthetic.SyntheticSource", ...},
                   ...},
     "sources":    {"lines": 4000, "sha256": "..."},
     "references": {"lines": 4000, "sha256": "..."}}

and read back by building that data module and taking ``raw_pairs(split)`` (no tokenizer is
trained for it), checksum verified: a generator changed since the run fails loudly instead of
scoring against other sentences.

Otherwise (a Hugging Face dataset, data outside the checkout's folder, or lines that are not
exactly a block of the file, e.g. a partial test) the run keeps the copies
``sources.<split>.txt`` and ``references.<split>.txt``, as every run did before this module;
:func:`read_test_lines` prefers them when present.

The file behind a record is read once per process for each (path, line range, checksum), and a
generated set generated once per data config, its checksum verified: a report over a hundred
runs of one test set reads it once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from seq2seq_lab.data.lines import read_lines
from seq2seq_lab.errors import DataError
from seq2seq_lab.record import portable_paths
from seq2seq_lab.record.atomic import write_text
from seq2seq_lab.record.compressed_outputs import read_kept_lines

TEST_SET_FILE = "test_set.json"
# Data keys a generated record leaves out, and their values when the set is generated again:
# the tokenizer cache, loader workers and downloads change no sentence (raw_pairs trains no
# tokenizer and reads no file).
MACHINE_KEYS = {"cache_dir": ".cache", "num_workers": 0, "download": False}
KINDS = ("sources", "references")  # the test set's sides; hypotheses are the run's own


def scored_text(lines: Sequence[str]) -> str:
    """The text of ``lines`` as a copy file holds it: one per line, each ended by ``\\n``."""
    return "".join(line + "\n" for line in lines)


def sha256_of(lines: Sequence[str]) -> str:
    return hashlib.sha256(scored_text(lines).encode("utf-8")).hexdigest()


def _repository() -> Path:
    return portable_paths.REPOSITORY  # the root portable paths are written against


def _resolve(recorded: str) -> Path:
    """The file a recorded path names (relative: to the repository root)."""
    return Path(os.path.normpath(os.path.join(_repository(), recorded)))


def entry(path: str | Path, start: int, lines: Sequence[str]) -> dict[str, Any] | None:
    """The record of ``lines``, scored as the lines ``start``... of the file ``path``, or None
    where the record could not stand for them: the file is not named by a path relative to
    the repository (in it or beside it) or its lines there are not exactly ``lines``."""
    # Absolute but with its symbolic links kept: ``../shared`` may be a link to the data
    # elsewhere, and the path through the link is the one a clone beside it can follow.
    file = Path(os.path.abspath(path))
    recorded = portable_paths.portable_path(str(file), repository=_repository())
    if (
        os.path.isabs(recorded)
        or recorded.startswith("$")
        or _resolve(recorded).resolve() != file.resolve()
    ):
        return None  # outside the checkout's folder: no path a clone could follow
    if not file.is_file() or read_lines(file)[start : start + len(lines)] != list(lines):
        return None
    return {"path": recorded, "start": start, "lines": len(lines), "sha256": sha256_of(lines)}


def record(
    datamodule: Any,
    split: str,
    sources: Sequence[str],
    references: Sequence[str],
    data_config: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The ``test_set.json`` record of the ``sources``/``references`` a run scored on
    ``split`` of ``datamodule`` (a :class:`~seq2seq_lab.data.datamodule.TranslationDataModule`),
    or None where the copies must be kept (module docstring). ``data_config``: the config that
    built ``datamodule`` (``cfg.data``, plain), which names a generated set. Nothing is
    assumed about which lines the run scored: the file's lines where the data module takes
    the split from, or the generated split, must be the scored ones, in order, or there is no
    record."""
    from seq2seq_lab.data.sources import ParallelTextSource

    source = getattr(datamodule, "source", None)
    if not sources:
        return None
    if getattr(source, "generated", False):
        return _generated_record(datamodule, split, sources, references, data_config)
    if not isinstance(source, ParallelTextSource):
        return None
    context = datamodule.context
    n_test = datamodule.test_from_train_lines or 0
    n_val = datamodule.val_from_train_lines or 0
    held_out = {"test": n_test, "val": n_val}.get(split, 0)
    file_split = "train" if split == "train" or held_out else split
    paths = source.paths(context, [file_split])
    files = {"sources": paths[file_split, context.src_lang]}
    files["references"] = paths[file_split, context.tgt_lang]
    start = 0
    if held_out:  # the last lines of train are test, the ones before them val (datamodule.py)
        total = len(read_lines(files["sources"]))
        start = total - n_test if split == "test" else total - n_test - n_val
    entries = {
        kind: entry(files[kind], start, lines)
        for kind, lines in (("sources", sources), ("references", references))
    }
    if any(e is None for e in entries.values()):
        return None
    return {"split": split, **entries}


def _generated_record(
    datamodule: Any,
    split: str,
    sources: Sequence[str],
    references: Sequence[str],
    data_config: dict[str, Any] | None,
) -> dict[str, Any] | None:
    if data_config is None or datamodule.raw_pairs(split) != (list(sources), list(references)):
        return None
    return generated_record(data_config, split, sources, references)


def generated_record(
    data_config: dict[str, Any], split: str, sources: Sequence[str], references: Sequence[str]
) -> dict[str, Any]:
    """The record of a generated test set: ``data_config`` without the keys that name this
    machine and do not change a sentence (:data:`MACHINE_KEYS`), each side's line count and
    checksum."""
    generated = {k: v for k, v in data_config.items() if k not in MACHINE_KEYS}
    sides = {
        kind: {"lines": len(lines), "sha256": sha256_of(lines)}
        for kind, lines in (("sources", sources), ("references", references))
    }
    return {"split": split, "generated": generated, **sides}


def dumps(test_set: dict[str, Any]) -> str:
    return json.dumps(test_set, indent=2) + "\n"


@cache
def _block(file: Path, start: int, lines: int, sha256: str) -> tuple[str, ...] | str:
    """The lines ``start`` to ``start + lines`` of ``file``, or the checksum found where it is
    not ``sha256`` (cached by the whole key: a file is read once per process for a record)."""
    block = read_lines(file)[start : start + lines]
    found = sha256_of(block)
    return tuple(block) if found == sha256 and len(block) == lines else found


def _from_record(run_dir: Path, kind: str, split: str) -> list[str] | None:
    path = run_dir / TEST_SET_FILE
    if not path.is_file():
        return None
    test_set = json.loads(path.read_text(encoding="utf-8"))
    if test_set.get("split") != split or kind not in test_set:
        return None
    e = test_set[kind]
    if "generated" in test_set:
        return _regenerated(run_dir, test_set, kind, split)
    file = _resolve(e["path"])
    if not file.is_file():
        raise DataError(
            f"{run_dir}: {kind} of its {split} set is {e['path']} ({file}), which is missing: "
            f"the data set must be beside the checkout, as {Path(e['path']).parent} from "
            f"{_repository()} (e.g. ../shared/data/multi30k)"
        )
    block = _block(file.resolve(), int(e["start"]), int(e["lines"]), str(e["sha256"]))
    if isinstance(block, str):
        raise DataError(
            f"{run_dir}: {kind} of its {split} set, lines {e['start'] + 1}-"
            f"{e['start'] + e['lines']} of {file}: sha256 {block}, expected {e['sha256']} "
            f"({TEST_SET_FILE}): not the sentences the run scored"
        )
    return list(block)


@cache
def _generate(data_config: str, split: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(sources, references) of ``split`` of the data module ``data_config`` (JSON) builds,
    generated once per process and config."""
    from seq2seq_lab.config import instantiate

    config = {**json.loads(data_config), **MACHINE_KEYS}
    sources, references = instantiate(config, key="data").raw_pairs(split)
    return tuple(sources), tuple(references)


def _regenerated(run_dir: Path, test_set: dict[str, Any], kind: str, split: str) -> list[str]:
    config = json.dumps(test_set["generated"], sort_keys=True)
    lines = _generate(config, split)[KINDS.index(kind)]
    e = test_set[kind]
    found = sha256_of(lines)
    if found != e["sha256"] or len(lines) != e["lines"]:
        raise DataError(
            f"{run_dir}: {kind} of its {split} set, generated again from the data config in "
            f"{TEST_SET_FILE}: {len(lines)} lines, sha256 {found}, expected {e['lines']} lines, "
            f"{e['sha256']}: the generator has changed since the run (a task version kept "
            f"selectable, e.g. data=synthetic_v1, generates the old sentences)"
        )
    return list(lines)


def read_test_lines(run_dir: str | Path, kind: str, split: str) -> list[str] | None:
    """The ``kind`` lines (hypotheses, sources, references) of the run in ``run_dir`` on
    ``split``, one per sentence: from ``<kind>.<split>.txt`` (or its ``.txt.bz2``) when the run
    holds one, else (sources, references) from what its ``test_set.json`` names (files, or the data
    config that generates them), checksum verified (:class:`DataError`, one line, when it
    differs or the file is missing). None when the run has neither."""
    run_dir = Path(run_dir)
    # a committed grid keeps it compressed (seq2seq_lab/record/compressed_outputs.py)
    kept = read_kept_lines(run_dir / f"{kind}.{split}.txt")
    if kept is not None:
        return kept
    if kind not in KINDS:
        return None
    return _from_record(run_dir, kind, split)


def name_generated_copies(run_dir: str | Path) -> str:
    """Replace the copies ``sources/references.<split>.txt`` in ``run_dir`` (a run made before
    generated sets were named) by ``test_set.json``, where its ``results.json``'s data config
    generates exactly those lines; returns what was done, in a line."""
    run_dir = Path(run_dir)
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    split = (results.get("test") or {}).get("split")
    data = (results.get("config") or {}).get("data") or {}
    copies = [run_dir / f"{kind}.{split}.txt" for kind in KINDS]
    if not split or not all(c.is_file() for c in copies):
        return f"{run_dir}: no copies of a test set"
    from seq2seq_lab.config import instantiate

    if not data or not getattr(
        instantiate({**data, **MACHINE_KEYS}, key="data").source, "generated", False
    ):
        return f"{run_dir}: kept its copies (its data source does not generate them)"
    record = generated_record(data, split, *(read_lines(c) for c in copies))
    generated = _generate(json.dumps(record["generated"], sort_keys=True), split)
    if [sha256_of(lines) for lines in generated] != [record[k]["sha256"] for k in KINDS]:
        return f"{run_dir}: kept its copies (its data config generates other sentences now)"
    write_text(run_dir / TEST_SET_FILE, dumps(record))
    for copy in copies:
        copy.unlink()
    return f"{run_dir}: copies replaced by {TEST_SET_FILE}"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m seq2seq_lab.data.test_set",
        description="Name the generated test set of finished runs in test_set.json instead "
        "of their copies (sources/references.<split>.txt), where their data config still "
        "generates exactly those sentences.",
    )
    parser.add_argument("run_dirs", nargs="+", type=Path, help="run directories (results.json)")
    for run_dir in parser.parse_args(argv).run_dirs:
        print(name_generated_copies(run_dir))
    return 0


__all__ = [
    "KINDS",
    "MACHINE_KEYS",
    "TEST_SET_FILE",
    "dumps",
    "entry",
    "generated_record",
    "name_generated_copies",
    "read_test_lines",
    "record",
    "sha256_of",
]


if __name__ == "__main__":
    raise SystemExit(main())
