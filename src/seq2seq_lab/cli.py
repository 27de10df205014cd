"""How the entry points report errors: a user's mistake is one line, not a traceback.

In a multirun (sweep) a failing job must not stop the others: its results.json already says
"failed" with the error, so the error is logged and the next job runs. An interruption
(SIGTERM, SIGINT) stops the process, sweep included, with exit code 128 + the signal number.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig

from seq2seq_lab.errors import UserError
from seq2seq_lab.record.interruptions import Interrupted
from seq2seq_lab.renames import check_argv

log = logging.getLogger("seq2seq_lab")


def refuse_renamed_options() -> None:
    """Stop on a renamed option given on the command line (``scale=cpu``) with one line naming
    its new name, before Hydra composes anything (seq2seq_lab/renames.py)."""
    try:
        check_argv(sys.argv[1:])
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def run_task(task: Callable[[DictConfig], Any], cfg: DictConfig) -> Any:
    from seq2seq_lab.pipeline.building import is_multirun

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
        sys.exit(interruption.exit_code)
