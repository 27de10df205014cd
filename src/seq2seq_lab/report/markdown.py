"""The report as GitHub-flavoured markdown: relative image links, pipe tables, <details>.

Only rendering lives here: every number comes from an :class:`Assessment` (computing) and
every image from the :class:`Figures` drawn beside report.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from seq2seq_lab.record.portable_paths import portable_path, relative
from seq2seq_lab.report.aggregate import MeanStd, mean_std, status_counts
from seq2seq_lab.report.assessment import Assessment
from seq2seq_lab.report.evidence import P_SIGNIFICANT, RESAMPLES, Difference, format_p
from seq2seq_lab.report.extra_tests import extra_test_note, extra_test_rows, extra_test_splits
from seq2seq_lab.report.figures import Figures
from seq2seq_lab.report.gate import PLATEAU_GAP, STALLED_BLEU
from seq2seq_lab.report.runs import Run, Unreadable
from seq2seq_lab.report.spec import Comparison, ExperimentSpec
from seq2seq_lab.report.wall_time import find_wall_time
from seq2seq_lab.training.budget import training_budget
from seq2seq_lab.training.convergence import CONVERGED_GAIN

NOTE_CHARS = 140


def cell(value: Any) -> str:
    """A table cell: pipes escaped, newlines flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ").strip()


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines.extend("| " + " | ".join(cell(v) for v in row) + " |" for row in rows)
    return "\n".join(lines)


def _first_line(text: str, limit: int = NOTE_CHARS) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def status_summary(runs: Sequence[Run]) -> str:
    """ "6 runs (4 completed, 1 diverged, 1 failed)"."""
    counts = status_counts(runs)
    return f"{len(runs)} run{'s' if len(runs) != 1 else ''}" + (f" ({counts})" if counts else "")


def reused_runs(runs: Sequence[Run]) -> str:
    """Which runs are another grid's identical runs, adopted rather than trained again
    (seq2seq_lab/record/run_reuse.py); empty when none is."""
    origins = [o for run in runs if isinstance(o := run.results.get("reused_from"), dict)]
    if not origins:
        return ""
    sources = "; ".join(
        f"{o.get('run')} ({o.get('experiment')} {o.get('variant')})" for o in origins
    )
    return (
        f"{len(origins)} of {len(runs)} runs are identical runs of another grid (same training "
        f"config and seed), reused and not trained again: {sources}"
    )


def _across(runs: Sequence[Run], describe: Callable[[Run], str], missing: str) -> str:
    """The runs' distinct non-empty descriptions, in order, joined by "; " (else ``missing``)."""
    return "; ".join(dict.fromkeys(d for run in runs if (d := describe(run)))) or missing


def software(runs: Sequence[Run]) -> str:
    per_package: dict[str, list[str]] = {}
    for run in runs:
        for name, version in (run.results.get("versions") or {}).items():
            per_package.setdefault(name, [])
            if version not in per_package[name]:
                per_package[name].append(str(version))
    return ", ".join(f"{k} {' / '.join(v)}" for k, v in per_package.items()) or "not recorded"


def hardware(runs: Sequence[Run]) -> str:
    counts: Counter[str] = Counter()
    for run in runs:
        hw = run.results.get("hardware") or {}
        if not hw:
            continue
        parts = [cpu_description(hw), f"{hw.get('cpu_count', '?')} cores"]
        parts.append(f"{hw.get('torch_threads', '?')} torch threads")
        parts.append(f"GPU: {hw['gpu']}" if hw.get("gpu") else "no GPU")
        counts[", ".join(parts)] += 1
    if not counts:
        return "not recorded"
    if len(counts) == 1:
        return next(iter(counts))
    return "; ".join(f"{k} ({n} run{'s' if n != 1 else ''})" for k, n in counts.items())


def cpu_description(hw: Mapping[str, Any]) -> str:
    """The CPU's model name and speed-setting instruction sets (environment.CPU_FEATURES): the
    name alone is shared by machines of different speeds. Runs recorded before the features
    were are not assumed alike."""
    features = hw.get("cpu_features")
    if features is None:
        return f"{hw.get('cpu', '?')} (instruction sets not recorded)"
    return f"{hw.get('cpu', '?')} ({', '.join(features) or 'no AVX2'})"


