"""The checks each entry point makes of its inputs before any work starts.

Whatever a run can be refused for is checked here from the config and the files it names,
before data is read, a model built or a checkpoint's weights loaded, so that a mistake is a
one-line error naming the key or the file (ConfigError, CheckpointError), never a traceback
after minutes of training or decoding. Data files are checked where they are read
(``seq2seq_lab.data``), with their line numbers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from seq2seq_lab.analysis.decoding_study import StudySettings
from seq2seq_lab.analysis.decoding_study_record import STUDY
from seq2seq_lab.analysis.length_probe import PROBE
from seq2seq_lab.checkpoint import ResumePoint, check_resume_point, family_of, read_checkpoint
from seq2seq_lab.config import instantiate, to_plain
from seq2seq_lab.decoding import DecodingSettings
from seq2seq_lab.decoding.settings import check_overrides
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.trainer_settings import check_trainer
from seq2seq_lab.training.divergence import DivergenceRule


def check_before_the_run(entry: str, cfg: DictConfig, argv: list[str]) -> None:
    """What ``python -m seq2seq_lab.<entry> ARGV`` would otherwise refuse only after Hydra made
    its directory and the data was prepared, checked from the composed ``cfg`` (of a sweep:
    its first job): for train the optimiser's values, the accelerator, the loggers' packages
    and the data files; for
    eval and translate their settings and the checkpoint file (readable, a seq2seq-lab
    checkpoint). One line (UserError) naming the key."""
    if entry == "train":
        _check_optimizer(cfg)
        _check_accelerator(cfg, argv)
        _check_loggers(cfg)
        if not cfg.get("resume"):  # a queue job may have nothing left to read
            datamodule = instantiate(cfg.data, key="data")
            datamodule.check_inputs()
    elif entry in ("eval", "translate"):
        (check_eval_inputs if entry == "eval" else check_translate_inputs)(cfg)
        read_checkpoint(cfg.ckpt_path, mmap=True)  # a seq2seq-lab checkpoint, its tensors mapped


def _check_optimizer(cfg: DictConfig) -> None:
    """The optimiser built on one parameter: torch checks its values (``optim.lr=-0.001``)
    in its constructor, which the run reaches only after preparing the data."""
    import torch

    try:
        instantiate(cfg.optim, key="optim", params=[torch.nn.Parameter(torch.zeros(1))])
    except ConfigError as error:
        reason = str(error).partition(": ")[2]
        for key, value in to_plain(cfg.optim).items():
            if not key.startswith("_") and str(value) in reason.split():
                raise ConfigError(
                    f"optim.{key}={value}: {cfg.optim._target_} refuses it ({reason})"
                ) from None
        raise


def _check_loggers(cfg: DictConfig) -> None:
    """``logger=tensorboard`` where neither package Lightning's TensorBoardLogger writes
    through is installed: Lightning refuses it when the logger is built, after the data."""
    logger = cfg.get("logger") or {}
    if "TensorBoardLogger" not in str((logger.get("tensorboard") or {}).get("_target_", "")):
        return
    from lightning.fabric.loggers.tensorboard import (
        _TENSORBOARD_AVAILABLE,
        _TENSORBOARDX_AVAILABLE,
    )

    if not (_TENSORBOARD_AVAILABLE or _TENSORBOARDX_AVAILABLE):
        raise ConfigError(
            "logger=tensorboard: the tensorboard package is not installed; "
            "pip install -e '.[tensorboard]' (or choose logger=csv)"
        )


def _check_accelerator(cfg: DictConfig, argv: list[str]) -> None:
    """``trainer.accelerator=gpu`` (trainer=gpu, trainer=ddp) on a machine whose torch finds no
    GPU: Lightning refuses it when the Trainer is built, after the data is prepared."""
    from lightning.pytorch.accelerators import CUDAAccelerator, MPSAccelerator

    accelerator = cfg.trainer.get("accelerator")
    if accelerator not in ("gpu", "cuda", "mps"):
        return
    usable = {
        "gpu": CUDAAccelerator.is_available() or MPSAccelerator.is_available(),
        "cuda": CUDAAccelerator.is_available(),
        "mps": MPSAccelerator.is_available(),
    }[accelerator]
    if usable:
        return
    chosen = next((a for a in argv if a.startswith("trainer=")), "")
    named = f"{chosen}: " if chosen else ""
    raise ConfigError(
        f"{named}trainer.accelerator={accelerator} needs a GPU and torch finds none here; "
        "on a CPU write trainer=cpu (or leave trainer=default: accelerator auto)"
    )


def check_train_inputs(cfg: DictConfig) -> ResumePoint | None:
    """``train``'s settings that fail only late otherwise (the decoding of the validation and
    test sets, the divergence rule, the length probe's joins, the decoding study's settings) and its ``ckpt_path``: readable, a seq2seq-lab training
    checkpoint of the family of ``model=``, with the training state to resume from; the
    ``trainer.*`` values Lightning would refuse when the Trainer is built (trainer_settings.py;
    the command line is checked for them before Hydra runs, this covers a config composed in
    code). Returns the checkpoint's :class:`ResumePoint` (to check that the built model fits
    it), or None."""
    check_trainer(cfg.trainer)
    if cfg.get("decoding") is not None:
        raise ConfigError(
            "decoding.*: train has no decoding section; the test split is decoded with "
            "module.test_decoding.* and the validation set with module.val_decoding.*"
        )
    for key in ("val_decoding", "test_decoding"):
        DecodingSettings.from_config(to_plain(cfg.module[key]), f"module.{key}")
    DivergenceRule(**to_plain(cfg.module.divergence))
    _check_joins(cfg)
    if cfg.get(STUDY):  # an empty section (decoding_study=none) is no study, as in training
        StudySettings.from_config(to_plain(cfg[STUDY]))
    if not cfg.get("ckpt_path"):
        return None
    return check_resume_point(cfg.ckpt_path, expected_family=family_of(to_plain(cfg.model)))


def check_eval_inputs(cfg: DictConfig) -> None:
    """``eval``: a ``ckpt_path`` given, the ``decoding.*`` overrides, the length probe's
    joins and the decoding study's settings valid (the checkpoint itself is checked as it is
    loaded, the first thing eval does)."""
    _require_checkpoint(cfg)
    check_overrides(to_plain(cfg.get("decoding")) or {})
    _check_joins(cfg)
    if cfg.get(STUDY):
        StudySettings.from_config(to_plain(cfg[STUDY]))


def _check_joins(cfg: DictConfig) -> None:
    """``length_probe``: the numbers of consecutive test pairs to join, or [] for no probe."""
    joins = to_plain(cfg.get(PROBE, []))
    if not isinstance(joins, list) or not all(
        isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in joins
    ):
        raise ConfigError(
            f"{PROBE}={joins}: expected a list of pairs to join (integers >= 1), or []"
        )


def check_translate_inputs(cfg: DictConfig) -> None:
    """``translate``: a ``ckpt_path`` given, ``batch_size`` a positive integer, the
    ``decoding.*`` overrides valid and ``output`` writable (``input`` is checked as it is
    read, before the checkpoint is loaded: :func:`seq2seq_lab.pipeline.translation.read_input`)."""
    _require_checkpoint(cfg)
    batch_size = cfg.get("batch_size")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size={batch_size}: expected a positive integer")
    check_overrides(to_plain(cfg.get("decoding")) or {})
    if cfg.get("output") is not None:
        check_output_file(cfg.output, key="output")


def check_output_file(value: Any, *, key: str) -> None:
    """``key=value`` names a file that can be written: its directory exists and is writable,
    and it is not itself a directory."""
    path = Path(str(value))
    parent = path.parent
    if path.is_dir():
        raise ConfigError(f"{key}={path}: a directory; expected a file path")
    if not parent.is_dir():
        raise ConfigError(f"{key}={path}: directory {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK):
        raise ConfigError(f"{key}={path}: directory {parent} is not writable")


def _require_checkpoint(cfg: DictConfig) -> None:
    if not cfg.get("ckpt_path"):
        raise ConfigError("ckpt_path is required, e.g. ckpt_path=RUN/checkpoints/best.ckpt")
