"""The report's section for test sets scored apart from the test split (results.json
``extra_tests``: the synthetic task's sentences past every training length). One table per
such set, one row per variant: its BLEU there beside its BLEU on the test split, mean ± std
over the seeds that have both, and their ratio. Not a check: the comparisons' checks read the
test split; a reader sees here how each model carries over to lengths it never trained on.
Kept free of torch: reading results stays light."""

from __future__ import annotations

from seq2seq_lab.record.results import EXTRA_TESTS
from seq2seq_lab.report.aggregate import mean_std
from seq2seq_lab.report.spec import Comparison


def extra_test_splits(c: Comparison) -> list[str]:
    """The extra test sets any finished run of the comparison recorded, in first-seen order."""
    splits: dict[str, None] = {}
    for run in c.runs:
        if run.finished:
            splits.update(dict.fromkeys(run.results.get(EXTRA_TESTS) or {}))
    return list(splits)


def extra_test_rows(c: Comparison, split: str) -> tuple[list[str], list[list[str]]]:
    header = ["model", "seeds", f"{split} BLEU", "test BLEU", f"{split} / test", "length ratio"]
    rows = []
    for variant in c.variants:
        pairs = []
        for run in variant.runs:
            record = (run.results.get(EXTRA_TESTS) or {}).get(split) if run.finished else None
            if record and run.score("bleu") is not None:
                pairs.append((record, run.score("bleu")))
        if not pairs:
            continue
        extra = mean_std(record["bleu"] for record, _ in pairs)
        test = mean_std(bleu for _, bleu in pairs)
        ratio = mean_std(record["bleu"] / bleu if bleu else None for record, bleu in pairs)
        length = mean_std(record.get("length_ratio") for record, _ in pairs)
        rows.append(
            [
                f"**{variant.label}**",
                str(len(pairs)),
                extra.format(),
                test.format(),
                ratio.format(),
                length.format(),
            ]  # fmt: skip
        )
    return header, rows


def extra_test_note(c: Comparison, split: str) -> str:
    """What the table of ``split`` shows, with the set's size from the first run recording it."""
    records = [(run.results.get(EXTRA_TESTS) or {}).get(split) for run in c.runs if run.finished]
    first = next(r for r in records if r)
    return (
        f"{first['sentences']} sentences of {first.get('source_words', 0):.1f} source words on "
        "average, all longer than any training sentence, decoded greedily (every model alike), "
        "never mixed into the test split the checks read. "
        f"{split} / test: the share of its test BLEU a model keeps there; length ratio: output "
        "/ reference length."
    )
