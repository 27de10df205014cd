"""Time-to-BLEU on Multi30k: test2016 BLEU after N minutes of training, ours vs plain torch.

Ours: ``python -m seq2seq_lab.train recipe=transformer_multi30k_cpu`` (conf/recipe/, where the
choice of every hyper-parameter is explained) saves checkpoints at 10/20/30/40 minutes of
training clock (every 5 minutes by default); each is scored afterwards on test2016 with greedy
decoding, and the 10/20/30/40-minute ones with beam 5 too (``python -m seq2seq_lab.eval``,
sacrebleu cased detokenised). The reference (torch_reference.py) trains a torch.nn.Transformer
of the same shape with the recipe's learning rate, warmup and batch size (read from the recipe's
config, their one home) and the same data for the same clock and is scored greedily at the same
marks. The two run one after the other, each with the whole machine; greedy is compared with
greedy, and the time to reach ``--target`` BLEU (greedy) is the first mark at or above it.

    python experiments/benchmarks/time_to_bleu.py --out experiments/benchmarks/results
    python experiments/benchmarks/time_to_bleu.py --minutes 1,2 --beam-minutes 2 --systems ours
    # a quick look that both systems run (the test suite's): the first 4 pairs, 0.6 s of
    # training clock, greedy only, one thread
    python experiments/benchmarks/time_to_bleu.py --minutes 0.01 --beam-minutes '' \
        --first-pairs 4 --threads 1 --out OUT
    # on a GPU (experiments/gpu/check.sh): ours only, a mark every 30 s of training clock,
    # each scored while training goes on, which stops at the first mark with 38 greedy BLEU
    python experiments/benchmarks/time_to_bleu.py --accelerator gpu --systems ours \
        --minutes 0.5,1,1.5,2,2.5 --beam-minutes '' --stop-at 38 --out OUT

Both systems' lines name the model they trained (parameters and shape), so a figure always says
what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from portable_json import write_json  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
RECIPE = "transformer_multi30k_cpu"
DEFAULT_ROOT = REPO.parent / "shared" / "data" / "multi30k"


def _run(command: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "WANDB_MODE": "offline"})  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return done


def recipe_values() -> dict:
    """The recipe's peak learning rate, warmup steps and batch budget, as our run uses them."""
    from seq2seq_lab.config import compose_train  # here: the rest of the script needs no torch

    cfg = compose_train(f"recipe={RECIPE}")
    return {"lr": float(cfg.optim.lr), "warmup": int(cfg.warmup_steps),
            "max_tokens": int(cfg.data.max_tokens)}  # fmt: skip


def first_pairs_overrides(first_pairs: int | None) -> list[str]:
    """``data.first_pairs`` for every split: a quick subset of the corpus (None: all of it)."""
    if not first_pairs:
        return []
    return [f"data.first_pairs.{split}={first_pairs}" for split in ("train", "val", "test")]


def shape(model: dict) -> str:
    """The sizes of a recorded model config (a Transformer's or an RNN's) in one line."""
    keys = ("d_model", "heads", "d_ff", "encoder_layers", "decoder_layers", "norm",
            "tie_embeddings", "cell", "bidirectional", "num_layers", "hidden_size",
            "embedding_dim", "dropout")  # fmt: skip
    return ", ".join(f"{key} {model[key]}" for key in keys if key in model)


def train_recipe(
    minutes: list[float], root: Path, work: Path, first_pairs: int | None = None,
    threads: int = 2, accelerator: str = "auto",
    as_written: Callable[[float, Path], bool] | None = None,
) -> tuple[Path, dict]:  # fmt: skip
    """Our recipe with snapshots at ``minutes`` of training clock (the last ends the run):
    the run directory and what it recorded (the model's parameters and shape among it).

    ``as_written(minute, snapshot)``: called with each snapshot as soon as it is on disk,
    while training goes on (checkpoints are written atomically); once it returns True the run
    is stopped (SIGTERM: it records itself "interrupted") and no later mark is waited for."""
    run_dir = work / f"ours-{time.strftime('%Y%m%d-%H%M%S')}"
    marks = "[" + ",".join(f"{m:g}" for m in minutes) + "]"
    train = [PYTHON, "-m", "seq2seq_lab.train", f"recipe={RECIPE}", f"data.root={root}",
             *first_pairs_overrides(first_pairs), f"callbacks.wall_clock.minutes={marks}",
             "test=false", f"threads={threads}", "~callbacks.progress_bar",
             f"trainer.accelerator={accelerator}",
             # heatmaps are no part of time-to-BLEU; drawing them takes seconds per validation
             # (outside the training clock: wall time only)
             "~callbacks.attention_plots", f"hydra.run.dir={run_dir}"]  # fmt: skip
    started = time.perf_counter()
    stopped_at = None
    if as_written is None:
        _run(train)
    else:
        stopped_at = _train_watching(train, run_dir, minutes, as_written)
    results = json.loads((run_dir / "results.json").read_text())
    steps = results.get("training", {}).get("steps")
    if stopped_at is not None:
        # a run stopped by its signal records no training summary: its updates are those of
        # the snapshot that reached the target (and no loop throughput is claimed)
        import torch

        snapshot = run_dir / "snapshots" / f"minute-{stopped_at:03g}.ckpt"
        steps = torch.load(snapshot, map_location="cpu", weights_only=True)["global_step"]
    return run_dir, {
        "command": " ".join(train[1:]),
        "wall_seconds": time.perf_counter() - started,
        "stopped_at_minute": stopped_at,
        "steps": steps,
        "precision": results.get("precision"),
        "tokens_per_second": results.get("timing", {}).get("train_loop_tokens_per_second"),
        "parameters": results["parameters"],
        "model": shape(results["config"]["model"]),
    }


