"""Length beyond training, on E1's runs (Bahdanau et al. 2014, Fig. 2): plain seq2seq against
the attention models on test inputs made longer than any training sentence by joining
consecutive test pairs (seq2seq_lab/analysis/length_probe.py; E1 records it at multi30k and
full as ``length_probe`` in results.json).

Per run, with b_1 the probe's BLEU on the test set as it is (the join of 1 pair: on Multi30k
every test sentence is within the training lengths) and b_L its BLEU on the longest
source-length bucket that holds at least MIN_BUCKET_SENTENCES joined inputs, the retention

    r = b_L / b_1

is the share of its in-length quality a model keeps on the long inputs. Retentions are compared
across seeds, paired by seed (``report/evidence.py``); the probe keeps no per-sentence outputs,
so the test-sentence term is not counted and the checks say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from matplotlib.figure import Figure

from experiments.e1_attention.spec import SPEC as E1
from seq2seq_lab.analysis.length_probe import PROBE
from seq2seq_lab.report.aggregate import Variant, bucket_key, mean_std
from seq2seq_lab.report.checks import (
    MIN_BUCKET_SENTENCES,
    decided,
    every_case,
    family_order,
    family_role,
    judged,
    missing_runs,
)
from seq2seq_lab.report.evidence import level, recorded
from seq2seq_lab.report.plots import BleuByLength, KeyFn, line_label, save
from seq2seq_lab.report.rules import Claim
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Check, Comparison, ExperimentSpec, Finding, Table

RECORD = PROBE  # the results.json record (seq2seq_lab.pipeline.run_length_probe)
# Bahdanau et al. Fig. 2: past 50 words RNNencdec keeps well under half of its short-sentence
# BLEU and RNNsearch-50 nearly all; a tenth of the in-length score is the least gap that still
# says "keeps a far larger share" rather than "about the same".
RETAINED_MORE = 0.10
COLLAPSED = 0.5  # "collapses": keeps less than half (RNNencdec-30/-50 fall to under half)


def _probed(c: Comparison) -> list[Variant]:
    return [v for v in c.variants if v.bleu_by_length(RECORD)]


def long_bucket(variants: list[Variant]) -> str | None:
    """The longest probe bucket with at least MIN_BUCKET_SENTENCES inputs in every variant."""
    common: set[str] | None = None
    for variant in variants:
        counts = variant.bucket_counts(RECORD)
        scored = {b for b, n in counts.items() if n >= MIN_BUCKET_SENTENCES}
        common = scored if common is None else common & scored
    return max(common, key=bucket_key) if common else None


def run_retention(run: Run, bucket: str) -> float | None:
    """r = b_L / b_1 of one finished run with the probe (module docstring)."""
    probe = run.results.get(RECORD) or {}
    whole = ((probe.get("joins") or {}).get("1") or {}).get("bleu")
    on_bucket = (run.buckets(RECORD).get(bucket) or {}).get("bleu")
    if run.finished and whole and on_bucket is not None:
        return float(on_bucket) / float(whole)
    return None


def retentions(variant: Variant, bucket: str) -> list[float]:
    """r of each finished run that has the probe."""
    found = [run_retention(run, bucket) for run in variant.runs]
    return [r for r in found if r is not None]


def _without_brevity_penalty(entry: dict) -> float | None:
    """BLEU / BP: the n-gram precisions' geometric mean (x 100), what is left of BLEU once
    the penalty for short output is taken out (metrics.corpus.bleu_with_length)."""
    bleu, penalty = entry.get("bleu"), entry.get("brevity_penalty")
    return bleu / penalty if bleu is not None and penalty else None


PER_JOIN = (
    ("BLEU", "bleu", 2),
    ("BLEU / BP", _without_brevity_penalty, 2),
    ("output / reference length", "length_ratio", 2),
    ("output words", "output_words", 1),
)


def per_join_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    """Per probed model and join k: BLEU, BLEU without the brevity penalty, and the output's
    length against the joined references (mean ± std over seeds)."""
    probed = [v for v in _probed(c) if v.per_join("length_ratio", RECORD)]
    if not probed:
        return [], []
    words = probed[0].per_join("source_words", RECORD)  # the inputs are every run's
    references = probed[0].per_join("reference_words", RECORD)
    header = ["model", "figure"] + [
        f"k={k} ({m.mean:.0f} / {references[k].mean:.0f} words)" if k in references else f"k={k}"
        for k, m in words.items()
    ]
    rows = []
    for variant in probed:
        for label, figure, digits in PER_JOIN:
            values = variant.per_join(figure, RECORD)
            cells = [values[k].format(digits) if k in values else "—" for k in words]
            rows.append([f"**{variant.label}**", label, *cells])
    return header, rows


def _text(values: list[float]) -> str:
    return mean_std(values).format(2)


class Probed(NamedTuple):
    """What both checks read: the models with the probe, the bucket, seq2seq's retentions."""

    plain: Variant
    attention: list[Variant]
    bucket: str
    base: list[float]  # retentions of plain seq2seq's seeds


def _probed_models(c: Comparison) -> Probed | Finding:
    probed = _probed(c)
    plain = next((v for v in probed if v.role.get("family") == "plain"), None)
    attention = [v for v in probed if v.role.get("family") not in ("plain", None)]
    if plain is None or not attention:
        return missing_runs("the length probe of plain seq2seq and at least one attention model")
    bucket = long_bucket([plain, *attention])
    if bucket is None:
        return missing_runs(f"a probe bucket with >= {MIN_BUCKET_SENTENCES} inputs in every run")
    base = retentions(plain, bucket)
    if not base:
        return missing_runs("a probed seed of plain seq2seq with a score on the test set as it is")
    return Probed(plain, attention, bucket, base)


