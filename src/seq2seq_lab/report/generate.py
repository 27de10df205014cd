"""Runs -> one report per comparison: tables, differences across seeds, plots, heatmaps and a verdict.

``generate_report(PATH)`` finds every results.json under PATH, groups the runs by
``experiment`` (runs without one go to "adhoc"), and writes for each experiment
``<out>/<experiment>/report.md`` with its PNGs and a ``runs.csv`` (every run's scores and
flattened config), then ``<out>/README.md`` linking them. Nothing a run lacks (a failed run,
a diverged run without a test, missing diagnostics) stops it: the report says what is missing.

``generate_report(".../runs.csv")`` makes the reports again from a report's run table
(:mod:`seq2seq_lab.report.run_table`) when the run directories are gone: the table is read in
full first (it may be the very runs.csv the report rewrites), no figure is drawn and the PNGs
and heatmaps an earlier report left in the output are kept and shown as they are.
The heatmaps of all the reports in ``<out>`` share one store, ``<out>/heatmaps/``
(:mod:`seq2seq_lab.report.heatmaps`): one copy per run, whichever reports show it.

The numbers come from ``assessment`` (computing); this module only writes what ``figures``,
``markdown`` and the runs.csv writer below render from them.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seq2seq_lab.errors import UserError
from seq2seq_lab.record.portable_paths import relative
from seq2seq_lab.report import specs
from seq2seq_lab.report.assessment import Assessment, assess
from seq2seq_lab.report.figures import Figures, draw_figures
from seq2seq_lab.report.markdown import experiment_markdown, index_markdown
from seq2seq_lab.report.rule_versions import read_declared, record
from seq2seq_lab.report.run_table import is_run_table, kept_commands, kept_figures, read_run_table
from seq2seq_lab.report.runs import Run, Unreadable, find_runs
from seq2seq_lab.report.spec import Comparison, ExperimentSpec
from seq2seq_lab.report.summary import SUMMARY_FILE, write_summary

log = logging.getLogger(__name__)
ADHOC = "adhoc"  # the section of runs that name no experiment


@dataclass
class ExperimentReport:
    """One written report: what was computed, the figures drawn, and report.md's path."""

    assessment: Assessment
    figures: Figures
    path: Path

    @property
    def name(self) -> str:
        """The comparison's name: the experiment's, or that of a comparison reading its runs."""
        return self.assessment.spec.name


def write_runs_csv(comparison: Comparison, root: Path, path: Path) -> Path:
    """Every run's identity, scores, timings and flattened resolved config (one row each)."""
    from seq2seq_lab.record.flat_config import flatten

    rows = []
    for variant in comparison.variants:
        for run in variant.runs:
            row = {
                "run": relative(run.path, root),
                "variant": variant.label,
                "seed": run.seed,
                "status": run.status,
                "note": run.results.get("status_reason") or run.results.get("error") or "",
                "scale": run.scale,
                **{f"test.{k}": run.score(k) for k in ("bleu", "chrf", "ter", "ppl")},
                "steps": (run.results.get("training") or {}).get("steps"),
                "late_val_gain": run.late_val_gain,
                "train_seconds": run.timing("train_seconds"),
                "train_tokens_per_second": run.timing("train_tokens_per_second"),
                **{f"config.{k}": v for k, v in flatten(run.config).items()},
            }
            rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def clear_outputs(out_dir: Path, images: bool = True) -> None:
    """Remove what an earlier report wrote here (PNGs, report.md, runs.csv, verdict.json), so a
    figure the runs no longer support does not linger; nothing else is touched. The heatmaps
    are left to the output folder's store (``heatmaps.copy_heatmaps``), which keeps a copy
    while a report still shows it.
    ``images=False``: the PNGs stay (a report made from a run table draws none)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stale = list(out_dir.glob("*.png")) if images else []
    stale += [out_dir / "report.md", out_dir / "runs.csv", out_dir / SUMMARY_FILE]
    for path in stale:
        path.unlink(missing_ok=True)


def directory_name(experiment: str) -> str:
    """The experiment's directory under the output: its name, with unsafe characters
    replaced ("e1_attention" stays as it is)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", experiment).strip(".-") or ADHOC


