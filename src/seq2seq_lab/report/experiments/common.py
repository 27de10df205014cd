"""What the experiment specs share: thresholds, role readers and small rule helpers.

Thresholds, in BLEU:

- CLEAR = 2.0: "clearly better / worse", "several BLEU";
- SAME = 1.0: "about the same", "~=";
- SMALL = 0.5: "a little", "about +1".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from seq2seq_lab.analysis.alignment_record import ALIGNMENT, COLUMNS
from seq2seq_lab.report.aggregate import Role, Variant, bucket_key
from seq2seq_lab.report.evidence import Difference, difference
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import Comparison, Finding, Table

CLEAR = 2.0
SAME = 1.0
SMALL = 0.5
MIN_BUCKET_SENTENCES = 10  # a length bucket needs this many test sentences to be compared

Pairs = list[tuple[Variant, Variant]]


def bleu_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def with_bleu(variants: Iterable[Variant | None]) -> list[Variant]:
    return [v for v in variants if v is not None and v.bleu is not None]


def lacks(what: str) -> Finding:
    return Finding(None, f"needs {what}")


def every(cases: Iterable[tuple[bool | None, str]], missing: str, prefix: str = "") -> Finding:
    """A check over several settings (lr and depth, d_k, model family...): each case is
    (holds or None when that setting lacks the runs, the numbers it used). The check holds when
    every case holds, and is inconclusive when any setting lacks its runs (named) or when
    there is no setting at all (``missing`` says what is needed)."""
    cases = list(cases)
    if not cases:
        return lacks(missing)
    lacking = [d for holds, d in cases if holds is None]
    if lacking:
        return Finding(None, prefix + "missing: " + "; ".join(lacking))
    return Finding(all(holds for holds, _ in cases), prefix + "; ".join(d for _, d in cases))


def tested(baseline: Variant | None, system: Variant | None) -> Difference | None:
    """The across-seed test of ``system - baseline`` (report/evidence.py), None when either
    variant is missing or has no scored run."""
    if baseline is None or system is None:
        return None
    return difference(baseline, system)


def compared(
    text: str,
    baseline: Variant | None,
    system: Variant | None,
    holds: Callable[[Difference], bool],
) -> tuple[bool | None, str]:
    """One case of :func:`every`: whether ``holds`` of the test of ``system - baseline``
    (None when either lacks scored runs), and ``text`` with the test's numbers."""
    d = tested(baseline, system)
    return (None if d is None else holds(d)), f"{text} " + (d.text() if d else "—")


def monotone(values: Sequence[tuple[Any, float]], rising: bool) -> tuple[bool, list[str]]:
    """Whether every adjacent pair of (setting, value) moves the stated way, and the pairs that
    do not (a claim "increasingly with d_k" checks each step, not only the end points)."""
    broken = [
        f"{a} -> {b}"
        for (a, x), (b, y) in zip(values, values[1:])
        if not ((y > x) if rising else (y < x))
    ]
    return not broken, broken


def rank(value: Any, ordered: Sequence[Any]) -> int:
    """Sort key: ``value``'s place in ``ordered``; unknown values after all known ones."""
    return ordered.index(value) if value in ordered else len(ordered)


def longest_bucket(variants: list[Variant]) -> str | None:
    """The longest source-length bucket every variant was scored on, with at least
    MIN_BUCKET_SENTENCES test sentences."""
    common: set[str] | None = None
    for variant in variants:
        counts = variant.bucket_counts()
        scored = {b for b in variant.bleu_by_length() if counts.get(b, 0) >= MIN_BUCKET_SENTENCES}
        common = scored if common is None else common & scored
    return max(common, key=bucket_key) if common else None


def length_drop(variant: Variant, bucket: str) -> float | None:
    """Overall test BLEU minus BLEU on ``bucket`` (mean over seeds): how much is lost on
    long sentences."""
    overall, on_bucket = variant.scores("bleu").mean, variant.bleu_by_length()[bucket].mean
    return None if overall is None or on_bucket is None else overall - on_bucket


def drop_larger(worse: Variant | None, others: list[Variant], text: str) -> Finding:
    """``worse`` loses at least CLEAR BLEU more on the longest common bucket than every one of
    ``others`` (those scored by length: a run that was never tested has no buckets)."""
    others = [v for v in others if v.bleu_by_length()]
    if worse is None or not worse.bleu_by_length() or not others:
        return lacks(text)
    bucket = longest_bucket([worse, *others])
    if bucket is None:
        return lacks(f"a length bucket with >= {MIN_BUCKET_SENTENCES} sentences in every run")
    drops = {v.label: length_drop(v, bucket) for v in [worse, *others]}
    if any(d is None for d in drops.values()):
        return lacks("test BLEU of every variant")
    detail = f"overall - bucket {bucket}: " + ", ".join(
        f"{k} {bleu_text(d)}" for k, d in drops.items()
    )
    holds = all(drops[worse.label] >= drops[o.label] + CLEAR for o in others)
    return Finding(holds, detail)


def config_flag(run: Run, key: str) -> bool | None:
    value = run.config_value(key)
    return None if value is None else bool(value)


def pair_up(baseline: Variant | None, systems: Iterable[Variant | None]) -> Pairs:
    if baseline is None:
        return []
    return [(baseline, s) for s in systems if s is not None and s is not baseline]


FAMILIES = ("seq2seq", "bahdanau", "luong", "transformer")  # table order, simplest first


def family_role(run: Run) -> Role:
    return {"family": run.family}


def family_order(role: Role) -> Any:
    return rank(role.get("family"), FAMILIES)


def as_number(value: Any) -> Any:
    """A config number as float ("5e-4" included); anything else unchanged."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def alignment_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    """One row per finished run that recorded where its attention looks (results.json
    ``alignment``, analysis/alignment.py), beside its test BLEU: per seed, since a seed whose
    attention collapsed sits far from the others and a mean would hide it."""
    rows = []
    for variant in c.variants:
        for run in sorted(variant.runs, key=lambda run: run.seed or 0):
            figures = run.results.get(ALIGNMENT) if run.finished else None
            if figures:
                rows.append(
                    [f"**{variant.label}**", str(run.seed), bleu_text(run.score("bleu"))]
                    + [f"{figures[name]:.3f}" for name, _ in COLUMNS]
                )
    header = ["model", "seed", "test BLEU"] + [heading for _, heading in COLUMNS]
    return (header, rows) if rows else ([], [])


ALIGNMENT_TABLE = Table(
    "Where the attention looks",
    alignment_rows,
    note=(
        "The tested checkpoint of each recurrent attention model, teacher-forced on the test "
        "set. H / log S: attention entropy over the S source positions (0: one position, 1: "
        "uniform); max weight: the largest weight; on the last two: share of target tokens "
        "whose most attended position is the source's last token (its first word when the "
        "source is reversed) or EOS; distinct per token: distinct most-attended positions per "
        "target token. An alignment moves (high distinct, low on the last two); attention "
        "stuck on the end gives the decoder one fixed context, as in plain seq2seq."
    ),
)
