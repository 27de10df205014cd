"""Runs read back from a report's ``runs.csv`` (a *run table*), for reports made again without
the run directories.

A report writes one row per run (``generate.write_runs_csv``): run, variant, seed, status,
note, scale, test.{bleu,chrf,ter,ppl}, steps, late_val_gain, train_seconds,
train_tokens_per_second and ``config.<flattened key>``. :func:`read_run_table` turns each row
back into a :class:`~seq2seq_lab.report.runs.Run` whose results hold what the row holds:

- ``status``, ``seed``, ``variant``, ``scale`` (the column, else the ``scale`` given: tables
  written before the column existed), ``experiment`` (``config.experiment_name``);
- ``config``: nested again from the ``config.`` columns, each value parsed back from the text
  the CSV wrote (``str`` of the value: "True", "1e-08", "[0.9, 0.999]" become a bool, a float,
  a list; anything that does not read back as the same text, "${paths.output_dir}" or
  "1,2,3", stays a string; an empty cell, None or "", is left out);
- ``test`` ({bleu, chrf, ter, ppl}, the scores present; none without a BLEU), ``training``
  ({steps, late_val_gain}), ``timing`` ({train_seconds, train_tokens_per_second});
- the note as ``error`` (a failed run) or ``status_reason``;
- ``overrides``: the grid setting of the run's variant (:func:`variant_settings`) and its seed,
  so that the report's check of the grid's settings (``Comparison.missing_settings``) reads
  them; none when the experiment's grid at that scale has no setting of that variant label.

What a run directory alone holds is absent: test outputs (hypotheses, hence no bootstrap over
test sentences), BLEU by source length, metrics.csv, diagnostics, attention images, the
recorded validations, the Hydra overrides as typed (hence no sweep command), versions,
hardware, the data summary (but for the data set's name, read from the verdict.json an earlier
report left beside the table), parameters and what stopped training. ``Run.path`` is ``<runs.csv>/<run>``: a path
under a file, beside which nothing can lie, so every file accessor answers None or empty.

A report made from a table cannot draw figures: :func:`kept_figures` names the PNGs an earlier
report left in the output directory and the heatmaps the output folder's store keeps for it
(kept, never redrawn), and :func:`kept_commands` the sweep command it showed.
"""

from __future__ import annotations

import ast
import csv
import json
import logging
import math
import shlex
from functools import cache
from pathlib import Path
from typing import Any

from seq2seq_lab import experiment_folders
from seq2seq_lab.added_settings import NOTE_START, partly_added, remake_note
from seq2seq_lab.config import CONF_DIR  # importing config registers its resolvers
from seq2seq_lab.errors import UserError
from seq2seq_lab.renames import current, current_variant
from seq2seq_lab.report.commands import ENTRY_POINT, SweepCommand
from seq2seq_lab.report.figures import Figures, show_heatmaps
from seq2seq_lab.report.heatmaps import kept_heatmaps
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison, ExperimentSpec

log = logging.getLogger(__name__)
REQUIRED = ("variant", "seed", "status")  # the columns that make a CSV a run table
SCORES = ("bleu", "chrf", "ter", "ppl")
CONFIG = "config."
_SPECIAL_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def is_run_table(path: str | Path) -> bool:
    """Whether ``path`` names a CSV file (to be read as a run table)."""
    path = Path(path)
    return path.is_file() and path.suffix.lower() == ".csv"


def parse_value(text: str) -> Any:
    """A CSV cell back to the value whose ``str`` it is: "True" -> True, "1e-08" -> 1e-08,
    "[0.9, 0.999]" -> [0.9, 0.999], "None" -> None; any other text stays as it is."""
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    if value is not None and not isinstance(value, bool | int | float | list | dict):
        return text  # "1,2,3" reads as a tuple, "'a'" as a string: the text was a string
    return value if str(value) == text else text


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """{"model.attention.score": "dot"} -> {"model": {"attention": {"score": "dot"}}}."""
    tree: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = tree
        *parents, leaf = dotted.split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break  # a key both a value and a parent: keep the value
            node = child
        else:
            if not isinstance(node.get(leaf), dict):
                node[leaf] = value
    return tree


