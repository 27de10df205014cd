"""Tokenizers: text <-> ids, the same interface for word-level and subword vocabularies.

Every vocabulary starts with the specials PAD 0, UNK 1, BOS 2, EOS 3
(:mod:`seq2seq_lab.data.specials`). A tokenizer:

- ``encode(text) -> list[int]``: ids of the text, no specials added (collate adds them);
- ``decode(ids) -> str``: detokenised text for sacrebleu; stops at the first EOS, skips PAD and
  BOS, shows UNK as ``<unk>``;
- ``tokens(ids) -> list[str]``: one readable piece per id (attention-plot labels);
- ``to_state() -> dict`` of plain containers (str/int/list/dict only), stored in checkpoints and
  loadable with ``torch.load(weights_only=True)``; :func:`tokenizer_from_state` inverts it.

How a vocabulary is *learned* from the training split is the job of a trainer
(:class:`WordTokenizerTrainer`, :class:`SentencePieceTokenizerTrainer`), configured as
``data.tokenizer``. Sentencepiece models are cached on disk, keyed by a hash of the training
text and the settings, and written atomically so parallel sweep jobs never read half a model.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK, UNK_ID
from seq2seq_lab.errors import CheckpointError, ConfigError
from seq2seq_lab.record.atomic import write_bytes

log = logging.getLogger(__name__)


class Tokenizer(ABC):
    """Maps text to ids and back (see the module docstring)."""

    kind: ClassVar[str]  # the "kind" entry of to_state(), used by tokenizer_from_state

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """Number of ids, specials included."""

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Ids of ``text``, without BOS/EOS."""

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """``[encode(t) for t in texts]``, faster where the backend batches."""
        return [self.encode(text) for text in texts]

    @abstractmethod
    def _detokenise(self, ids: list[int]) -> str:
        """Text of ids that contain no PAD, BOS or EOS."""

    @abstractmethod
    def tokens(self, ids: Sequence[int]) -> list[str]:
        """One readable piece per id, specials included (labels for attention plots)."""

    @abstractmethod
    def to_state(self) -> dict[str, Any]:
        """Plain-container state: ``tokenizer_from_state(t.to_state())`` rebuilds ``t``."""

    def decode(self, ids: Iterable[int]) -> str:
        """Detokenised text: stops at the first EOS, skips PAD and BOS."""
        kept: list[int] = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i not in (PAD_ID, BOS_ID):
                kept.append(i)
        return self._detokenise(kept)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and self.to_state() == other.to_state()

    __hash__ = None  # type: ignore[assignment]  (mutable-looking value object)


