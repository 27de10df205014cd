"""Time-to-BLEU on Multi30k: test2016 BLEU after N minutes of training, ours vs plain torch.

Ours: ``python -m seq2seq_lab.train recipe=transformer_multi30k_cpu`` (conf/recipe/, where the
choice of every hyper-parameter is explained) saves checkpoints at 10/20/30/40 minutes of
training clock; each is scored afterwards on test2016 with greedy and beam-5 decoding
(``python -m seq2seq_lab.eval``, sacrebleu cased detokenised). The reference
(torch_reference.py) trains a torch.nn.Transformer of the same shape with the same
hyper-parameters and data for the same clock and is scored greedily. The two run one after
the other, each with the whole machine.

    python experiments/benchmarks/time_to_bleu.py --out experiments/benchmarks/results
    python experiments/benchmarks/time_to_bleu.py --minutes 1,2 --systems ours   # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

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


def ours(minutes: list[float], root: Path, work: Path) -> dict:
    run_dir = work / f"ours-{time.strftime('%Y%m%d-%H%M%S')}"
    marks = "[" + ",".join(f"{m:g}" for m in minutes) + "]"
    train = [PYTHON, "-m", "seq2seq_lab.train", f"recipe={RECIPE}", f"data.root={root}",
             f"callbacks.wall_clock.minutes={marks}", "test=false", "threads=2",
             "~callbacks.progress_bar", f"hydra.run.dir={run_dir}"]  # fmt: skip
    started = time.perf_counter()
    _run(train)
    results = json.loads((run_dir / "results.json").read_text())
    out = {
        "command": " ".join(train[1:]),
        "wall_seconds": time.perf_counter() - started,
        "steps": results["training"]["steps"],
        "tokens_per_second": results["timing"]["train_loop_tokens_per_second"],
        "marks": {},
    }
    for minute in minutes:
        snapshot = run_dir / "snapshots" / f"minute-{minute:03g}.ckpt"
        scores = {}
        for beam in (1, 5):
            eval_dir = run_dir / f"eval-{minute:g}-beam{beam}"
            _run([PYTHON, "-m", "seq2seq_lab.eval", f"ckpt_path={snapshot}", f"data.root={root}",
                  f"decoding.beam_size={beam}", "threads=2", f"hydra.run.dir={eval_dir}"])  # fmt: skip
            test = json.loads((eval_dir / "eval_results.json").read_text())["test"]
            scores["greedy" if beam == 1 else "beam5"] = test["bleu"]
        out["marks"][f"{minute:g}"] = scores
        print(
            f"ours, minute {minute:g}: greedy {scores['greedy']:.2f}, beam-5 {scores['beam5']:.2f}"
        )
    return out


def reference(minutes: list[float], root: Path, work: Path) -> dict:
    out_file = work / f"torch-{time.strftime('%Y%m%d-%H%M%S')}.json"
    command = [PYTHON, str(Path(__file__).with_name("torch_reference.py")), "--root", str(root),
               "--minutes", ",".join(f"{m:g}" for m in minutes), "--lr", "1e-3", "--warmup",
               "1000", "--max-tokens", "4096", "--threads", "2", "--json", str(out_file)]  # fmt: skip
    started = time.perf_counter()
    _run(command)
    result = json.loads(out_file.read_text())
    result["command"] = " ".join(command[1:])
    result["wall_seconds"] = time.perf_counter() - started
    for minute, scores in result["marks"].items():
        print(f"torch reference, minute {minute}: greedy {scores['bleu']:.2f}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", default="10,20,30,40")
    parser.add_argument("--systems", default="ours,reference")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "time_to_bleu")
    parser.add_argument("--out", type=Path, help="write time_to_bleu.json here")
    args = parser.parse_args()
    minutes = [float(m) for m in args.minutes.split(",")]
    args.work.mkdir(parents=True, exist_ok=True)
    results = {}
    for system in args.systems.split(","):
        if system == "ours":
            results["ours"] = ours(minutes, args.root, args.work)
        elif system == "reference":
            results["reference"] = reference(minutes, args.root, args.work)
        else:
            parser.error(f"--systems: unknown {system!r}; expected ours and/or reference")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        # --systems ours and --systems reference may run as separate invocations: merge.
        out_file = args.out / "time_to_bleu.json"
        merged = json.loads(out_file.read_text()) if out_file.exists() else {}
        out_file.write_text(json.dumps({**merged, **results}, indent=2))


if __name__ == "__main__":
    main()
