"""The decoding study (analysis/decoding_study.py) on a scripted network whose every output's
probability is written below, so each share it reports is known by hand."""

from __future__ import annotations

import math

import pytest
from scripted_network import EOS, A, B, C, ScriptedNetwork

from seq2seq_lab.analysis.decoding_study import StudySettings, decoding_study
from seq2seq_lab.decoding import DecodingSettings

WORD = {A: "A", B: "B", C: "C"}

# Sentence 0, Stahlberg and Byrne's case: greedy follows A (0.6) to "A B C" (0.252), the
# reference, while the empty output (0.4) is the model's best; a beam of 2 finds it.
EMPTY_BEST = {
    (): {EOS: 0.4, A: 0.6},
    (A,): {B: 0.7, EOS: 0.3},
    (A, B): {C: 0.6, EOS: 0.4},
    (A, B, C): {EOS: 1.0},
}
# Sentence 1, a model error: every search finds "A" (0.9), the reference "B" scores 0.1.
WRONG_BEST = {(): {A: 0.9, B: 0.1}, (A,): {EOS: 1.0}, (B,): {EOS: 1.0}}

BASE = DecodingSettings(beam_size=1, length_penalty=0.0, max_len_a=0.0, max_len_b=6, min_len=0)


def study(**overrides):
    settings = {"widths": (1, 2), "alphas": (0.0, 1.0), "sentences": None,
                "exact_sentences": 2, "exact_nodes": 1000, "batch_size": 2} | overrides  # fmt: skip
    return decoding_study(
        ScriptedNetwork([EMPTY_BEST, WRONG_BEST]),
        sources=[[0], [1]],  # the first source token picks the script
        targets=[[A, B, C], [B]],
        references=["A B C", "B"],
        detokenise=lambda ids: " ".join(WORD[i] for i in ids),
        base=BASE,
        settings=StudySettings(**settings),
    )


def by_setting(record):
    return {(row["beam"], row["alpha"]): row for row in record["settings"]}


def test_every_width_and_penalty_is_scored_greedy_once_for_every_alpha():
    record = study()
    rows = by_setting(record)
    assert set(rows) == {(1, 0.0), (1, 1.0), (2, 0.0), (2, 1.0)}
    assert record["hypotheses"]["1-0"] == record["hypotheses"]["1-1"] == ["A B C", "A"]
    assert record["hypotheses"]["2-0"] == ["", "A"]
    assert rows[2, 0.0]["empty"] == 0.5 and rows[1, 0.0]["empty"] == 0.0
    # the outputs' mean log-probability: greedy (0.252, 0.9), beam 2 (0.4, 0.9)
    assert rows[1, 0.0]["log_prob"] == pytest.approx((math.log(0.252) + math.log(0.9)) / 2)
    assert rows[2, 0.0]["log_prob"] == pytest.approx((math.log(0.4) + math.log(0.9)) / 2)
    assert rows[2, 0.0]["length_ratio"] < rows[1, 0.0]["length_ratio"]
    assert record["reference_log_prob"] == pytest.approx((math.log(0.252) + math.log(0.1)) / 2)


def test_search_errors_and_model_errors_are_told_apart():
    errors = {row["beam"]: row for row in study()["errors"]}
    # greedy: sentence 0 is right, but the empty output scores higher (a search error that
    # hides a model error); sentence 1 is a model error
    assert errors[1] == {"beam": 1, "correct": 0.5, "search_error": 0.5, "model_error": 0.5}
    # beam 2 finds both model's bests, and both are wrong
    assert errors[2] == {"beam": 2, "correct": 0.0, "search_error": 0.0, "model_error": 1.0}


def test_exact_search_finds_the_empty_output_and_which_beam_found_the_best():
    exact = study()["exact"]
    assert exact["sentences"] == 2 and exact["finished"] == 2
    assert exact["empty_is_best"] == 0.5
    assert exact["beam_is_best"] == {"1": 0.5, "2": 1.0}


def test_a_search_out_of_nodes_is_not_counted_as_finished():
    # one decoder step: sentence 1's bound (the beams' "A", 0.9) leaves no child of the root
    # worth a step, so its search ends; sentence 0's (the empty output, 0.4) leaves "A" (0.6)
    exact = study(exact_nodes=1)["exact"]
    assert exact["finished"] == 1 and exact["mean_nodes"] == 1.0
    assert exact["empty_is_best"] == 0.0 and exact["beam_is_best"] == {"1": 1.0, "2": 1.0}
    assert study(exact_sentences=0)["exact"]["empty_is_best"] is None