class WordTokenizer(Tokenizer):
    """Whitespace-separated words, each one id; unknown words map to UNK.

    ``vocab`` lists the words by id and must start with the four specials.
    """

    kind = "word"

    def __init__(self, *, vocab: Sequence[str]) -> None:
        if tuple(vocab[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(f"vocab must start with the specials {SPECIAL_TOKENS}")
        self.vocab = list(vocab)
        self.ids = {word: i for i, word in enumerate(self.vocab)}
        if len(self.ids) != len(self.vocab):
            raise ValueError("vocab has repeated words")

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        return [self.ids.get(word, UNK_ID) for word in text.split()]

    def _detokenise(self, ids: list[int]) -> str:
        return " ".join(self.vocab[i] for i in ids)

    def tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.vocab[int(i)] for i in ids]

    def to_state(self) -> dict[str, Any]:
        return {"kind": self.kind, "vocab": list(self.vocab)}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> WordTokenizer:
        return cls(vocab=state["vocab"])


class SentencePieceTokenizer(Tokenizer):
    """A trained sentencepiece model (BPE or unigram), given as its serialized proto bytes."""

    kind = "sentencepiece"

    def __init__(self, *, model_proto: bytes) -> None:
        import sentencepiece as spm

        self.model_proto = bytes(model_proto)
        self.processor = spm.SentencePieceProcessor(model_proto=self.model_proto)
        specials = tuple(self.processor.id_to_piece(i) for i in range(len(SPECIAL_TOKENS)))
        if specials != SPECIAL_TOKENS:
            raise ValueError(f"sentencepiece model must have the specials {SPECIAL_TOKENS}")

    @property
    def vocab_size(self) -> int:
        return self.processor.get_piece_size()

    def encode(self, text: str) -> list[int]:
        return self.processor.encode(text, out_type=int)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self.processor.encode(list(texts), out_type=int)

    def _detokenise(self, ids: list[int]) -> str:
        return self.processor.decode(ids)

    def tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.processor.id_to_piece(int(i)) for i in ids]

    def to_state(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": base64.b64encode(self.model_proto).decode("ascii")}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SentencePieceTokenizer:
        return cls(model_proto=base64.b64decode(state["model"]))


_KINDS: dict[str, type[WordTokenizer] | type[SentencePieceTokenizer]] = {
    WordTokenizer.kind: WordTokenizer,
    SentencePieceTokenizer.kind: SentencePieceTokenizer,
}


def tokenizer_from_state(state: dict[str, Any]) -> Tokenizer:
    """Rebuild a tokenizer from :meth:`Tokenizer.to_state` output."""
    kind = state.get("kind") if isinstance(state, dict) else None
    if kind not in _KINDS:
        raise CheckpointError(
            f"unknown tokenizer state kind {kind!r}; expected one of {', '.join(_KINDS)}"
        )
    return _KINDS[kind].from_state(state)


# --------------------------------------------------------------------------------------------
# Learning vocabularies from the training split
# --------------------------------------------------------------------------------------------


class TokenizerTrainer(ABC):
    """Learns the source and target tokenizers from the training split (``data.tokenizer``).

    With ``joint=True`` one vocabulary is learned from both sides and the same tokenizer is
    returned twice, so the model may tie its embeddings (``datamodule.shared_vocab``).
    """

    joint: bool

    @abstractmethod
    def fit(
        self, src_lines: Sequence[str], tgt_lines: Sequence[str], *, cache_dir: str | Path
    ) -> tuple[Tokenizer, Tokenizer]:
        """(source tokenizer, target tokenizer) learned from the training text."""

    @abstractmethod
    def describe(self) -> str:
        """One line for summaries, e.g. ``joint bpe 8000``."""


class WordTokenizerTrainer(TokenizerTrainer):
    """Word vocabularies: every whitespace word seen ``min_freq`` times in training, most
    frequent first (ties alphabetical), capped at ``max_size`` words besides the specials.
    No defaults: the one home of the values is ``conf/data/tokenizer/word.yaml``."""

    def __init__(self, *, min_freq: int, max_size: int | None, joint: bool) -> None:
        if min_freq < 1:
            raise ConfigError(f"data.tokenizer.min_freq={min_freq}: expected at least 1")
        if max_size is not None and max_size < 1:
            raise ConfigError(f"data.tokenizer.max_size={max_size}: expected at least 1 or null")
        self.min_freq, self.max_size, self.joint = min_freq, max_size, joint

    def describe(self) -> str:
        return f"{'joint' if self.joint else 'separate'} word vocabulary (min_freq {self.min_freq})"

    def _build(self, lines: Iterable[str]) -> WordTokenizer:
        counts = Counter(word for line in lines for word in line.split())
        for special in SPECIAL_TOKENS:
            counts.pop(special, None)  # a literal "<unk>" in the text is not a new word
        words = sorted(
            (w for w, c in counts.items() if c >= self.min_freq), key=lambda w: (-counts[w], w)
        )
        if self.max_size is not None:
            words = words[: self.max_size]
        return WordTokenizer(vocab=[*SPECIAL_TOKENS, *words])

    def fit(
        self, src_lines: Sequence[str], tgt_lines: Sequence[str], *, cache_dir: str | Path
    ) -> tuple[Tokenizer, Tokenizer]:
        if self.joint:
            tok = self._build([*src_lines, *tgt_lines])
            return tok, tok
        return self._build(src_lines), self._build(tgt_lines)


class SentencePieceTokenizerTrainer(TokenizerTrainer):
    """Subword vocabularies with sentencepiece (Kudo & Richardson 2018): ``model_type`` bpe or
    unigram, ``vocab_size`` pieces per vocabulary (joint: one for both languages).

    Training is pinned for determinism (one thread, no sentence sampling or shuffling) and kept
    quiet. ``vocab_size`` is an upper bound: a corpus too small for it gets fewer pieces.
    ``character_coverage`` 1.0 keeps every character of European languages; 0.9995 suits
    large alphabets. ``normalization`` is sentencepiece's rule (``nmt_nfkc`` or ``identity``).
    No defaults: the one home of the values is ``conf/data/tokenizer/bpe.yaml`` (unigram.yaml
    starts from it).
    """

    MODEL_TYPES = ("bpe", "unigram")
    CACHE_FORMAT = 1  # bump to invalidate every cached model

    def __init__(
        self,
        *,
        model_type: str,
        vocab_size: int,
        joint: bool,
        character_coverage: float,
        normalization: str,
    ) -> None:
        if model_type not in self.MODEL_TYPES:
            raise ConfigError(
                f"data.tokenizer.model_type={model_type}: expected one of {', '.join(self.MODEL_TYPES)}"
            )
        if vocab_size <= len(SPECIAL_TOKENS):
            raise ConfigError(f"data.tokenizer.vocab_size={vocab_size}: expected more than 4")
        if not 0.0 < character_coverage <= 1.0:
            raise ConfigError(
                f"data.tokenizer.character_coverage={character_coverage}: expected (0, 1]"
            )
        self.model_type, self.vocab_size, self.joint = model_type, vocab_size, joint
        self.character_coverage, self.normalization = character_coverage, normalization

    def describe(self) -> str:
        return f"{'joint' if self.joint else 'separate'} sentencepiece {self.model_type} {self.vocab_size}"

    def settings(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "vocab_size": self.vocab_size,
            "character_coverage": self.character_coverage,
            "normalization": self.normalization,
        }

    def cache_path(self, lines: Sequence[str], cache_dir: str | Path) -> Path:
        """Where the model for ``lines`` is cached: keyed by the text itself (so the same data
        under another path hits, and edited data misses) and every setting that matters."""
        import sentencepiece as spm

        digest = hashlib.sha256()
        key = {"format": self.CACHE_FORMAT, "sentencepiece": spm.__version__, **self.settings()}
        digest.update(json.dumps(key, sort_keys=True).encode())
        for line in lines:
            digest.update(line.encode("utf-8", "surrogatepass") + b"\n")
        return Path(cache_dir).expanduser() / "tokenizers" / f"spm-{digest.hexdigest()[:24]}.model"

    def train(self, lines: Sequence[str]) -> bytes:
        """Serialized model proto trained on ``lines`` (in memory)."""
        import sentencepiece as spm

        model = io.BytesIO()
        spm.set_random_generator_seed(0)  # no step should draw random numbers; pin it anyway
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(lines),
                model_writer=model,
                model_type=self.model_type,
                vocab_size=self.vocab_size,
                hard_vocab_limit=False,
                character_coverage=self.character_coverage,
                normalization_rule_name=self.normalization,
                pad_id=PAD_ID,
                unk_id=UNK_ID,
                bos_id=BOS_ID,
                eos_id=EOS_ID,
                pad_piece=SPECIAL_TOKENS[PAD_ID],
                unk_piece=SPECIAL_TOKENS[UNK_ID],
                bos_piece=SPECIAL_TOKENS[BOS_ID],
                eos_piece=SPECIAL_TOKENS[EOS_ID],
                unk_surface=UNK,
                num_threads=1,
                input_sentence_size=0,
                shuffle_input_sentence=False,
                minloglevel=2,
            )
        except RuntimeError as e:
            raise ConfigError(f"data.tokenizer: sentencepiece training failed: {e}") from None
        return model.getvalue()

    def _get(self, lines: Sequence[str], cache_dir: str | Path) -> SentencePieceTokenizer:
        path = self.cache_path(lines, cache_dir)
        if path.is_file():
            return SentencePieceTokenizer(model_proto=path.read_bytes())
        start = time.perf_counter()
        proto = self.train(lines)
        write_bytes(path, proto)
        log.info("trained %s in %.1fs -> %s", self.describe(), time.perf_counter() - start, path)
        return SentencePieceTokenizer(model_proto=proto)

    def fit(
        self, src_lines: Sequence[str], tgt_lines: Sequence[str], *, cache_dir: str | Path
    ) -> tuple[Tokenizer, Tokenizer]:
        if self.joint:
            tok = self._get([*src_lines, *tgt_lines], cache_dir)
            return tok, tok
        return self._get(src_lines, cache_dir), self._get(tgt_lines, cache_dir)
