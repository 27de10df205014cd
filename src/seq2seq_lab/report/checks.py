"""What the experiment specs share: role readers and the helpers that turn a comparison of two
variants into one answer of a check (holds, fails, undecided with its reason).

Margins are not shared: each spec declares its own, with the reason beside it (the published
effect, the claim's own words), before any run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from seq2seq_lab.analysis.alignment_record import ALIGNMENT, COLUMNS
from seq2seq_lab.report.aggregate import Role, Variant, bucket_key
from seq2seq_lab.report.evidence import (
    TEST_BLEU,
    Difference,
    Measure,
    difference,
    format_p,
    retention,
)
from seq2seq_lab.report.rules import Claim, why_undecided
from seq2seq_lab.report.runs import Run
from seq2seq_lab.report.spec import FINAL_QUALITY, Comparison, Finding, Table

MIN_BUCKET_SENTENCES = 10  # a length bucket needs this many test sentences to be compared
NOT_CONVERGED = "not converged"

Pairs = list[tuple[Variant, Variant]]


def bleu_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def missing_runs(what: str) -> Finding:
    """The answer of a check whose runs are not there."""
    return Finding(None, f"needs {what}", why=f"missing: {what}")


def every_case(cases: Iterable[Finding], needed: str, prefix: str = "") -> Finding:
    """A check over several cases (each attention model, each lr and depth, each family...):
    it fails when any case fails, holds when every case holds, and is otherwise undecided with
    the undecided cases' reasons; with no case at all it is missing ``needed``."""
    cases = list(cases)
    if not cases:
        return missing_runs(needed)
    detail = prefix + "; ".join(c.detail for c in cases)
    if any(c.holds is False for c in cases):
        return Finding(False, detail)
    undecided = [c.why or "undecided" for c in cases if c.holds is None]
    if undecided:
        return Finding(None, detail, why=merged_reasons(undecided))
    return Finding(True, detail)


def merged_reasons(whys: list[str]) -> str:
    """Undecided cases' reasons in one line: the variants not converged named once, and the
    cases that share a reason listed under it once."""
    still = [w.split(": ", 1)[1] for w in whys if w.startswith(NOT_CONVERGED)]
    named = dict.fromkeys(v for w in still for v in w.split(", "))
    head = [f"{NOT_CONVERGED}: " + ", ".join(named)] if named else []
    cases: dict[str, list[str]] = {}
    for why in whys:
        if not why.startswith(NOT_CONVERGED):
            reason, _, case = why.partition(" [")
            cases.setdefault(reason, []).append(case.rstrip("]"))
    others = [
        reason + (f" [{'; '.join(c for c in found if c)}]" if any(found) else "")
        for reason, found in cases.items()
    ]
    return "; ".join(head + others)


def judged(
    c: Comparison,
    text: str,
    baseline: Variant | None,
    system: Variant | None,
    claim: Claim,
    *,
    measure: Measure = TEST_BLEU,
    equal_updates: Sequence[Variant] = (),
) -> Finding:
    """One case: ``claim`` of ``system - baseline`` in ``measure`` (``report/rules.py``),
    judged only on variants that converged (``report/gate.py``), with two exceptions:

    - ``equal_updates``: variants a check not of final quality holds to its budget by
      declaration (``Comparison.kind``; a final-quality check exempts none);
    - the **one-sided rule**: a variant on the side the claim predicts higher (the system for
      "at least" and "not below", the baseline for "at most"; neither for "within") that is
      still rising can only move Δ away from the margin, so once the interval holds, it holds.
      The side predicted lower still rising, or any side of an "about equal" claim, keeps the
      case undecided, and so does the higher side while the interval does not hold."""
    if baseline is None or system is None:
        return missing_runs(text)
    d = difference(baseline, system, measure)
    if d is None:
        return missing_runs(f"scored runs of {text}")
    detail = f"{text} {difference_text(claim, d)}"
    exempt = {id(v) for v in equal_updates} if c.kind != FINAL_QUALITY else set()
    higher = {"at least": system, "not below": system, "at most": baseline}.get(claim.kind)
    gated = [v for v in (baseline, system) if id(v) not in exempt]
    lower_still = c.unconverged([v for v in gated if v is not higher])
    higher_still = c.unconverged([v for v in gated if v is higher])
    alone = decided(claim, d, detail, text)
    if not lower_still and not higher_still:
        return alone
    if not lower_still and alone.holds is True:
        rising = ", ".join(higher_still)
        return Finding(True, f"{detail} (holds though the side predicted higher still rises: "
                             f"{rising})")  # fmt: skip
    # what the interval alone says, so a reader sees what more training has to settle
    alone_text = f"{detail} (interval alone: {alone.text()})"
    return Finding(
        None, alone_text, why=f"{NOT_CONVERGED}: " + ", ".join(lower_still + higher_still)
    )


