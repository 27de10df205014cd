"""One run, one directory: ``train`` never writes into another run's directory.

A directory holds a run once ``train`` has left any of :data:`RUN_MARKERS` in it (results.json,
checkpoints/, the csv/ history). Starting ``train`` in such a directory is refused up front,
with a one-line :class:`~seq2seq_lab.errors.ConfigError` naming it, unless the run resumes
from a checkpoint inside that directory (``ckpt_path=RUN/checkpoints/last.ckpt``): that is
the same run going on, so ``checkpoints/best.ckpt`` and ``last.ckpt`` keep meaning this run's.
Hydra names fresh directories with ``${run_stamp:}`` (seq2seq_lab/config.py), so runs started
together get their own.

Under DDP every rank runs ``train`` in the same directory: only global rank zero checks it
(:func:`is_rank_zero`) and writes the run's outputs.

From the command line the rule is checked by :class:`RunDirGuard`, a Hydra callback, before
Hydra itself writes into the directory (``.hydra/``, the job's log); a sweep directory that
holds a sweep is refused the same way (:func:`check_sweep_dir`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from lightning.pytorch.utilities.rank_zero import rank_zero_only
from omegaconf import DictConfig

from seq2seq_lab.errors import ConfigError

RUN_MARKERS = ("results.json", "checkpoints", "csv")
# What a sweep leaves at the top of its directory: Hydra's basic sweeper, Optuna's
SWEEP_MARKERS = ("multirun.yaml", "optimization_results.yaml")


def is_rank_zero() -> bool:
    """Whether this process is global rank zero: Lightning's ``rank_zero_only.rank``, read from
    the launcher's environment (RANK, LOCAL_RANK, SLURM_PROCID) before the trainer exists and
    set to the trainer's global rank once its strategy is set up."""
    return getattr(rank_zero_only, "rank", 0) == 0


def held_run(run_dir: Path) -> list[str]:
    """The :data:`RUN_MARKERS` present in ``run_dir`` (empty: no run was started there)."""
    return [name for name in RUN_MARKERS if (run_dir / name).exists()]


def check_run_dir(run_dir: Path, ckpt_path: str | None) -> bool:
    """Refuse to start a new run in a directory that holds one; returns True when ``ckpt_path``
    resumes the run already there (a checkpoint inside ``run_dir``), False for a new run.

    Raises ConfigError when ``run_dir`` holds a run and ``ckpt_path`` is not one of its files.
    """
    found = held_run(run_dir)
    if not found:
        return False
    if ckpt_path and Path(ckpt_path).resolve().is_relative_to(run_dir.resolve()):
        return True
    raise ConfigError(
        f"run directory {run_dir} already holds a run ({', '.join(found)}): start this one in "
        f"a new directory (hydra.run.dir), or continue that one with "
        f"ckpt_path={run_dir / 'checkpoints' / 'last.ckpt'}"
    )


def check_sweep_dir(sweep_dir: Path) -> None:
    """Refuse a sweep directory that holds a sweep (:data:`SWEEP_MARKERS`, or a job directory
    that holds a run): its jobs would land in the old sweep's job directories."""
    found = [name for name in SWEEP_MARKERS if (sweep_dir / name).exists()]
    if sweep_dir.is_dir():
        found += [f"{job.name}/" for job in sorted(sweep_dir.iterdir()) if held_run(job)][:3]
    if found:
        raise ConfigError(
            f"sweep directory {sweep_dir} already holds a sweep ({', '.join(found)}): "
            "give a new hydra.sweep.dir"
        )


class RunDirGuard(Callback):
    """Hydra callback (``hydra.callbacks.run_dir`` in conf/train.yaml): :func:`check_run_dir`
    (``-m``: :func:`check_sweep_dir`) before Hydra writes anything into the directory. A
    refused directory is one line on stderr and exit code 2, like every user error."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(lambda: check_run_dir(_directory(config, "run"), config.get("ckpt_path")))

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(lambda: check_sweep_dir(_directory(config, "sweep")))

    @staticmethod
    def _check(check: Any) -> None:
        if not is_rank_zero():  # a DDP rank Lightning started, in rank zero's directory
            return
        try:
            check()
        except ConfigError as error:
            print(f"error: {error}", file=sys.stderr)
            sys.exit(2)


def _directory(config: DictConfig, mode: str) -> Path:
    """``hydra.<mode>.dir`` as Hydra will resolve it (the same cached ``${run_stamp:}``);
    ``${hydra:...}`` in it needs the Hydra config, which Hydra sets only later."""
    HydraConfig.instance().set_config(config)
    return Path(str(config.hydra[mode].dir))
