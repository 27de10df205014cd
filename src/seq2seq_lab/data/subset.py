"""A quick subset of any corpus: the first N pairs of each split (``data.first_pairs``).

The cut is made after the text is read (and after ``data.test_from_train_lines`` /
``val_from_train_lines`` have formed the splits), so it is the same for every source:

    split = split[:N]   for each split with a limit N (null: the whole split)

``scale=smoke`` sets it for every corpus read from files or a dataset; the generated tasks are
drawn at their smoke size instead (conf/data_size/<data>_smoke.yaml).
"""

from __future__ import annotations

from collections.abc import Mapping

from seq2seq_lab.data.sources import SPLITS, TextPairs
from seq2seq_lab.errors import ConfigError

Limits = dict[str, int | None]  # split -> the number of pairs kept from its start, None: all


def check_limits(limits: Mapping[str, int | None] | None) -> Limits:
    """``data.first_pairs`` as a dict of every split (null: no limit at all). Raises
    ConfigError for a key that is not a split or a limit below 1."""
    given = dict(limits or {})
    unknown = sorted(set(given) - set(SPLITS))
    if unknown:
        raise ConfigError(
            f"data.first_pairs.{unknown[0]}: not a split; expected {', '.join(SPLITS)}"
        )
    for split, n in given.items():
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ConfigError(f"data.first_pairs.{split}={n}: expected a positive number or null")
    return {split: given.get(split) for split in SPLITS}


def first_pairs(splits: dict[str, TextPairs], limits: Limits) -> dict[str, TextPairs]:
    """``splits`` with each split cut to its first ``limits[split]`` pairs."""
    out: dict[str, TextPairs] = {}
    for split, (sources, targets) in splits.items():
        n = limits.get(split)
        out[split] = (sources[:n], targets[:n]) if n is not None else (sources, targets)
    return out
