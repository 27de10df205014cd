"""E8's checks (experiments/e8_decoding/spec.py) on E1 runs whose decoding-study outputs are
made word by word: the published effects present, absent, and on a model still improving; its
report written beside E1's from the same runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_support import converging, corpus, translate, write_run

from experiments.e8_decoding.spec import SEARCH_ROOM
from experiments.e8_decoding.spec import SPEC as E8
from seq2seq_lab.analysis.decoding_study_record import write_outputs
from seq2seq_lab.metrics.corpus import bleu_with_length, corpus_scores
from seq2seq_lab.report.generate import generate_report
from seq2seq_lab.report.runs import find_runs
from seq2seq_lab.report.spec import NOT_REPRODUCED, REPRODUCED, Comparison

FAMILIES = ("bahdanau", "transformer")
TEXTS = corpus(n=80)
WIDTHS = (1, 5, 100)
ALPHAS = (0.0, 1.0)


def outputs(references, error: float, cut: float, seed: int) -> list[str]:
    """Each reference with a share ``error`` of its words replaced, then its last ``cut``
    share of words dropped (an output that stops early)."""
    hypotheses = translate(references, error, seed=seed)
    return [" ".join(h.split()[: max(1, round(len(h.split()) * (1 - cut)))]) for h in hypotheses]


PUBLISHED = {  # (width, alpha): (error, cut)
    (1, 0.0): (0.30, 0.0),
    (5, 0.0): (0.20, 0.0),
    (100, 0.0): (0.20, 0.35),  # shorter and worse without a penalty
    (5, 1.0): (0.20, 0.0),
    (100, 1.0): (0.20, 0.05),  # the penalty keeps most of the length
}
ABSENT = {
    (1, 0.0): (0.20, 0.0),
    (5, 0.0): (0.30, 0.0),  # beam worse than greedy
    (100, 0.0): (0.15, 0.0),  # and the widest beam the best, as long as greedy
    (5, 1.0): (0.30, 0.0),
    (100, 1.0): (0.30, 0.30),
}


def study_run(path: Path, family: str, seed: int, effects: dict, gain: float = 0.0) -> None:
    sources, references = TEXTS
    write_run(path, experiment="e1_attention", variant=family, family=family, seed=seed,
              texts=(sources, references, references), validations=converging(gain),
              bleu_only=True)  # fmt: skip
    hypotheses, rows = {}, []
    for width in WIDTHS:
        for alpha in ALPHAS:
            error, cut = effects[width, alpha if width > 1 else 0.0]
            texts = outputs(references, error, cut, seed=1000 * seed + width)
            hypotheses[f"{width}-{alpha:g}"] = texts
            length = bleu_with_length(texts, references)
            rows.append({"beam": width, "alpha": alpha,
                         **corpus_scores(texts, references).as_dict(),
                         "length_ratio": length["length_ratio"], "empty": 0.0, "log_prob": -5.0,
                         "seconds_per_sentence": 0.01})  # fmt: skip
    write_outputs(path / "decoding_study" / "outputs.json.gz", hypotheses)
    results = json.loads((path / "results.json").read_text())
    results["decoding_study"] = {
        "sentences": len(references),
        "settings": rows,
        "errors": [
            {"beam": w, "correct": 0.1, "search_error": 0.05, "model_error": 0.8} for w in WIDTHS
        ],  # fmt: skip
        "exact": {
            "sentences": 10,
            "finished": 8,
            "max_nodes": 1000,
            "mean_nodes": 50.0,
            "seconds": 1.0,
            "empty_is_best": 0.25,
            "beam_is_best": {str(w): 0.5 for w in WIDTHS},
        },  # fmt: skip
        "reference_log_prob": -6.0,
    }
    (path / "results.json").write_text(json.dumps(results))


def grid(root: Path, effects: dict, rising: tuple[str, ...] = ()) -> Comparison:
    """E1's families, three seeds each; those in ``rising`` still improving at their end."""
    for family in FAMILIES:
        for seed in (1, 2, 3):
            gain = 5.0 if family in rising else 0.0
            study_run(root / f"{family}_{seed}", family, seed, effects, gain)
    return Comparison(E8, find_runs(root)[0])


def answers(c: Comparison) -> list[bool | None]:
    return [check.judge(c).holds for check in E8.checks]


