"""``TranslationDataModule``: the one data module every model family and every source uses.

Built by ``hydra.utils.instantiate(cfg.data)``. Flow:

1. ``prepare_data`` (rank 0): the source fetches what is missing (``data.download``), and
   subword tokenizers are trained on the training split and cached on disk.
2. ``setup(stage)``: raw text of every split is loaded (optionally holding out the last lines
   of train as test/val), tokenizers are learned or read from the cache, and the splits the
   stage needs are tokenised once, so training steps only pad and stack ids.
3. Dataloaders yield :class:`~seq2seq_lab.data.batch.Batch` objects from token-budget
   batches. ``Batch.index`` is the pair's line in ``raw_pairs(split)``, whose references are
   the untouched text BLEU is computed against.

``data.max_len`` drops train/val pairs longer than that many tokens on either side (reported
in :meth:`summary`); the split ``test_dataloader`` serves (``data.split``) is never filtered.
The tokenizers travel in checkpoints through :meth:`state_dict`; translate/eval rebuild them
with :func:`tokenizers_from_checkpoint_state`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader

from seq2seq_lab.data.batching import (
    EncodedPair,
    EncodedPairs,
    ResumableDataLoader,
    TokenBudgetBatchSampler,
    collate,
)
from seq2seq_lab.data.sources import SPLITS, PairSource, SourceContext, TextPairs
from seq2seq_lab.data.subset import check_limits, first_pairs
from seq2seq_lab.data.tokenizers import Tokenizer, TokenizerTrainer, tokenizer_from_state
from seq2seq_lab.errors import CheckpointError, ConfigError
from seq2seq_lab.record.atomic import write_text

log = logging.getLogger(__name__)

CHECKPOINT_KEY = "TranslationDataModule"  # where Lightning stores state_dict() in a checkpoint
STATE_FORMAT = 1


def tokenizers_from_checkpoint_state(state: dict[str, Any]) -> tuple[Tokenizer, Tokenizer]:
    """(source, target) tokenizers from :meth:`TranslationDataModule.state_dict` output, or
    from a whole Lightning checkpoint dict holding it under :data:`CHECKPOINT_KEY`. A joint
    vocabulary comes back as one object used twice."""
    if CHECKPOINT_KEY in state:
        state = state[CHECKPOINT_KEY]
    if "src_tokenizer" not in state:
        raise CheckpointError(
            f"the checkpoint has no tokenizers (expected '{CHECKPOINT_KEY}' with "
            "'src_tokenizer'); was it written by seq2seq-lab's training?"
        )
    src = tokenizer_from_state(state["src_tokenizer"])
    tgt = src if state.get("shared_vocab") else tokenizer_from_state(state["tgt_tokenizer"])
    return src, tgt


def _percentiles(lengths: list[int]) -> dict[str, int]:
    if not lengths:
        return {"p50": 0, "p95": 0, "max": 0}
    x = np.asarray(lengths)
    # nearest-rank percentiles: always an observed length
    return {
        "p50": int(np.percentile(x, 50, method="inverted_cdf")),
        "p95": int(np.percentile(x, 95, method="inverted_cdf")),
        "max": int(x.max()),
    }


class TranslationDataModule(L.LightningDataModule):
    """Sentence pairs from ``source``, tokenised by what ``tokenizer`` learns, in token-budget
    batches (see the module docstring).

    Keyword arguments are the keys of the ``data`` config node: ``root`` (data directory or
    saved dataset, null for generated data), ``src_lang``/``tgt_lang``, ``split`` (served by
    ``test_dataloader``: train, val or test), ``max_tokens`` (padded tokens per batch),
    ``max_len`` (train/val length filter in tokens, null for none), ``seed`` (batch order),
    ``cache_dir`` (tokenizer models, downloads), ``num_workers``, ``download`` (fetch missing
    files), ``test_from_train_lines``/``val_from_train_lines`` (hold out the last lines of train
    as test, then the lines before them as val), ``first_pairs`` (keep the first N pairs of
    each split: :mod:`seq2seq_lab.data.subset`), ``pool_factor`` (batches per length-sorting
    pool). None has a default here: the one home of their values is
    ``conf/data/_datamodule.yaml`` (and the option files).
    """

    def __init__(
        self,
        *,
        source: PairSource,
        tokenizer: TokenizerTrainer,
        root: str | None,
        src_lang: str,
        tgt_lang: str,
        split: str,
        max_tokens: int,
        max_len: int | None,
        seed: int,
        cache_dir: str,
        num_workers: int,
        download: bool,
        test_from_train_lines: int | None,
        val_from_train_lines: int | None,
        first_pairs: dict[str, int | None] | None,
        pool_factor: int,
    ) -> None:
        super().__init__()
        if split not in SPLITS:
            raise ConfigError(f"data.split={split}: expected one of {', '.join(SPLITS)}")
        if src_lang == tgt_lang:
            raise ConfigError(f"data.src_lang and data.tgt_lang are both {src_lang}")
        for key, value in (
            ("max_tokens", max_tokens),
            ("max_len", max_len),
            ("test_from_train_lines", test_from_train_lines),
            ("val_from_train_lines", val_from_train_lines),
            ("pool_factor", pool_factor),
        ):
            if value is not None and value < 1:
                raise ConfigError(f"data.{key}={value}: expected a positive number or null")
        if num_workers < 0:
            raise ConfigError(f"data.num_workers={num_workers}: expected 0 or more")
        self.source, self.tokenizer = source, tokenizer
        self.context = SourceContext(
            root=None if root is None else str(root),
            src_lang=src_lang,
            tgt_lang=tgt_lang,
            download=download,
            cache_dir=str(cache_dir),
        )
        self.src_lang, self.tgt_lang, self.split = src_lang, tgt_lang, split
        self.max_tokens, self.max_len, self.seed = max_tokens, max_len, seed
        self.cache_dir, self.num_workers, self.pool_factor = (
            str(cache_dir),
            num_workers,
            pool_factor,
        )
        self.test_from_train_lines = test_from_train_lines
        self.val_from_train_lines = val_from_train_lines
        self.first_pairs = check_limits(first_pairs)
        self._raw: dict[str, TextPairs] | None = None
        self._tokenizers: tuple[Tokenizer, Tokenizer] | None = None
        self._datasets: dict[tuple[str, bool], EncodedPairs] = {}  # (split, filtered)
        self._dropped: dict[str, int] = {}

    # ---------------------------------------------------------------- raw text and tokenizers

    def _read_splits(self) -> tuple[str, ...]:
        """The splits read from the source: not those taken from the train lines."""
        taken = {"test": self.test_from_train_lines, "val": self.val_from_train_lines}
        return tuple(split for split in SPLITS if not taken.get(split))

    @property
    def extra_test_splits(self) -> tuple[str, ...]:
        """The source's test sets scored apart from ``data.split`` (PairSource's
        ``extra_test_splits``): served by :meth:`raw_pairs` only, never batched."""
        return self.source.extra_test_splits()

    def _raw_splits(self) -> dict[str, TextPairs]:
        if self._raw is None:
            raw = self.source.load(self.context, self._read_splits() + self.extra_test_splits)
            train_src, train_tgt = raw["train"]
            n_test = self.test_from_train_lines or 0
            n_val = self.val_from_train_lines or 0
            if n_test + n_val >= len(train_src):
                raise ConfigError(
                    f"data.test_from_train_lines={self.test_from_train_lines} and "
                    f"data.val_from_train_lines={self.val_from_train_lines} hold out "
                    f"{n_test + n_val} of the {len(train_src)} train pairs; expected fewer"
                )
            # the held-out blocks are contiguous (the text runs in document order): test is the
            # last n_test lines of train, val the n_val lines before them
            end = len(train_src)
            if n_test:
                raw["test"] = (train_src[end - n_test : end], train_tgt[end - n_test : end])
                end -= n_test
            if n_val:
                raw["val"] = (train_src[end - n_val : end], train_tgt[end - n_val : end])
                end -= n_val
            raw["train"] = (train_src[:end], train_tgt[:end])
            self._raw = first_pairs(raw, self.first_pairs)
        return self._raw

    def _ensure_tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        if self._tokenizers is None:
            train_src, train_tgt = self._raw_splits()["train"]
            self._tokenizers = self.tokenizer.fit(train_src, train_tgt, cache_dir=self.cache_dir)
        return self._tokenizers

    def _dataset(self, split: str, filtered: bool) -> EncodedPairs:
        """The tokenised split; ``filtered`` applies ``max_len`` (train and val only)."""
        key = (split, filtered)
        if key not in self._datasets:
            src_tok, tgt_tok = self._ensure_tokenizers()
            sources, targets = self._raw_splits()[split]
            src_ids, tgt_ids = src_tok.encode_batch(sources), tgt_tok.encode_batch(targets)
            pairs = [EncodedPair(i, s, t) for i, (s, t) in enumerate(zip(src_ids, tgt_ids))]
            if filtered and self.max_len is not None:
                kept = [p for p in pairs if max(len(p.src), len(p.tgt)) <= self.max_len]
                self._dropped[split] = len(pairs) - len(kept)
                if self._dropped[split]:
                    log.info(
                        "data.max_len=%d dropped %d of %d %s pairs",
                        self.max_len,
                        self._dropped[split],
                        len(pairs),
                        split,
                    )
                pairs = kept
            self._datasets[key] = EncodedPairs(pairs)
        return self._datasets[key]

    # ------------------------------------------------------------------------- Lightning hooks

    def check_inputs(self) -> None:
        """Raise a one-line UserError where the source lacks what this data module would read
        (``data.root``, its files): before a run starts, nothing read."""
        self.source.check(self.context, self._read_splits() + self.extra_test_splits)

    def prepare_data(self) -> None:
        """Download missing files and train (and cache) subword models: once, on rank 0."""
        self.source.prepare(self.context, self._read_splits())
        self._ensure_tokenizers()

    def setup(self, stage: str | None = None) -> None:
        """Load the text, learn or reload the tokenizers, tokenise what ``stage`` uses."""
        self._ensure_tokenizers()
        if stage in ("fit", None):
            self._dataset("train", filtered=True)
        if stage in ("fit", "validate", None):
            self._dataset("val", filtered=True)
        if stage in ("test", None):
            self._dataset(self.split, filtered=False)

    def _loader(self, dataset: EncodedPairs, shuffle: bool) -> DataLoader:
        sampler = TokenBudgetBatchSampler(
            src_lengths=dataset.src_lengths(),
            tgt_lengths=dataset.tgt_lengths(),
            max_tokens=self.max_tokens,
            shuffle=shuffle,
            seed=self.seed,
            pool_factor=self.pool_factor,
        )
        # Training resumes mid-epoch (ResumableDataLoader). Every loader draws its worker seed
        # from its own generator: by default each iter() takes a number from torch's global
        # generator, which would shift the dropout masks of a run by how often it was resumed.
        loader = ResumableDataLoader if shuffle else DataLoader
        return loader(
            dataset,
            batch_sampler=sampler,
            collate_fn=collate,
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
            generator=torch.Generator().manual_seed(self.seed),
        )

    def train_dataloader(self) -> DataLoader:
        """The training batches of the epoch the trainer is about to run.

        Token-budget batching gives every epoch its own number of batches, but Lightning reads
        an epoch's length when it loads the dataloader (before ``set_epoch``) and uses it to cut
        the epoch and to decide when to validate: a loader kept across epochs would drop the
        batches beyond epoch 0's count and skip validation in every shorter epoch. So the loader
        is rebuilt for each epoch (``trainer.reload_dataloaders_every_n_epochs=1``, required)
        with its sampler already at that epoch.
        """
        trainer = self.trainer  # None outside a Trainer (tests, benchmarks)
        epoch = 0
        if trainer is not None:
            if trainer.reload_dataloaders_every_n_epochs != 1:
                raise ConfigError(
                    "trainer.reload_dataloaders_every_n_epochs="
                    f"{trainer.reload_dataloaders_every_n_epochs}: expected 1 (each epoch of "
                    "token-budget batches has its own length; see "
                    "TranslationDataModule.train_dataloader)"
                )
            epoch = trainer.current_epoch
        loader = self._loader(self._dataset("train", filtered=True), shuffle=True)
        loader.batch_sampler.set_epoch(epoch)
        return loader

    def val_dataloader(self) -> DataLoader:
        return self._loader(self._dataset("val", filtered=True), shuffle=False)

    def test_dataloader(self) -> DataLoader:
        """Every pair of ``data.split``, unfiltered, length-sorted."""
        return self._loader(self._dataset(self.split, filtered=False), shuffle=False)

    def state_dict(self) -> dict[str, Any]:
        """Both tokenizers as plain containers (Lightning saves this in every checkpoint)."""
        if self._tokenizers is None:
            return {}
        src, tgt = self._tokenizers
        state: dict[str, Any] = {
            "format": STATE_FORMAT,
            "shared_vocab": src is tgt,
            "src_tokenizer": src.to_state(),
        }
        if src is not tgt:
            state["tgt_tokenizer"] = tgt.to_state()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Use the checkpoint's tokenizers (before or after ``setup``; re-tokenises if they
        differ from the ones in use)."""
        tokenizers = tokenizers_from_checkpoint_state(state_dict)
        if self._tokenizers is None or self.state_dict() != state_dict:
            self._tokenizers = tokenizers
            self._datasets.clear()
            self._dropped.clear()

    # ------------------------------------------------------------------------------ public API

    def _tokenizers_after_setup(self) -> tuple[Tokenizer, Tokenizer]:
        if self._tokenizers is None:
            raise RuntimeError("call setup() (or load_state_dict()) before using the tokenizers")
        return self._tokenizers

    @property
    def src_tokenizer(self) -> Tokenizer:
        return self._tokenizers_after_setup()[0]

    @property
    def tgt_tokenizer(self) -> Tokenizer:
        return self._tokenizers_after_setup()[1]

    @property
    def src_vocab_size(self) -> int:
        return self.src_tokenizer.vocab_size

    @property
    def tgt_vocab_size(self) -> int:
        return self.tgt_tokenizer.vocab_size

    def write_vocabularies(self, folder: Path) -> list[Path]:
        """``vocab.<lang>.txt`` of each side in ``folder``, one token a line in id order (line
        n holds id n - 1, the specials first), for a reader of the run; the checkpoint holds
        the tokenizers themselves. Returns the files written."""
        written = []
        for lang, tokenizer in ((self.src_lang, self.src_tokenizer),
                                (self.tgt_lang, self.tgt_tokenizer)):  # fmt: skip
            path = Path(folder) / f"vocab.{lang}.txt"
            tokens = tokenizer.tokens(range(tokenizer.vocab_size))
            write_text(path, "".join(token + "\n" for token in tokens))
            written.append(path)
        return written

    @property
    def shared_vocab(self) -> bool:
        """One joint vocabulary for both languages (a model may tie its embeddings)."""
        src, tgt = self._tokenizers_after_setup()
        return src is tgt

    def raw_pairs(self, split: str) -> tuple[list[str], list[str]]:
        """(sources, references) of ``split`` in corpus order, untouched (no filter applied):
        ``Batch.index`` indexes these lists."""
        known = SPLITS + self.extra_test_splits
        if split not in known:
            raise ConfigError(f"split={split}: expected one of {', '.join(known)}")
        sources, references = self._raw_splits()[split]
        return list(sources), list(references)

    def encode_source(self, text: str) -> list[int]:
        """Source ids of ``text`` without EOS (collate and ``source_batch`` append it)."""
        return self.src_tokenizer.encode(text)

    def summary(self) -> dict[str, Any]:
        """Pairs per split, pairs dropped by ``max_len``, vocabulary sizes and token-length
        percentiles (nearest rank p50/p95, max; specials excluded) per split, as served."""
        self._ensure_tokenizers()
        splits: dict[str, Any] = {}
        for split in SPLITS:
            dataset = self._dataset(split, filtered=split != "test")
            splits[split] = {
                "pairs": len(dataset),
                "dropped": self._dropped.get(split, 0) if split != "test" else 0,
                "src_len": _percentiles([len(p.src) for p in dataset.pairs]),
                "tgt_len": _percentiles([len(p.tgt) for p in dataset.pairs]),
            }
        return {
            "source": self.source.describe(),
            "languages": f"{self.src_lang}-{self.tgt_lang}",
            "tokenizer": self.tokenizer.describe(),
            "vocab": {
                "src": self.src_vocab_size,
                "tgt": self.tgt_vocab_size,
                "shared": self.shared_vocab,
            },
            "max_len": self.max_len,
            "max_tokens": self.max_tokens,
            "splits": splits,
        }

    def print_summary(self) -> None:
        """The summary as a rich table on the console."""
        from rich.console import Console
        from rich.table import Table

        s = self.summary()
        vocab = s["vocab"]
        sizes = (
            f"joint vocabulary {vocab['src']}"
            if vocab["shared"]
            else f"vocabularies {vocab['src']} / {vocab['tgt']}"
        )
        table = Table(
            title=f"{s['source']}, {s['languages']}",
            caption=f"{s['tokenizer']}: {sizes}; lengths in tokens (p50/p95/max); "
            f"max_len {s['max_len']}, max_tokens {s['max_tokens']}",
        )
        for column in ("split", "pairs", "dropped (max_len)", "source length", "target length"):
            table.add_column(column, justify="left" if column == "split" else "right")
        for split, row in s["splits"].items():
            table.add_row(
                split,
                str(row["pairs"]),
                str(row["dropped"]),
                "/".join(str(row["src_len"][k]) for k in ("p50", "p95", "max")),
                "/".join(str(row["tgt_len"][k]) for k in ("p50", "p95", "max")),
            )
        Console().print(table)