def _train_watching(
    train: list[str], run_dir: Path, minutes: list[float],
    as_written: Callable[[float, Path], bool],
) -> float | None:  # fmt: skip
    """Runs ``train`` and hands each snapshot to ``as_written`` as it appears; the minute at
    which it said stop, or None."""
    log = run_dir.parent / f"{run_dir.name}.log"
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as console:
        proc = subprocess.Popen(train, cwd=REPO, stdout=console, stderr=subprocess.STDOUT,
                                env={**os.environ, "WANDB_MODE": "offline"})  # fmt: skip
        stopped_at = None
        try:
            for minute in minutes:
                snapshot = run_dir / "snapshots" / f"minute-{minute:03g}.ckpt"
                while not snapshot.exists() and proc.poll() is None:
                    time.sleep(0.5)
                if not snapshot.exists():
                    break  # the run ended before this mark
                if as_written(minute, snapshot):
                    stopped_at = minute
                    proc.send_signal(signal.SIGTERM)
                    break
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
    if proc.returncode != 0 and stopped_at is None:
        raise RuntimeError(f"{' '.join(train)} failed:\n{log.read_text()[-3000:]}")
    return stopped_at


def score_snapshot(
    run_dir: Path, minute: float, beam: int, root: Path, threads: int, accelerator: str
) -> float:
    """Test BLEU of the snapshot at ``minute`` with beam ``beam`` (1: greedy)."""
    snapshot = run_dir / "snapshots" / f"minute-{minute:03g}.ckpt"
    eval_dir = run_dir / f"eval-{minute:g}-beam{beam}"
    _run([PYTHON, "-m", "seq2seq_lab.eval", f"ckpt_path={snapshot}", f"data.root={root}",
          f"decoding.beam_size={beam}", f"threads={threads}", f"accelerator={accelerator}",
          f"hydra.run.dir={eval_dir}"])  # fmt: skip
    return json.loads((eval_dir / "eval_results.json").read_text())["test"]["bleu"]