def _data(run: Run) -> str:
    data = run.results.get("data") or {}
    return "; ".join(str(data[k]) for k in ("source", "tokenizer") if data.get(k))


def _test_set(run: Run) -> str:
    test = run.test
    if not test:
        return ""
    if "split" not in test:  # a run read back from a report's runs.csv
        return "split and size not recorded"
    return f"split `{test.get('split')}`, {test.get('sentences')} sentences"


def _decoding(run: Run) -> str:
    return ", ".join(f"{k} {v}" for k, v in (run.test.get("decoding") or {}).items())


def _budget(run: Run) -> str:
    return training_budget(run.config.get("trainer") or {})


def _seeds(runs: Sequence[Run]) -> str:
    seeds = sorted({run.seed for run in runs if run.seed is not None})
    return ", ".join(str(s) for s in seeds) or "not recorded"


def _int(ms: MeanStd) -> str:
    return ms.format(0)


def convergence(comparison: Comparison) -> str:
    """Every variant's convergence by the gate every comparing check reads (``report/gate.py``:
    each seed's rise of its best validation BLEU over the last quarter of its updates below
    CONVERGED_GAIN, none stalled near 0 BLEU, none on a plateau its best seed
    left), with the mean rise over seeds."""
    variants = comparison.variants
    if not variants:
        return "no variant"
    parts, still = [], 0
    for v in variants:
        gain = v.late_gain
        rise = "rise not measurable" if gain.mean is None else f"+{gain.format(1)}"
        reason = comparison.unconverged([v])
        if reason:
            parts.append(f"{v.label} **no** {reason[0].removeprefix(v.label + ' ')}")
            still += 1
        else:
            parts.append(f"{v.label} yes ({rise})")
    head = "yes, every variant" if not still else f"**no**, {still} of {len(variants)} variants"
    return (
        f"{head} (every seed's rise of the best validation BLEU over the last quarter of the "
        f"updates below {CONVERGED_GAIN:g}, none stalled below {STALLED_BLEU:g} BLEU, none "
        f"{PLATEAU_GAP:g} or more below its variant's best seed: `report/gate.py`; yes: mean "
        "rise over seeds): " + "; ".join(parts)
    )


# ---------------------------------------------------------------------------- sections
def header_section(report: Assessment, out_dir: Path) -> list[str]:
    runs = report.comparison.runs
    lines = ["## How these runs were made", ""]
    lines.append(
        f"Sweep command{'s' if len(report.commands) > 1 else ''} (rebuilt from the runs' Hydra overrides):"
    )
    lines.append("")
    lines.append("```bash")
    for command in report.commands:
        directory = relative(command.directory, report.root)
        directory = portable_path(report.root.as_posix()) if directory == "." else directory
        lines.append(f"# {command.runs} run{'s' if command.runs != 1 else ''} in {directory}")
        lines.append(command.command)
    lines.append("```")
    lines.append("")
    lines.append(f"- **Runs:** {status_summary(runs)}")
    if reused := reused_runs(runs):
        lines.append(f"- **Reused:** {reused}")
    lines.append(f"- **Seeds:** {_seeds(runs)}")
    data, test = _across(runs, _data, "not recorded"), _across(runs, _test_set, "no run was tested")
    lines.append(f"- **Data:** {data}; test: {test}")
    lines.append(f"- **Test decoding:** {_across(runs, _decoding, 'not recorded')}")
    lines.append(f"- **Training budget:** {_across(runs, _budget, 'not recorded')}")
    lines.append(f"- **Converged:** {convergence(report.comparison)}")
    lines.append(f"- **Software:** {software(runs)}")
    lines.append(f"- **Hardware:** {hardware(runs)}")
    if (wall := find_wall_time(report.root)) is not None:
        lines.append(f"- **Wall time:** {wall.text(relative(wall.path, out_dir))}")
    lines.append(
        "- **Config of every run:** [`runs.csv`](runs.csv) (scores and the flattened resolved "
        "config, one row per run)"
    )
    return lines