SECTION = {"widths": [1, 5], "alphas": [0.0, 1.0], "sentences": None, "exact_sentences": 0,
           "exact_nodes": 1, "batch_size": 1}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"alphas": [0.6]}, "decoding_study.alphas=[0.6] must hold 0"),
        ({"widths": [0, 5]}, "decoding_study.widths must be integers >= 1, got [0, 5]"),
        ({"sentences": 0}, "decoding_study.sentences must be an integer >= 1 or null, got 0"),
        ({"exact_nodes": 0}, "decoding_study.exact_nodes must be an integer >= 1, got 0"),
        (
            {"widht": [1]},
            "decoding_study.widht: unknown setting (did you mean decoding_study.widths?)",
        ),
    ],
    ids=["alpha 0", "width", "sentences", "nodes", "typo"],
)
def test_a_wrong_setting_is_one_line_naming_its_key(change, message):
    from seq2seq_lab.errors import ConfigError

    with pytest.raises(ConfigError) as error:
        StudySettings.from_config(SECTION | change)
    assert str(error.value).startswith(message)


def test_train_refuses_a_wrong_study_setting_before_it_trains(tmp_path, cache_dir):
    from conftest import run_cli, tiny_overrides

    proc = run_cli(
        "train", *tiny_overrides("transformer", "decoding_study=e8", "decoding_study.widths=[0]"),
        f"hydra.run.dir={tmp_path / 'run'}", f"paths.cache_dir={cache_dir}",
    )  # fmt: skip
    assert proc.returncode != 0
    assert "decoding_study.widths must be integers >= 1, got [0]" in proc.stderr
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_the_outputs_file_gives_back_every_settings_outputs(tmp_path):
    from seq2seq_lab.analysis.decoding_study_record import read_outputs, write_outputs

    hypotheses = {"1-0": ["a b", "c", ""], "5-0": ["a b", "c d", ""], "5-1": ["a", "c d", "e"]}
    write_outputs(tmp_path / "outputs.json.gz", hypotheses)
    assert read_outputs(tmp_path / "outputs.json.gz") == hypotheses


def test_a_run_does_the_study_after_its_test_as_a_user_types_it(tmp_path, cache_dir):
    import json

    from conftest import run_cli, tiny_overrides

    from seq2seq_lab.analysis.decoding_study_record import read_outputs

    run_dir = tmp_path / "run"
    proc = run_cli(
        "train", *tiny_overrides("transformer", "threads=1", "decoding_study=e8"),
        f"hydra.run.dir={run_dir}", f"paths.cache_dir={cache_dir}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((run_dir / "results.json").read_text())["decoding_study"]
    # conf/decoding_study_size/e8_smoke.yaml: widths 1, 2, 5 x alphas 0, 1, on the 12 test pairs
    assert [(r["beam"], r["alpha"]) for r in record["settings"]] == [
        (w, a) for w in (1, 2, 5) for a in (0.0, 1.0)
    ]
    assert record["sentences"] == 12 and record["split"] == "test"
    assert [r["beam"] for r in record["errors"]] == [1, 2, 5]
    assert record["exact"]["sentences"] == 2 and record["exact"]["max_nodes"] == 50
    outputs = read_outputs(run_dir / "decoding_study" / "outputs.json.gz")
    assert set(outputs) == {"1-0", "1-1", "2-0", "2-1", "5-0", "5-1"}
    hypotheses = (run_dir / "hypotheses.test.txt").read_text().splitlines()
    # the test decodes with beam 2 (scale=smoke) and alpha 1 (conf/decoding/greedy.yaml)
    assert outputs["2-1"] == hypotheses


def test_decoding_study_none_takes_the_study_off_an_experiment_that_selects_it(tmp_path):
    """E1 selects E8's study (experiments/e1_attention/config.yaml); ``decoding_study=none``
    gives its runs back without it (``null`` is no option on the command line)."""
    from conftest import compose_config

    from seq2seq_lab.preflight import check_train_inputs

    e1 = ["experiment=e1_attention"]
    assert compose_config("train", e1, tmp_path).decoding_study.widths
    cfg = compose_config("train", [*e1, "decoding_study=none"], tmp_path)
    assert not cfg.decoding_study
    check_train_inputs(cfg)  # the checks before training take it as no study
