"""Raw text sources: the parallel-text loader and its one-line errors, the download code (on
file:// URLs), and the Hugging Face source (on a dataset saved to disk)."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
from config_values import source_settings

from seq2seq_lab.checkout import REPOSITORY
from seq2seq_lab.data.sources import (
    HuggingFaceSource,
    ParallelTextSource,
    SourceContext,
    read_lines,
)
from seq2seq_lab.errors import ConfigError, DataError

PAIRS = {
    "train": (
        ["Ein Hund läuft.", "Zwei Katzen  schlafen. ", "Ein Kind spielt."],
        ["A dog runs.", "Two cats  sleep. ", "A child plays."],
    ),
    "val": (["Ein Mann liest."], ["A man reads."]),
    "test": (["Eine Frau singt.", "Der Ball ist rot."], ["A woman sings.", "The ball is red."]),
}
MULTI30K_FILES = {"train": "train", "val": "val", "test": "test2016"}


def write_corpus(root: Path, files: dict[str, str] | None = None, crlf: bool = False) -> None:
    files = files or {s: s for s in PAIRS}
    root.mkdir(parents=True, exist_ok=True)
    end = "\r\n" if crlf else "\n"
    for split, (de, en) in PAIRS.items():
        (root / f"{files[split]}.de").write_text("".join(line + end for line in de), "utf-8")
        (root / f"{files[split]}.en").write_text("".join(line + end for line in en), "utf-8")


def ctx(root: Path | None, *, download: bool = False, cache_dir: str = "unused") -> SourceContext:
    """A de-en context (no downloads unless a test asks)."""
    return SourceContext(
        root=None if root is None else str(root),
        src_lang="de",
        tgt_lang="en",
        download=download,
        cache_dir=cache_dir,
    )


def parallel_text(**overrides) -> ParallelTextSource:
    """conf/data/parallel_text.yaml's source with ``overrides``."""
    return ParallelTextSource(**source_settings("parallel_text", **overrides))


def hf(**overrides) -> HuggingFaceSource:
    """conf/data/hf.yaml's source with ``overrides``."""
    return HuggingFaceSource(**source_settings("hf", **overrides))


@pytest.mark.parametrize("crlf", [False, True])
def test_loads_every_split_stripping_only_line_ends(tmp_path, crlf):
    write_corpus(tmp_path, crlf=crlf)
    assert parallel_text().load(ctx(tmp_path)) == PAIRS  # inner/trailing spaces kept


def test_split_file_names_are_mapped(tmp_path):
    write_corpus(tmp_path, MULTI30K_FILES)
    loaded = parallel_text(name="multi30k", split_files=MULTI30K_FILES).load(ctx(tmp_path))
    assert loaded["test"] == PAIRS["test"]


def test_last_line_without_newline_and_byte_order_mark(tmp_path):
    path = tmp_path / "x.de"
    path.write_bytes(b"\xef\xbb\xbfeins\nzwei")
    assert read_lines(path) == ["eins", "zwei"]


def test_missing_file_names_path_and_expected_layout(tmp_path):
    write_corpus(tmp_path)
    (tmp_path / "val.en").unlink()
    with pytest.raises(DataError) as e:
        parallel_text().load(ctx(tmp_path))
    message = str(e.value)
    assert f"missing file {tmp_path / 'val.en'}" in message
    assert "{train,val,test}.{de,en}" in message and "\n" not in message


def test_different_line_counts_name_both_files(tmp_path):
    write_corpus(tmp_path)
    (tmp_path / "train.en").write_text("A dog runs.\nTwo cats sleep.\n", "utf-8")
    with pytest.raises(DataError, match=r"train\.de has 3 lines but .*train\.en has 2"):
        parallel_text().load(ctx(tmp_path))


def test_empty_file(tmp_path):
    write_corpus(tmp_path)
    (tmp_path / "test.de").write_bytes(b"")
    with pytest.raises(DataError, match=r"test\.de: empty file"):
        parallel_text().load(ctx(tmp_path))


def test_invalid_utf8_names_the_line(tmp_path):
    write_corpus(tmp_path)
    (tmp_path / "train.de").write_bytes(b"eins\nzwei\ndr\xe9i\n")  # latin-1 byte
    with pytest.raises(DataError, match=r"train\.de:3: invalid UTF-8 \(byte 0xe9 at column 3\)"):
        parallel_text().load(ctx(tmp_path))


def test_root_not_set_says_what_to_pass():
    source = parallel_text(name="multi30k", download_url="file:///x/{name}.{lang}.gz")
    with pytest.raises(ConfigError) as e:
        source.load(ctx(None))
    assert "data.root=../shared/data/multi30k" in str(e.value)
    assert "data.download=true" in str(e.value)


def test_bad_split_files_key():
    with pytest.raises(ConfigError, match="split_files"):
        parallel_text(split_files={"train": "train", "dev": "dev", "test": "test"})


# ----------------------------------------------------------------------------------- download


def make_remote(tmp_path: Path) -> Path:
    """gzipped files named as in the Multi30k repository (test_2016_flickr.de.gz, ...)."""
    remote = tmp_path / "remote"
    remote.mkdir()
    names = {"train": "train", "val": "val", "test": "test_2016_flickr"}
    for split, (de, en) in PAIRS.items():
        for lang, lines in (("de", de), ("en", en)):
            data = "".join(line + "\n" for line in lines).encode()
            (remote / f"{names[split]}.{lang}.gz").write_bytes(gzip.compress(data))
    return remote