def test_the_published_effects_hold_on_every_model(tmp_path):
    c = grid(tmp_path, PUBLISHED)
    assert answers(c) == [True, True, True, True]
    main = E8.checks[0].judge(c).detail
    assert "bahdanau: beam 5 - greedy +" in main and "(paired)" in main
    assert E8.verdict(c).outcome == REPRODUCED


def test_the_opposite_effects_fail(tmp_path):
    c = grid(tmp_path, ABSENT)
    assert answers(c) == [False, False, False, False]
    assert E8.verdict(c).outcome == NOT_REPRODUCED


def test_a_model_still_improving_is_named_and_not_judged(tmp_path):
    finding = E8.checks[0].judge(grid(tmp_path, PUBLISHED, rising=("transformer",)))
    assert finding.holds is True  # on the models that converged
    assert finding.detail.startswith("left out, not converged: transformer (seed 1 +")
    assert "transformer: beam 5" not in finding.detail


def test_with_no_model_converged_the_checks_are_undecided(tmp_path):
    c = grid(tmp_path, PUBLISHED, rising=("plain", "bahdanau", "transformer"))
    for check in E8.checks:
        finding = check.judge(c)
        assert finding.holds is None and finding.why.startswith("not converged"), finding


def test_the_report_is_written_beside_e1s_with_its_tables_and_figures(tmp_path):
    runs = tmp_path / "runs"
    grid(runs, PUBLISHED)
    out = tmp_path / "report"
    generate_report(runs, out)
    report = (out / "e8_decoding" / "report.md").read_text()
    for title in ("Every width and penalty", "Search errors and model errors", "Exact search"):
        assert title in report
    assert "8 / 10 (budget 1,000)" in report
    for figure in ("bleu_by_width", "length_by_width", "empty_by_width"):
        assert (out / "e8_decoding" / f"{figure}.png").is_file()


@pytest.mark.parametrize("missing", ["record", "outputs"])
def test_without_the_outputs_the_checks_count_seeds_only_and_without_the_record_nothing(
    tmp_path, missing
):
    c = grid(tmp_path, PUBLISHED)
    for run in c.runs:
        if missing == "outputs":
            (run.path / "decoding_study" / "outputs.json.gz").unlink()
        else:
            results = json.loads((run.path / "results.json").read_text())
            del results["decoding_study"]
            (run.path / "results.json").write_text(json.dumps(results))
    c = Comparison(E8, find_runs(tmp_path)[0])
    finding = E8.checks[0].judge(c)
    if missing == "outputs":
        assert finding.holds is None and "test outputs missing" in finding.detail
    else:
        assert finding.holds is None and finding.why.startswith("missing")


@pytest.mark.parametrize("effects", [PUBLISHED, ABSENT], ids=["published", "opposite"])
def test_where_greedy_is_already_the_models_best_nothing_is_tested(tmp_path, effects):
    """The precondition (SEARCH_ROOM): with greedy's output the model's best on 99 % of the
    sentences, search has nothing to find, and no check holds or fails, whatever the
    outputs show."""
    grid(tmp_path, effects)
    for path in tmp_path.rglob("results.json"):
        results = json.loads(path.read_text())
        results["decoding_study"]["exact"]["beam_is_best"]["1"] = 1 - SEARCH_ROOM / 5
        path.write_text(json.dumps(results))
    c = Comparison(E8, find_runs(tmp_path)[0])
    for check in E8.checks:
        found = check.judge(c)
        assert found.holds is None and found.why.startswith("precondition unmet: greedy's")
    assert "bahdanau 1.0%" in E8.checks[0].judge(c).why
    assert E8.verdict(c).outcome == "inconclusive (precondition unmet)"


def test_with_no_model_converged_the_room_is_read_on_every_studied_model(tmp_path):
    """The room for search is the model's and the task's: with none converged, an unmet
    precondition is the reason, not the convergence the checks would wait for."""
    grid(tmp_path, PUBLISHED, rising=("plain", "bahdanau", "transformer"))
    for path in tmp_path.rglob("results.json"):
        results = json.loads(path.read_text())
        results["decoding_study"]["exact"]["beam_is_best"]["1"] = 0.99
        path.write_text(json.dumps(results))
    found = E8.checks[0].judge(Comparison(E8, find_runs(tmp_path)[0]))
    assert found.holds is None and found.why.startswith("precondition unmet")