def _number(text: str | None, kind: type = float) -> Any:
    if text is None or text.strip() == "":
        return None
    try:
        return kind(float(text)) if kind is int else float(text)
    except ValueError:
        return None


def row_results(row: dict[str, str], scale: str | None = None) -> dict[str, Any]:
    """One run table row -> the results a :class:`Run` reads (module docstring)."""
    cells = {k: v for k, v in row.items() if k and v not in (None, "")}
    config = nest(
        {k[len(CONFIG) :]: parse_value(v) for k, v in cells.items() if k.startswith(CONFIG)}
    )
    status = cells.get("status", "failed")
    results: dict[str, Any] = {
        "status": status,
        "seed": _number(cells.get("seed"), int),
        "variant": current_variant(cells.get("variant")),
        "experiment": config.get("experiment_name"),
        "scale": current("scale", cells.get("scale") or scale),
        "config": config,
    }
    test = {k: _number(cells.get(f"test.{k}")) for k in SCORES}
    if test["bleu"] is not None:
        results["test"] = {k: v for k, v in test.items() if v is not None}
    training = {
        "steps": _number(cells.get("steps"), int),
        "late_val_gain": _number(cells.get("late_val_gain")),
    }
    if any(v is not None for v in training.values()):
        results["training"] = {k: v for k, v in training.items() if v is not None}
    timing = {k: _number(cells.get(k)) for k in ("train_seconds", "train_tokens_per_second")}
    if any(v is not None for v in timing.values()):
        results["timing"] = {k: v for k, v in timing.items() if v is not None}
    if note := cells.get("note"):
        results["error" if status == "failed" else "status_reason"] = note
    return {k: v for k, v in results.items() if v is not None}


def read_run_table(path: str | Path, scale: str | None = None) -> list[Run]:
    """The runs of a report's runs.csv, in row order (module docstring). ``scale``: the scale
    of rows that record none (a table written before the column existed); a row that records
    another is an error."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            columns = list(reader.fieldnames or [])
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise UserError(f"{path}: cannot be read as a run table ({error})") from None
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise UserError(
            f"{path}: not a run table (a report's runs.csv): no column "
            f"{', '.join(missing)} (expected run, variant, seed, status, test.bleu, ..., "
            "config.* columns)"
        )
    runs, source = [], _recorded_source(path.parent)
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        recorded = (row.get("scale") or "").strip()
        if scale is not None and recorded and current("scale", recorded) != current("scale", scale):
            raise UserError(
                f"{path}:{number}: the run records scale {recorded!r}, not the {scale!r} given"
            )
        name = (row.get("run") or "").strip() or str(number - 2)
        results = row_results(row, scale)
        experiment, variant = results.get("experiment"), results.get("variant")
        if experiment and variant:
            setting = variant_settings(str(experiment), results.get("scale")).get(str(variant))
            if setting is not None:
                seed = results.get("seed")
                results["overrides"] = [*setting, *([f"seed={seed}"] if seed is not None else [])]
        if source:
            results["data"] = {"source": source}
        runs.append(Run(path=path / name, results=results))
    return runs


def _recorded_source(directory: Path) -> str | None:
    """The data set an earlier report beside the table named (its verdict.json's one ``data``
    entry): runs.csv does not hold it."""
    try:
        data = json.loads((directory / "verdict.json").read_text(encoding="utf-8")).get("data")
    except (OSError, ValueError, AttributeError):
        return None
    return str(data[0]) if isinstance(data, list) and len(data) == 1 else None


@cache
def variant_settings(experiment: str, scale: str | None) -> dict[str, list[str]]:
    """variant label -> the grid setting (override list, seed excluded) that makes it, for
    experiment ``experiment``'s grid at ``scale``: each setting's config is composed as its
    sweep job composes it and its ``variant`` read (every experiment's label is a function of
    its swept settings). A label two settings share is left out; {} when the experiment, the
    scale or a composition is missing."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    from seq2seq_lab.report.grid import grid_settings

    if scale is None or experiment not in experiment_folders.experiments():
        return {}
    try:
        grid = grid_settings(experiment, scale)
        if grid is None:
            return {}
        labels: dict[str, list[list[str]]] = {}
        for setting in grid:
            GlobalHydra.instance().clear()
            with initialize_config_dir(CONF_DIR, version_base="1.3"):
                overrides = [f"experiment={experiment}", f"scale={scale}", *setting]
                cfg = compose("train", overrides=overrides, return_hydra_config=True)
            HydraConfig.instance().set_config(cfg)
            labels.setdefault(str(cfg.variant), []).append(setting)
    except Exception as error:  # a config that no longer composes: no setting is known
        log.warning(
            "the grid of %s at scale %s could not be composed: %s", experiment, scale, error
        )
        return {}
    finally:
        GlobalHydra.instance().clear()
    return {label: found[0] for label, found in labels.items() if len(found) == 1}


