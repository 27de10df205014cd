"""Attention heatmaps of the first validation sentences, drawn after every validation: the one
place a run's attention figures come from, whatever the model family.

Shapes: B the plotted sentences, S source length, T target length.

After each validation (not the sanity check) of a network with attention, for each of the
first ``sentences`` validation sentences (corpus order, ``Batch.index``):

- the alignment of its validation hypothesis: the source attention the decoder returns at each
  step of the validation decoding (``module.val_decoding``), one row per emitted token (EOS
  included), for every family whose ``step`` returns attention (a Transformer's: its last
  layer's cross-attention averaged over heads) -> ``attention/step<N>/val<i>.png``, logged as
  ``val/attention``;
- for a network that offers ``trace`` (the Transformer): its teacher-forced cross-attention
  of the gold target, every decoder layer and head in one grid ->
  ``diagnostics/cross_attention/step<N>_val<i>.png``, logged as ``diag/cross_attention``.

The figures are computed here, from the sentences kept while validation ran, rather than from
attention the module collects during validation: the validation step then stores no attention
matrix per sentence to draw a few, and ``callbacks=none`` takes away the whole cost. Decoding
and tracing without dropout draw no random numbers, so the figures change no training number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L

from seq2seq_lab.analysis.attention_maps import cross_attention_maps, plot_cross_attention
from seq2seq_lab.analysis.heatmap import plot_alignment
from seq2seq_lab.analysis.trace import eval_mode
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.batching import EncodedPair, collate
from seq2seq_lab.data.specials import EOS_ID, PAD_ID
from seq2seq_lab.decoding import decode


class AttentionPlots(L.Callback):
    """Heatmaps of the first ``sentences`` validation sentences after each validation (0: none).

    The setting has no default: its one home is ``attention_plots`` in
    conf/callbacks/default.yaml.
    """

    def __init__(self, *, sentences: int) -> None:
        if sentences < 0:
            raise ValueError(f"callbacks.attention_plots.sentences={sentences}: expected >= 0")
        self.sentences = sentences
        self._first: dict[int, EncodedPair] = {}  # corpus index -> pair, the lowest indices

    # ------------------------------------------------------------------ choosing the sentences
    def on_validation_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._first = {}

    def on_validation_batch_start(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if self.sentences and not trainer.sanity_checking and trainer.is_global_zero:
            self._keep_first(batch)

    def _keep_first(self, batch: Batch) -> None:
        """Add the rows of ``batch`` to the kept pairs and keep the ``sentences`` lowest
        indices. The loaders serve length-sorted batches, so the first sentences of the corpus
        may come in any batch."""
        for row, index in enumerate(batch.index.tolist()):
            if len(self._first) >= self.sentences and index > max(self._first):
                continue
            src = batch.src[row][batch.src_mask[row]].tolist()  # x_1..x_n EOS
            tgt = batch.tgt_out[row][batch.tgt_out[row] != PAD_ID].tolist()  # y_1..y_m EOS
            self._first[index] = EncodedPair(index, src[:-1], tgt[:-1])  # collate adds EOS
            if len(self._first) > self.sentences:
                del self._first[max(self._first)]

    # ------------------------------------------------------------------ drawing
    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking or not trainer.is_global_zero or not self._first:
            return
        batch = collate([self._first[i] for i in sorted(self._first)]).to(pl_module.device)
        network = pl_module.network
        # as validation ran the network: without dropout, in its precision (autocast included)
        with eval_mode(network), trainer.precision_plugin.val_step_context():
            self._plot_alignments(trainer, pl_module, network, batch)
            if callable(getattr(network, "trace", None)):
                self._plot_cross_attention(trainer, network, batch)

    def _plot_alignments(
        self, trainer: L.Trainer, pl_module: L.LightningModule, network: Any, batch: Batch
    ) -> None:
        hyps = decode(
            network, batch.src, batch.src_mask, pl_module.val_decoding, return_attention=True
        )
        if hyps.attention is None:  # a network without attention
            return
        step = trainer.global_step
        out = Path(trainer.default_root_dir) / "attention" / f"step{step:07d}"
        src_tokenizer, tgt_tokenizer = _tokenizers(trainer)
        paths = []
        for row, index in enumerate(batch.index.tolist()):
            weights = hyps.attention[row]  # [T, S]: one row per step, EOS included if emitted
            src_tokens = _labels(src_tokenizer, batch.src[row][batch.src_mask[row]].tolist())
            # the hypothesis plus EOS, unless it was cut at the length limit
            tgt_tokens = _labels(tgt_tokenizer, [*hyps.tokens[row], EOS_ID])[: weights.shape[0]]
            paths.append(
                plot_alignment(
                    weights,
                    src_tokens,
                    tgt_tokens,
                    out / f"val{index}.png",
                    title=f"{pl_module.family} step {step}",
                )
            )
        _log_images(trainer, "val/attention", paths)

    def _plot_cross_attention(self, trainer: L.Trainer, network: Any, batch: Batch) -> None:
        step = trainer.global_step
        out = Path(trainer.default_root_dir) / "diagnostics" / "cross_attention"
        src_tokenizer, tgt_tokenizer = _tokenizers(trainer)
        rows = list(range(len(batch)))
        paths = []
        for row, maps in zip(rows, cross_attention_maps(network, batch, rows)):  # [L, H, T, S]
            index = int(batch.index[row])
            src_ids = batch.src[row][batch.src_mask[row]].tolist()
            tgt_ids = batch.tgt_out[row][batch.tgt_out[row] != PAD_ID].tolist()
            paths.append(
                plot_cross_attention(
                    maps,
                    _labels(src_tokenizer, src_ids),
                    _labels(tgt_tokenizer, tgt_ids),
                    out / f"step{step:07d}_val{index}.png",
                    title=f"cross-attention, step {step}, val sentence {index}",
                )
            )
        _log_images(trainer, "diag/cross_attention", paths)


def _tokenizers(trainer: L.Trainer) -> tuple[Any, Any]:
    """The datamodule's (source, target) tokenizers; None each where it has none."""
    datamodule = getattr(trainer, "datamodule", None)
    return getattr(datamodule, "src_tokenizer", None), getattr(datamodule, "tgt_tokenizer", None)


def _labels(tokenizer: Any, ids: list[int]) -> list[str]:
    """Axis labels of a token row that may end with EOS (a source, a target, a hypothesis);
    without a tokenizer the ids themselves are the labels."""
    body = ids[:-1] if ids and ids[-1] == EOS_ID else ids
    words = tokenizer.tokens(body) if tokenizer is not None else [str(i) for i in body]
    return [*words, "</s>"] if len(body) < len(ids) else list(words)


def _log_images(trainer: L.Trainer, key: str, paths: list[Path]) -> None:
    for logger in trainer.loggers:
        log_image = getattr(logger, "log_image", None)  # W&B
        if log_image is not None and paths:
            log_image(key=key, images=[str(p) for p in paths], step=trainer.global_step)
