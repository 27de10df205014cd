"""The one LightningModule every model family trains under.

It owns everything that is not the network's forward pass: the loss (teacher-forced cross
entropy with label smoothing, padding ignored), perplexity, decoding the validation and test
sets with the shared decoders (``seq2seq_lab.decoding``), sacrebleu scores, the optimiser and
its step-wise schedule, gradient-norm logging and the divergence rule. A comparison therefore
differs only in ``network``; the networks themselves import no Lightning. (Attention heatmaps
are a callback's: ``seq2seq_lab.callbacks.attention_plots``.)

Every constructor argument is a plain container (dicts of str/int/float/bool/list), so
checkpoints load under ``torch.load(weights_only=True)`` and ``load_from_checkpoint`` rebuilds
the network from ``network["_target_"]`` with no other input. The arguments have no defaults:
their one home is the ``module:`` section of ``conf/train.yaml``.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import lightning as L
import torch
from lightning.pytorch.utilities import grad_norm
from torch import Tensor

from seq2seq_lab.config import instantiate
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import PAD_ID
from seq2seq_lab.decoding import DecodingSettings, decode
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.metrics.corpus import corpus_scores
from seq2seq_lab.metrics.length_buckets import bleu_by_length
from seq2seq_lab.models.network import Seq2SeqNetwork
from seq2seq_lab.optim.kernels import choose_kernel, uses_grad_scaler
from seq2seq_lab.optim.schedules import lambda_scheduler
from seq2seq_lab.training.divergence import DivergenceRule
from seq2seq_lab.training.loss import smoothed_cross_entropy
from seq2seq_lab.training.rng import rng_state, set_rng_state

# Where on_save_checkpoint puts what Lightning does not save itself: the random generators'
# states and the divergence rule's, so that a resumed run continues exactly.
RESUME_KEY = "seq2seq_lab_resume"

# Settings this module no longer reads -> where they went. Checkpoints written while they
# existed hold them among the constructor's keywords (their hyper-parameters), and a config
# may still set them: both load, with a warning; any other unknown keyword is an error.
RETIRED_SETTINGS = {
    "attention_plots": "the attention heatmaps are the AttentionPlots callback's "
    "(callbacks.attention_plots.sentences, conf/callbacks/default.yaml)",
}

log = logging.getLogger(__name__)


class Seq2SeqModule(L.LightningModule):
    """Training, validation and test of any :class:`Seq2SeqNetwork`.

    Loss: L = -(1/N) sum_t sum_y q(y) log p(y | y_<t, x), q the label-smoothed target
    (Szegedy et al. 2016; training/loss.py), N the real (non-padding) target tokens.
    Perplexity is exp of the unsmoothed per-token negative log-likelihood.

    Args:
        network: constructor config of the network (``_target_`` + keyword args, vocabulary
            sizes included).
        optimizer: constructor config of a ``torch.optim`` optimiser, without ``params``.
        schedule: constructor config of a schedule from ``seq2seq_lab.optim.schedules``.
        label_smoothing: epsilon of the smoothed target distribution.
        val_decoding / test_decoding: decoder settings, the fields of
            :class:`~seq2seq_lab.decoding.DecodingSettings` (conf/decoding/).
        divergence: ``max_loss_ratio`` and ``patience`` of the
            :class:`~seq2seq_lab.training.divergence.DivergenceRule`.
        samples_to_log: how many validation (source, hypothesis, reference) rows the
            loggers that take text get (a W&B table per validation).
        run_config: the whole resolved run config, kept for eval/translate (not used here).
        retired: settings of :data:`RETIRED_SETTINGS`: a warning, then ignored (and not
            saved in new checkpoints).
    """

    def __init__(
        self,
        *,
        network: dict,
        optimizer: dict,
        schedule: dict,
        label_smoothing: float,
        val_decoding: dict,
        test_decoding: dict,
        divergence: dict,
        samples_to_log: int,
        run_config: dict | None = None,
        **retired: Any,
    ) -> None:
        super().__init__()
        if not 0.0 <= label_smoothing < 1.0:
            raise ConfigError(
                f"module.label_smoothing={label_smoothing}: expected a number in [0, 1)"
            )
        unknown = sorted(set(retired) - set(RETIRED_SETTINGS))
        if unknown:
            raise TypeError(f"Seq2SeqModule got unexpected keyword arguments {unknown}")
        for name in retired:
            log.warning("module.%s is no longer read: %s", name, RETIRED_SETTINGS[name])
        self.save_hyperparameters(ignore=list(retired))
        self.network: Seq2SeqNetwork = instantiate(network, key="model")
        self.val_decoding = DecodingSettings.from_config(val_decoding, "module.val_decoding")
        self.test_decoding = DecodingSettings.from_config(test_decoding, "module.test_decoding")
        self.divergence = DivergenceRule(**divergence)
        self.diverged: str | None = None  # why, once detected
        self.test_results: dict[str, Any] = {}
        self._eval: dict[str, Any] = {}
        # [update step, validation BLEU] of every validation, for the convergence check
        # (training/convergence.py); kept in checkpoints so a resumed run has all of them
        self.validations: list[list[float]] = []
        self._rng_to_restore: dict[str, Any] | None = None  # from a checkpoint being resumed

    @property
    def family(self) -> str:
        return self.network.family

    # ---------------------------------------------------------------- loss
    def loss_terms(self, batch: Batch) -> tuple[Tensor, Tensor, Tensor]:
        """(smoothed loss sum, NLL sum, number of target tokens) for one batch."""
        logits = self.network(batch.src, batch.src_mask, batch.tgt_in).logits  # [B, T, V]
        flat_gold = batch.tgt_out.reshape(-1)
        smoothed, nll = smoothed_cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(),
            flat_gold,
            epsilon=self.hparams.label_smoothing,
            ignore_index=PAD_ID,
        )
        return smoothed, nll, (flat_gold != PAD_ID).sum()

    # ---------------------------------------------------------------- training
    def training_step(self, batch: Batch, batch_idx: int) -> Tensor | None:
        loss_sum, nll_sum, n_tokens = self.loss_terms(batch)
        loss = loss_sum / n_tokens
        self.diverged = self.divergence.check(float(loss.detach()), self.global_step)
        if self.diverged:
            self.trainer.should_stop = True
            return None  # skip the update: weights stay as they were before the blow-up
        self.log("train/loss", loss, prog_bar=True, batch_size=int(n_tokens))
        self.log("train/ppl", torch.exp(nll_sum / n_tokens), batch_size=int(n_tokens))
        return loss

    def on_train_end(self) -> None:
        # Early stopping, max_steps or max_time may end a run inside the divergence rule's
        # patience: the rule's second part still records a loss that had exploded.
        if not self.diverged:
            self.diverged = self.divergence.at_end(self.global_step, stop_cause(self.trainer))

    # ---------------------------------------------------------------- resuming
    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint[RESUME_KEY] = {
            "rng": rng_state(),
            "divergence": self.divergence.state_dict(),
            "validations": [list(v) for v in self.validations],
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        state = checkpoint.get(RESUME_KEY)
        if state is None:  # written before this state was saved: resumes, but not exactly
            return
        self.divergence.load_state_dict(state["divergence"])
        self.validations = [list(v) for v in state.get("validations", [])]
        self._rng_to_restore = state["rng"]

    def on_train_start(self) -> None:
        # The training loader's place in the epoch (ResumableDataLoader) is restored by
        # Lightning only when it builds the loader after the checkpoint is loaded. Asking for
        # trainer.estimated_stepping_batches in configure_optimizers builds it before, and
        # unless Lightning builds it again (reload_dataloaders_every_n_epochs does only when
        # the resumed epoch is not epoch 0) the saved place is silently dropped (Lightning
        # issue #20550, open in 2.6). Load it here, before the first batch is drawn (a no-op
        # whenever Lightning did).
        fit_loop = self.trainer.fit_loop
        if fit_loop._combined_loader_states_to_load:
            fit_loop._load_combined_loader_states()

    def on_train_batch_start(self, batch: Batch, batch_idx: int) -> None:
        # The generators are set back right before the first training step after a resume,
        # not at loading: whatever the resumed process draws on its way there (initialising
        # the network it then overwrites, callbacks starting) is not drawn by the
        # uninterrupted run, which went straight from the checkpointed step to this one.
        if self._rng_to_restore is not None:
            set_rng_state(self._rng_to_restore)
            self._rng_to_restore = None

    def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
        if self.global_step % max(1, self.trainer.log_every_n_steps) == 0:
            total = grad_norm(self.network, norm_type=2).get("grad_2.0_norm_total")
            if total is not None:  # absent when no parameter has a gradient
                self.log("train/grad_norm", total)

    # ---------------------------------------------------------------- optimiser
    def configure_gradient_clipping(
        self,
        optimizer: torch.optim.Optimizer,
        gradient_clip_val: float | None = None,
        gradient_clip_algorithm: str | None = None,
    ) -> None:
        # Lightning refuses to clip for a fused optimiser under any mixed precision, because
        # under fp16's scaler the gradients are still scaled at this point; under bf16-mixed
        # there is no scaler, the gradients are true-scale, and clipping them here is exact
        fused = getattr(optimizer, "_step_supports_amp_scaling", False)
        precision = str(self.trainer.precision)
        unscaled_mixed = precision.endswith("-mixed") and not uses_grad_scaler(precision)
        if not (gradient_clip_val and fused and unscaled_mixed):
            super().configure_gradient_clipping(
                optimizer, gradient_clip_val, gradient_clip_algorithm
            )
            return
        if gradient_clip_algorithm == "value":
            torch.nn.utils.clip_grad_value_(self.parameters(), gradient_clip_val)
        else:  # Lightning's default, "norm"
            torch.nn.utils.clip_grad_norm_(self.parameters(), gradient_clip_val)

    def configure_optimizers(self) -> dict:
        precision = self.trainer.precision if self._trainer is not None else None
        optimizer = instantiate(
            choose_kernel(self.hparams.optimizer, precision), key="optim", params=self.parameters()
        )
        schedule = instantiate(self.hparams.schedule, key="schedule")
        total = self.trainer.estimated_stepping_batches if self._trainer is not None else None
        total = int(total) if total is not None and math.isfinite(total) else None
        scheduler = lambda_scheduler(optimizer, schedule, total)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "step", "frequency": 1},
        }

    # ---------------------------------------------------------------- evaluation
    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        self._eval_step(batch, self.val_decoding)

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        self._eval_step(batch, self.test_decoding)

    def on_validation_epoch_start(self) -> None:
        self._eval = _new_eval_state()

    def on_test_epoch_start(self) -> None:
        self._eval = _new_eval_state()

    def _eval_step(self, batch: Batch, settings: DecodingSettings) -> None:
        loss_sum, nll_sum, n_tokens = self.loss_terms(batch)
        acc = self._eval
        acc["loss"] += float(loss_sum)
        acc["nll"] += float(nll_sum)
        acc["tokens"] += int(n_tokens)
        hyps = decode(self.network, batch.src, batch.src_mask, settings)
        for i, index in enumerate(batch.index.tolist()):
            acc["hyp_ids"][index] = hyps.tokens[i]

    def _eval_results(self, split: str) -> dict[str, Any]:
        """Scores of the decoded sentences (in corpus order) against the raw references."""
        dm = self.trainer.datamodule
        sources, references = dm.raw_pairs(split)
        acc = self._eval
        indices = sorted(acc["hyp_ids"])
        hyps = [dm.tgt_tokenizer.decode(acc["hyp_ids"][i]) for i in indices]
        srcs = [sources[i] for i in indices]
        refs = [references[i] for i in indices]
        scores = corpus_scores(hyps, refs)
        tokens = max(acc["tokens"], 1)
        return {
            "indices": indices,
            "sources": srcs,
            "hypotheses": hyps,
            "references": refs,
            "scores": scores,
            "loss": acc["loss"] / tokens,
            "ppl": math.exp(min(acc["nll"] / tokens, 50.0)),
        }

    def on_validation_epoch_end(self) -> None:
        if not self._eval["hyp_ids"]:
            return
        res = self._eval_results("val")
        scores = res["scores"]
        self.log_dict({"val/loss": res["loss"], "val/ppl": res["ppl"], "val/chrf": scores.chrf})
        self.log("val/bleu", scores.bleu, prog_bar=True)
        if not self.trainer.sanity_checking:
            self.validations.append([self.global_step, float(scores.bleu)])
            self._log_samples(res)

    def on_test_epoch_end(self) -> None:
        dm = self.trainer.datamodule
        res = self._eval_results(dm.split)
        scores = res["scores"]
        self.log_dict(
            {
                "test/bleu": scores.bleu,
                "test/chrf": scores.chrf,
                "test/ter": scores.ter,
                "test/ppl": res["ppl"],
                "test/loss": res["loss"],
            }
        )
        self.test_results = {
            "split": dm.split,
            "bleu": scores.bleu,
            "chrf": scores.chrf,
            "ter": scores.ter,
            "ppl": res["ppl"],
            "loss": res["loss"],
            "sentences": len(res["hypotheses"]),
            "bleu_by_length": bleu_by_length(res["sources"], res["hypotheses"], res["references"]),
            "sacrebleu_signature": scores.signatures,
            "decoding": self.test_decoding.to_dict(),
            "hypotheses": res["hypotheses"],
            "sources": res["sources"],
            "references": res["references"],
        }

    # ---------------------------------------------------------------- logging helpers
    def _log_samples(self, res: dict) -> None:
        n = self.hparams.samples_to_log
        if n <= 0:
            return
        rows = [[s, h, r] for s, h, r in zip(res["sources"], res["hypotheses"], res["references"])][
            :n
        ]
        for logger in self.loggers:
            log_text = getattr(logger, "log_text", None)  # W&B: a table per validation
            if log_text is not None:
                log_text(
                    key="val/samples",
                    columns=["source", "hypothesis", "reference"],
                    data=rows,
                    step=self.global_step,
                )


def stop_cause(trainer: L.Trainer) -> str:
    """What ended ``trainer``'s fit loop, in words naming its setting (for the reason of a
    run diverged at its end, :meth:`DivergenceRule.at_end`)."""
    from lightning.pytorch.callbacks import Timer
    from lightning.pytorch.callbacks.early_stopping import EarlyStoppingReason

    if trainer.max_steps != -1 and trainer.global_step >= trainer.max_steps:
        return f"trainer.max_steps={trainer.max_steps}"
    for callback in trainer.callbacks:
        if isinstance(callback, Timer):
            remaining = callback.time_remaining()
            if remaining is not None and remaining <= 0:
                return "trainer.max_time"
    for callback in trainer.callbacks:
        # a callback that ends training by a rule of its own says why (ConvergenceStopping)
        reason = getattr(callback, "stop_reason", None)
        if isinstance(reason, str):
            return reason
    for callback in trainer.early_stopping_callbacks:
        if callback.stopping_reason != EarlyStoppingReason.NOT_STOPPED:
            return f"early stopping on {callback.monitor}"
    if trainer.max_epochs is not None and trainer.current_epoch >= trainer.max_epochs:
        return f"trainer.max_epochs={trainer.max_epochs}"
    return "a callback"


def _new_eval_state() -> dict[str, Any]:
    return {"loss": 0.0, "nll": 0.0, "tokens": 0, "hyp_ids": {}}