def results_section(report: Assessment) -> list[str]:
    variants = report.comparison.variants
    with_role = any(v.role for v in variants)
    header = ["variant"] + (["settings (from config)"] if with_role else [])
    header += ["status", "BLEU", "chrF", "TER", "ppl", "updates", "val gain, last ¼"]
    header += ["train time (s)", "tokens/s"]
    header += ["params"]
    rows = []
    for v in variants:
        params = next(
            (r.results.get("parameters") for r in v.runs if r.results.get("parameters")), None
        )
        row = [f"**{v.label}**"] + ([v.describe_role()] if with_role else [])
        row += [
            v.status_text(),
            v.scores("bleu").format(),
            v.scores("chrf").format(),
            v.scores("ter").format(),
            v.scores("ppl").format(),
            _int(v.updates),
            v.late_gain.format(1),
            _int(v.timing("train_seconds")),
            _int(v.timing("train_tokens_per_second")),
            f"{params:,}" if isinstance(params, int) else "—",
        ]
        rows.append(row)
    lines = ["## Results", "", table(header, rows), ""]
    lines.append(
        "Mean ± sample std over the seeds that have a test score (a diverged run is tested "
        "from its best checkpoint when it has one; see the runs below). "
        "Updates: optimiser steps (mean over finished runs); val gain, last ¼: how much the "
        "best validation BLEU rose over the last quarter of those updates (below "
        f"{CONVERGED_GAIN:g}: converged, `seq2seq_lab/training/convergence.py`); train time "
        "is wall-clock `fit` "
        "time; tokens/s counts real target tokens per second of training-step time. What "
        "ended each run's training is in the runs table."
    )
    lines.append("")
    for v in variants:
        differing = v.config_differences()
        if differing:
            shown = ", ".join(f"`{k}`" for k in differing[:8])
            more = f" and {len(differing) - 8} more" if len(differing) > 8 else ""
            lines.append(
                f"**Warning:** the runs of **{v.label}** differ in more than the seed "
                f"({shown}{more}; see runs.csv): its mean pools different settings."
            )
            lines.append("")
    signatures: dict[str, list[str]] = {}
    for run in report.comparison.runs:
        for metric, signature in (run.results.get("sacrebleu_signature") or {}).items():
            signatures.setdefault(metric, [])
            if signature not in signatures[metric]:
                signatures[metric].append(signature)
    if signatures:
        lines.append("sacrebleu signatures:")
        lines.append("")
        for metric, values in signatures.items():
            warn = " (differ between runs: scores not comparable)" if len(values) > 1 else ""
            lines.append(f"- {metric.upper()}{warn}: " + ", ".join(f"`{s}`" for s in values))
    else:
        lines.append("No run recorded a sacrebleu signature (none was tested).")
    return lines


def pairing(d: Difference) -> str:
    """The differences table's "paired" cell."""
    if not d.paired:
        return "no"
    return (
        f"yes, {d.unmatched} unmatched run{'s' if d.unmatched != 1 else ''} left out"
        if d.unmatched
        else "yes"
    )


def differences_section(report: Assessment) -> list[str]:
    lines = ["## Differences across seeds", ""]
    if not report.differences:
        contrasts = report.spec.contrasts(report.comparison)
        return lines + [
            "No contrast defined for this comparison."
            if not contrasts
            else "No contrast has scored runs on both sides."
        ]
    rows = [
        [
            d.system,
            d.baseline,
            f"{len(d.system_scores)} / {len(d.baseline_scores)}",
            pairing(d),
            f"{d.delta:+.2f}",
            f"[{d.low:+.2f}, {d.high:+.2f}]",
            format_p(d.p) + (" *" if d.p < P_SIGNIFICANT else ""),
            "yes" if d.test_sampling else "no",
        ]
        for d in report.differences
    ]
    header = ["system", "vs baseline", "seeds", "paired", "Δ BLEU", "95 % interval", "p"]
    lines += [table([*header, "test sampling"], rows), ""]
    lines.append(
        "Δ = the system's mean test BLEU over seeds minus the baseline's. Paired on the seeds "
        "both ran where they ran at least two in common (the variance of the per-seed "
        "differences; a seed only one of them ran is left out), else Welch's seed term; to it "
        "is added the part of the variance over "
        f"{RESAMPLES} bootstrap resamples of the test sentences that seeds cannot show (how the "
        'two variants differ sentence by sentence; "test sampling: no" where a run\'s outputs '
        "were missing); Satterthwaite's degrees of freedom, never less conservative than the "
        f"seed term alone; * p < {P_SIGNIFICANT} (`seq2seq_lab/report/evidence.py`)."
    )
    return lines


