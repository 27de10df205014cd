"""Every benchmark script runs, as a user types it, at a toy size, so none can rot unnoticed.

Each test runs a script of experiments/benchmarks/ in a subprocess with options that make it
take seconds (``--first-pairs 4``: the first pairs of the real Multi30k text at
../shared/data/multi30k; ``--seconds 1``; ``--rounds 1``; small batches and vocabularies) and
checks what it printed or wrote: the fields, positive speeds, and the network it says it
measured (parameter count and shape), never only its exit status.

The scripts that train through Lightning (time_to_bleu, decoding_vs_peer on its snapshot,
throughput_vs_peers, the precision sweep that precision_quality summarises) spend most of their
tens of seconds importing and starting processes: they start together in the background, two
at a time and one thread each, when the first test that needs one asks (``slow``), and the
light scripts run meanwhile, so the file takes about a minute on 2 cores.

JoeyNMT (the peer) is never installed here: that needs the network and minutes. Its scripts are
tested up to it: joeynmt_peer's config writing and log parsing, and the one line each script
says when the peer is missing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from experiments.benchmarks import (
    joeynmt_peer,
    precision_quality,
    throughput_vs_peers,
    time_to_bleu,
)

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "experiments" / "benchmarks"
MULTI30K = REPO.parent / "shared" / "data" / "multi30k"
# P1 (../shared/bench/README.md): the shape every Transformer of the Multi30k benchmarks has
P1_SHAPE = "d_model 256, heads 4, d_ff 1024, encoder_layers 3, decoder_layers 3"


def script(name: str, *args: object, cache: Path | None = None) -> subprocess.CompletedProcess:
    """``python experiments/benchmarks/NAME ARGS`` from the repository root; ``cache``: the
    tokenizer cache (SEQ2SEQ_LAB_CACHE) of its runs, so that none writes into ~/.cache."""
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONUNBUFFERED": "1"}
    if cache is not None:
        env["SEQ2SEQ_LAB_CACHE"] = str(cache)
    command = [sys.executable, str(BENCH / name), *map(str, args)]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env, timeout=600)


def succeeded(done: subprocess.CompletedProcess) -> str:
    """The run's stdout, after asserting it exited 0 (its stderr tail as the message)."""
    assert done.returncode == 0, f"{done.args}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def numbers(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


# ------------------------------------------------------------ the slow ones, in the background


def time_to_bleu_then_decoding(work: Path) -> dict:
    """time_to_bleu's toy run, then decoding_vs_peer (ours only) on the snapshot it saved, as
    run_all.sh chains them."""
    ttb = script("time_to_bleu.py", "--minutes", "0.01", "--beam-minutes", "", "--first-pairs",
                 4, "--threads", 1, "--root", MULTI30K, "--work", work / "work", "--out",
                 work / "out", cache=work / "cache")  # fmt: skip
    snapshots = sorted((work / "work").glob("ours-*/snapshots/minute-0.01.ckpt"))
    if ttb.returncode != 0 or not snapshots:
        return {"time_to_bleu": ttb, "out": work / "out", "decoding": None}
    decoding = script("decoding_vs_peer.py", "--systems", "ours", "--ours", snapshots[-1],
                      "--first-pairs", 2, "--rounds", 1, "--threads", 1, "--root", MULTI30K,
                      "--out", work / "decoding", cache=work / "cache")  # fmt: skip
    return {"time_to_bleu": ttb, "out": work / "out", "decoding": decoding,
            "decoding_out": work / "decoding"}  # fmt: skip


def throughput(work: Path) -> dict:
    done = script("throughput_vs_peers.py", "--systems", "ours-transformer,torch-transformer",
                  "--rounds", 1, "--seconds", 1, "--first-pairs", 4, "--threads", 1, "--root",
                  MULTI30K, "--work", work / "work", "--out", work / "out",
                  cache=work / "cache")  # fmt: skip
    return {"done": done, "out": work / "out", "work": work}