def decided(claim: Claim, d: Difference, detail: str, text: str) -> Finding:
    """The claim's answer on ``d``, with the reason when it is undecided."""
    holds = None if d.sentence_level and not d.test_sampling else claim.decide(d)
    if holds is None:
        return Finding(None, detail, why=f"{why_undecided(claim, d)} [{text}]")
    return Finding(holds, detail)


def difference_text(claim: Claim, d: Difference) -> str:
    """Δ with the interval the claim reads, p, and how it was tested."""
    how = "paired" if d.paired else "unpaired"
    if d.unmatched:
        how += f" on the {d.seeds} seeds both ran"
    if d.sentence_level and not d.test_sampling:
        how += ", seeds only: test outputs missing"
    elif not d.sentence_level:
        how += ", seeds only"
    return f"{claim.interval_text(d)}, p {format_p(d.p)} ({how})"


def rank(value: Any, ordered: Sequence[Any]) -> int:
    """Sort key: ``value``'s place in ``ordered``; unknown values after all known ones."""
    return ordered.index(value) if value in ordered else len(ordered)


def common_buckets(variants: list[Variant]) -> list[str]:
    """The source-length buckets every variant was scored on with at least
    MIN_BUCKET_SENTENCES test sentences, shortest first."""
    common: set[str] | None = None
    for variant in variants:
        counts = variant.bucket_counts()
        scored = {b for b in variant.bleu_by_length() if counts.get(b, 0) >= MIN_BUCKET_SENTENCES}
        common = scored if common is None else common & scored
    return sorted(common or (), key=bucket_key)


def length_retention(variants: list[Variant]) -> Measure | None:
    """Retention on the longest common bucket over the shortest (``evidence.retention``): the
    share of its short-sentence BLEU a model keeps on the longest sentences; None without two
    common buckets."""
    buckets = common_buckets(variants)
    return retention(buckets[-1], buckets[0]) if len(buckets) > 1 else None


def keeps_more(
    c: Comparison,
    worse: Variant | None,
    others: list[Variant],
    margin: float,
    text: str,
    equal_updates: Sequence[Variant] = (),
) -> Finding:
    """Every one of ``others`` keeps a larger share of its short-sentence BLEU on the longest
    bucket than ``worse``, by at least ``margin`` (retention difference, interval);
    ``equal_updates`` as in :func:`judged`."""
    others = [v for v in others if v.bleu_by_length()]
    if worse is None or not worse.bleu_by_length() or not others:
        return missing_runs(text)
    measure = length_retention([worse, *others])
    if measure is None:
        return missing_runs(
            f"two length buckets with >= {MIN_BUCKET_SENTENCES} sentences in every run"
        )
    claim = Claim("at least", margin)
    cases = [
        judged(c, f"{o.label} - {worse.label}", worse, o, claim, measure=measure,
               equal_updates=equal_updates)
        for o in others
    ]  # fmt: skip
    return every_case(cases, text, prefix=f"{measure.name}: ")


def config_flag(run: Run, key: str) -> bool | None:
    value = run.config_value(key)
    return None if value is None else bool(value)


def pair_up(baseline: Variant | None, systems: Iterable[Variant | None]) -> Pairs:
    if baseline is None:
        return []
    return [(baseline, s) for s in systems if s is not None and s is not baseline]


FAMILIES = ("plain", "bahdanau", "luong", "transformer")  # table order, simplest first


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
                    # runs recorded before a figure existed show a dash for it
                    + [f"{figures[name]:.3f}" if name in figures else "-" for name, _ in COLUMNS]
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
        "source is reversed) or EOS; mass on the last two: the mean weight on those two "
        "positions; distinct per token: distinct most-attended positions per "
        "target token. An alignment moves (high distinct, low on the last two); attention "
        "stuck on the end gives the decoder one fixed context, as in plain seq2seq."
    ),
)