def finding_lines(spec: ExperimentSpec) -> list[str]:
    """The published finding and the expectation, as the report and the README show them."""
    lines = [f"**Published:** {spec.published}", ""]
    if spec.expected:
        lines += [f"**A faithful small-scale reproduction should show:** {spec.expected}", ""]
    return lines


def verdict_section(report: Assessment) -> list[str]:
    spec, verdict = report.spec, report.verdict
    lines = ["## Published finding vs ours", "", *finding_lines(spec)]
    if verdict.findings:
        rows = []
        for i, (check, finding) in enumerate(verdict.findings, 1):
            rows.append([i, check.label, finding.text(), finding.detail])
        lines += ["**Ours:**", "", table(["#", "check", "result", "numbers used"], rows), ""]
    lines.append(f"**Rule:** {verdict.rule}")
    lines.append("")
    lines.append(f"**Verdict: {verdict.outcome}**")
    if report.declared is not None:
        lines += ["", f"**Rule version:** {report.declared.text(verdict.outcome)}"]
    if verdict.gates:
        why = "What keeps it from reproduced:" if verdict.conclusive else "Why no verdict:"
        lines += ["", why, ""]
        lines += [f"- {gate}" for gate in verdict.gates]
    return lines


def tables_section(report: Assessment) -> list[str]:
    """The spec's extra tables (``ExperimentSpec.tables``), each under its own heading."""
    lines: list[str] = []
    for extra in report.spec.tables:
        header, rows = extra.rows(report.comparison)
        lines += [f"## {extra.title}", ""]
        if not rows:
            lines += ["_Not shown: the runs lack the data this table needs._", ""]
            continue
        lines += [table(header, rows), ""]
        if extra.note:
            lines += [extra.note, ""]
    return lines[:-1]  # experiment_markdown separates the sections


def extra_tests_section(c: Comparison) -> list[str]:
    """A heading and table per test set the runs scored apart from the test split
    (report/extra_tests.py); nothing when they have none."""
    lines: list[str] = []
    for split in extra_test_splits(c):
        header, rows = extra_test_rows(c, split)
        lines += [f"## The {split} set, apart from the test split", ""]
        lines += [extra_test_note(c, split), "", table(header, rows), ""]
    return lines[:-1]


def plots_section(figures: Figures, out_dir: Path) -> list[str]:
    lines = ["## Plots", ""]
    if not figures.plots and not figures.notes:
        return lines + ["No plot is defined for this comparison."]
    for _, caption, paths in figures.plots:
        lines.append(f"### {caption}")
        lines.append("")
        if not paths:
            lines.append("_Not drawn: the runs lack the data this plot needs._")
            lines.append("")
        for path in paths:
            lines.append(f"![{caption}]({relative(path, out_dir)})")
            lines.append("")
    for note in figures.notes:
        lines.append(f"- {note}")
    return lines


def heatmaps_section(figures: Figures, out_dir: Path) -> list[str]:
    lines = ["## Attention heatmaps", ""]
    if not figures.heatmaps:
        return lines + ["_No run here has an attention heatmap (attention/step*/val*.png)._"]
    lines.append(
        "One validation sentence per model, at the last plotted validation step (weights show "
        "which source positions were mixed, not why)."
    )
    lines.append("")
    for heatmap in figures.heatmaps:
        # a kept copy reads as a fresh one: the report must not depend on the clone it ran in
        lines.append(f"**{heatmap.variant}** (seed {heatmap.seed}, `{heatmap.source}`)")
        lines.append("")
        lines.append(f"![{heatmap.variant}]({relative(heatmap.path, out_dir)})")
        lines.append("")
    if figures.without_heatmap:
        # a report must not drop a model without a word: images are not committed with a
        # queue's runs (.gitignore), so a clone that did not make a run has no pictures of it
        lines.append(
            "No heatmap for " + ", ".join(f"**{v}**" for v in figures.without_heatmap) + ": "
            f"{'its' if len(figures.without_heatmap) == 1 else 'their'} runs hold no attention "
            "image here (a model without attention draws none; run images are not committed, so "
            "runs made in another clone have none unless an earlier report here kept a copy)."
        )
        lines.append("")
    return lines


