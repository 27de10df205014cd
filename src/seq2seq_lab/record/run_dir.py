"""One run, one directory: ``train`` never writes into another run's directory.

A directory holds a run once ``train`` has left any of :data:`RUN_MARKERS` in it (results.json,
checkpoints/, the csv/ history). Starting ``train`` in such a directory is refused up front,
with a one-line :class:`~seq2seq_lab.errors.ConfigError` naming it, unless the run resumes
from a checkpoint inside that directory (``ckpt_path=RUN/checkpoints/last.ckpt``): that is
the same run going on, so ``checkpoints/best.ckpt`` and ``last.ckpt`` keep meaning this run's.
Hydra names fresh directories with ``${run_stamp:}`` (seq2seq_lab/config.py), so runs started
together get their own.

A run that failed (or was interrupted) before its first ``last.ckpt`` cannot be continued and
has no result: it does not hold its directory. The same command started there again moves its
files to ``abandoned/<time>/`` in the directory (kept, not deleted; the report leaves them out),
says so in one log line, and starts anew (:func:`set_aside_dead_end`). Every file it left goes
(its diagnostics and log too), so nothing the new run appends to mixes the two runs' records.

A resumable queue (``resume=true``, the real-data grids: experiments/run_real.sh) runs one
sweep again and again into the same directory: each job then goes on with what its directory
holds (:func:`continuation`) instead of being refused: a finished run is kept byte for byte
(Hydra writes no new ``.hydra/`` record there: ``hydra.output_subdir`` in conf/hydra/default.yaml;
nor a line in its log: :func:`close_run_log`), an unfinished one continues from its
``last.ckpt``, and so does one its wall-clock cap ended once the queue raises the cap.

Under DDP every rank runs ``train`` in the same directory: only global rank zero checks it
(:func:`is_rank_zero`) and writes the run's outputs.

From the command line the rule is checked by :class:`RunDirGuard`, a Hydra callback, before
Hydra itself writes into the directory (``.hydra/``, the job's log); a sweep directory that
holds a sweep is refused the same way (:func:`check_sweep_dir`). The callback first locks the
directory for the life of the process (:mod:`seq2seq_lab.record.run_lock`), so of two runs
started into one directory at the same instant one is refused.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from lightning.pytorch.utilities.rank_zero import rank_zero_only
from omegaconf import DictConfig

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.record import run_lock
from seq2seq_lab.record.results import ABANDONED, FINISHED, read_results
from seq2seq_lab.renames import current_variant

log = logging.getLogger(__name__)

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


def set_aside(run_dir: Path, names: list[str]) -> Path:
    """Move the files ``names`` of ``run_dir`` to a new ``abandoned/<time>/`` in it; returns
    that directory."""
    stamp = time.strftime("%Y-%m-%d_%H-%M-%S")
    aside, n = run_dir / ABANDONED / stamp, 1
    while aside.exists():  # set aside twice within a second
        aside, n = run_dir / ABANDONED / f"{stamp}-{n}", n + 1
    aside.mkdir(parents=True)
    for name in names:
        (run_dir / name).rename(aside / name)
    return aside


def set_aside_run(run_dir: Path) -> Path:
    """Move everything the run in ``run_dir`` left to a new ``abandoned/<time>/``
    (:func:`set_aside`) but what this process has already written there as the new run's.
    When ``run_dir`` is the directory of the running Hydra job, that is Hydra's record of the
    job (``.hydra/``, written over the old run's) and the job's log, which Hydra opened for
    appending after the old run's lines: the log is copied along and emptied in place (the
    new run's lines go on at its start), so neither file mixes the two runs."""
    record_dir = _this_jobs_record_dir(run_dir)
    logs = [Path(h.baseFilename) for h in _run_log_handlers(run_dir)]
    logs = [path for path in logs if path.parent.resolve() == run_dir.resolve()]
    keep = {ABANDONED, *([record_dir] if record_dir else []), *(path.name for path in logs)}
    aside = set_aside(run_dir, sorted(p.name for p in run_dir.iterdir() if p.name not in keep))
    for path in logs:
        shutil.copy2(path, aside / path.name)
        os.truncate(path, 0)  # opened with O_APPEND: the next line is written at the start
    return aside


def _this_jobs_record_dir(run_dir: Path) -> str | None:
    """The name of the running Hydra job's record directory (``hydra.output_subdir``) when
    ``run_dir`` is that job's directory, else None."""
    if not HydraConfig.initialized():
        return None
    hydra = HydraConfig.get()
    output_dir = hydra.runtime.get("output_dir")
    if not output_dir or Path(output_dir).resolve() != run_dir.resolve():
        return None
    return hydra.output_subdir


def _run_log_handlers(run_dir: Path) -> list[logging.FileHandler]:
    """This process's logging handlers that write to a file inside ``run_dir`` (Hydra's job
    log, ``train.log``)."""
    return [
        handler
        for handler in logging.root.handlers
        if isinstance(handler, logging.FileHandler)
        and Path(handler.baseFilename).resolve().is_relative_to(run_dir.resolve())
    ]


def set_aside_dead_end(run_dir: Path, *, whole: bool) -> Path | None:
    """Set the run in ``run_dir`` aside when it failed or was interrupted (its results.json
    says so) and left no ``checkpoints/last.ckpt`` to continue from; returns where it went,
    None (nothing moved) for any other run. ``whole``: everything in the directory goes
    (before Hydra has written the new run's record and log into it), else what
    :func:`set_aside_run` moves."""
    path = run_dir / "results.json"
    record = read_results(path) if path.is_file() else None
    if record is None or record.get("status") in FINISHED:
        return None
    if (run_dir / "checkpoints" / "last.ckpt").is_file():
        return None
    if not whole:
        return set_aside_run(run_dir)
    return set_aside(run_dir, sorted(p.name for p in run_dir.iterdir() if p.name != ABANDONED))


def _dead_end_line(run_dir: Path, aside: Path) -> str:
    status = read_results(aside / "results.json").get("status")
    return (
        f"run directory {run_dir}: the run there ({status}) left no checkpoint to continue "
        f"from; its files were moved to {aside} and a new run starts"
    )


def check_run_dir(run_dir: Path, ckpt_path: str | None) -> bool:
    """Refuse to start a new run in a directory that holds one; returns True when ``ckpt_path``
    resumes the run already there (a checkpoint inside ``run_dir``), False for a new run. A run
    that failed before its first ``last.ckpt`` is set aside (:func:`set_aside_dead_end`, one
    log line) and the directory is the new run's.

    Raises ConfigError when ``run_dir`` holds a run and ``ckpt_path`` is not one of its files.
    """
    resumes, set_aside_line = _claim(run_dir, ckpt_path, whole=False)
    if set_aside_line is not None:
        log.info(set_aside_line)
    return resumes


def _claim(run_dir: Path, ckpt_path: str | None, *, whole: bool) -> tuple[bool, str | None]:
    """:func:`check_run_dir`'s decision: (resumes, the line saying a failed run was set aside,
    or None). ``whole``: as in :func:`set_aside_dead_end`."""
    found = held_run(run_dir)
    if not found:
        return False, None
    if ckpt_path and Path(ckpt_path).resolve().is_relative_to(run_dir.resolve()):
        return True, None
    aside = set_aside_dead_end(run_dir, whole=whole)
    if aside is None:
        raise _holds_a_run(run_dir, found)
    return False, _dead_end_line(run_dir, aside)


def _holds_a_run(run_dir: Path, found: list[str]) -> ConfigError:
    last = run_dir / "checkpoints" / "last.ckpt"
    go_on = f", or continue that one with ckpt_path={last}" if last.is_file() else ""
    return ConfigError(
        f"run directory {run_dir} already holds a run ({', '.join(found)}): start this one in "
        f"a new directory (hydra.run.dir){go_on}"
    )


# What makes a job the same job when a queue comes back to its directory (Hydra numbers a
# sweep's job directories; a changed grid would renumber them).
IDENTITY = ("experiment_name", "variant", "seed")


@dataclass(frozen=True)
class Continuation:
    """What ``train resume=true`` does in a run directory."""

    finished: dict[str, Any] | None = None  # the finished run's record: nothing to run
    ckpt_path: Path | None = None  # an unfinished run's checkpoint to continue from


def continuation(run_dir: Path, job: Any) -> Continuation:
    """What a resumable queue's job ``job`` (its config, read for its :data:`IDENTITY`) does in
    ``run_dir``:

    - results.json with a :data:`~seq2seq_lab.record.results.FINISHED` status: the run is kept as it
      is (``finished``, its record);
    - an unfinished run (interrupted, failed, or killed with no record) with a
      ``checkpoints/last.ckpt``: it continues from there (``ckpt_path``); so does a run the
      wall clock ended whose job now allows it more time (:func:`clock_cap_raised`);
    - a run killed before its first checkpoint: its files are moved to ``abandoned/<time>/``
      in the directory (:func:`set_aside_run`: kept, not deleted; the report leaves them out)
      and the job starts again;
    - nothing there: the job starts.

    Raises ConfigError when the directory holds another job's run (a grid changed between two
    passes of the queue renumbers its job directories).
    """
    last = run_dir / "checkpoints" / "last.ckpt"
    record = (
        read_results(run_dir / "results.json") if (run_dir / "results.json").is_file() else None
    )
    held = record.get("config") if record else _checkpoint_config(last) if last.is_file() else None
    if held is not None:
        # a run recorded under a model's old name is the same job (seq2seq_lab/renames.py)
        theirs = {key: held.get(key) for key in IDENTITY} | {
            "variant": current_variant(held.get("variant"))
        }
        ours = {key: job.get(key) for key in IDENTITY}
        if theirs != ours:
            raise ConfigError(
                f"run directory {run_dir} holds the run {_named(theirs)}, not this job's "
                f"{_named(ours)} (the grid changed?): give the queue a new hydra.sweep.dir"
            )
    if record is not None and record.get("status") in FINISHED:
        if last.is_file() and clock_cap_raised(record, job):
            return Continuation(ckpt_path=last)
        return Continuation(finished=record)
    if last.is_file():
        return Continuation(ckpt_path=last)
    if held_run(run_dir) and is_rank_zero():
        set_aside_run(run_dir)
    return Continuation()


def clock_cap_raised(record: dict[str, Any], job: Any) -> bool:
    """Whether a finished run was ended by its wall-clock cap (``trainer.max_time``) and the
    job now gives it a larger one: the same run then goes on to its update budget (Lightning's
    Timer restores the time already trained, so the new cap counts it)."""
    if (record.get("training") or {}).get("stopped_by") != "trainer.max_time":
        return False
    was = ((record.get("config") or {}).get("trainer") or {}).get("max_time")
    return cap_seconds((job.get("trainer") or {}).get("max_time")) > cap_seconds(was)


def cap_seconds(cap: Any) -> float:
    """``trainer.max_time`` in seconds, in any form Lightning takes: None (no cap: infinite),
    "DD:HH:MM:SS", a mapping of timedelta's keywords ({"minutes": 40}) or a timedelta."""
    if cap is None:
        return math.inf
    if isinstance(cap, timedelta):
        return cap.total_seconds()
    if isinstance(cap, str):
        days, hours, minutes, seconds = (int(part) for part in cap.split(":"))
        return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds).total_seconds()
    return timedelta(**dict(cap)).total_seconds()


