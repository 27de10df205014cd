"""The test set a run was scored on, named by path and checksum (seq2seq_lab/data/test_set.py):
read once per data set, verified. The pipeline writing it for a data set of files:
tests/test_input_checks.py::test_eval_finds_a_relative_data_root_from_another_directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seq2seq_lab.data import test_set
from seq2seq_lab.errors import DataError
from seq2seq_lab.record import portable_paths

SOURCES = ["ein Hund .", "zwei  Katzen\tspielen", "", "drei Vögel"]
REFERENCES = ["a dog .", "two  cats\tplay", "", "three birds"]


@pytest.fixture
def beside(tmp_path, monkeypatch) -> Path:
    """A checkout at tmp/repo (what portable paths are relative to) with a data set beside it,
    tmp/shared/data/toy/test.{de,en}; an empty cache of read test sets."""
    monkeypatch.setattr(portable_paths, "REPOSITORY", tmp_path / "repo")
    (tmp_path / "repo").mkdir()
    data = tmp_path / "shared" / "data" / "toy"
    data.mkdir(parents=True)
    (data / "test.de").write_text(test_set.scored_text(SOURCES), "utf-8")
    (data / "test.en").write_text(test_set.scored_text(REFERENCES), "utf-8")
    test_set._block.cache_clear()
    yield data
    test_set._block.cache_clear()


def pointer_run(run_dir: Path, data: Path) -> Path:
    run_dir.mkdir(parents=True)
    record = {"split": "test"}
    for kind, lang, lines in (("sources", "de", SOURCES), ("references", "en", REFERENCES)):
        record[kind] = test_set.entry(data / f"test.{lang}", 0, lines)
    (run_dir / test_set.TEST_SET_FILE).write_text(test_set.dumps(record), "utf-8")
    return run_dir


def test_a_record_names_the_file_portably_with_its_checksum(beside, tmp_path):
    run = pointer_run(tmp_path / "runs" / "0", beside)
    record = json.loads((run / "test_set.json").read_text())
    assert record["sources"] == {
        "path": "../shared/data/toy/test.de",
        "start": 0,
        "lines": 4,
        "sha256": test_set.sha256_of(SOURCES),  # of the text a copy held, byte for byte
    }
    assert test_set.read_test_lines(run, "sources", "test") == SOURCES
    assert test_set.read_test_lines(run, "references", "test") == REFERENCES
    assert test_set.read_test_lines(run, "hypotheses", "test") is None  # the run's own: none
    assert test_set.read_test_lines(run, "sources", "val") is None  # not the split scored


def test_a_changed_data_set_is_a_one_line_error_naming_run_file_and_checksums(beside, tmp_path):
    run = pointer_run(tmp_path / "runs" / "0", beside)
    (beside / "test.en").write_text(test_set.scored_text(["a cat .", *REFERENCES[1:]]), "utf-8")
    with pytest.raises(DataError) as e:
        test_set.read_test_lines(run, "references", "test")
    message = str(e.value)
    assert "\n" not in message
    assert str(run) in message and str(beside / "test.en") in message
    assert f"expected {test_set.sha256_of(REFERENCES)}" in message
    assert test_set.sha256_of(["a cat .", *REFERENCES[1:]]) in message  # found
    assert test_set.read_test_lines(run, "sources", "test") == SOURCES  # the other side holds


def test_a_missing_data_set_says_it_must_be_beside_the_checkout(beside, tmp_path):
    run = pointer_run(tmp_path / "runs" / "0", beside)
    (beside / "test.de").unlink()
    with pytest.raises(DataError, match=r"test\.de .*missing.*beside the checkout") as e:
        test_set.read_test_lines(run, "sources", "test")
    assert "\n" not in str(e.value) and "../shared/data/toy" in str(e.value)


def test_a_copy_is_read_when_the_run_has_one(beside, tmp_path):
    run = pointer_run(tmp_path / "runs" / "0", beside)
    (run / "sources.test.txt").write_text("from the copy\n", "utf-8")
    (beside / "test.de").unlink()  # the record's file is not even looked at
    assert test_set.read_test_lines(run, "sources", "test") == ["from the copy"]
    old = tmp_path / "runs" / "old"  # a run from before test_set.json: copies only
    old.mkdir()
    (old / "references.test.txt").write_text("x\u2028y\n", "utf-8")  # one line, not two
    assert test_set.read_test_lines(old, "references", "test") == ["x\u2028y"]
    assert test_set.read_test_lines(old, "sources", "test") is None


def test_a_data_set_is_read_once_for_every_run_scored_on_it(beside, tmp_path, monkeypatch):
    runs = [pointer_run(tmp_path / "runs" / str(i), beside) for i in range(5)]
    reads = []
    real = test_set.read_lines
    monkeypatch.setattr(test_set, "read_lines", lambda path: reads.append(path) or real(path))
    for run in runs:
        assert test_set.read_test_lines(run, "sources", "test") == SOURCES
        assert test_set.read_test_lines(run, "references", "test") == REFERENCES
    assert sorted(p.name for p in reads) == ["test.de", "test.en"]


class _Data:
    """What ``test_set.record`` asks of a TranslationDataModule."""

    def __init__(self, root: Path, test_from_train_lines=None, val_from_train_lines=None):
        from seq2seq_lab.data.sources import ParallelTextSource, SourceContext

        self.source = ParallelTextSource(
            name="toy",
            split_files={"train": "train", "val": "val", "test": "test"},
            download_url=None,
            download_names=None,
            sha256=None,
        )
        self.context = SourceContext(str(root), "de", "en", False, "unused")
        self.test_from_train_lines = test_from_train_lines
        self.val_from_train_lines = val_from_train_lines


def test_the_record_stands_only_for_exactly_the_lines_scored(beside, tmp_path, monkeypatch):
    data = _Data(beside)
    whole = test_set.record(data, "test", SOURCES, REFERENCES)
    assert whole["sources"]["path"] == "../shared/data/toy/test.de"
    assert test_set.record(data, "test", SOURCES[:2], REFERENCES[:2])["sources"]["lines"] == 2
    assert test_set.record(data, "test", SOURCES[1:], REFERENCES[1:]) is None  # not the block
    assert test_set.record(data, "test", SOURCES, ["changed", *REFERENCES[1:]]) is None
    assert test_set.record(None, "test", SOURCES, REFERENCES) is None  # generated: copies
    outside = tmp_path / "elsewhere"  # no path a clone could follow: copies
    outside.mkdir()
    for lang in ("de", "en"):
        (outside / f"test.{lang}").write_bytes((beside / f"test.{lang}").read_bytes())
    monkeypatch.setattr(portable_paths, "REPOSITORY", tmp_path / "shared" / "repo")
    assert test_set.record(_Data(outside), "test", SOURCES, REFERENCES) is None


def test_a_test_split_held_out_of_train_is_named_by_its_line_range(beside, tmp_path):
    train = [f"train {i}" for i in range(10)]
    for lang in ("de", "en"):
        (beside / f"train.{lang}").write_text(test_set.scored_text(train), "utf-8")
    data = _Data(beside, test_from_train_lines=3, val_from_train_lines=2)
    record = test_set.record(data, "test", train[7:], train[7:])
    assert record["sources"] | {"sha256": None} == {
        "path": "../shared/data/toy/train.de",
        "start": 7,
        "lines": 3,
        "sha256": None,
    }
    assert test_set.record(data, "val", train[5:7], train[5:7])["references"]["start"] == 5
    run = tmp_path / "run"
    run.mkdir()
    (run / test_set.TEST_SET_FILE).write_text(test_set.dumps(record), "utf-8")
    assert test_set.read_test_lines(run, "sources", "test") == train[7:]


# ----------------------------------------------------------------- a generated test set


@pytest.fixture
def generated(tmp_path):
    """The smoke scale's synthetic task: its data config (plain) and data module."""
    from conftest import compose_config, tiny_overrides

    from seq2seq_lab.config import to_plain
    from seq2seq_lab.pipeline.building import build_datamodule

    cfg = compose_config("train", tiny_overrides(), tmp_path, tmp_path / "cache")
    data = to_plain(cfg.data)
    test_set._generate.cache_clear()
    yield data, build_datamodule(data)
    test_set._generate.cache_clear()


