"""The conf/data options: every one composes and instantiates (the constructors have no
defaults, so a key missing from the YAML fails here; tests/test_config_homes.py guards that
rule), and the real corpora load when present."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from seq2seq_lab.checkout import REPOSITORY
from seq2seq_lab.data.datamodule import TranslationDataModule
from seq2seq_lab.data.sources import HuggingFaceSource, ParallelTextSource
from seq2seq_lab.data.synthetic import SyntheticSource
from seq2seq_lab.data.tokenizers import SentencePieceTokenizerTrainer, WordTokenizerTrainer

CONF = Path(__file__).resolve().parents[1] / "conf"
OPTIONS = {
    "synthetic": (SyntheticSource, WordTokenizerTrainer),
    "synthetic_v1": (SyntheticSource, WordTokenizerTrainer),
    "copy": (SyntheticSource, WordTokenizerTrainer),
    "reverse": (SyntheticSource, WordTokenizerTrainer),
    "parallel_text": (ParallelTextSource, SentencePieceTokenizerTrainer),
    "multi30k": (ParallelTextSource, SentencePieceTokenizerTrainer),
    "europarl": (ParallelTextSource, SentencePieceTokenizerTrainer),
    "hf": (HuggingFaceSource, SentencePieceTokenizerTrainer),
}
SHARED = REPOSITORY.parent / "shared" / "data"  # the read-only data beside the checkout


def compose_data(option: str, cache_dir: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(
            overrides=[f"+data={option}", "+seed=0", f"+paths.cache_dir={cache_dir}", *overrides]
        )


def test_every_yaml_option_is_listed_here():
    options = {p.stem for p in (CONF / "data").glob("*.yaml") if not p.stem.startswith("_")}
    assert options == set(OPTIONS)


@pytest.mark.parametrize("option", OPTIONS)
def test_option_composes_and_instantiates(option, tmp_path):
    cfg = compose_data(option, tmp_path, "data.root=/somewhere", "data.max_len=64", "seed=5")
    dm = instantiate(cfg.data)
    source_cls, tokenizer_cls = OPTIONS[option]
    assert isinstance(dm, TranslationDataModule)
    assert isinstance(dm.source, source_cls) and isinstance(dm.tokenizer, tokenizer_cls)
    assert dm.context.root == "/somewhere" and dm.max_len == 64 and dm.seed == 5
    assert dm.cache_dir == str(tmp_path)


def test_tokenizer_group_can_be_swapped(tmp_path):
    cfg = compose_data(
        "multi30k",
        tmp_path,
        "data/tokenizer=unigram",
        "data.tokenizer.vocab_size=4000",
        "data.tokenizer.joint=false",
    )
    tokenizer = instantiate(cfg.data).tokenizer
    assert (tokenizer.model_type, tokenizer.vocab_size, tokenizer.joint) == ("unigram", 4000, False)


@pytest.mark.skipif(not (SHARED / "multi30k").is_dir(), reason="no shared Multi30k copy")
def test_multi30k_from_the_shared_copy(tmp_path):
    cfg = compose_data("multi30k", tmp_path, f"data.root={SHARED / 'multi30k'}")
    dm = instantiate(cfg.data)
    dm.setup("test")
    assert [len(dm.raw_pairs(s)[0]) for s in ("train", "val", "test")] == [29000, 1014, 1000]
    assert dm.shared_vocab and dm.src_vocab_size == 8000
    assert dm.raw_pairs("test")[1][0] == "A man in an orange hat starring at something."


@pytest.mark.skipif(not (SHARED / "europarl_de_en_20k").is_dir(), reason="no shared Europarl")
def test_europarl_holds_out_the_end_of_train(tmp_path):
    cfg = compose_data(
        "europarl",
        tmp_path,
        f"data.root={SHARED / 'europarl_de_en_20k'}",
        "data.test_from_train_lines=1000",
        "data/tokenizer=word",
    )
    dm = instantiate(cfg.data)
    train_src, _ = dm.raw_pairs("train")
    test_src, _ = dm.raw_pairs("test")
    assert (len(train_src), len(test_src)) == (19000, 1000)
    assert train_src[0] == "Wiederaufnahme der Sitzungsperiode"
