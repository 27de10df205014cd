"""Transformer training diagnostics (E4, E5): gradient norms per layer, layer similarity and
attention entropy, written under ``<run dir>/diagnostics/`` and logged. (The cross-attention
grids are drawn with every other attention figure: ``seq2seq_lab.callbacks.attention_plots``.)

The analyses themselves are the pure functions of ``seq2seq_lab.analysis``; this callback only
decides when to run them and where the results go. Networks without the block structure they
need (``named_blocks()`` and ``trace()``, e.g. the recurrent families) are skipped silently.
What it measures between or inside updates is left out of the training clocks
(``seq2seq_lab.callbacks.clock``): the throughput figures time the training step alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lightning as L
import torch

from seq2seq_lab.analysis.entropy import attention_entropy
from seq2seq_lab.analysis.gradients import (
    gradient_norms,
    plot_gradient_norms,
    sublayer_gradient_norms,
)
from seq2seq_lab.analysis.similarity import layer_similarity
from seq2seq_lab.analysis.trace import has_blocks
from seq2seq_lab.callbacks.clock import off_the_training_clock
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.record.atomic import write_atomically


class TransformerDiagnostics(L.Callback):
    """What it does, and when:

    - first training batch of a fresh run: the gradient-norm profile at initialisation
      (``diagnostics/grad_norms_init.json`` and ``.png``, logged as ``diag/grad_norm_init/*``);
    - every ``log_every_n_steps`` updates (null: the trainer's), after backward and before
      the optimiser step (before clipping): ``diag/grad_norm/<block>.<sublayer>``;
    - at the start of a fresh run's training, before the first optimiser step (E5: entropy at
      initialisation), and after each validation: layer similarity and attention entropy on
      the first ``batch_sentences`` sentences of the first validation batch (one line appended
      to ``diagnostics/validation.jsonl``: ``{"step", "when", "similarity", "entropy"}``, with
      ``"when": "init"`` at step 0 and ``"validation"`` after), scalars
      ``diag/similarity[_init]/*``, ``diag/entropy[_init]/*``.

    ``validation.jsonl`` holds what the uninterrupted run would write: a fresh run starts the
    file anew, and a run resumed from a checkpoint of update ``S`` keeps the records up to
    ``S`` and drops the later ones, which the stopped run made after its checkpoint and the
    resumed run makes again (a checkpoint of an update that validation follows is taken after
    the validation: ``seq2seq_lab.callbacks.last_checkpoint``).

    The settings have no defaults: their one home is ``diagnostics`` in
    conf/callbacks/default.yaml.
    """

    def __init__(
        self,
        *,
        log_every_n_steps: int | None,
        batch_sentences: int,
    ) -> None:
        self.log_every_n_steps = log_every_n_steps
        self.batch_sentences = batch_sentences
        self._val_batch: Batch | None = None

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _network(pl_module: L.LightningModule) -> Any | None:
        network = getattr(pl_module, "network", None)
        return network if network is not None and has_blocks(network) else None

    @staticmethod
    def _out_dir(trainer: L.Trainer) -> Path:
        path = Path(trainer.default_root_dir) / "diagnostics"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @staticmethod
    def _first_val_batch(trainer: L.Trainer) -> Any | None:
        """The first batch of the fit's validation loader, on the model's device (None
        without one). The project's loaders draw from their own generator, so this look does
        not move the training's random stream."""
        loaders = trainer.val_dataloaders
        loader = loaders[0] if isinstance(loaders, (list, tuple)) and loaders else loaders
        if loader is None:
            return None
        batch = next(iter(loader), None)
        return None if batch is None else trainer.strategy.batch_to_device(batch)

    def _keep_val_batch(self, batch: Any) -> None:
        """The fixed sentences of every record: the first ``batch_sentences`` of ``batch``."""
        n = self.batch_sentences
        self._val_batch = Batch(
            src=batch.src[:n],
            src_mask=batch.src_mask[:n],
            tgt_in=batch.tgt_in[:n],
            tgt_out=batch.tgt_out[:n],
            index=batch.index[:n],
        )

    # ------------------------------------------------------------------ training
    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        network = self._network(pl_module)
        if network is None:
            return
        if trainer.is_global_zero:
            path = Path(trainer.default_root_dir) / "diagnostics" / "validation.jsonl"
            records = _read_records(path)
            step = trainer.global_step  # 0: a fresh run, whose file starts anew
            kept = [r for r in records if r["step"] <= step] if step else []
            if kept != records:
                _write_records(path, kept)
        if trainer.global_step != 0:
            return  # only at initialisation (a resumed run has global_step > 0)
        if self._val_batch is None:  # no sanity check has shown the first validation batch
            batch = self._first_val_batch(trainer)
            if batch is None:
                return
            self._keep_val_batch(batch)
        self._record(trainer, pl_module, network, when="init")

    def on_train_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        network = self._network(pl_module)
        if network is None or trainer.global_step != 0 or batch_idx != 0:
            return  # only at initialisation (a resumed run has global_step > 0)
        with off_the_training_clock(trainer):
            norms = gradient_norms(network, batch)
            pl_module.log_dict({f"diag/grad_norm_init/{k}": v for k, v in norms.items()})
            if trainer.is_global_zero:
                out = self._out_dir(trainer)
                (out / "grad_norms_init.json").write_text(json.dumps(norms, indent=2) + "\n")
                plot_gradient_norms(
                    {"initialisation": norms}, out / "grad_norms_init.png", title="gradient norms"
                )

    def on_before_optimizer_step(
        self, trainer: L.Trainer, pl_module: L.LightningModule, optimizer: torch.optim.Optimizer
    ) -> None:
        network = self._network(pl_module)
        every = self.log_every_n_steps or trainer.log_every_n_steps
        if network is None or trainer.global_step % max(1, every) != 0:
            return
        with off_the_training_clock(trainer):
            norms = sublayer_gradient_norms(network)
            pl_module.log_dict({f"diag/grad_norm/{k}": v for k, v in norms.items()})

    # ------------------------------------------------------------------ validation
    def on_validation_batch_start(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if self._val_batch is None and batch_idx == 0 and self._network(pl_module) is not None:
            self._keep_val_batch(batch)

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        network = self._network(pl_module)
        if network is None or self._val_batch is None or trainer.sanity_checking:
            return
        self._record(trainer, pl_module, network, when="validation")

    # ------------------------------------------------------------------ records
    def _record(
        self, trainer: L.Trainer, pl_module: L.LightningModule, network: Any, *, when: str
    ) -> None:
        """Similarity and entropy of the network as it is now on the fixed sentences: logged
        and appended to validation.jsonl."""
        batch, step = self._val_batch, trainer.global_step
        assert batch is not None
        similarity = layer_similarity(network, batch)
        entropy = attention_entropy(network, batch)
        # own names at init (like diag/grad_norm_init): not a point of the per-validation curves
        suffix = "_init" if when == "init" else ""
        scalars = {}
        for stack, values in similarity.items():
            for i, value in enumerate(values):
                scalars[f"diag/similarity{suffix}/{stack}.{i}-{i + 1}"] = value
        for kind, layers in entropy.items():
            for i, heads in enumerate(layers):
                scalars[f"diag/entropy{suffix}/{kind}.{i}"] = sum(heads) / len(heads)
        pl_module.log_dict(scalars)
        if not trainer.is_global_zero:
            return
        path = self._out_dir(trainer) / "validation.jsonl"
        record = {"step": step, "when": when, "similarity": similarity, "entropy": entropy}
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def _read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a ``validation.jsonl`` in file order (none if there is no file)."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace the file with ``records`` (atomically; no records: no file)."""
    if not records:
        path.unlink(missing_ok=True)
        return
    write_atomically(
        path, lambda f: f.writelines(json.dumps(r) + "\n" for r in records), binary=False
    )
