"""The alignment figures as a run records them (results.json ``alignment``) and reports print
them; measured by :mod:`seq2seq_lab.analysis.alignment`, whose docstring has the formulas.
Kept free of torch so that reading results stays light."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ALIGNMENT = "alignment"  # the results.json record
END_POSITIONS = 2  # "the end": the source's last token (usually its full stop) and EOS


@dataclass(frozen=True)
class AlignmentFigures:
    normalised_entropy: float  # mean H_t / log S over target tokens
    max_weight: float  # mean max_i alpha_{t,i}
    on_end: float  # share of target tokens attending most to the last two source positions
    end_mass: float  # mean attention weight on the last two source positions
    distinct: float  # mean over sentences of distinct most-attended positions / T
    tokens: int  # real target tokens measured
    sentences: int


# (field, column heading) of the figures a table prints
COLUMNS = (
    ("normalised_entropy", "H / log S"),
    ("max_weight", "max weight"),
    ("on_end", "on the last two"),
    ("end_mass", "mass on the last two"),
    ("distinct", "distinct per token"),
)


def alignment_record(figures: AlignmentFigures, split: str) -> dict[str, Any]:
    """The results.json entry under :data:`ALIGNMENT`."""
    return {"split": split, **asdict(figures)}
