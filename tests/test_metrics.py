"""sacrebleu wrappers on known strings, and BLEU by source-length bucket."""

import pytest

from seq2seq_lab.metrics.corpus import corpus_bleu, corpus_scores
from seq2seq_lab.metrics.length_buckets import bleu_by_length, bucket_label


def test_perfect_and_disjoint_output():
    refs = ["the cat sat on the mat .", "a dog runs in the park ."]
    perfect = corpus_scores(refs, refs)
    assert perfect.bleu == pytest.approx(100.0)
    assert perfect.chrf == pytest.approx(100.0)
    assert perfect.ter == pytest.approx(0.0)
    assert corpus_bleu(["xyz qqq", "uuu vvv"], refs) == pytest.approx(0.0)
    assert perfect.signatures["bleu"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert "chrF2" in perfect.signatures["chrf"] or "nc:6" in perfect.signatures["chrf"]


def test_matches_hand_computed_bleu():
    # Precisions 5/6, 4/5, 3/4, 2/3 and no brevity penalty: BLEU = 100 * (1/3) ** (1/4).
    assert corpus_bleu(["a b c d e f"], ["a b c d e g"]) == pytest.approx(100 * (1 / 3) ** 0.25)


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        corpus_scores(["a"], ["a", "b"])


def test_bucket_labels():
    assert [bucket_label(n) for n in (1, 10, 11, 20, 50, 51, 300)] == [
        "1-10",
        "1-10",
        "11-20",
        "11-20",
        "41-50",
        "51+",
        "51+",
    ]
    assert bucket_label(7, edges=(5,)) == "6+"


def test_bleu_by_length_groups_by_source_words():
    sources = ["a b", "a b c d e f g h i j k l", "x y z"]
    refs = ["one two three four", "five six seven eight nine", "ten eleven twelve thirteen"]
    hyps = [refs[0], "wrong words only here now", refs[2]]
    buckets = bleu_by_length(sources, hyps, refs)
    assert list(buckets) == ["1-10", "11-20"]  # in bucket order, empty buckets left out
    assert buckets["1-10"] == {"bleu": pytest.approx(100.0), "count": 2}
    assert buckets["11-20"]["count"] == 1 and buckets["11-20"]["bleu"] == pytest.approx(0.0)