def _retains_more(c: Comparison) -> Finding:
    probed = _probed_models(c)
    if isinstance(probed, Finding):
        return probed
    measure = recorded(
        f"probe retention on {probed.bucket}", lambda run: run_retention(run, probed.bucket)
    )
    claim = Claim("at least", RETAINED_MORE)
    cases = [
        judged(c, f"{model.label} - plain", probed.plain, model, claim, measure=measure)
        for model in probed.attention
    ]
    head = f"b_L / b_1 on bucket {probed.bucket}: plain {_text(probed.base)}; "
    return every_case(cases, "the probe of plain seq2seq and an attention model", prefix=head)


def _plain_collapses(c: Comparison) -> Finding:
    probed = _probed_models(c)
    if isinstance(probed, Finding):
        return probed
    text = f"plain retention on {probed.bucket}"
    d = level("plain", probed.base, f"probe retention on {probed.bucket}")
    detail = f"{text} {d.delta:.2f} [{d.low:.2f}, {d.high:.2f}] (seeds only)"
    still = c.unconverged([probed.plain])
    if still:
        return Finding(None, detail, why="not converged: " + ", ".join(still))
    return decided(Claim("at most", COLLAPSED), d, detail, text)


@dataclass(frozen=True)
class ProbeOutputLength:
    """The length probe's output length against its references per number of joined test
    pairs k: c / r in 13a tokens (``length_probe.joins[k].length_ratio``), one line per
    variant, mean over seeds with the std as error bars. A line that falls as k grows is a
    model that stops early: its BLEU on long inputs is lost to the brevity penalty."""

    line: KeyFn | None = None
    name: str = "probe_output_length"
    caption: str = (
        "Output length / reference length on the test set joined k pairs at a time (13a "
        "tokens; mean over seeds, bars: std; below 1: the brevity penalty applies)"
    )
    record: str = PROBE

    def draw(self, comparison: Comparison, out_dir: Path) -> list[Path]:
        curves = [(v, v.per_join("length_ratio", self.record)) for v in comparison.variants]
        curves = [(v, c) for v, c in curves if c]
        if not curves:
            return []
        figure = Figure(figsize=(7.5, 4.5), layout="constrained")
        ax = figure.add_subplot()
        for variant, curve in curves:
            ax.errorbar(
                list(curve),
                [m.mean for m in curve.values()],
                yerr=[m.std or 0.0 for m in curve.values()],
                marker="o",
                capsize=3,
                label=line_label(variant, self.line),
            )
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        ax.set_xticks(sorted({k for _, c in curves for k in c}))
        ax.set_xlabel("test pairs joined into one input (k)")
        ax.set_ylabel("output length / reference length")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("Output length on joined test inputs")
        return [save(figure, out_dir / f"{self.name}.png")]


SPEC = ExperimentSpec(
    name="e1_length_probe",
    title="E1 length beyond training: joined test inputs (Bahdanau et al. 2014, Fig. 2)",
    headline="plain seq2seq falls on long sentences, attention holds",
    published=(
        "WMT14 en-fr, BLEU by sentence length: the RNN encoder-decoder's BLEU drops sharply as "
        "sentences get longer (RNNencdec-30 and -50 fall well below 10 past 40-50 words), while "
        "RNNsearch-50 does not deteriorate even beyond 50 words."
    ),
    expected=(
        "On test inputs several times longer than any training sentence (consecutive test2016 "
        "pairs joined), plain seq2seq collapses and the attention models keep a far larger "
        "share of their in-length BLEU."
    ),
    role=family_role,
    order=family_order,
    checks=(
        Check(
            f"on the longest probe bucket (>= {MIN_BUCKET_SENTENCES} joined inputs) every "
            "attention model keeps a larger share of its in-length BLEU than plain seq2seq: "
            f"retention b_L / b_1 higher by at least {RETAINED_MORE:g} (95 % interval's lower "
            "end, paired by seed, across seeds only: the probe keeps no per-sentence outputs)",
            _retains_more,
            main=True,
        ),
        Check(
            f"plain seq2seq collapses: it keeps at most {COLLAPSED:g} of its in-length BLEU "
            "on that bucket (95 % interval's upper end, across seeds)",
            _plain_collapses,
        ),
    ),
    floor=E1.floor,
    plots=(
        BleuByLength(
            name="probe_bleu_by_length",
            caption=(
                "BLEU by source-length bucket on the test set joined 1, 2, ... pairs at a time "
                "(greedy; mean over seeds, bars: std)"
            ),
            record=RECORD,
        ),
        ProbeOutputLength(record=RECORD),
    ),
    tables=(
        Table(
            "The probe per join: BLEU and output length",
            per_join_rows,
            note=(
                "k test pairs joined into one input (mean source / reference words in the "
                "header); greedy decoding; mean ± std over seeds. BLEU = BP x (BLEU / BP): "
                "BP = min(1, exp(1 - r / c)) is the brevity penalty for output c shorter than "
                "the references r (13a tokens), BLEU / BP what the n-gram precisions alone "
                "give. An output / reference length that falls with k is a model that stops "
                "early."
            ),
        ),
    ),
    reads=E1.name,
    needs_record=RECORD,
)