def close_run_log(run_dir: Path) -> None:
    """Stop logging into files inside ``run_dir`` (Hydra's job log, ``train.log``): a finished
    run a queue keeps is kept byte for byte, its log included; what the job says about it goes
    to the console (the queue's pass log) only."""
    for handler in _run_log_handlers(run_dir):
        logging.root.removeHandler(handler)
        handler.close()


def _checkpoint_config(path: Path) -> dict[str, Any]:
    from seq2seq_lab.checkpoint import read_checkpoint

    _, raw = read_checkpoint(path, mmap=True)
    return dict(raw["hyper_parameters"].get("run_config") or {})


def _named(identity: dict[str, Any]) -> str:
    return "/".join(str(identity[key]) for key in IDENTITY[:2]) + f" seed {identity['seed']}"


def check_sweep_dir(sweep_dir: Path) -> None:
    """Refuse a sweep directory that holds a sweep (:data:`SWEEP_MARKERS`, or a job directory
    that holds a run): its jobs would land in the old sweep's job directories."""
    found = [name for name in SWEEP_MARKERS if (sweep_dir / name).exists()]
    if sweep_dir.is_dir():
        found += [f"{job.name}/" for job in sorted(sweep_dir.iterdir()) if held_run(job)][:3]
    if found:
        raise ConfigError(
            f"sweep directory {sweep_dir} already holds a sweep ({', '.join(found)}): "
            "give a new hydra.sweep.dir, or add resume=true to go on with that sweep (its "
            "finished jobs kept, an unfinished one continued from its last.ckpt)"
        )


