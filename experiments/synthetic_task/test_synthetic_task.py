"""The calibration's table of test-sampling errors (test_sampling.py), as a user runs it."""

from __future__ import annotations

import re

from report_support import write_run

from experiments.synthetic_task.test_sampling import main

SOURCES = [f"src {i} " + "w " * (i % 25) for i in range(60)]
REFERENCES = [f"the cat number {i} sat on the mat today" for i in range(60)]


def _run(path, variant, hypotheses):
    write_run(path, experiment=None, variant=variant, family="transformer",
              texts=(SOURCES, REFERENCES, hypotheses))  # fmt: skip


def test_the_error_of_a_difference_is_zero_between_equal_outputs_and_not_between_others(
    tmp_path, capsys
):
    good = [r if i % 3 else r.replace("cat", "dog") for i, r in enumerate(REFERENCES)]
    worse = [r if i % 2 else r.replace("sat on", "ran to") for i, r in enumerate(REFERENCES)]
    _run(tmp_path / "a", "a", good)
    _run(tmp_path / "b", "b", good)
    _run(tmp_path / "c", "c", worse)
    assert main([str(tmp_path / name) for name in ("a", "b", "c")]) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"[+-]\d+\.\d\d", cells[2]):
            rows[(cells[0].rsplit("/", 1)[-1], cells[1].rsplit("/", 1)[-1])] = float(cells[3])
    assert rows[("a", "b")] == 0.0  # the same outputs: no test-sampling spread
    assert rows[("a", "c")] > 0.1 and rows[("b", "c")] == rows[("a", "c")]


def test_coverage_counts_the_rare_words_of_the_configured_task(capsys):
    from experiments.synthetic_task.coverage import main as coverage_main

    small = ["data.source.train_pairs=300", "data.source.val_pairs=10", "data.source.test_pairs=200",
             "data.source.extrapolation_pairs=0"]  # fmt: skip
    assert coverage_main(small) == 0
    figures = dict(line.split(": ") for line in capsys.readouterr().out.splitlines())
    rare = float(figures["test_target_seen_at_most_5"])
    assert (
        float(figures["test_target_unseen"]) <= float(figures["test_target_seen_at_most_2"]) <= rare
    )
    # ten times the training sentences: each word seen more often, fewer rare test tokens
    assert coverage_main([*small, "data.source.train_pairs=3000"]) == 0
    more = dict(line.split(": ") for line in capsys.readouterr().out.splitlines())
    assert float(more["test_target_seen_at_most_5"]) < rare / 2