def test_a_generated_test_set_is_named_by_its_data_config_and_read_back(generated, tmp_path):
    data, datamodule = generated
    sources, references = datamodule.raw_pairs("test")
    record = test_set.record(datamodule, "test", sources, references, data)
    assert record["generated"]["source"] == data["source"]
    assert not set(record["generated"]) & set(test_set.MACHINE_KEYS)  # nothing of this machine
    assert record["sources"] == {"lines": len(sources), "sha256": test_set.sha256_of(sources)}
    run = tmp_path / "run"
    run.mkdir()
    (run / test_set.TEST_SET_FILE).write_text(test_set.dumps(record), "utf-8")
    assert test_set.read_test_lines(run, "sources", "test") == sources
    assert test_set.read_test_lines(run, "references", "test") == references
    # lines that are not the generated split, or no config to name them by: copies kept
    assert test_set.record(datamodule, "test", sources[1:], references[1:], data) is None
    assert test_set.record(datamodule, "test", sources, references) is None


def test_a_generator_changed_since_the_run_is_a_one_line_error(generated, tmp_path):
    data, datamodule = generated
    sources, references = datamodule.raw_pairs("test")
    record = test_set.record(datamodule, "test", sources, references, data)
    record["generated"]["source"]["seed"] += 1  # as if the generator drew other sentences
    run = tmp_path / "run"
    run.mkdir()
    (run / test_set.TEST_SET_FILE).write_text(test_set.dumps(record), "utf-8")
    with pytest.raises(DataError, match="generated again from the data config") as e:
        test_set.read_test_lines(run, "references", "test")
    assert "\n" not in str(e.value) and str(run) in str(e.value)
    assert f"expected {len(references)} lines, {test_set.sha256_of(references)}" in str(e.value)