def precision_sweep(work: Path) -> dict:
    """precision_quality.py's documented sweep at the smoke scale (one model, two updates,
    two seeds a side, so that Welch's test has something to test), then its summary."""
    sweep = work / "sweep"
    env = {**os.environ, "WANDB_MODE": "offline", "SEQ2SEQ_LAB_CACHE": str(work / "cache")}
    train = subprocess.run(
        [sys.executable, "-m", "seq2seq_lab.train", "-m", "model=transformer",
         "trainer.precision=32-true,bf16-mixed", "seed=1,2", "scale=smoke",
         "trainer.max_steps=2", "trainer.max_time=null", "threads=1",
         "~callbacks.attention_plots", "variant=${hydra:runtime.choices.model}_${trainer.precision}",
         "experiment_name=precision_quality", f"hydra.sweep.dir={sweep}"],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    if train.returncode != 0:
        return {"train": train, "summary": None}
    summary = script("precision_quality.py", sweep, "--csv", work / "runs.csv")
    return {"train": train, "summary": summary, "csv": work / "runs.csv"}


@pytest.fixture(scope="module")
def slow(tmp_path_factory) -> dict[str, Future]:
    """The slow scripts, started at once (the longest chain first) on two workers."""
    assert MULTI30K.is_dir(), f"{MULTI30K}: the benchmarks read the real Multi30k text"
    jobs = {
        "time_to_bleu": time_to_bleu_then_decoding,
        "throughput": throughput,
        "precision": precision_sweep,
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {name: pool.submit(job, tmp_path_factory.mktemp(name)) for name, job in jobs.items()}


def test_throughput_vs_peers_ours_and_torch(slow):
    """The issue's command at a toy size: ours and the plain-torch reference, both P1's shape
    with the same parameter count, positive tokens/s, their ratio, a portable record."""
    run = slow["throughput"].result()
    out = succeeded(run["done"])
    for name in ("ours-transformer", "torch-transformer"):
        line = next(x for x in out.splitlines() if x.startswith(f"round 1 {name}:"))
        assert P1_SHAPE in line and "tie_embeddings all" in line, line
    text = (run["out"] / "throughput.json").read_text()
    assert str(run["work"]) not in text  # the records name no directory of this machine
    record = json.loads(text)
    assert set(record["median_tokens_per_second"]) == {"ours-transformer", "torch-transformer"}
    assert all(v > 0 for v in record["median_tokens_per_second"].values())
    assert record["ratios"]["ours-transformer / torch-transformer"] > 0
    ours, torch_ = record["runs"]["ours-transformer"][0], record["runs"]["torch-transformer"][0]
    assert ours["parameters"] == torch_["parameters"] > 5_000_000  # one shape, one vocabulary
    assert ours["steps"] >= 1 and torch_["steps"] >= 1
    assert (record["rounds"], record["first_pairs"], record["threads"]) == (1, 4, 1)
    assert "scale=multi30k" in ours["command"]
    assert "trainer.max_time.minutes=0.0167" in ours["command"]


def test_throughput_vs_peers_every_ours_system_composes_its_shape():
    """All four of our systems (the toy runs one): their command lines pass the entry point's
    checks and compose P1's or P2's shape in the precision they name."""
    from seq2seq_lab.command_line import check_command_line
    from seq2seq_lab.config import compose_train

    for name in throughput_vs_peers.OURS:
        overrides = throughput_vs_peers.ours_overrides(name, 90, MULTI30K, first_pairs=None)
        check_command_line("train", overrides)
        cfg = compose_train(*overrides)
        model = cfg.model
        assert cfg.data.source.name == "multi30k" and cfg.data.max_tokens == 4096
        assert cfg.trainer.precision == ("bf16-mixed" if name.endswith("bf16") else "32-true")
        assert cfg.trainer.max_time.minutes == 1.5 and cfg.callbacks.get("early_stopping") is None
        if "transformer" in name:  # P1
            sizes = (model.d_model, model.heads, model.d_ff, model.encoder_layers,
                     model.decoder_layers, model.norm, model.tie_embeddings, model.dropout)  # fmt: skip
            assert sizes == (256, 4, 1024, 3, 3, "pre", "all", 0.1), name
            assert (cfg.optim.lr, cfg.warmup_steps, cfg.module.label_smoothing) == (5e-4, 4000, 0.1)
        else:  # P2
            sizes = (model.cell, model.bidirectional, model.num_layers, model.hidden_size,
                     model.embedding_dim, model.dropout)  # fmt: skip
            assert sizes == ("gru", True, 1, 256, 256, 0.2), name
            assert (cfg.optim.lr, cfg.schedule._target_.rsplit(".", 1)[-1]) == (5e-4, "Constant")


@pytest.mark.parametrize(
    "name, args",
    [
        ("joeynmt_peer.py", ["train", "p1_transformer", "--data", MULTI30K]),
        ("throughput_vs_peers.py", ["--systems", "ours-transformer,joeynmt-p1", "--rounds", 1]),
        ("decoding_vs_peer.py", ["--train-minutes", 30, "--root", MULTI30K]),
    ],
    ids=["joeynmt_peer", "throughput_vs_peers", "decoding_vs_peer"],
)
def test_a_missing_peer_is_one_line_before_anything_runs(tmp_path, name, args):
    done = script(name, *args, "--work", tmp_path / "peer")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("error: JoeyNMT peer not installed"), line
    assert "joeynmt_peer.py setup" in line
    assert not list((tmp_path / "peer").glob("*/*")), "ran something before stopping"


def test_joeynmt_peer_reads_its_training_and_decoding_logs():
    # the lines as JoeyNMT 2.3 writes them (joeynmt/training.py, joeynmt/prediction.py)
    fmt = ("%s - INFO - joeynmt.training - Epoch %3d, Step: %8d, Batch Loss: %12.6f, "
           "Batch Acc: %.6f, Tokens per Sec: %8.0f, Lr: %.6f")  # fmt: skip
    log = "\n".join([
        "2026-11-27 10:00:00,000 - INFO - joeynmt.training - Train stats: ...",
        fmt % ("2026-11-27 10:01:50,000", 1, 50, 6.1, 0.05, 790.4, 0.000006),
        fmt % ("2026-11-27 10:03:40,000", 1, 100, 5.2, 0.11, 812.0, 0.000013),
        "2026-11-27 10:04:00,000 - INFO - joeynmt.training - Training ended since SIGINT",
    ])  # fmt: skip
    assert joeynmt_peer.parse_training_log(log) == (100, [790.0, 812.0])
    assert joeynmt_peer.parse_training_log("no step logged yet") == (0, [])
    run = joeynmt_peer.PeerTraining(config="p1", seconds=1.0, tokens_per_second=[790, 812, 900])
    assert run.median_tokens_per_second == 812
    assert joeynmt_peer.generation_seconds("... - INFO - Generation took 12.3456[sec].") == 12.3456
    assert joeynmt_peer.generation_seconds("Traceback (most recent call last):") is None


def test_joeynmt_peer_writes_the_protocol_configs_and_our_recipe_variant(tmp_path):
    configs = joeynmt_peer.write_configs(tmp_path)
    assert set(configs) == {"p1_transformer", "p2_rnn", "p3_decode_greedy", "p3_decode_beam5"}
    for path in configs.values():
        text = path.read_text()
        assert "$WORK" not in text and f"{tmp_path}/data/" in text, path.name
    # P1 trained like ours (issue 16.4): our recipe's lr and warmup, read from its config
    recipe = time_to_bleu.recipe_values()
    name = joeynmt_peer.write_recipe_config(tmp_path, lr=recipe["lr"], warmup=recipe["warmup"])
    written = yaml.safe_load((tmp_path / "configs" / f"{name}.yaml").read_text())
    p1 = yaml.safe_load(configs["p1_transformer"].read_text())
    assert written["name"] == name == "p1_transformer_cpu_recipe"
    assert written["training"]["learning_rate"] == recipe["lr"] != p1["training"]["learning_rate"]
    assert written["training"]["learning_rate_warmup"] == recipe["warmup"]
    assert written["model_dir"] == str(tmp_path.resolve() / "models" / name)
    assert written["model"] == p1["model"]  # the same network


# ------------------------------------------------------------------------- the light scripts


def table_rows(out: str, pattern: str) -> list[tuple[str, ...]]:
    return [m.groups() for m in re.finditer(pattern, out, re.MULTILINE)]


def test_cached_decoding_measures_the_documented_network():
    """The defaults' network (3+3, d_model 256, 4 heads, d_ff 1024; build_network alone would
    give the synthetic scale's d_model 64) at a small vocabulary, batch and length."""
    out = succeeded(script("cached_decoding.py", "--batch-sizes", 2, "--length", 4, "--rounds",
                           1, "--vocab", 100, "--threads", 1))  # fmt: skip
    header = out.splitlines()[0]
    assert "3+3 layers d_model 256, 4 heads, d_ff 1024" in header, header
    assert "greedy, forced length 4" in header and "vocab 100" in header
    rows = table_rows(out, r"^\s+2\s+4 (cached|uncached)\s+([\d.]+)\s+(\d+)\s+([\d.]+)x$")
    assert [r[0] for r in rows] == ["cached", "uncached"], out
    assert all(float(r[1]) > 0 and int(r[2]) > 0 and float(r[3]) > 0 for r in rows)
    assert rows[1][3] == "1.00"  # uncached is the unit


def test_luong_batched_vs_step_times_the_network_it_names():
    out = succeeded(script("luong_batched_vs_step.py", "--batch", 4, "--src-len", 5,
                           "--tgt-len", 5, "--vocab", 50, "--repeats", 1, "--warmup", 1,
                           "--threads", 1))  # fmt: skip
    assert "B=4 S=5 T=5 H=256 E=256 V=50" in out
    network = next(x for x in out.splitlines() if x.strip().startswith("network:"))
    # the defaults' sizes, one unidirectional layer each side, as built (not as asked)
    assert network.count("LSTM(256->256, layers 1)") == 2 and "bidirectional" not in network
    for name in ("batched", "step", "decoder batched", "decoder step"):
        ms = re.search(rf"^\s+{name}\s+median\s+([\d.]+) ms", out, re.MULTILINE)
        assert ms and float(ms.group(1)) > 0, name
    assert re.search(r"training step, batched vs step: [\d.]+x", out)
    assert re.search(r"decoder alone, batched vs step: [\d.]+x", out)


def test_transformer_vs_torch_compares_two_networks_of_one_shape():
    out = succeeded(script("transformer_vs_torch.py", "--batches", 1, "--rounds", 1,
                           "--max-tokens", 256, "--vocab", 500, "--threads", 1))  # fmt: skip
    rows = table_rows(out, r"^\s+(ours|ours, attention dropout 0\.1|torch\.nn\.Transformer)\s+"
                           r"(\d+)\s+(\d+)\s+\d+\.\.\d+\s+([\d.]+)x$")  # fmt: skip
    assert [r[0] for r in rows] == ["ours", "ours, attention dropout 0.1", "torch.nn.Transformer"]
    # equal parameter counts: ours is built at the torch model's shape (3+3, d_model 256, ...)
    assert len({r[1] for r in rows}) == 1 and int(rows[0][1]) > 5_000_000, rows
    assert all(int(r[2]) > 0 and float(r[3]) > 0 for r in rows)
    assert "1 batches x 1 rounds" in out and "vocab 500" in out


def test_run_all_lists_its_steps_with_options_the_scripts_take(tmp_path):
    run_all = BENCH / "run_all.sh"
    assert subprocess.run(["bash", "-n", run_all]).returncode == 0
    done = subprocess.run(["bash", run_all, "--list", tmp_path / "out"], capture_output=True,
                          text=True, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "out").exists(), "--list made its output folder"
    steps = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert list(steps) == ["machine", "peer_setup", "time_to_bleu", "decoding",
                           "precision_step_transformer", "precision_step_bahdanau",
                           "loop_vs_step_transformer", "loop_vs_step_bahdanau", "throughput",
                           "cached_decoding"]  # fmt: skip
    for name, command in steps.items():
        used = re.search(r"experiments/benchmarks/(\w+\.py)(.*)", command)
        if used is None:
            continue
        source = (BENCH / used.group(1)).read_text()
        for option in re.findall(r"(?<!\S)(--[\w-]+)", used.group(2)):
            assert f'"{option}"' in source, f"{name}: {used.group(1)} takes no {option}"


# -------------------------------------------------------------- the slow ones' own checks


def test_time_to_bleu_scores_both_systems_at_each_mark(slow):
    run = slow["time_to_bleu"].result()
    out = succeeded(run["time_to_bleu"])
    ours_line = next(x for x in out.splitlines() if x.startswith("ours: "))
    reference_line = next(x for x in out.splitlines() if x.startswith("torch reference: "))
    # the recipe's Transformer (P1's shape, tied) and the reference's, of one parameter count
    assert P1_SHAPE in ours_line and P1_SHAPE in reference_line, out
    assert numbers(ours_line)[0] == numbers(reference_line)[0] > 5_000_000
    record = json.loads((run["out"] / "time_to_bleu.json").read_text())
    ours, reference = record["ours"], record["reference"]
    assert 0 <= ours["marks"]["0.01"]["greedy"] <= 100 and "beam5" not in ours["marks"]["0.01"]
    assert 0 <= reference["marks"]["0.01"]["bleu"] <= 100
    assert ours["steps"] >= 1 and reference["steps"] >= 1
    assert ours["tokens_per_second"] > 0 and reference["tokens_per_second"] > 0
    assert reference["marks"]["0.01"]["sentences_per_second"] > 0
    assert "recipe=transformer_multi30k_cpu" in ours["command"]
    assert re.search(r"^ours: greedy BLEU (below|>=) 38", out, re.MULTILINE)


def test_decoding_vs_peer_ours_alone_on_the_time_to_bleu_snapshot(slow):
    run = slow["time_to_bleu"].result()
    assert run["decoding"] is not None, run["time_to_bleu"].stderr[-3000:]
    out = succeeded(run["decoding"])
    assert re.search(rf"^ours: [\d,]+ parameters \({P1_SHAPE}", out, re.MULTILINE), out
    record = json.loads((run["decoding_out"] / "decoding.json").read_text())
    assert set(record["medians"]) == {"ours greedy", "ours beam 5", "ours greedy, no KV cache"}
    for row in record["medians"].values():
        assert row["sentences_per_second"] > 0 and row["generated_tokens_per_second"] > 0
        assert 0 < row["mean_output_tokens"] <= 100  # P3's limit, EOS included
    assert record["test_sentences"] == 2 and record["peer_checkpoint"] is None
    # the two greedy decodings are compared, and the ratio's label says what was found (equal
    # they are: tests/test_transformer_network.py; a 2-second model's near-ties could split
    # them here in the last float digit)
    same = record["cached_equals_uncached"]
    label = "same outputs" if same is True else "OUTPUTS DIFFER" if same is False else None
    assert record["ratios"][f"greedy, cached / uncached ({label})"] > 0
    trained = json.loads((run["out"] / "time_to_bleu.json").read_text())["ours"]
    assert record["ours_parameters"] == trained["parameters"]


def test_precision_quality_summarises_a_real_sweep(slow):
    run = slow["precision"].result()
    assert run["summary"] is not None, run["train"].stderr[-3000:]
    out = succeeded(run["summary"])
    rows = table_rows(out, r"^\| transformer \| ([\w-]+) \| ([\d.]+) / ([\d.]+) \| "
                           r"([\d.]+) ± ([\d.]+) \|(.*)\|$")  # fmt: skip
    assert [r[0] for r in rows] == ["32-true", "bf16-mixed"], out
    assert re.fullmatch(r" [+-]\d+\.\d\d BLEU, p = (\d\.\d\d|nan) ", rows[1][5]), rows[1][5]
    lines = run["csv"].read_text().splitlines()
    assert lines[0].split(",") == precision_quality.FIELDS
    records = [dict(zip(lines[0].split(","), x.split(","))) for x in lines[1:]]
    assert sorted((r["variant"], r["seed"]) for r in records) == [
        ("transformer_32-true", "1"), ("transformer_32-true", "2"),
        ("transformer_bf16-mixed", "1"), ("transformer_bf16-mixed", "2"),
    ]  # fmt: skip
    for r in records:
        assert r["status"] == "completed" and r["steps"] == "2", r
        assert r["precision"] == r["variant"].split("_", 1)[1]
        assert float(r["train_tokens_per_second"]) > 0 and 0 <= float(r["test_bleu"]) <= 100
