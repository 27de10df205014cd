"""How the entry points report errors: a user's mistake is one line, not a traceback.

In a multirun (sweep) a failing job must not stop the others: its results.json already says
"failed" with the error, so the error is logged and the next job runs. An interruption
(SIGTERM, SIGINT) stops the process, sweep included, with exit code 128 + the signal number.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from seq2seq_lab import help_text  # noqa: F401  (registers the resolver of --help's text)
from seq2seq_lab.command_line import check_command_line, flags_first, skipped_grid
from seq2seq_lab.console import interrupted_sweep
from seq2seq_lab.errors import UserError
from seq2seq_lab.record.interruptions import Interrupted
from seq2seq_lab.renames import check_argv

log = logging.getLogger("seq2seq_lab")


def refuse_command_line_mistakes(config_name: str) -> None:
    """Put Hydra's flags before the overrides (``threads=1 -m ...`` as ``-m threads=1 ...``), then
    stop on a mistake on the command line with one line on stderr and exit code 2, before
    Hydra composes anything or a run directory exists: a renamed option (``scale=cpu``,
    seq2seq_lab/renames.py), then a mistyped key, an unknown option, a bad value
    (seq2seq_lab/command_line.py), then what the composed config names: the optimiser's
    values, the accelerator, the data files, the checkpoint (seq2seq_lab/preflight.py)."""
    argv = flags_first(sys.argv[1:])
    sys.argv[1:] = argv  # Hydra parses sys.argv: -m after an override is no mistake
    try:
        check_argv(argv)
        cfg = check_command_line(config_name, argv)
        if cfg is not None:
            from seq2seq_lab.preflight import check_before_the_run  # imports torch

            check_before_the_run(config_name, cfg, argv)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def warn_of_a_skipped_grid() -> None:
    """One warning line when a config that sets a sweep grid runs without ``-m`` (one job of
    the grid trains, with the defaults); the run goes on."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized() or HydraConfig.get().mode == RunMode.MULTIRUN:
        return
    hydra = HydraConfig.get()
    warning = skipped_grid(
        hydra.sweeper.get("params"),
        list(hydra.overrides.task),
        f"python -m seq2seq_lab.{hydra.job.config_name}",
        sys.argv[1:],
    )
    if warning:
        print(f"warning: {warning}", file=sys.stderr)


def run_task(task: Callable[[DictConfig], Any], cfg: DictConfig) -> Any:
    from seq2seq_lab.pipeline.building import is_multirun

    warn_of_a_skipped_grid()
    try:
        return task(cfg)
    except UserError as error:
        if is_multirun():
            log.error("job failed: %s", error)
            return None
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except Exception:
        if is_multirun():
            log.exception("job failed (recorded in its results.json); the sweep goes on")
            return None
        raise
    except Interrupted as interruption:
        print(f"{interruption} (recorded in the run's results.json)", file=sys.stderr)
        if is_multirun():  # the whole sweep stops: say where it is and how to go on with it
            from hydra.core.hydra_config import HydraConfig

            hydra = HydraConfig.get()
            command = f"python -m seq2seq_lab.{hydra.job.config_name}"
            for line in interrupted_sweep(Path(hydra.sweep.dir), command, sys.argv[1:]):
                print(line, file=sys.stderr)
        sys.exit(interruption.exit_code)