# ---------------------------------------------------------------------------- kept outputs
def kept_figures(spec: ExperimentSpec, comparison: Comparison, out_dir: Path) -> Figures:
    """The figures an earlier report left in ``out_dir``, named as the spec's plots, and the
    heatmaps the output folder's store records this report as showing: nothing is drawn
    or removed."""
    figures = Figures()
    for plot in spec.plots:
        paths = sorted(out_dir.glob(f"{plot.name}.png")) + sorted(
            out_dir.glob(f"{plot.name}_*.png")
        )
        if paths:
            figures.plots.append((plot.name, plot.caption, paths))
        else:
            figures.notes.append(
                f"{plot.caption}: not drawn (the report was made from a run table, which holds "
                "none of the runs' files, and no earlier image of it is here)"
            )
    show_heatmaps(figures, kept_heatmaps(comparison, out_dir), comparison)
    return figures


KEPT_COMMAND = "# as the earlier report here gave it (runs.csv records no Hydra overrides):"
NO_COMMAND = "# not recoverable: runs.csv records no Hydra overrides"


def _with_added_settings(block: str, runs: list[Run]) -> str:
    """A kept command block with the options added since its runs were made, at their values
    (seq2seq_lab/added_settings.py): those every run needs on each command line, not twice;
    a line under the block for those only some runs need."""
    every, some = partly_added([run.config for run in runs], [run.scale for run in runs])
    lines = []
    for line in block.splitlines():
        if line.startswith(ENTRY_POINT):
            words = shlex.split(line)
            keys = {w.partition("=")[0]: i for i, w in enumerate(words)}
            for override in every:
                key = override.partition("=")[0]
                if key in keys:
                    words[keys[key]] = override
                else:
                    words.append(override)
            line = " ".join(shlex.quote(w) for w in words)
        if not line.startswith(NOTE_START):
            lines.append(line)
    for override, which in some.items():
        lines.append(remake_note(override, [str(runs[i].variant) for i in which]))
    return "\n".join(lines)


def kept_commands(root: Path, runs: list[Run], out_dir: Path) -> list[SweepCommand]:
    """The sweep command of runs read from the table ``root``: the one an earlier report.md in
    ``out_dir`` showed (its "How these runs were made" block, kept as it was), else a line
    saying it cannot be rebuilt. Shown as one command over every run, at the table's path."""
    try:
        text = (out_dir / "report.md").read_text(encoding="utf-8")
    except OSError:
        text = ""
    section = text.partition("## How these runs were made")[2].partition("\n## ")[0]
    block = section.partition("```bash\n")[2].partition("\n```")[0].strip()
    if KEPT_COMMAND in block:  # made from a table before: what it kept
        block = block.partition(KEPT_COMMAND)[2].strip()
    if block and block != NO_COMMAND:
        block = _with_added_settings(block, runs)
    command = f"{KEPT_COMMAND}\n{block}" if block and block != NO_COMMAND else NO_COMMAND
    return [SweepCommand(directory=root, command=command, runs=len(runs))]
