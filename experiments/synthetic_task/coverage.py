"""How often the test split's words were seen in training, for the synthetic task as
configured (``data=synthetic`` with any Hydra overrides): the lexicon's rare-word tail that
``zipf`` and the lexicon sizes make. Prints the training sentences' mean length, the word
types per side, and the share of the test split's target tokens seen 0, at most 2 and at most
5 times in training (and of its source tokens seen 0 times: they read as <unk>).

    python experiments/synthetic_task/coverage.py
    python experiments/synthetic_task/coverage.py data.source.nouns=300 data=synthetic_v1
"""

from __future__ import annotations

import sys
from collections import Counter

from hydra import compose, initialize_config_dir

from seq2seq_lab.config import CONF_DIR, to_plain
from seq2seq_lab.data.synthetic import SyntheticTask, generate_corpus


def coverage(overrides: list[str]) -> dict[str, float]:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", overrides=overrides)
    settings = {k: v for k, v in to_plain(cfg.data.source).items() if k != "_target_"}
    corpus = generate_corpus(SyntheticTask(**settings))
    train = corpus.pairs("train")
    src_seen = Counter(w for s, _ in train for w in s.split())
    tgt_seen = Counter(w for _, t in train for w in t.split())
    test_src = [w for s, _ in corpus.pairs("test") for w in s.split()]
    test_tgt = [w for _, t in corpus.pairs("test") for w in t.split()]

    def share(seen: Counter, words: list[str], most: int) -> float:
        return sum(seen[w] <= most for w in words) / len(words)

    return {
        "train_mean_words": sum(len(s.split()) for s, _ in train) / len(train),
        "source_types": len(src_seen),
        "target_types": len(tgt_seen),
        "test_target_unseen": share(tgt_seen, test_tgt, 0),
        "test_target_seen_at_most_2": share(tgt_seen, test_tgt, 2),
        "test_target_seen_at_most_5": share(tgt_seen, test_tgt, 5),
        "test_source_unseen": share(src_seen, test_src, 0),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0
    for key, value in coverage(argv).items():
        print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
