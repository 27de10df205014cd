"""A W&B logger that works on a machine with no account (offline unless a key is configured)
and keeps one flat copy of the run's config.

``WANDB_MODE`` set by the user always wins (``disabled`` turns W&B off, ``online`` forces it).
Offline runs are written under the run directory and can be uploaded later with
``wandb sync RUN/wandb/offline-run-*``. The arguments of :func:`make_wandb_logger` have no
defaults: their one home is ``conf/logger/wandb.yaml``.

The run's name, group and job type come from ``wandb_identity.py``; what results.json records
reaches the run at its end (:func:`finish_wandb`, ``wandb_record.py``).
"""

from __future__ import annotations

import netrc
import os
from argparse import Namespace
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.utilities import rank_zero_only

from seq2seq_lab.record.flat_config import flatten


def api_key_configured() -> bool:
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        auth = netrc.netrc(Path.home() / ".netrc").authenticators("api.wandb.ai")
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False
    return bool(auth and auth[2])


class FlatConfigWandbLogger(WandbLogger):
    """Lightning's ``WandbLogger`` whose run config is one flat mapping, logged once.

    The first :meth:`log_hyperparams` call sets it, nested mappings flattened to dotted keys:
    the pipeline's resolved config and data summary (``model.norm``, ``optim.lr``,
    ``data_summary.*``), before training starts, so grouping, filters and parameter importance
    see every setting under one key. Lightning's own later call at ``fit`` passes the module's
    constructor arguments, the same settings again as blobs (``network``, ``optimizer``,
    ``run_config``), and is not logged.
    """

    _config_logged = False

    @rank_zero_only
    def log_hyperparams(self, params: Mapping[str, Any] | Namespace) -> None:
        if self._config_logged:
            return
        super().log_hyperparams(
            flatten(dict(vars(params) if isinstance(params, Namespace) else params))
        )
        self._config_logged = True


def make_wandb_logger(
    *,
    project: str,
    entity: str | None,
    save_dir: str,
    name: str,
    group: str,
    job_type: str,
    tags: list[str] | None,
    log_model: bool,
    quiet: bool,
) -> WandbLogger:
    mode = os.environ.get("WANDB_MODE") or ("online" if api_key_configured() else "offline")
    Path(save_dir).mkdir(parents=True, exist_ok=True)
    logger = FlatConfigWandbLogger(
        project=project,
        entity=entity,
        save_dir=save_dir,
        name=name,
        group=group,
        job_type=job_type,
        tags=list(tags or []),
        log_model=log_model,
        mode=mode,
        # W&B's own console: its banner, history sparklines and summary table (~35 lines a
        # run) or, quiet, the lines that say where the run is and how to sync it
        settings=wandb_settings(quiet=quiet),
    )
    # Lightning passes wandb.init anonymous=None whatever it is given, and W&B warns on every
    # run that the setting is gone: not passing it is what None meant.
    logger._wandb_init.pop("anonymous", None)
    if mode != "disabled":
        # The run summary keeps the best validation BLEU, not the last one.
        logger.experiment.define_metric("val/bleu", summary="max")
        logger.experiment.define_metric("val/loss", summary="min")
    return logger


def finish_wandb(results: dict[str, Any]) -> None:
    """End the active W&B run, if any, with the figures of ``results`` (the run's
    results.json) in its summary (``wandb_record.summary_of``): every job of a multirun
    starts a fresh run."""
    import sys

    wandb = sys.modules.get("wandb")
    if wandb is not None and getattr(wandb, "run", None) is not None:
        from seq2seq_lab.loggers.wandb_record import summary_of

        wandb.run.summary.update(summary_of(results))
        wandb.finish()


def wandb_settings(*, quiet: bool) -> Any:
    """``wandb.Settings`` for a run: ``quiet`` keeps W&B's console to a few lines."""
    import wandb

    return wandb.Settings(quiet=quiet)
