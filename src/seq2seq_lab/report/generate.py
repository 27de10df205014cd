"""Runs -> one report per comparison: tables, significance, plots, heatmaps and a verdict.

``generate_report(PATH)`` finds every results.json under PATH, groups the runs by
``experiment`` (runs without one go to "adhoc"), and writes for each experiment
``<out>/<experiment>/report.md`` with its PNGs and a ``runs.csv`` (every run's scores and
flattened config), then ``<out>/README.md`` linking them. Nothing a run lacks (a failed run,
a diverged run without a test, missing diagnostics) stops it: the report says what is missing.
"""

from __future__ import annotations

import csv
import logging
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seq2seq_lab.report.aggregate import Variant
from seq2seq_lab.report.commands import SweepCommand, sweep_commands
from seq2seq_lab.report.experiments import spec_for
from seq2seq_lab.report.markdown import experiment_markdown, index_markdown
from seq2seq_lab.report.plots import slug
from seq2seq_lab.report.runs import Run, Unreadable, find_runs
from seq2seq_lab.report.significance import DEFAULT_SAMPLES, PairedResult, paired_bootstrap
from seq2seq_lab.report.spec import Comparison, ExperimentSpec, Verdict

log = logging.getLogger(__name__)
ADHOC = "adhoc"  # the section of runs that name no experiment


@dataclass(frozen=True)
class PairTest:
    """One seed-matched (or seed-1-of-each) paired test of a contrast."""

    baseline: Variant
    system: Variant
    baseline_seed: int | None
    system_seed: int | None
    results: tuple[PairedResult, ...]


@dataclass(frozen=True)
class Heatmap:
    variant: str
    seed: int | None
    source: str  # the image's path inside its run directory
    path: Path  # the copy beside report.md


@dataclass
class ExperimentReport:
    name: str
    spec: ExperimentSpec
    comparison: Comparison
    verdict: Verdict
    commands: list[SweepCommand]
    root: Path  # the PATH the runs were found under (run paths are shown relative to it)
    out_dir: Path
    significance: list[PairTest] = field(default_factory=list)
    significance_notes: list[str] = field(default_factory=list)
    plots: list[tuple[str, str, list[Path]]] = field(default_factory=list)  # name, caption, PNGs
    plot_notes: list[str] = field(default_factory=list)
    heatmaps: list[Heatmap] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.out_dir / "report.md"


# ---------------------------------------------------------------------------- significance
def _testable(run: Run | None) -> bool:
    return run is not None and run.test_lines("hypotheses") is not None


def _seed_pairs(baseline: Variant, system: Variant) -> list[tuple[Run, Run]]:
    """Seed-matched pairs of runs that have test outputs; without a common seed, the lowest
    seed of each."""
    pairs = []
    for seed in baseline.seeds:
        a, b = baseline.run_for_seed(seed), system.run_for_seed(seed)
        if _testable(a) and _testable(b):
            pairs.append((a, b))
    if pairs:
        return pairs
    a = next((r for r in baseline.runs if _testable(r)), None)
    b = next((r for r in system.runs if _testable(r)), None)
    return [(a, b)] if a is not None and b is not None else []


def significance_tests(
    comparison: Comparison, n_samples: int, metrics: Sequence[str]
) -> tuple[list[PairTest], list[str]]:
    """Paired bootstrap for every contrast of the spec; one sacrebleu test per baseline run,
    all the systems paired with it at once. Returns the tests and notes on skipped pairs."""
    notes: list[str] = []
    jobs: dict[Path, tuple[Run, list[tuple[Variant, Variant, Run]]]] = {}
    contrasts = list(
        {(id(a), id(b)): (a, b) for a, b in comparison.spec.contrasts(comparison)}.values()
    )
    for baseline, system in contrasts:
        pairs = _seed_pairs(baseline, system)
        if not pairs:
            notes.append(f"{system.label} vs {baseline.label}: no pair of runs with test outputs")
        for a, b in pairs:
            jobs.setdefault(a.path, (a, []))[1].append((baseline, system, b))
    tests: list[PairTest] = []
    for base_run, members in jobs.values():
        references = base_run.test_lines("references")
        systems = []
        for baseline, system, run in members:
            if run.test_lines("references") != references or references is None:
                notes.append(
                    f"{system.label} (seed {run.seed}) vs {baseline.label} (seed "
                    f"{base_run.seed}): different test sentences, not paired"
                )
            else:
                systems.append((baseline, system, run))
        if not systems:
            continue
        # names only need to be unique within this call
        named = [
            (f"{i}:{s.label}", r.test_lines("hypotheses")) for i, (_, s, r) in enumerate(systems)
        ]
        results = paired_bootstrap(
            ("baseline", base_run.test_lines("hypotheses")),
            named,
            references,
            metrics=metrics,
            n_samples=n_samples,
        )
        for (name, _), (baseline, system, run) in zip(named, systems):
            mine = tuple(r for r in results if r.system == name)
            tests.append(PairTest(baseline, system, base_run.seed, run.seed, mine))
    # in the spec's contrast order, seeds ascending within a contrast
    order = {(id(a), id(b)): i for i, (a, b) in enumerate(contrasts)}
    tests.sort(key=lambda t: (order[id(t.baseline), id(t.system)], t.baseline_seed or 0))
    return tests, notes