def runs_section(report: Assessment) -> list[str]:
    rows = []
    for variant in report.comparison.variants:
        for run in variant.runs:
            training = run.results.get("training") or {}
            note = run.results.get("status_reason") or run.results.get("error") or ""
            rows.append(
                [
                    f"`{relative(run.path, report.root)}`",
                    variant.label,
                    run.seed if run.seed is not None else "—",
                    run.status,
                    mean_std([run.score("bleu")]).format(),
                    mean_std([run.score("chrf")]).format(),
                    mean_std([run.score("ppl")]).format(),
                    training.get("steps", "—"),
                    mean_std([run.late_val_gain]).format(1),
                    run.stopped_by or "—",
                    _int(mean_std([run.timing("train_seconds")])),
                    _first_line(note),
                ]
            )
    header = ["run", "variant", "seed", "status", "BLEU", "chrF", "ppl", "steps", "val gain"]
    header += ["stopped by"]
    header += ["train s", "note"]
    return [
        "## Runs",
        "",
        "<details><summary>Every run (a diverged run shows the BLEU it reached, if it was "
        "tested)</summary>",
        "",
        table(header, rows),
        "",
        "</details>",
    ]


def experiment_markdown(report: Assessment, figures: Figures, out_dir: Path) -> str:
    """report.md of one experiment written to ``out_dir`` (images linked relative to it)."""
    spec = report.spec
    lines = [f"# {spec.title}", ""]
    if spec.title != report.name:
        lines += [f"Experiment `{report.name}`.", ""]
    lines.append(
        f"**Verdict: {report.verdict.outcome}** (rule and numbers in "
        "[Published finding vs ours](#published-finding-vs-ours))"
    )
    lines.append("")
    sections = [
        header_section(report, out_dir),
        results_section(report),
        differences_section(report),
        verdict_section(report),
        tables_section(report),
        extra_tests_section(report.comparison),
        plots_section(figures, out_dir),
        heatmaps_section(figures, out_dir),
        runs_section(report),
    ]
    for section in sections:
        if section:  # a spec without extra tables has no such section
            lines += section
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def index_markdown(
    reports: Sequence[tuple[Assessment, Path]],
    failed: dict[str, str],
    unreadable: Sequence[Unreadable],
    root: Path,
    out: Path,
    debug: Sequence[Run],
) -> str:
    """The index of the reports written under ``out``: (assessment, report.md) each; the
    debug runs found beside them are named as left out."""
    lines = ["# Results", ""]
    where = portable_path(root.as_posix())  # the directory as given, unless absolute
    lines.append(f"Generated by `python -m seq2seq_lab.report` from the runs under `{where}`.")
    lines.append("")
    rows = [
        [
            f"[{a.spec.name}]({relative(path, out)})",
            a.spec.title,
            status_summary(a.comparison.runs),
            f"**{a.verdict.outcome}**",
        ]
        for a, path in reports
    ]
    if rows:
        lines += [table(["experiment", "comparison", "runs", "verdict"], rows), ""]
    else:
        lines += ["No runs found.", ""]
    if failed:
        lines += ["Reports that could not be built (a bug: please report it):", ""]
        lines += [f"- `{name}`: {_first_line(error)}" for name, error in failed.items()]
        lines.append("")
    if debug:
        lines += [
            "Debug runs (left out: `debug=...` answers whether a run works, not a comparison):",
            "",
        ]
        lines += [f"- `{relative(run.path, root)}`: debug={run.debug}" for run in debug]
        lines.append("")
    if unreadable:
        lines += ["Unreadable results.json files (left out):", ""]
        lines += [f"- `{relative(u.path, root)}`: {_first_line(u.reason)}" for u in unreadable]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