def multi30k_like(remote: Path, **kw) -> ParallelTextSource:
    return parallel_text(
        name="multi30k",
        split_files=MULTI30K_FILES,
        download_url=remote.as_uri() + "/{name}.{lang}.gz",
        download_names={"train": "train", "val": "val", "test": "test_2016_flickr"},
        **kw,
    )


def test_download_fetches_gunzips_and_writes_missing_files(tmp_path):
    source = multi30k_like(make_remote(tmp_path))
    root = tmp_path / "data"
    source.prepare(ctx(root, download=True))
    assert sorted(p.name for p in root.iterdir()) == sorted(
        f"{f}.{lang}" for f in MULTI30K_FILES.values() for lang in ("de", "en")
    )
    assert source.load(ctx(root)) == PAIRS


def test_download_keeps_existing_files_and_is_off_by_default(tmp_path):
    source = multi30k_like(make_remote(tmp_path))
    root = tmp_path / "data"
    source.prepare(ctx(root))  # download=False: nothing fetched
    assert not root.exists()
    write_corpus(root, MULTI30K_FILES)
    (root / "val.de").write_text("local\n", "utf-8")
    source.prepare(ctx(root, download=True))
    assert (root / "val.de").read_text("utf-8") == "local\n"


def test_download_without_root_goes_to_the_cache(tmp_path):
    source = multi30k_like(make_remote(tmp_path))
    context = ctx(None, download=True, cache_dir=str(tmp_path / "cache"))
    source.prepare(context)
    assert (tmp_path / "cache" / "downloads" / "multi30k" / "test2016.en").is_file()
    assert source.load(context) == PAIRS


def test_download_checks_sha256_and_saves_nothing_on_mismatch(tmp_path):
    remote = make_remote(tmp_path)
    good = hashlib.sha256(b"A man reads.\n").hexdigest()
    root = tmp_path / "ok"
    multi30k_like(remote, sha256={"val.en": good}).prepare(ctx(root, download=True))
    assert (root / "val.en").is_file()
    bad_root = tmp_path / "bad"
    with pytest.raises(DataError, match="sha256"):
        multi30k_like(remote, sha256={"train.de": "0" * 64}).prepare(ctx(bad_root, download=True))
    assert not (bad_root / "train.de").exists()
    assert not [p for p in bad_root.glob("*") if p.name.startswith(".")]  # no temp files left


def test_download_of_plain_text_and_unreachable_url(tmp_path):
    remote = tmp_path / "plain"
    write_corpus(remote)
    source = parallel_text(download_url=remote.as_uri() + "/{name}.{lang}")
    source.prepare(ctx(tmp_path / "data", download=True))
    assert source.load(ctx(tmp_path / "data")) == PAIRS
    missing = parallel_text(download_url=(tmp_path / "nowhere").as_uri() + "/{name}.{lang}")
    with pytest.raises(DataError, match=r"could not download file://.*nowhere/train\.de"):
        missing.prepare(ctx(tmp_path / "data2", download=True))


def test_real_multi30k_layout_if_present():
    root = REPOSITORY.parent / "shared" / "data" / "multi30k"
    if not root.is_dir():
        pytest.skip("shared Multi30k copy not available")
    pairs = parallel_text(name="multi30k", split_files=MULTI30K_FILES).load(ctx(root))
    assert [len(pairs[s][0]) for s in ("train", "val", "test")] == [29000, 1014, 1000]


# -------------------------------------------------------------------------------- Hugging Face


@pytest.fixture(scope="module")
def saved_dataset(tmp_path_factory) -> Path:
    datasets = pytest.importorskip("datasets")
    path = tmp_path_factory.mktemp("hf") / "toy"
    splits = {"train": "train", "val": "validation", "test": "test"}
    datasets.DatasetDict(
        {
            splits[s]: datasets.Dataset.from_dict(
                {"translation": [{"de": d, "en": e} for d, e in zip(*PAIRS[s])]}
            )
            for s in PAIRS
        }
    ).save_to_disk(str(path))
    return path


def test_hf_source_reads_a_saved_dataset(saved_dataset):
    assert hf().load(ctx(saved_dataset)) == PAIRS


def test_hf_source_errors(saved_dataset, tmp_path):
    with pytest.raises(DataError, match=r"row 0: no 'fr' text .*languages: de, en"):
        hf().load(SourceContext(str(saved_dataset), "fr", "en", download=False, cache_dir="unused"))
    with pytest.raises(DataError, match=r"no split 'dev' .*validation"):
        hf(splits={"train": "train", "val": "dev", "test": "test"}).load(ctx(saved_dataset))
    with pytest.raises(DataError, match="no column 'pairs'"):
        hf(column="pairs").load(ctx(saved_dataset))
    with pytest.raises(DataError, match="missing directory"):
        hf().load(ctx(tmp_path / "nothing"))
    with pytest.raises(ConfigError, match="data.source.name"):
        hf(name=None).load(ctx(None))
