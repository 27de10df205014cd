"""Loading a training checkpoint for evaluation or translation.

Checkpoints hold only plain containers (the module's constructor dicts, the datamodule's
tokenizer states), so they load with ``torch.load(weights_only=True)``: no pickled code runs.
"""

from __future__ import annotations

import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hydra.utils
import torch

from seq2seq_lab.added_settings import before
from seq2seq_lab.errors import CheckpointError
from seq2seq_lab.training.module import Seq2SeqModule

DATAMODULE_KEY = "TranslationDataModule"  # Lightning stores datamodule.state_dict() here

# Checkpoints written before every decoding setting was recorded left these out; the code of
# that time decoded with these values, so an old checkpoint scores as it did then. (History,
# not a default: the values of new runs come from conf/decoding/.)
OLD_CHECKPOINT_DECODING = {"length_penalty": 1.0, "min_len": 0}
# Luong models written before model.attention.scaled and init_scale existed: Luong's own
# unscaled score, W_m drawn as nn.Linear draws it.
OLD_CHECKPOINT_LUONG_ATTENTION = {
    key: before(f"model.attention.{key}") for key in ("scaled", "init_scale")
}
# Transformers written before model.init existed: the Xavier scheme, whose learned position
# tables enter unscaled.
OLD_CHECKPOINT_TRANSFORMER = {"init": before("model.init")}


@dataclass
class LoadedCheckpoint:
    path: Path
    module: Seq2SeqModule
    datamodule_state: dict[str, Any]
    run_config: dict[str, Any]

    @property
    def family(self) -> str:
        return self.module.family


def family_of(model_config: dict[str, Any]) -> str:
    """The family name a model config builds (its class's ``family``), without building it."""
    return hydra.utils.get_class(model_config["_target_"]).family


def load_checkpoint(
    path: str | Path, *, expected_family: str | None = None, map_location: str = "cpu"
) -> LoadedCheckpoint:
    """The module (eval mode), tokenizer state and run config of a training checkpoint, after
    the checks of :func:`read_checkpoint` (one-line :class:`CheckpointError` each)."""
    path, raw = read_checkpoint(path, expected_family=expected_family, map_location=map_location)
    module = Seq2SeqModule(**_upgraded(raw["hyper_parameters"]))
    module.load_state_dict(raw["state_dict"])
    module.eval()
    return LoadedCheckpoint(
        path=path,
        module=module,
        datamodule_state=raw.get(DATAMODULE_KEY, {}),
        run_config=raw["hyper_parameters"].get("run_config") or {},
    )


