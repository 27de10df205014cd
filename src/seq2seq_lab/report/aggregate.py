"""Seeds -> one row: runs that share a variant are aggregated (mean +- std over seeds).

Which number stands for a run:
- a run with a test score counts with that score (a diverged run is tested from its best
  checkpoint before the blow-up, when it has one);
- for the verdict rules only, a diverged run without a test score counts as 0 BLEU: it never
  produced a usable model, which is the finding E4 looks for, not missing data;
- a failed run (a crash) or an interrupted one (stopped by a signal before it finished) counts
  nowhere: it is listed with its error or signal, and its variant lacks data.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from seq2seq_lab.record.portable_paths import RUN_DIR
from seq2seq_lab.record.results import STATUSES
from seq2seq_lab.report.runs import Run

Role = dict[str, Any]  # what a variant is, read from the run config: {"norm": "post", ...}


@dataclass(frozen=True)
class MeanStd:
    """Mean and sample standard deviation (n - 1) of the values present."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    @property
    def std(self) -> float | None:
        return statistics.stdev(self.values) if self.n >= 2 else None

    def format(self, digits: int = 2) -> str:
        """ "25.31 ± 0.42" over >= 2 values, "25.31" over one, "—" over none."""
        if self.mean is None:
            return "—"
        if self.std is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"


def mean_std(values: Iterable[float | None]) -> MeanStd:
    """Aggregate the values that are present and finite (``None`` = no such score)."""
    return MeanStd(tuple(float(v) for v in values if v is not None and math.isfinite(v)))


def status_counts(runs: Iterable[Run]) -> str:
    """ "3 completed" / "2 completed, 1 diverged" (statuses in their canonical order)."""
    counts = Counter(run.status for run in runs)
    parts = [f"{counts[s]} {s}" for s in STATUSES if counts[s]]
    other = sum(counts.values()) - sum(counts[s] for s in STATUSES)
    if other:
        parts.append(f"{other} unknown")
    return ", ".join(parts)


def rule_bleu(run: Run) -> float | None:
    """The BLEU a verdict rule sees for one run (see the module docstring)."""
    bleu = run.score("bleu")
    if bleu is not None:
        return bleu
    return 0.0 if run.status == "diverged" else None


def bucket_key(label: str) -> int:
    """Sort key of a length bucket label ("1-10", "11-20", ..., "51+"): its lower bound."""
    digits = ""
    for char in label:
        if not char.isdigit():
            break
        digits += char
    return int(digits) if digits else 0


