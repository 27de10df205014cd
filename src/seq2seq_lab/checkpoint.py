"""Loading a training checkpoint for evaluation or translation.

Checkpoints hold only plain containers (the module's constructor dicts, the datamodule's
tokenizer states), so they load with ``torch.load(weights_only=True)``: no pickled code runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hydra.utils
import torch

from seq2seq_lab.errors import CheckpointError
from seq2seq_lab.training.module import Seq2SeqModule

DATAMODULE_KEY = "TranslationDataModule"  # Lightning stores datamodule.state_dict() here

# Checkpoints written before every decoding setting was recorded left these out; the code of
# that time decoded with these values, so an old checkpoint scores as it did then. (History,
# not a default: the values of new runs come from conf/decoding/.)
OLD_CHECKPOINT_DECODING = {"length_penalty": 1.0, "min_len": 0}


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
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"ckpt_path={path}: no such checkpoint file")
    try:
        raw = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # torch raises many types for a corrupt or foreign file
        raise CheckpointError(f"ckpt_path={path}: not a readable checkpoint ({error})") from None
    hparams = raw.get("hyper_parameters") if isinstance(raw, dict) else None
    if not hparams or "network" not in hparams or "state_dict" not in raw:
        raise CheckpointError(f"ckpt_path={path}: not a seq2seq-lab training checkpoint")
    family = family_of(hparams["network"])
    if expected_family is not None and family != expected_family:
        raise CheckpointError(
            f"ckpt_path={path} holds a '{family}' model, but model={expected_family} was "
            f"requested; drop the model= override or pass a {expected_family} checkpoint"
        )
    module = Seq2SeqModule(**_with_all_decoding_settings(hparams))
    module.load_state_dict(raw["state_dict"])
    module.eval()
    return LoadedCheckpoint(
        path=path,
        module=module,
        datamodule_state=raw.get(DATAMODULE_KEY, {}),
        run_config=hparams.get("run_config") or {},
    )


def _with_all_decoding_settings(hparams: dict[str, Any]) -> dict[str, Any]:
    upgraded = dict(hparams)
    for key in ("val_decoding", "test_decoding"):
        if key in upgraded:
            upgraded[key] = {**OLD_CHECKPOINT_DECODING, **upgraded[key]}
    return upgraded
