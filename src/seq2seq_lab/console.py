"""What a run prints: each log line once, no third-party chatter, and where things went.

The one place that quiets other libraries' console output (:func:`quiet_third_party`):

- warnings a user can do nothing about (:data:`IGNORED_WARNINGS`: a dependency's own use of
  another's deprecated API) are filtered by message;
- Lightning logs through its own console handler *and*, propagated, through the root logger's
  handlers that Hydra configures (the console and the run's log file): every line twice. Its
  own handlers go; its records still reach the root's;
- Lightning's advertising (:data:`IGNORED_MESSAGES`) is dropped at its logger;
- libraries that narrate their workings at INFO (:data:`WARNINGS_ONLY`) show warnings only.

And the few lines a user reads to know what runs and where its outputs are:
:func:`run_header` before training, :func:`run_footer` after it (the run directory, the results
file and the next commands), :class:`SweepConsole` after a sweep (its directory and the report command).
"""

from __future__ import annotations

import logging
import re
import shlex
import warnings
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from seq2seq_lab.training.budget import training_budget

# Warnings raised inside dependencies, about dependencies: nothing in this project's code or a
# user's config can act on them.
IGNORED_WARNINGS = (
    r"`isinstance\(treespec, LeafSpec\)` is deprecated",  # Lightning's pytree helper on torch
)
# Lightning's log records that advertise rather than inform.
IGNORED_MESSAGES = (r"^💡 Tip:",)
LIGHTNING_LOGGERS = ("lightning", "lightning.pytorch", "lightning.fabric")
# Libraries whose INFO lines narrate their own workings ("A new study created in memory ..."):
# their warnings and errors still show.
WARNINGS_ONLY = ("optuna",)


class _DropMessages(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(re.search(pattern, message) for pattern in IGNORED_MESSAGES)


def quiet_third_party() -> None:
    """Install the filters of the module docstring (idempotent). Lightning's own handlers are
    removed only where the root logger has handlers to take its records."""
    for pattern in IGNORED_WARNINGS:
        warnings.filterwarnings("ignore", message=f".*{pattern}")
    root_handles = logging.getLogger().hasHandlers()
    for name in LIGHTNING_LOGGERS:
        logger = logging.getLogger(name)
        if root_handles and logger.handlers:
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            logger.propagate = True
        for child in (logger, logging.getLogger(f"{name}.utilities.rank_zero")):
            if not any(isinstance(f, _DropMessages) for f in child.filters):
                child.addFilter(_DropMessages())
    for name in WARNINGS_ONLY:
        logging.getLogger(name).setLevel(logging.WARNING)


def run_header(results: dict[str, Any], precision: str) -> list[str]:
    """The lines that say what is about to train, from the run's record so far."""
    config = results["config"]
    label = "/".join(str(x) for x in (results.get("experiment"), results.get("variant")) if x)
    family = results["family"]
    model = label if label == family else f"{label} ({family})"
    data = (results.get("data") or {}).get("source") or config.get("data", {}).get("_target_")
    return [
        f"run: {results.get('run_dir')}",
        f"model: {model}, {results['parameters']:,} parameters; seed {config.get('seed')}",
        f"data: {data}",
        f"budget: {training_budget(config.get('trainer') or {})}; precision {precision}"
        + (f"; debug={config['debug']}" if config.get("debug") else ""),
    ]


RESOLVED = "resolved config (print_config=true):"


def resolved_config(config: dict[str, Any]) -> str:
    """Every setting of the run, interpolations resolved (``config``: the plain config
    results.json records), as YAML under the line :data:`RESOLVED`, ended by an empty line."""
    import yaml

    return f"{RESOLVED}\n{yaml.safe_dump(config, sort_keys=False)}"


def run_footer(run_dir: Path, results: dict[str, Any], example: str | None = None) -> list[str]:
    """Where the run's outputs are and what to run next, by how it ended. ``example``: a
    source sentence the model was tested on, for the translate command to echo (the built-in
    task's sentences are in no file); without one the command echoes a placeholder."""
    status = results.get("status")
    test = results.get("test") or {}
    score = f", test BLEU {test['bleu']:.2f}" if "bleu" in test else ""
    lines = [f"{status}{score}: {run_dir / 'results.json'}"]
    best = run_dir / "checkpoints" / "best.ckpt"
    last = run_dir / "checkpoints" / "last.ckpt"
    if status == "interrupted" and last.is_file():
        given = [
            o
            for o in results.get("overrides") or []
            if not o.startswith(("ckpt_path=", "hydra.run.dir=", "resume="))
        ]
        command = ["python", "-m", "seq2seq_lab.train", *given]
        command += [f"ckpt_path={last}", f"hydra.run.dir={run_dir}"]
        lines.append(f"resume: {shlex.join(command)}")
    elif best.is_file():
        lines += [
            f"score: python -m seq2seq_lab.eval ckpt_path={best} data.split=test",
            f"translate: echo {shlex.quote(example or '...')} | "
            f"python -m seq2seq_lab.translate ckpt_path={best}",
        ]
    lines.append(f"report: python -m seq2seq_lab.report {run_dir}")
    return lines


class SweepConsole(Callback):
    """A Hydra callback: a sweep (``-m``) is quiet from its start (the sweeper's libraries
    too: Optuna announces each study) and ends by saying where its runs are and how to report
    them; each job's own footer is left out there (:func:`run_footer` is for single runs)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        if "optuna" in str(config.hydra.sweeper.get("_target_", "")):
            import optuna  # noqa: F401  (its import sets its log level: ours must come after)
        quiet_third_party()

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        jobs = len(list(sweep_dir.glob("*/results.json")))
        print(f"sweep: {sweep_dir} ({jobs} runs with a results.json)", flush=True)
        print(f"report: python -m seq2seq_lab.report {sweep_dir}", flush=True)


def interrupted_sweep(sweep_dir: Path, command: str, argv: list[str]) -> list[str]:
    """What a sweep stopped by a signal prints: its directory and the command that goes on
    with it (``resume=true``: each finished job kept, an unfinished one continued from its
    ``last.ckpt``, the others trained; seq2seq_lab/record/run_dir.py)."""
    given = [a for a in argv if not a.startswith(("hydra.sweep.dir=", "resume="))]
    resume = shlex.join([*command.split(), *given, f"hydra.sweep.dir={sweep_dir}", "resume=true"])
    return [f"sweep: {sweep_dir} (interrupted)", f"resume: {resume}"]
