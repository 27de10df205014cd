"""Finding and reading the runs a report is made of.

A run is a directory with a ``results.json`` written by ``seq2seq_lab.pipeline.training.train``,
plus what the pipeline and callbacks leave beside it: ``hypotheses.<split>.txt`` (bzip2'd in a
committed grid, as is the metrics history: :mod:`seq2seq_lab.record.compressed_outputs`) and
the test set it was scored on (``test_set.json``, or copies ``{references,sources}.<split>.txt``:
:mod:`seq2seq_lab.data.test_set`), ``csv/metrics.csv`` (Lightning's CSVLogger),
``diagnostics/grad_norms_init.json`` and ``diagnostics/validation.jsonl``
(TransformerDiagnostics) and the AttentionPlots callback's ``attention/step*/val*.png``.
Everything but results.json is optional, and results.json itself may be partial (a failed run
records little), so every accessor here answers ``None`` or an empty value rather than raising;
but for ``test_lines``, which raises a one-line DataError when the data set a test_set.json
names is missing or not the one the run scored (a report must not quietly drop its test).
A run's files are found where its results.json lies (``Run.path``), never through a path it
records (test_set.json's data set is relative to the repository): those are read portably
(:mod:`seq2seq_lab.record.portable_paths`), so the report of runs recorded with absolute paths names
none either.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import hydra.utils

from seq2seq_lab.data.test_set import read_test_lines
from seq2seq_lab.errors import UserError
from seq2seq_lab.record.compressed_outputs import read_kept_text
from seq2seq_lab.record.portable_paths import portable_record
from seq2seq_lab.record.results import ABANDONED, FINISHED
from seq2seq_lab.renames import current, current_override, current_variant
from seq2seq_lab.training.convergence import late_gain

RESULTS_FILE = "results.json"
MULTIRUN_FILE = "multirun.yaml"  # Hydra writes it at the top of a sweep directory


@dataclass(frozen=True)
class Run:
    """One run directory and its parsed results.json."""

    path: Path
    results: dict[str, Any] = field(repr=False)

    # ------------------------------------------------------------------ identity
    @property
    def status(self) -> str:
        return str(self.results.get("status") or "failed")

    @property
    def finished(self) -> bool:
        """Whether the run ended by itself with a result ("completed" or "diverged"); a failed
        or interrupted run did not, and none of its numbers count."""
        return self.status in FINISHED

    @property
    def experiment(self) -> str | None:
        return self.results.get("experiment") or self.config_value("experiment_name")

    @property
    def family(self) -> str | None:
        """The model family; for a run that failed before recording it, the ``family`` of
        the class its config names."""
        recorded = self.results.get("family") or _family_of_target(
            self.config_value("model._target_")
        )
        return current("model", recorded)

    @property
    def variant(self) -> str:
        """The row label: results' variant, else the config's, else the family (recorded
        labels by today's model names)."""
        return str(
            current_variant(self.results.get("variant") or self.config_value("variant"))
            or self.family
            or self.config_value("model._target_", "unknown").rsplit(".", 1)[-1]
        )

    @property
    def debug(self) -> str | None:
        """The debug mode the run was made in (``debug=fast|overfit|anomaly``, or Lightning's
        ``trainer.fast_dev_run`` given by hand), None for a real run: a debug run answers
        "does it run", never a comparison, and reports leave it out."""
        if mode := self.config_value("debug"):
            return str(mode)
        return "fast_dev_run" if self.config_value("trainer.fast_dev_run") else None

    @property
    def seed(self) -> int | None:
        seed = self.results.get("seed", self.config_value("seed"))
        return int(seed) if seed is not None else None

    @property
    def scale(self) -> str | None:
        """The scale the run was made at (``scale=`` choice), as results.json records it, by
        its name today (seq2seq_lab/renames.py)."""
        return current("scale", self.results.get("scale"))

    @property
    def steps(self) -> int | None:
        """Optimiser updates the run made."""
        steps = (self.results.get("training") or {}).get("steps")
        return int(steps) if steps is not None else None

    @property
    def late_val_gain(self) -> float | None:
        """How much the best validation BLEU rose over the last quarter of the updates
        (:mod:`seq2seq_lab.training.convergence`); computed from the recorded validations
        when results.json has them but not the figure."""
        training = self.results.get("training") or {}
        if training.get("late_val_gain") is not None:
            return _finite(training["late_val_gain"])
        return late_gain(training.get("validations") or [])

    @property
    def best_val_bleu(self) -> float | None:
        """The best validation BLEU of the run (None: not recorded)."""
        return _finite((self.results.get("training") or {}).get("best_val_bleu"))

    @property
    def stopped_by(self) -> str | None:
        """What ended training ("trainer.max_steps=600", "early stopping on val/bleu",
        "trainer.max_time"...); None for runs recorded before it was."""
        return (self.results.get("training") or {}).get("stopped_by")

    @property
    def overrides(self) -> list[str]:
        """The run's command-line overrides, options by their names today."""
        return [current_override(str(o)) for o in self.results.get("overrides") or []]

    @property
    def config(self) -> dict[str, Any]:
        return self.results.get("config") or {}

    def config_value(self, dotted: str, default: Any = None) -> Any:
        """``config_value("model.attention.score")``: a value of the resolved run config."""
        node: Any = self.results.get("config") or {}
        for key in dotted.split("."):
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    # ------------------------------------------------------------------ scores
    @property
    def test(self) -> dict[str, Any]:
        return self.results.get("test") or {}

    def buckets(self, record: str = "test") -> dict[str, Any]:
        """``<record>.bleu_by_length`` ({bucket: {"bleu", "count"}}) of a finished run: of its
        test, or of another record that scores by source length (``length_probe``)."""
        if not self.finished:
            return {}
        found = self.test if record == "test" else (self.results.get(record) or {})
        return found.get("bleu_by_length") or {}

    def score(self, name: str) -> float | None:
        """A test score (bleu, chrf, ter, ppl, loss) if the run finished and was tested."""
        return _finite(self.test.get(name)) if self.finished else None

    def timing(self, name: str) -> float | None:
        return _finite((self.results.get("timing") or {}).get(name))

    @property
    def sweep_root(self) -> Path:
        """The Hydra sweep directory this run belongs to (the nearest ancestor with a
        multirun.yaml), or the run directory itself for a single run."""
        for parent in self.path.parents:
            if (parent / MULTIRUN_FILE).is_file():
                return parent
        return self.path

    # ------------------------------------------------------------------ files beside it
    def test_lines(self, kind: str) -> list[str] | None:
        """hypotheses / references / sources of the test split, one per sentence: the run's
        files, or the data set's lines its test_set.json names (read once per data set,
        checksum verified: :func:`seq2seq_lab.data.test_set.read_test_lines`). Read once per
        run: every difference a report tests reads them again."""
        if kind not in self._test_lines:
            split = self.test.get("split", "test")
            self._test_lines[kind] = read_test_lines(self.path, kind, split)
        return self._test_lines[kind]

    @cached_property
    def _test_lines(self) -> dict[str, list[str] | None]:
        return {}

    @cached_property
    def metrics(self) -> list[dict[str, float]]:
        """Rows of csv/metrics.csv with their non-empty, finite values only (the CSVLogger
        writes sparse rows: a training row, a validation row, an lr row...)."""
        text = read_kept_text(self.path / "csv" / "metrics.csv")  # bzip2'd in a committed grid
        if text is None:
            return []
        rows = []
        for raw in csv.DictReader(io.StringIO(text, newline="")):
            row = {k: _to_float(v) for k, v in raw.items() if k and v not in (None, "")}
            rows.append({k: v for k, v in row.items() if v is not None})
        return rows

    def series(self, column: str) -> tuple[list[float], list[float]]:
        """(steps, values) of one metrics.csv column, in logging order."""
        steps, values = [], []
        for row in self.metrics:
            if column in row and "step" in row:
                steps.append(row["step"])
                values.append(row[column])
        return steps, values

    def grad_norms_init(self) -> dict[str, float] | None:
        """diagnostics/grad_norms_init.json: {"encoder.0.ffn": norm, ...} at initialisation."""
        return _read_json(self.path / "diagnostics" / "grad_norms_init.json")

    def validation_diagnostics(self) -> list[dict[str, Any]]:
        """The records of diagnostics/validation.jsonl written after a validation, {"step",
        "when": "validation", "similarity": {"encoder": [...], "decoder": [...]}, "entropy":
        {"encoder.self_attn": [[heads] per layer], ...}}, in step order (a record without
        "when", from before the init record existed, is one of them)."""
        return [r for r in self._diagnostics_records() if r.get("when") != "init"]

    def init_diagnostics(self) -> dict[str, Any] | None:
        """The record of diagnostics/validation.jsonl written before the first optimiser
        step ("when": "init", step 0): the untrained network on the same sentences."""
        return next((r for r in self._diagnostics_records() if r.get("when") == "init"), None)

    def _diagnostics_records(self) -> list[dict[str, Any]]:
        """Every record of diagnostics/validation.jsonl in step order; unreadable lines are
        skipped."""
        path = self.path / "diagnostics" / "validation.jsonl"
        if not path.is_file():
            return []
        records = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "step" in record:
                records.append(record)
        return sorted(records, key=lambda r: r["step"])

    def attention_heatmap(self) -> Path | None:
        """The attention heatmap of the first plotted validation sentence at the last plotted
        step (``attention/step*/val*.png``); else the AttentionPlots callback's cross-attention
        grid (``diagnostics/cross_attention/step*_val*.png``)."""
        steps = sorted((self.path / "attention").glob("step*"))
        for step in reversed(steps):
            images = sorted(step.glob("val*.png"), key=_trailing_number)
            if images:
                return images[0]
        grids = sorted((self.path / "diagnostics" / "cross_attention").glob("step*_val*.png"))
        return grids[-1] if grids else None


@cache
def _family_of_target(target: str | None) -> str | None:
    if not target:
        return None
    try:
        return str(getattr(hydra.utils.get_class(target), "family", None) or "") or None
    except Exception:  # an unknown or renamed class: the family is simply unknown
        return None


def _trailing_number(path: Path) -> int:
    digits = "".join(c for c in path.stem if c.isdigit())
    return int(digits) if digits else 0


def _to_float(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class Unreadable:
    """A results.json that could not be parsed (reported, never fatal)."""

    path: Path
    reason: str


def find_runs(root: str | Path, exclude: Path | None = None) -> tuple[list[Run], list[Unreadable]]:
    """Every run under ``root`` (searched recursively for results.json), in path order, and
    the results.json files that could not be read. ``exclude``: a directory to skip (the
    report's own output, when it lies inside ``root``). Runs a resumable queue set aside
    (``results.ABANDONED``) are left out. ``root`` may also be one results.json (a report's
    runs.csv is read by :mod:`seq2seq_lab.report.run_table`)."""
    root = Path(root)
    if not root.exists():
        raise UserError(
            f"{root}: no such directory (expected a sweep directory, runs or a runs.csv)"
        )
    if root.is_file() and root.name != RESULTS_FILE:
        raise UserError(
            f"{root}: expected a directory of runs, a {RESULTS_FILE} or a report's runs.csv"
        )
    candidates = [root] if root.is_file() else sorted(root.rglob(RESULTS_FILE))
    excluded = exclude.resolve() if exclude is not None else None
    if excluded is not None and (excluded == root.resolve() or excluded in root.resolve().parents):
        excluded = None  # the runs lie inside the report's directory (a queue's <report>/runs/)
    runs, unreadable = [], []
    for path in candidates:
        if excluded is not None and excluded in path.resolve().parents:
            continue
        if root.is_dir() and ABANDONED in path.relative_to(root).parts:
            continue
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            unreadable.append(Unreadable(path, f"{type(error).__name__}: {error}"))
            continue
        if not isinstance(results, dict):
            unreadable.append(Unreadable(path, "not a JSON object"))
            continue
        runs.append(Run(path=path.parent, results=portable_record(results, path.parent.absolute())))
    return runs, unreadable
