"""Tokenizers: specials, round trips, checkpoint state (weights_only), and the sentencepiece
cache (hit, miss, atomic writes, deterministic training)."""

from __future__ import annotations

import io

import pytest
import torch
from config_values import tokenizer_settings

from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID
from seq2seq_lab.data.tokenizers import (
    SentencePieceTokenizerTrainer,
    WordTokenizer,
    WordTokenizerTrainer,
    tokenizer_from_state,
)
from seq2seq_lab.errors import CheckpointError, ConfigError

SRC = [
    "Ein kleiner Hund läuft über die grüne Wiese.",
    "Zwei Männer spielen Fußball im Park, während es regnet.",
    "Eine Frau mit einem roten Hut liest ein Buch.",
    "Kinder bauen eine Sandburg am Strand.",
    "Der Koch schneidet Gemüse in der Küche.",
    "Ein Radfahrer fährt schnell den Berg hinunter.",
] * 5
TGT = [
    "A small dog runs across the green meadow.",
    "Two men play soccer in the park while it rains.",
    "A woman with a red hat reads a book.",
    "Children build a sandcastle on the beach.",
    "The cook cuts vegetables in the kitchen.",
    "A cyclist rides quickly down the mountain.",
] * 5


def word(**overrides) -> WordTokenizerTrainer:
    """conf/data/tokenizer/word.yaml with ``overrides``."""
    return WordTokenizerTrainer(**tokenizer_settings("word", **overrides))


def sentencepiece(kind: str = "bpe", **overrides) -> SentencePieceTokenizerTrainer:
    """conf/data/tokenizer/<kind>.yaml (bpe or unigram) with ``overrides``."""
    return SentencePieceTokenizerTrainer(**tokenizer_settings(kind, **overrides))


def weights_only_round_trip(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def test_word_vocab_specials_min_freq_and_order():
    src, tgt = word(min_freq=2).fit(["b a a c", "a b"], ["x"], cache_dir="unused")
    assert src.tokens(range(4)) == list(SPECIAL_TOKENS)
    assert src.vocab == [*SPECIAL_TOKENS, "a", "b"]  # by frequency; "c" (once) is dropped
    assert src.encode("a c b") == [4, UNK_ID, 5]
    capped, _ = word(max_size=1).fit(["b a a c", "a b"], ["x"], cache_dir="-")
    assert capped.vocab == [*SPECIAL_TOKENS, "a"]
    assert tgt.vocab_size == 4  # "x" occurs once: below min_freq


def test_word_round_trip_decode_rules_and_joint():
    src, tgt = word(joint=True).fit(SRC, TGT, cache_dir="unused")
    assert src is tgt
    for line in SRC + TGT:
        assert src.decode(src.encode(line)) == line
    ids = src.encode("Ein kleiner Hund")
    assert src.decode([BOS_ID, *ids, PAD_ID, EOS_ID, ids[0]]) == "Ein kleiner Hund"
    assert src.decode([ids[0], UNK_ID]) == "Ein <unk>"
    assert len(src.tokens([BOS_ID, *ids, EOS_ID])) == len(ids) + 2
    with pytest.raises(ValueError, match="specials"):
        WordTokenizer(vocab=["a", "b"])


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_sentencepiece_round_trip_specials_and_state(tmp_path, model_type):
    trainer = sentencepiece(model_type, vocab_size=120)
    src, tgt = trainer.fit(SRC, TGT, cache_dir=tmp_path)
    assert src is tgt and 4 < src.vocab_size <= 120
    assert src.tokens(range(4)) == list(SPECIAL_TOKENS)
    for line in SRC + TGT:
        ids = src.encode(line)
        assert all(i >= 4 for i in ids)  # no specials added
        assert src.decode(ids) == line
        assert src.decode([BOS_ID, *ids, EOS_ID, *ids]) == line
    assert src.decode([UNK_ID]) == "<unk>"
    state = weights_only_round_trip(src.to_state())
    restored = tokenizer_from_state(state)
    assert restored == src and restored.encode(SRC[1]) == src.encode(SRC[1])


def test_word_state_round_trip():
    src, _ = word().fit(SRC, TGT, cache_dir="unused")
    restored = tokenizer_from_state(weights_only_round_trip(src.to_state()))
    assert restored == src
    with pytest.raises(CheckpointError, match="kind"):
        tokenizer_from_state({"kind": "bytes"})


def test_separate_vocabularies(tmp_path):
    src, tgt = sentencepiece(vocab_size=80, joint=False).fit(SRC, TGT, cache_dir=tmp_path)
    assert src is not tgt and src != tgt
    assert "ü" in "".join(src.tokens(range(src.vocab_size)))
    assert "ü" not in "".join(tgt.tokens(range(tgt.vocab_size)))
    assert len(list((tmp_path / "tokenizers").glob("*.model"))) == 2


def test_cache_hit_reuses_the_model_and_keys_differ(tmp_path, monkeypatch):
    trainer = sentencepiece(vocab_size=100)
    first, _ = trainer.fit(SRC, TGT, cache_dir=tmp_path)
    (model,) = (tmp_path / "tokenizers").iterdir()
    stamp = model.stat().st_mtime_ns

    def no_training(self, lines):
        raise AssertionError("trained again instead of using the cache")

    monkeypatch.setattr(SentencePieceTokenizerTrainer, "train", no_training)
    again, _ = sentencepiece(vocab_size=100).fit(SRC, TGT, cache_dir=tmp_path)
    assert again == first and model.stat().st_mtime_ns == stamp
    lines = SRC + TGT
    assert trainer.cache_path(lines, tmp_path) == model
    assert sentencepiece(vocab_size=101).cache_path(lines, tmp_path) != model
    assert sentencepiece("unigram", vocab_size=100).cache_path(lines, tmp_path) != model
    assert trainer.cache_path(lines[:-1], tmp_path) != model  # other data, other model


def test_training_is_deterministic_and_leaves_no_temp_files(tmp_path):
    trainer = sentencepiece("unigram", vocab_size=90)
    assert trainer.train(SRC) == trainer.train(SRC)
    trainer.fit(SRC, TGT, cache_dir=tmp_path)
    assert [p.suffix for p in (tmp_path / "tokenizers").iterdir()] == [".model"]


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"model_type": "wordpiece"}, "data.tokenizer.model_type"),
        ({"vocab_size": 3}, "data.tokenizer.vocab_size"),
        ({"character_coverage": 0.0}, "data.tokenizer.character_coverage"),
    ],
)
def test_bad_sentencepiece_settings(kwargs, key):
    with pytest.raises(ConfigError, match=key):
        sentencepiece(**kwargs)


def test_bad_word_settings():
    with pytest.raises(ConfigError, match="data.tokenizer.min_freq"):
        word(min_freq=0)