def read_checkpoint(
    path: str | Path,
    *,
    expected_family: str | None = None,
    map_location: str = "cpu",
    mmap: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """The raw checkpoint dict at ``ckpt_path``, checked: the file exists, loads with
    ``weights_only=True``, is a seq2seq-lab training checkpoint and, when ``expected_family``
    is given, holds that model family. Each failure is a one-line :class:`CheckpointError`
    naming ``ckpt_path``. ``mmap`` maps the tensors instead of reading them (a check only)."""
    path = Path(path)
    if not path.is_file():
        what = (
            "a directory, expected a checkpoint file"
            if path.is_dir()
            else "no such checkpoint file"
        )
        raise CheckpointError(f"ckpt_path={path}: {what}")
    # mmap needs torch's zip format: any other file is read whole, for torch's own error
    mmap = mmap and zipfile.is_zipfile(path)
    try:
        raw = torch.load(path, map_location=map_location, weights_only=True, mmap=mmap)
    except Exception as error:  # torch raises many types for a corrupt or foreign file
        raise CheckpointError(
            f"ckpt_path={path}: not a readable checkpoint ({_why_unreadable(error, path)})"
        ) from None
    hparams = raw.get("hyper_parameters") if isinstance(raw, dict) else None
    if not hparams or "network" not in hparams or "state_dict" not in raw:
        raise CheckpointError(f"ckpt_path={path}: not a seq2seq-lab training checkpoint")
    try:
        family = family_of(hparams["network"])
    except Exception:  # a class this code does not have (renamed, or another project's)
        target = (
            hparams["network"].get("_target_") if isinstance(hparams["network"], dict) else None
        )
        raise CheckpointError(
            f"ckpt_path={path}: its model class {target!r} is not one of this code's families"
        ) from None
    if expected_family is not None and family != expected_family:
        raise CheckpointError(
            f"ckpt_path={path} holds a '{family}' model, but model={expected_family} was "
            f"requested; pass model={family} (eval, translate: or no model=) or a "
            f"{expected_family} checkpoint"
        )
    return path, raw


def _why_unreadable(error: Exception, path: Path) -> str:
    """One line for torch.load's error: what the file is not, then the first sentence of the
    error; for a weights-only refusal a plain explanation instead (torch's own text advises
    ``weights_only=False``, which would run whatever code the file holds)."""
    if isinstance(error, pickle.UnpicklingError) or "weights_only" in str(error):
        return (
            "it holds Python objects other than tensors and plain containers, which are not "
            "loaded: a seq2seq-lab checkpoint holds none"
        )
    text = _text_start(path)
    if text is not None:  # a notes file or a config passed by mistake: not "truncated"
        return f"a text file, not one torch.save wrote: it begins {text!r}"
    lines = str(error).strip().splitlines()
    first = lines[0].split(". ")[0].rstrip(".") if lines else ""
    detail = f"{type(error).__name__}: {first}" if first else type(error).__name__
    # torch.save writes a zip archive; a truncated one has lost its directory at the end
    what = (
        "truncated or corrupt"
        if zipfile.is_zipfile(path)
        else "truncated, or not written by torch.save"
    )
    return f"{what}: {detail}"


def _text_start(path: Path, size: int = 4096) -> str | None:
    """The first line of ``path`` (cut to 40 characters) where its first ``size`` bytes are
    text (UTF-8, no NUL byte; a checkpoint is a zip archive or a binary pickle), else None."""
    with path.open("rb") as file:
        head = file.read(size)
    if not head or b"\0" in head:
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:  # not merely a character cut at the block's end
            return None
        text = head[: error.start].decode("utf-8")
    return text.strip().splitlines()[0][:40] if text.strip() else None


@dataclass(frozen=True)
class ResumePoint:
    """What ``train`` checks of a ``ckpt_path`` to resume from before building anything."""

    path: Path
    network: dict[str, Any]  # the checkpoint's model config
    shapes: dict[str, tuple[int, ...]]  # parameter name -> shape

    def check_fits(self, module: torch.nn.Module, network: dict[str, Any]) -> None:
        """One-line :class:`CheckpointError` when ``module`` (built from ``network``, the
        model config of this run) has other parameters than the checkpoint: names the first
        differing parameter and the ``model.*`` keys whose values differ."""
        own = {name: tuple(t.shape) for name, t in module.state_dict().items()}
        if own == self.shapes:
            return
        name = next(
            n for n in sorted(own.keys() | self.shapes.keys()) if own.get(n) != self.shapes.get(n)
        )
        here = own.get(name, "absent")
        there = self.shapes.get(name, "absent")
        differ = [
            f"model.{key}={self.network.get(key)} in it, {network.get(key)} here"
            for key in sorted(network.keys() | self.network.keys())
            if key not in ("src_vocab_size", "tgt_vocab_size")
            and network.get(key) != self.network.get(key)
        ]
        vocab = [
            f"{key}={self.network.get(key)} in it, {network.get(key)} here"
            for key in ("src_vocab_size", "tgt_vocab_size")
            if network.get(key) != self.network.get(key)
        ]
        why = "; ".join(differ + vocab) or "same model config"
        raise CheckpointError(
            f"ckpt_path={self.path} does not fit this run's model: parameter {name} is "
            f"{there} in the checkpoint, {here} here ({why}); resume with the settings it "
            "was trained with"
        )


def check_resume_point(path: str | Path, *, expected_family: str) -> ResumePoint:
    """The checks of :func:`read_checkpoint`, plus the training state Lightning resumes from
    (a weights-only file such as an averaged checkpoint has none), without reading the
    weights: what ``train ckpt_path=...`` checks before any data or model is built."""
    path, raw = read_checkpoint(path, expected_family=expected_family, mmap=True)
    missing = [key for key in ("optimizer_states", "loops") if key not in raw]
    if missing:
        raise CheckpointError(
            f"ckpt_path={path}: holds weights only, no training state ({missing[0]}) to "
            "resume from; pass a checkpoint written by training (RUN/checkpoints/last.ckpt)"
        )
    shapes = {name: tuple(t.shape) for name, t in raw["state_dict"].items()}
    return ResumePoint(path, dict(raw["hyper_parameters"]["network"]), shapes)


def _upgraded(hparams: dict[str, Any]) -> dict[str, Any]:
    """An older checkpoint's hyper-parameters with the settings added since, at the values its
    code used (:data:`OLD_CHECKPOINT_DECODING`, :data:`OLD_CHECKPOINT_LUONG_ATTENTION`,
    :data:`OLD_CHECKPOINT_TRANSFORMER`)."""
    upgraded = dict(hparams)
    for key in ("val_decoding", "test_decoding"):
        if key in upgraded:
            upgraded[key] = {**OLD_CHECKPOINT_DECODING, **upgraded[key]}
    network = upgraded.get("network") or {}
    if network and family_of(network) == "luong" and isinstance(network.get("attention"), dict):
        attention = {**OLD_CHECKPOINT_LUONG_ATTENTION, **network["attention"]}
        upgraded["network"] = {**network, "attention": attention}
    if network and family_of(network) == "transformer":
        upgraded["network"] = {**OLD_CHECKPOINT_TRANSFORMER, **network}
    return upgraded