def test_copies_of_a_generated_set_are_replaced_only_when_they_are_its_sentences(
    generated, tmp_path
):
    data, datamodule = generated
    sources, references = datamodule.raw_pairs("test")

    def old_run(name: str, refs: list[str]) -> Path:
        run = tmp_path / name
        run.mkdir()
        results = {"config": {"data": data}, "test": {"split": "test"}}
        (run / "results.json").write_text(json.dumps(results), "utf-8")
        (run / "sources.test.txt").write_text(test_set.scored_text(sources), "utf-8")
        (run / "references.test.txt").write_text(test_set.scored_text(refs), "utf-8")
        return run

    same, other = old_run("same", references), old_run("other", ["x", *references[1:]])
    assert test_set.main([str(same), str(other)]) == 0
    assert not (same / "sources.test.txt").exists()
    assert test_set.read_test_lines(same, "references", "test") == references
    assert (other / "references.test.txt").is_file()  # not what the config generates: kept
    assert not (other / test_set.TEST_SET_FILE).exists()


def test_copies_from_files_are_kept(tmp_path):
    from conftest import compose_config

    from seq2seq_lab.config import to_plain

    data = to_plain(compose_config("train", ["data=multi30k"], tmp_path).data)
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(
        json.dumps({"config": {"data": data}, "test": {"split": "test"}}), "utf-8"
    )
    for kind, lines in (("sources", SOURCES), ("references", REFERENCES)):
        (run / f"{kind}.test.txt").write_text(test_set.scored_text(lines), "utf-8")
    assert "kept its copies" in test_set.name_generated_copies(run)
    assert (run / "sources.test.txt").is_file() and not (run / test_set.TEST_SET_FILE).exists()