# ---------------------------------------------------------------------------- files
def copy_heatmaps(comparison: Comparison, out_dir: Path) -> list[Heatmap]:
    """One attention heatmap per variant (its first non-failed run that has one)."""
    heatmaps = []
    for variant in comparison.variants:
        for run in sorted(variant.runs, key=lambda r: r.status == "failed"):
            image = run.attention_heatmap()
            if image is None:
                continue
            target = out_dir / "heatmaps" / f"{slug(variant.label)}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image, target)
            source = image.relative_to(run.path).as_posix()
            heatmaps.append(Heatmap(variant.label, run.seed, source, target))
            break
    return heatmaps


def write_runs_csv(comparison: Comparison, root: Path, path: Path) -> Path:
    """Every run's identity, scores, timings and flattened resolved config (one row each)."""
    from seq2seq_lab.pipeline import flatten

    rows = []
    for variant in comparison.variants:
        for run in variant.runs:
            row = {
                "run": _relative(run.path, root),
                "variant": variant.label,
                "seed": run.seed,
                "status": run.status,
                "note": run.results.get("status_reason") or run.results.get("error") or "",
                **{f"test.{k}": run.score(k) for k in ("bleu", "chrf", "ter", "ppl")},
                "steps": (run.results.get("training") or {}).get("steps"),
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


def clear_outputs(out_dir: Path) -> None:
    """Remove what an earlier report wrote here (PNGs, heatmaps, report.md, runs.csv), so a
    figure the runs no longer support does not linger; nothing else is touched."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stale = [*out_dir.glob("*.png"), *out_dir.glob("heatmaps/*.png")]
    stale += [out_dir / "report.md", out_dir / "runs.csv"]
    for path in stale:
        path.unlink(missing_ok=True)


def directory_name(experiment: str) -> str:
    """The experiment's directory under the output: its name, with unsafe characters
    replaced ("e1_attention" stays as it is)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", experiment).strip(".-") or ADHOC


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------- one experiment
def build_experiment(
    name: str,
    runs: list[Run],
    root: Path,
    out_dir: Path,
    *,
    bootstrap_samples: int = DEFAULT_SAMPLES,
    metrics: Sequence[str] = ("bleu",),
) -> ExperimentReport:
    """Everything of one experiment's section, written under ``out_dir``."""
    spec = spec_for(name)
    clear_outputs(out_dir)
    comparison = Comparison(spec, runs)
    report = ExperimentReport(
        name=name,
        spec=spec,
        comparison=comparison,
        verdict=spec.verdict(comparison),
        commands=sweep_commands(runs),
        root=root,
        out_dir=out_dir,
    )
    if bootstrap_samples > 0:
        report.significance, report.significance_notes = significance_tests(
            comparison, bootstrap_samples, metrics
        )
    for plot in spec.plots:
        try:
            paths = plot.draw(comparison, out_dir)
        except Exception as error:  # a figure must never cost the rest of the report
            log.exception("plot %s of %s failed", plot.name, name)
            report.plot_notes.append(f"{plot.caption}: not drawn ({type(error).__name__}: {error})")
            continue
        report.plots.append((plot.name, plot.caption, paths))
    report.heatmaps = copy_heatmaps(comparison, out_dir)
    write_runs_csv(comparison, root, out_dir / "runs.csv")
    report.path.write_text(experiment_markdown(report), encoding="utf-8")
    return report


@dataclass
class GeneratedReport:
    """What ``generate_report`` wrote: the index, one report per experiment, the experiments
    whose report could not be built (name -> error) and the unreadable results.json files."""

    index: Path
    reports: list[ExperimentReport]
    failed: dict[str, str]
    unreadable: list[Unreadable]


def generate_report(
    path: str | Path,
    out: str | Path | None = None,
    *,
    bootstrap_samples: int = DEFAULT_SAMPLES,
    metrics: Sequence[str] = ("bleu",),
    experiments: Sequence[str] | None = None,
) -> GeneratedReport:
    """Write the reports of the runs under ``path`` to ``out`` (default ``path/report``).
    ``experiments``: only these (default: every experiment found)."""
    root = Path(path)
    out_dir = Path(out) if out is not None else root / "report"
    runs, unreadable = find_runs(root, exclude=out_dir)
    by_experiment: dict[str, list[Run]] = {}
    for run in runs:
        by_experiment.setdefault(run.experiment or ADHOC, []).append(run)
    if experiments:
        by_experiment = {k: v for k, v in by_experiment.items() if k in experiments}
    reports, failed = [], {}
    for name in sorted(by_experiment):
        try:
            reports.append(
                build_experiment(
                    name,
                    by_experiment[name],
                    root,
                    out_dir / directory_name(name),
                    bootstrap_samples=bootstrap_samples,
                    metrics=metrics,
                )
            )
        except Exception as error:  # one broken section must not cost the other reports
            log.exception("the report of %s could not be built", name)
            failed[name] = f"{type(error).__name__}: {error}"
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / "README.md"
    text = index_markdown(reports, failed, unreadable, root, out_dir)
    index.write_text(text, encoding="utf-8")
    return GeneratedReport(index, reports, failed, unreadable)


__all__ = ["ExperimentReport", "GeneratedReport", "PairTest", "build_experiment", "generate_report"]
