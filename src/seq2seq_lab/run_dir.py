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
"""

from __future__ import annotations

from pathlib import Path

from lightning.pytorch.utilities.rank_zero import rank_zero_only

from seq2seq_lab.errors import ConfigError

RUN_MARKERS = ("results.json", "checkpoints", "csv")


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