class RunDirGuard(Callback):
    """Hydra callback (``hydra.callbacks.run_dir`` in conf/train.yaml): before Hydra writes
    anything into the directory, locks it for this process (:mod:`~seq2seq_lab.record.run_lock`)
    and checks it (:func:`check_run_dir`; ``-m``: :func:`check_sweep_dir`). A failed run set
    aside here takes its Hydra record and log along (``.hydra/``, the job's log: nothing of the
    new run is there yet); its log line is written once the job's logging is set up. A refused
    directory is one line on stderr and exit code 2, like every user error."""

    def __init__(self) -> None:
        self._set_aside: str | None = None  # the line saying a failed run was set aside

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        # ${hydra:...} in the directories and in a sweep's params (E4's lrs per scale) needs
        # the Hydra config, which Hydra sets only after this callback and the sweeper
        HydraConfig.instance().set_config(config)
        if not is_rank_zero():  # a DDP rank Lightning started, in rank zero's directory
            return
        run_dir = _directory(config, "run")
        instead = "start this one in a new directory (hydra.run.dir)"
        self._refuse_on_error(lambda: run_lock.hold(run_dir, kind="run", instead=instead))
        if not config.get("resume"):  # resume=true: train goes on with the run (continuation)
            self._refuse_on_error(lambda: self._claim(run_dir, config.get("ckpt_path")))

    def _claim(self, run_dir: Path, ckpt_path: str | None) -> None:
        _, self._set_aside = _claim(run_dir, ckpt_path, whole=True)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        if self._set_aside is not None:
            log.info(self._set_aside)
            self._set_aside = None

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        run_lock.release(_directory(config, "run"))

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        HydraConfig.instance().set_config(config)
        if not is_rank_zero():
            return
        sweep_dir = _directory(config, "sweep")
        self._refuse_on_error(
            lambda: run_lock.hold(sweep_dir, kind="sweep", instead="give a new hydra.sweep.dir")
        )
        if not config.get("resume"):
            self._refuse_on_error(lambda: check_sweep_dir(sweep_dir))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        run_lock.release(_directory(config, "sweep"))

    @staticmethod
    def _refuse_on_error(check: Any) -> None:
        try:
            check()
        except ConfigError as error:
            print(f"error: {error}", file=sys.stderr)
            sys.exit(2)


def _directory(config: DictConfig, mode: str) -> Path:
    """``hydra.<mode>.dir`` as Hydra will resolve it (the same cached ``${run_stamp:}``)."""
    return Path(str(config.hydra[mode].dir))
