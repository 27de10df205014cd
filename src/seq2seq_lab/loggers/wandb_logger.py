"""A W&B logger that works on a machine with no account: offline unless a key is configured.

``WANDB_MODE`` set by the user always wins (``disabled`` turns W&B off, ``online`` forces it).
Offline runs are written under the run directory and can be uploaded later with
``wandb sync RUN/wandb/offline-run-*``. The arguments of :func:`make_wandb_logger` have no
defaults: their one home is ``conf/logger/wandb.yaml``.
"""

from __future__ import annotations

import netrc
import os
from pathlib import Path

from lightning.pytorch.loggers import WandbLogger


def api_key_configured() -> bool:
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        auth = netrc.netrc(Path.home() / ".netrc").authenticators("api.wandb.ai")
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False
    return bool(auth and auth[2])


def make_wandb_logger(
    *,
    project: str,
    entity: str | None,
    save_dir: str,
    group: str | None,
    job_type: str | None,
    tags: list[str] | None,
    log_model: bool,
) -> WandbLogger:
    mode = os.environ.get("WANDB_MODE") or ("online" if api_key_configured() else "offline")
    Path(save_dir).mkdir(parents=True, exist_ok=True)
    logger = WandbLogger(
        project=project,
        entity=entity,
        save_dir=save_dir,
        group=group,
        job_type=job_type,
        tags=list(tags or []),
        log_model=log_model,
        mode=mode,
    )
    if mode != "disabled":
        # The run summary keeps the best validation BLEU, not the last one.
        logger.experiment.define_metric("val/bleu", summary="max")
        logger.experiment.define_metric("val/loss", summary="min")
    return logger


def finish_wandb() -> None:
    """End the active W&B run, if any: every job of a multirun must start a fresh one."""
    import sys

    wandb = sys.modules.get("wandb")
    if wandb is not None and getattr(wandb, "run", None) is not None:
        wandb.finish()