# ---------------------------------------------------------------------------- one experiment
def build_experiment(
    name: str,
    runs: list[Run],
    root: Path,
    out_dir: Path,
    spec: ExperimentSpec | None = None,
    *,
    from_table: bool = False,
) -> ExperimentReport:
    """Everything of one experiment's section, written under ``out_dir`` (by ``spec``: a
    comparison that reads the experiment's runs; default the experiment's own). ``from_table``:
    the runs were read from a run table (``root``): the figures and the sweep command an
    earlier report left in ``out_dir`` are kept, nothing is drawn."""
    assessment = assess(name, runs, root, spec)
    assessment.declared = read_declared(out_dir.parent, assessment.spec.name)
    if from_table:
        assessment.commands = kept_commands(root, runs, out_dir)
        figures = kept_figures(assessment.spec, assessment.comparison, out_dir)
        clear_outputs(out_dir, images=False)
    else:
        clear_outputs(out_dir)
        figures = draw_figures(assessment.spec, assessment.comparison, out_dir)
    write_runs_csv(assessment.comparison, root, out_dir / "runs.csv")
    path = out_dir / "report.md"
    path.write_text(experiment_markdown(assessment, figures, out_dir), encoding="utf-8")
    write_summary(assessment, out_dir)
    return ExperimentReport(assessment, figures, path)


def read_runs(
    root: Path, exclude: Path | None, scale: str | None
) -> tuple[list[Run], list[Unreadable]]:
    """The runs under ``root`` (:func:`find_runs`), or, for a report's runs.csv, the runs of
    that table, read in full before anything is written; ``scale`` is then the scale of rows
    that record none (an error for any other ``root``)."""
    if is_run_table(root):
        return read_run_table(root, scale), []
    if scale is not None:
        raise UserError(
            f"{root}: --scale applies to a run table (a report's runs.csv) only; the runs "
            "under a directory record their scale"
        )
    return find_runs(root, exclude)


def readers(name: str, runs: list[Run]) -> list[ExperimentSpec]:
    """The comparisons made from experiment ``name``'s runs (``specs.readers``), those
    that need a record (the length probe's) only when some run has it."""
    return [
        spec
        for spec in specs.readers(name)
        if spec.needs_record is None or any(run.results.get(spec.needs_record) for run in runs)
    ]


@dataclass
class GeneratedReport:
    """What ``generate_report`` wrote: the index, one report per experiment, the experiments
    whose report could not be built (name -> error), the unreadable results.json files and the
    debug runs left out."""

    index: Path
    reports: list[ExperimentReport]
    failed: dict[str, str]
    unreadable: list[Unreadable]
    debug: list[Run]


def generate_report(
    path: str | Path,
    out: str | Path | None = None,
    *,
    experiments: Sequence[str] | None = None,
    scale: str | None = None,
) -> GeneratedReport:
    """Write the reports of the runs under ``path`` to ``out`` (default ``path/report``).
    ``experiments``: only these (default: every experiment found). ``path`` may be a report's
    runs.csv (module docstring; default ``out``: the folder above the table's, so that the
    report is made again in place); ``scale``: the scale of its rows that record none."""
    root = Path(path)
    from_table = is_run_table(root)
    default_out = root.parent.parent if from_table else root / "report"
    out_dir = Path(out) if out is not None else default_out
    runs, unreadable = read_runs(root, exclude=out_dir, scale=scale)
    debug = [run for run in runs if run.debug]
    runs = [run for run in runs if not run.debug]
    by_experiment: dict[str, list[Run]] = {}
    for run in runs:
        by_experiment.setdefault(run.experiment or ADHOC, []).append(run)
    if experiments:
        by_experiment = {k: v for k, v in by_experiment.items() if k in experiments}
    reports, failed = [], {}
    record(out_dir)  # the rule in force when the folder's first report is made
    for name in sorted(by_experiment):
        runs_of = by_experiment[name]
        # the experiment's own report, then those of the comparisons its runs also make
        for spec in (None, *readers(name, runs_of)):
            section = name if spec is None else spec.name
            try:
                directory = out_dir / directory_name(section)
                reports.append(
                    build_experiment(name, runs_of, root, directory, spec, from_table=from_table)
                )
            except Exception as error:  # one broken section must not cost the other reports
                log.exception("the report of %s could not be built", section)
                failed[section] = f"{type(error).__name__}: {error}"
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / "README.md"
    written = [(r.assessment, r.path) for r in reports]
    text = index_markdown(written, failed, unreadable, root, out_dir, debug)
    index.write_text(text, encoding="utf-8")
    return GeneratedReport(index, reports, failed, unreadable, debug)


__all__ = ["ExperimentReport", "GeneratedReport", "build_experiment", "generate_report"]