def ours(
    minutes: list[float], beam_minutes: list[float], root: Path, work: Path,
    first_pairs: int | None = None, threads: int = 2, accelerator: str = "auto",
    stop_at: float | None = None,
) -> dict:  # fmt: skip
    """With ``stop_at``: each snapshot is scored greedily while training goes on, and
    training stops at the first mark whose greedy BLEU reaches it (on a GPU, where decoding
    beside training costs the training little; on a 2-core CPU the two would share it)."""
    greedy_during: dict[float, float] = {}

    def score_now(minute: float, snapshot: Path) -> bool:
        greedy_during[minute] = score_snapshot(snapshot.parent.parent, minute, 1, root, threads,
                                               accelerator)  # fmt: skip
        print(f"ours, minute {minute:g} (training on): greedy {greedy_during[minute]:.2f}",
              flush=True)  # fmt: skip
        return greedy_during[minute] >= stop_at

    run_dir, out = train_recipe(minutes, root, work, first_pairs, threads, accelerator,
                                score_now if stop_at is not None else None)  # fmt: skip
    print(f"ours: {out['parameters']:,} parameters ({out['model']}), {out['steps']} updates",
          flush=True)  # fmt: skip
    out["marks"] = {}
    for minute in minutes:
        snapshot = run_dir / "snapshots" / f"minute-{minute:03g}.ckpt"
        stopped = out["stopped_at_minute"]
        if not snapshot.exists() or (stopped is not None and minute > stopped):
            break  # training ended before it, or it came after the mark that stopped it
        scores = {}
        for beam in (1, 5) if minute in beam_minutes else (1,):
            if beam == 1 and minute in greedy_during:
                scores["greedy"] = greedy_during[minute]
                continue
            bleu = score_snapshot(run_dir, minute, beam, root, threads, accelerator)
            scores["greedy" if beam == 1 else "beam5"] = bleu
        out["marks"][f"{minute:g}"] = scores
        print(f"ours, minute {minute:g}: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
    return out


def reference(
    minutes: list[float], root: Path, work: Path, first_pairs: int | None = None,
    threads: int = 2, accelerator: str = "auto",
) -> dict:  # fmt: skip
    out_file = work / f"torch-{time.strftime('%Y%m%d-%H%M%S')}.json"
    recipe = recipe_values()
    command = [PYTHON, str(Path(__file__).with_name("torch_reference.py")), "--root", str(root),
               "--minutes", ",".join(f"{m:g}" for m in minutes), "--lr", f"{recipe['lr']:g}",
               "--warmup", str(recipe["warmup"]), "--max-tokens", str(recipe["max_tokens"]),
               "--threads", str(threads), "--json", str(out_file),
               "--device", {"gpu": "cuda"}.get(accelerator, accelerator)]  # fmt: skip
    if first_pairs:
        command += ["--first-pairs", str(first_pairs)]
    started = time.perf_counter()
    _run(command)
    result = json.loads(out_file.read_text())
    result["command"] = " ".join(command[1:])
    result["wall_seconds"] = time.perf_counter() - started
    print(f"torch reference: {result['parameters']:,} parameters ({result['model']}), "
          f"{result['steps']} updates", flush=True)  # fmt: skip
    for minute, scores in result["marks"].items():
        print(f"torch reference, minute {minute}: greedy {scores['bleu']:.2f}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--minutes",
        default="5,10,15,20,25,30,35,40",
        help="training-clock marks scored with greedy decoding",
    )
    parser.add_argument(
        "--beam-minutes",
        default="10,20,30,40",
        help="the marks also scored with beam 5 (ours only)",
    )
    parser.add_argument(
        "--target",
        type=float,
        default=38.0,
        help="report the first mark whose greedy BLEU reaches this",
    )
    parser.add_argument("--systems", default="ours,reference")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "time_to_bleu")
    parser.add_argument("--out", type=Path, help="write time_to_bleu.json here")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch threads of each system (both cores of a 2-core machine)")  # fmt: skip
    parser.add_argument("--first-pairs", type=int, metavar="N",
                        help="only the first N pairs of each split (a quick look that it runs)")  # fmt: skip
    parser.add_argument("--stop-at", type=float, metavar="BLEU",
                        help="ours: score each snapshot while training goes on and stop "
                             "training at the first whose greedy BLEU reaches this")  # fmt: skip
    parser.add_argument("--accelerator", choices=["auto", "cpu", "gpu", "cuda"], default="auto",
                        help="where both systems train and decode (auto: a GPU where there is "
                             "one)")  # fmt: skip
    args = parser.parse_args()
    try:  # '' for --beam-minutes: greedy only
        minutes = [float(m) for m in args.minutes.split(",")]
        beam_minutes = [float(m) for m in args.beam_minutes.split(",") if m.strip()]
    except ValueError as error:
        parser.error(f"--minutes/--beam-minutes: comma-separated minutes expected ({error})")
    if args.first_pairs is not None and args.first_pairs < 1:
        parser.error("--first-pairs: expected a positive number")
    systems = args.systems.split(",")
    unknown = sorted(set(systems) - {"ours", "reference"})
    if unknown:  # before anything runs, not after ours has trained for 40 minutes
        parser.error(f"--systems: unknown {unknown}; expected ours and/or reference")
    args.work.mkdir(parents=True, exist_ok=True)
    results = {}
    for system in systems:
        if system == "ours":
            results["ours"] = ours(minutes, beam_minutes, args.root, args.work,
                                   args.first_pairs, args.threads, args.accelerator,
                                   args.stop_at)  # fmt: skip
        else:
            results["reference"] = reference(minutes, args.root, args.work, args.first_pairs,
                                             args.threads, args.accelerator)  # fmt: skip
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        # --systems ours and --systems reference may run as separate invocations: merge.
        out_file = args.out / "time_to_bleu.json"
        merged = json.loads(out_file.read_text()) if out_file.exists() else {}
        results = {**merged, **results}
        write_json(out_file, results)  # its paths named as seq2seq_lab.record.portable_paths does
    print(time_to_target(results, args.target))


def greedy_bleu(system: dict) -> dict[float, float]:
    """{minute: greedy test BLEU} of one system's results."""
    return {float(m): s.get("greedy", s.get("bleu")) for m, s in system["marks"].items()}


def time_to_target(results: dict, target: float) -> str:
    """One line per system: the first mark whose greedy BLEU reaches ``target``, and the
    ratio ours / reference when both reach it."""
    reached = {}
    for name, system in results.items():
        marks = sorted(greedy_bleu(system).items())
        reached[name] = next((m for m, bleu in marks if bleu >= target), None)
    lines = [
        f"{name}: greedy BLEU >= {target:g} first at minute {m:g}" if m is not None
        else f"{name}: greedy BLEU below {target:g} at every mark"
        for name, m in reached.items()
    ]  # fmt: skip
    if reached.get("ours") and reached.get("reference"):
        lines.append(f"time to {target:g} BLEU, ours / reference: "
                     f"{reached['ours'] / reached['reference']:.2f}x")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    main()
