"""The length probe (analysis/length_probe.py): joined test pairs, their scoring by source
length, and the probe a training run records (pipeline.training.run_length_probe)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from conftest import compose_config, tiny_overrides
from sacrebleu.metrics import BLEU

from experiments.e1_length_probe.probe_rescore import rescore
from seq2seq_lab.analysis.length_probe import join_consecutive, length_probe, score_probe
from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.decoding.translation import translate_lines
from seq2seq_lab.errors import DataError
from seq2seq_lab.pipeline.building import build_datamodule
from seq2seq_lab.pipeline.evaluation import evaluate
from seq2seq_lab.pipeline.training import train
from seq2seq_lab.record.compressed_outputs import compress_finished_runs
from seq2seq_lab.record.results import read_results, write_results

SOURCES = ["a b", "c", "d e f", "g", "h i"]
REFERENCES = ["A B", "C", "D E F", "G", "H I"]


def test_joining_k_pairs_concatenates_sources_and_references_alike():
    # the module docstring's x^(k)_i and y^(k)_i for N = 5: floor(5 / 2) = 2 inputs of 2 pairs
    assert join_consecutive(SOURCES, REFERENCES, 2) == (
        ["a b c", "d e f g"],
        ["A B C", "D E F G"],
    )
    assert join_consecutive(SOURCES, REFERENCES, 1) == (SOURCES, REFERENCES)
    assert join_consecutive(SOURCES, REFERENCES, 5) == (
        ["a b c d e f g h i"],
        ["A B C D E F G H I"],
    )
    assert join_consecutive(SOURCES, REFERENCES, 6) == ([], [])
    with pytest.raises(ValueError, match="expected 1 or more"):
        join_consecutive(SOURCES, REFERENCES, 0)


def _words(n: int, start: int = 0) -> str:
    return " ".join(f"w{i}" for i in range(start, start + n))


def test_the_probe_scores_each_join_and_the_source_length_buckets_over_all():
    # 8 test pairs of 8 words each (references = sources): joins of 1, 2, 4 give 8-, 16- and
    # 32-word inputs. A "model" that translates only its first 10 words is perfect on the
    # 1-10 bucket and loses the rest as inputs grow.
    sources = [_words(8, 8 * i) for i in range(8)]
    seen = []

    def first_ten(lines):
        seen.append(list(lines))
        return [" ".join(line.split()[:10]) for line in lines]

    probe = length_probe(first_ten, sources, sources, joins=[4, 1, 2, 2], edges=(10, 20))
    assert [len(batch) for batch in seen] == [8, 4, 2]  # each k once, in increasing order
    assert list(probe["joins"]) == ["1", "2", "4"]
    assert probe["joins"]["2"]["inputs"] == 4 and probe["joins"]["4"]["source_words"] == 32
    assert probe["joins"]["1"]["bleu"] == pytest.approx(100.0)
    # 10 of 32 words on the join of 4: length ratio c / r = 10 / 32, BP = exp(1 - 32 / 10)
    assert probe["joins"]["4"]["length_ratio"] == pytest.approx(10 / 32)
    assert probe["joins"]["4"]["brevity_penalty"] == pytest.approx(math.exp(1 - 32 / 10))
    assert probe["joins"]["1"]["length_ratio"] == probe["joins"]["1"]["brevity_penalty"] == 1.0
    assert (probe["joins"]["4"]["output_words"], probe["joins"]["4"]["reference_words"]) == (10, 32)
    buckets = probe["bleu_by_length"]
    assert {b: e["count"] for b, e in buckets.items()} == {"1-10": 8, "11-20": 4, "21+": 2}
    assert buckets["1-10"]["bleu"] == pytest.approx(100.0)
    assert buckets["21+"]["bleu"] < buckets["11-20"]["bleu"] < 100.0
    # a bucket's BLEU is sacrebleu's corpus BLEU of the inputs it holds
    hyps, refs = probe["hypotheses"]["4"], join_consecutive(sources, sources, 4)[1]
    assert buckets["21+"]["bleu"] == pytest.approx(BLEU().corpus_score(hyps, [refs]).score)


def test_a_probe_needs_joins_and_one_hypothesis_per_input():
    with pytest.raises(ValueError, match="at least one join"):
        length_probe(lambda x: x, SOURCES, REFERENCES, joins=[])
    with pytest.raises(ValueError, match="5 inputs gave 4 hypotheses"):
        length_probe(lambda x: x[:4], SOURCES, REFERENCES, joins=[1])


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bahdanau", "transformer"])
def test_a_training_run_records_the_probe_of_its_tested_checkpoint(family, tmp_path, cache_dir):
    overrides = tiny_overrides(family, "trainer.max_steps=30", "length_probe=[1,3]")
    cfg = compose_config("train", overrides, tmp_path, cache_dir)
    results = train(cfg)
    probe = json.loads((tmp_path / "results.json").read_text())["length_probe"]
    assert probe == results["length_probe"]
    assert probe["split"] == "test" and probe["decoding"]["beam_size"] == 1  # greedy
    n = results["test"]["sentences"]
    assert [probe["joins"][k]["inputs"] for k in ("1", "3")] == [n, n // 3]
    assert sum(b["count"] for b in probe["bleu_by_length"].values()) == n + n // 3
    # the probe's join-1 outputs are the tested checkpoint's greedy translations of each test
    # sentence on its own: sorting the inputs by length for batching changes nothing
    ckpt = load_checkpoint(results["training"]["best_checkpoint"].replace(
        "${paths.output_dir}", str(tmp_path)))  # fmt: skip
    datamodule = build_datamodule(ckpt.run_config["data"])
    datamodule.load_state_dict(ckpt.datamodule_state)
    sources, _ = datamodule.raw_pairs("test")
    ckpt.module.eval()
    with torch.inference_mode():
        alone = [
            translate_lines(ckpt.module, datamodule, [s], ckpt.module.val_decoding, 1).lines[0]
            for s in sources
        ]
    written = (tmp_path / "length_probe" / "join-1.txt").read_text(encoding="utf-8")
    assert written.splitlines() == alone
    assert (tmp_path / "length_probe" / "join-3.txt").read_text().count("\n") == n // 3
    # eval probes a finished run's checkpoint afterwards the same way (a grid trained without
    # the probe): the same record and outputs as the probe at the end of training
    out = tmp_path / "eval"
    scored = evaluate(compose_config("eval", [f"ckpt_path={ckpt.path}", "length_probe=[1,3]"], out))
    for key in ("joins", "bleu_by_length", "decoding", "split"):
        assert scored["length_probe"][key] == probe[key]
    recorded = json.loads((out / "eval_results.json").read_text())["length_probe"]
    assert recorded["joins"] == probe["joins"]
    for k in (1, 3):
        name = f"length_probe/join-{k}.txt"
        assert (out / name).read_text(encoding="utf-8") == (tmp_path / name).read_text("utf-8")


def _old_run(run_dir, sources, hypotheses):
    """A finished run whose probe record predates the length figures: BLEU per join only."""
    probe = score_probe(hypotheses, sources, sources)
    for entry in probe["joins"].values():
        for figure in ("output_words", "reference_words", "length_ratio", "brevity_penalty"):
            del entry[figure]
    probe.update(split="test", decoding={"beam_size": 1})
    for kind in ("sources", "references"):
        (run_dir / f"{kind}.test.txt").write_text("".join(s + "\n" for s in sources))
    (run_dir / "length_probe").mkdir(parents=True)
    for k, hyps in hypotheses.items():
        (run_dir / "length_probe" / f"join-{k}.txt").write_text("".join(h + "\n" for h in hyps))
    write_results(run_dir / "results.json", {"status": "completed", "length_probe": probe})
    return probe


def test_rescoring_adds_the_length_figures_from_the_stored_outputs(tmp_path):
    sources = [_words(8, 8 * i) for i in range(4)]
    hypotheses = {1: sources, 2: [" ".join(s.split()[:10]) for s in join_consecutive(
        sources, sources, 2)[0]]}  # fmt: skip
    old = _old_run(tmp_path, sources, hypotheses)
    assert rescore(tmp_path)
    probe = read_results(tmp_path / "results.json")["length_probe"]
    assert probe["joins"]["2"]["bleu"] == old["joins"]["2"]["bleu"]
    assert probe["joins"]["2"]["length_ratio"] == pytest.approx(10 / 16)
    assert probe["joins"]["1"]["brevity_penalty"] == 1.0
    assert (
        probe["joins"]["2"]["output_words"] == 10 and probe["joins"]["2"]["reference_words"] == 16
    )
    assert probe["split"] == "test" and probe["bleu_by_length"] == old["bleu_by_length"]
    # other outputs than those the record scored: an error naming the file, nothing written
    (tmp_path / "length_probe" / "join-2.txt").write_text("w0\nw16\n")
    before = (tmp_path / "results.json").read_text()
    with pytest.raises(DataError, match=r"join-2\.txt: scores BLEU .* not the outputs"):
        rescore(tmp_path)
    assert (tmp_path / "results.json").read_text() == before
    write_results(tmp_path / "results.json", {"status": "completed"})
    assert not rescore(tmp_path)  # no probe: nothing to do


def test_rescoring_reads_the_joins_a_committed_grid_keeps_compressed(tmp_path):
    sources = [_words(8, 8 * i) for i in range(4)]
    run_dir = tmp_path / "runs" / "0"
    run_dir.mkdir(parents=True)
    old = _old_run(run_dir, sources, {1: sources, 2: join_consecutive(sources, sources, 2)[0]})
    assert len(compress_finished_runs(tmp_path / "runs")) == 2
    assert not list(run_dir.glob("length_probe/*.txt"))
    assert rescore(run_dir)
    probe = read_results(run_dir / "results.json")["length_probe"]
    assert probe["joins"]["2"]["bleu"] == old["joins"]["2"]["bleu"] == pytest.approx(100.0)
    assert probe["joins"]["2"]["length_ratio"] == 1.0