@dataclass
class Variant:
    """The runs of one variant (same settings, different seeds) and their aggregates."""

    label: str
    role: Role
    runs: list[Run] = field(default_factory=list)

    # ------------------------------------------------------------------ status
    def status_text(self) -> str:
        return status_counts(self.runs)

    @property
    def seeds(self) -> list[int]:
        return sorted({run.seed for run in self.runs if run.seed is not None})

    def run_for_seed(self, seed: int) -> Run | None:
        return next((run for run in self.runs if run.seed == seed), None)

    # ------------------------------------------------------------------ numbers
    def scores(self, name: str) -> MeanStd:
        """Test score ``name`` (bleu, chrf, ter, ppl) over the runs that have one."""
        return mean_std(run.score(name) for run in self.runs)

    def timing(self, name: str) -> MeanStd:
        return mean_std(run.timing(name) for run in self.runs)

    @property
    def bleu(self) -> float | None:
        """Mean BLEU as the verdict rules see it (:func:`rule_bleu`); None without data."""
        return mean_std(rule_bleu(run) for run in self.runs).mean

    @property
    def updates(self) -> MeanStd:
        """Optimiser updates over the finished runs."""
        return mean_std(run.steps for run in self.runs if run.finished)

    @property
    def late_gain(self) -> MeanStd:
        """The rise of validation BLEU over the last quarter of the updates, over the finished
        runs (:mod:`seq2seq_lab.training.convergence`)."""
        return mean_std(run.late_val_gain for run in self.runs if run.finished)

    @property
    def diverged_fraction(self) -> float:
        """Share of this variant's finished runs that diverged (0 when none finished)."""
        ran = [run for run in self.runs if run.finished]
        return sum(run.status == "diverged" for run in ran) / len(ran) if ran else 0.0

    def diagnostics(self) -> list[list[dict[str, Any]]]:
        """The validation diagnostics (:meth:`Run.validation_diagnostics`) of each run that has
        some; an unfinished (failed, interrupted) run's are left out, like its scores."""
        found = [run.validation_diagnostics() for run in self.runs if run.finished]
        return [records for records in found if records]

    def init_diagnostics(self) -> list[dict[str, Any]]:
        """The diagnostics at initialisation (:meth:`Run.init_diagnostics`) of each finished
        run that has them."""
        found = [run.init_diagnostics() for run in self.runs if run.finished]
        return [record for record in found if record]

    def bleu_by_length(self, record: str = "test") -> dict[str, MeanStd]:
        """{bucket: BLEU over seeds} from the runs' ``<record>.bleu_by_length`` (the test, or
        the length probe's joined inputs: "length_probe"), buckets in order."""
        per_bucket: dict[str, list[float]] = {}
        for run in self.runs:
            for bucket, entry in run.buckets(record).items():
                if isinstance(entry, dict) and entry.get("bleu") is not None:
                    per_bucket.setdefault(bucket, []).append(float(entry["bleu"]))
        return {b: mean_std(per_bucket[b]) for b in sorted(per_bucket, key=bucket_key)}

    def per_join(
        self,
        figure: str | Callable[[Mapping[str, Any]], float | None],
        record: str,
    ) -> dict[int, MeanStd]:
        """{k: ``figure`` over seeds} from the finished runs' ``<record>.joins[k]`` (the length
        probe's entries per number of joined test pairs): a key of the entry (bleu,
        length_ratio...) or a function of it; k in order."""
        value = (lambda entry: entry.get(figure)) if isinstance(figure, str) else figure
        found: dict[int, list[float | None]] = {}
        for run in self.runs:
            joins = (run.results.get(record) or {}).get("joins") or {} if run.finished else {}
            for k, entry in joins.items():
                figure_value = value(entry) if isinstance(entry, dict) else None
                if figure_value is not None:
                    found.setdefault(int(k), []).append(figure_value)
        return {k: mean_std(found[k]) for k in sorted(found)}

    def bucket_counts(self, record: str = "test") -> dict[str, int]:
        """{bucket: sentences} (the inputs are the same for every seed: the first run's)."""
        for run in self.runs:
            buckets = run.buckets(record)
            if buckets:
                return {b: int(e.get("count", 0)) for b, e in buckets.items()}
        return {}

    def config_differences(self) -> list[str]:
        """Config keys (flattened) on which this variant's runs disagree, beyond the seed (and
        seeds that follow it) and the paths: non-empty means runs of different settings were
        pooled (e.g. two sweeps with other sizes under one label). A path under the run's own
        directory is recorded alike by every run (``${paths.output_dir}/...``, see
        ``seq2seq_lab.record.portable_paths``), so it never differs; nor does a path there that only
        some runs set: ``ckpt_path`` (and the CSV logger's ``resume_from``) of a run continued
        from its own last.ckpt after an interruption, the same setting continued. Nor does
        ``reuse_from``, which grows between a queue's passes and never changes a run."""
        from seq2seq_lab.record.flat_config import flatten
        from seq2seq_lab.record.run_reuse import POOLS_KEY

        flat = [(run, _without_own_paths(flatten(run.config))) for run in self.runs if run.config]
        keys = dict.fromkeys(k for _, f in flat for k in f)
        differing = []
        for key in keys:
            if key in ("seed", POOLS_KEY) or key.startswith("paths."):
                continue
            values = {repr(f.get(key)) for run, f in flat if not _is_run_seed(key, f.get(key), run)}
            if len(values) > 1:
                differing.append(key)
        return differing

    def describe_role(self) -> str:
        return ", ".join(f"{k}={_show(v)}" for k, v in self.role.items() if v is not None)


def _without_own_paths(flat: dict[str, Any]) -> dict[str, Any]:
    """``flat`` with every path under the run's own directory read as unset."""
    own = f"{RUN_DIR}/"
    return {k: None if isinstance(v, str) and v.startswith(own) else v for k, v in flat.items()}


def _is_run_seed(key: str, value: Any, run: Run) -> bool:
    """A seed that follows the run's seed (``data.seed: ${seed}``)."""
    return key.rsplit(".", 1)[-1] == "seed" and value == run.seed


def _show(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def group_variants(runs: Iterable[Run], role_of: Callable[[Run], Role]) -> list[Variant]:
    """Runs -> variants, keyed by (variant label, role): runs that differ only by seed share
    both. Two roles under one label (a mislabelled sweep) become two rows, their labels
    suffixed with the role so the table never merges different settings."""
    groups: dict[tuple[str, tuple], Variant] = {}
    for run in runs:
        role = role_of(run)
        key = (run.variant, tuple(sorted((k, repr(v)) for k, v in role.items())))
        groups.setdefault(key, Variant(label=run.variant, role=role)).runs.append(run)
    variants = list(groups.values())
    labels = [v.label for v in variants]
    for variant in variants:
        if labels.count(variant.label) > 1:
            variant.label = f"{variant.label} ({variant.describe_role()})"
    for variant in variants:
        variant.runs.sort(key=lambda r: (r.seed is None, r.seed or 0, str(r.path)))
    return variants
