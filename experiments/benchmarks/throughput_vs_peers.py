"""Training throughput on Multi30k de->en: ours vs JoeyNMT 2.3 vs a plain torch.nn.Transformer.

Systems (the peer protocol of ../shared/bench/README.md; every one trains on the real
Multi30k train split, joint BPE 8k, batches of at most 4,096 padded tokens):

- ``ours-transformer``: ``python -m seq2seq_lab.train model=transformer`` at P1's shape (3+3,
  d_model 256, 4 heads, ff 1024, dropout 0.1, pre-LN, all embeddings tied), Adam (0.9, 0.98)
  lr 5e-4, inverse-sqrt warmup 4000, label smoothing 0.1;
- ``joeynmt-p1``: JoeyNMT's P1 config (the same model and recipe);
- ``torch-transformer``: torch_reference.py, a torch.nn.Transformer of that shape in a plain loop
  (``torch-transformer-bf16``: the same loop under bfloat16 autocast);
- ``ours-bahdanau``: ``model=bahdanau`` at P2's shape (bi-GRU 256, GRU decoder 256,
  embeddings 256, dropout 0.2, untied), Adam lr 5e-4 constant, no label smoothing;
- ``joeynmt-p2``: JoeyNMT's P2 config.

Every system runs as its own process for a wall-clock budget, one after another, alternating
ours and the peers within each round (``--rounds``), so drifting load hits all of them. The
figure is real target tokens (padding excluded) per second of the training loop: batch
fetching, forward, backward and optimiser; not start-up, data preparation or validation
(validation is off). For JoeyNMT it is the median of the "Tokens per Sec" it logs every
50 updates. The table shows the median over rounds and the ratios the issue asks for, and
each system's parameter count (ours: as its run recorded it), so a table always says which
model it measured.

Ours runs at the ``multi30k`` scale (conf/scale/multi30k.yaml: Multi30k, 4,096-token batches,
the family's multi30k sizes) with P1's/P2's shape also given key by key below: the shape never
follows a size file silently. JoeyNMT must have been installed first (``joeynmt_peer.py
setup``); without it a peer system stops the script with one line saying so, before anything
runs.

    python experiments/benchmarks/throughput_vs_peers.py --rounds 2 --out experiments/benchmarks/results
    # a quick look that it runs (the test suite's): the first 4 pairs, 1 s each, one thread
    python experiments/benchmarks/throughput_vs_peers.py --systems ours-transformer,torch-transformer \
        --rounds 1 --seconds 1 --first-pairs 4 --threads 1 --out OUT
    # on a GPU (experiments/gpu/check.sh): ours and torch both on cuda, fp32 and bf16-mixed
    python experiments/benchmarks/throughput_vs_peers.py --accelerator gpu --systems \
        ours-transformer,torch-transformer,ours-transformer-bf16,torch-transformer-bf16
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import joeynmt_peer  # noqa: E402
import time_to_bleu  # noqa: E402
from portable_json import write_json  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

COMMON = [
    # Multi30k with the multi30k scale's sizes and settings; its early stopping is off already
    "scale=multi30k",
    "data.max_tokens=4096",
    "++trainer.limit_val_batches=0",  # no validation inside the timed window (as the peer)
    "++trainer.enable_checkpointing=false",
    "trainer.max_epochs=1000",
    "test=false",
    "~callbacks.model_checkpoint",
    "~callbacks.last_checkpoint",
    "~callbacks.progress_bar",
    "~callbacks.diagnostics",
    "logger=csv",
]
OURS = {
    "ours-transformer": [
        "model=transformer", "model.d_model=256", "model.heads=4", "model.d_ff=1024",
        "model.encoder_layers=3", "model.decoder_layers=3", "model.norm=pre",
        "model.positions=sinusoidal", "model.tie_embeddings=all", "model.dropout=0.1",
        "optim.lr=5e-4", "warmup_steps=4000", "module.label_smoothing=0.1",
    ],
    "ours-bahdanau": [
        "model=bahdanau", "model.cell=gru", "model.bidirectional=true", "model.num_layers=1",
        "model.hidden_size=256", "model.embedding_dim=256", "model.dropout=0.2",
        "optim.lr=5e-4", "schedule=constant", "module.label_smoothing=0.0",
    ],
}  # fmt: skip
# Full precision, said explicitly (the default `auto` picks per machine); and the same two
# systems in bf16-mixed (matmuls autocast to bfloat16, fp32 master weights)
OURS |= {f"{name}-bf16": [*args, "trainer.precision=bf16-mixed"] for name, args in OURS.items()}
OURS |= {
    name: [*args, "trainer.precision=32-true"] for name, args in OURS.items() if "bf16" not in name
}
PEERS = {"joeynmt-p1": "p1_transformer", "joeynmt-p2": "p2_rnn"}
TORCH = {"torch-transformer": "32-true", "torch-transformer-bf16": "bf16-mixed"}
ORDER = ["ours-transformer", "joeynmt-p1", "torch-transformer", "ours-bahdanau", "joeynmt-p2",
         "ours-transformer-bf16", "ours-bahdanau-bf16", "torch-transformer-bf16"]  # fmt: skip
# torch_reference.py's --device for each of Lightning's accelerator names
DEVICES = {"auto": "auto", "cpu": "cpu", "gpu": "cuda", "cuda": "cuda"}


def ours_overrides(
    name: str, seconds: float, root: Path, first_pairs: int | None = None, threads: int = 2,
    accelerator: str = "auto",
) -> list[str]:  # fmt: skip
    """The overrides of ``python -m seq2seq_lab.train`` for one of our systems (all but the
    run directory): training for ``seconds`` of wall clock."""
    return [*COMMON, *OURS[name], *time_to_bleu.first_pairs_overrides(first_pairs),
            f"threads={threads}",
            f"data.root={root}",
            f"trainer.accelerator={accelerator}",
            # trainer.max_time, not cpu_run_minutes: that takes whole minutes only
            f"trainer.max_time.minutes={seconds / 60:.4f}"]  # fmt: skip


def run_ours(
    name: str, seconds: float, root: Path, workdir: Path, first_pairs: int | None = None,
    threads: int = 2, accelerator: str = "auto",
) -> dict:  # fmt: skip
    # the round's index too: a toy round can start within the second the last one did
    run_dir = workdir / f"{name}-{len(list(workdir.iterdir()))}-{time.strftime('%H%M%S')}"
    command = [PYTHON, "-m", "seq2seq_lab.train",
               *ours_overrides(name, seconds, root, first_pairs, threads, accelerator),
               f"hydra.run.dir={run_dir}"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "WANDB_MODE": "offline"})  # fmt: skip
    results_file = run_dir / "results.json"
    if done.returncode != 0 or not results_file.exists():
        raise RuntimeError(f"{name} failed:\n{done.stderr[-3000:]}")
    results = json.loads(results_file.read_text())
    timing = results["timing"]
    return {
        "tokens_per_second": timing["train_loop_tokens_per_second"],
        "step_tokens_per_second": timing["train_tokens_per_second"],
        "seconds": timing["train_loop_seconds"],
        "steps": results["training"]["steps"],
        "parameters": results["parameters"],
        "model": time_to_bleu.shape(results["config"]["model"]),
        "command": " ".join(command[1:]),
    }


def run_torch(
    seconds: float, root: Path, workdir: Path, first_pairs: int | None = None, threads: int = 2,
    accelerator: str = "auto", precision: str = "32-true",
) -> dict:  # fmt: skip
    out = workdir / f"torch-{len(list(workdir.iterdir()))}-{time.strftime('%H%M%S')}.json"
    command = [PYTHON, str(Path(__file__).with_name("torch_reference.py")), "--seconds",
               str(seconds), "--root", str(root), "--lr", "5e-4", "--warmup", "4000",
               "--threads", str(threads), "--json", str(out), "--device",
               DEVICES[accelerator], "--precision", precision]  # fmt: skip
    if first_pairs:
        command += ["--first-pairs", str(first_pairs)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"torch reference failed:\n{done.stderr[-3000:]}")
    result = json.loads(out.read_text())
    return {"tokens_per_second": result["tokens_per_second"], "seconds": result["train_seconds"],
            "steps": result["steps"], "parameters": result["parameters"],
            "model": result["model"], "device": result["device"],
            "command": " ".join(command[1:])}  # fmt: skip


def run_peer(name: str, seconds: float, work: Path, threads: int = 2) -> dict:
    run = joeynmt_peer.train(PEERS[name], seconds=seconds, work=work, threads=threads)
    return {"tokens_per_second": run.median_tokens_per_second, "windows": run.tokens_per_second,
            "updates": run.updates, "seconds": run.seconds, "log": str(run.log)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=joeynmt_peer.DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=150, help="budget of ours and torch")
    parser.add_argument("--peer-seconds", type=float, default=300,
                        help="budget of a JoeyNMT run (start-up included; it logs every 50 "
                             "updates, ~110 s at P1's speed here)")  # fmt: skip
    parser.add_argument("--systems", default=",".join(ORDER))
    parser.add_argument("--work", type=Path, default=joeynmt_peer.DEFAULT_WORK)
    parser.add_argument("--out", type=Path, help="write throughput.json here")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch threads of every system (the protocol: both cores of its "
                             "2-core machine, one system at a time)")  # fmt: skip
    parser.add_argument("--accelerator", choices=sorted(DEVICES), default="auto",
                        help="where ours and torch train (Lightning's name; auto: a GPU where "
                             "there is one); the peers keep their own configs")  # fmt: skip
    parser.add_argument("--first-pairs", type=int, metavar="N",
                        help="ours and torch train on the first N pairs of each split only (a "
                             "quick look that the systems run; the peers read their own data)")  # fmt: skip
    args = parser.parse_args()
    systems = args.systems.split(",")
    unknown = sorted(set(systems) - set(ORDER))
    if unknown:
        parser.error(f"--systems: unknown {unknown}; expected some of {ORDER}")
    if args.first_pairs is not None and args.first_pairs < 1:
        parser.error("--first-pairs: expected a positive number")
    args.work.mkdir(parents=True, exist_ok=True)
    if any(s in PEERS for s in systems):
        try:  # before the first round: a missing peer must not cost the other systems' runs
            joeynmt_peer.prepare(args.work, args.root)
        except joeynmt_peer.PeerMissing as missing:
            sys.exit(f"error: {missing}")
    workdir = Path(tempfile.mkdtemp(prefix="throughput-", dir=args.work))

    runs: dict[str, list[dict]] = {name: [] for name in systems}
    for r in range(args.rounds):
        for name in systems if r % 2 == 0 else systems[::-1]:
            if name in OURS:
                result = run_ours(name, args.seconds, args.root, workdir, args.first_pairs,
                                  args.threads, args.accelerator)  # fmt: skip
            elif name in PEERS:
                result = run_peer(name, args.peer_seconds, args.work, args.threads)
            else:
                result = run_torch(args.seconds, args.root, workdir, args.first_pairs,
                                   args.threads, args.accelerator, TORCH[name])  # fmt: skip
            runs[name].append(result)
            line = f"round {r + 1} {name}: {result['tokens_per_second']:.0f} tokens/s"
            if "parameters" in result:  # the peers' logs do not say
                line += f" ({result['parameters']:,} parameters: {result['model']})"
            print(line, flush=True)

    median = {n: statistics.median(x["tokens_per_second"] for x in rs) for n, rs in runs.items()}
    ratios = {}
    for ours, other in (("ours-transformer", "joeynmt-p1"), ("ours-transformer",
                        "torch-transformer"), ("ours-bahdanau", "joeynmt-p2"),
                        ("ours-transformer-bf16", "ours-transformer"),
                        ("ours-transformer-bf16", "torch-transformer"),
                        ("ours-transformer-bf16", "torch-transformer-bf16"),
                        ("torch-transformer-bf16", "torch-transformer"),
                        ("ours-bahdanau-bf16", "ours-bahdanau"),
                        ("ours-bahdanau-bf16", "joeynmt-p2")):  # fmt: skip
        if ours in median and other in median and median[other] > 0:
            ratios[f"{ours} / {other}"] = median[ours] / median[other]
    print("\nmedian target tokens/s over rounds:")
    for name in systems:
        print(f"  {name:18s} {median[name]:8.0f}")
    for pair, ratio in ratios.items():
        print(f"  {pair:40s} {ratio:5.2f}x")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "throughput.json",
                   {"median_tokens_per_second": median, "ratios": ratios, "runs": runs,
                    "rounds": args.rounds, "threads": args.threads,
                    "accelerator": args.accelerator,
                    "first_pairs": args.first_pairs,
                    "cpu_count": os.cpu_count()})  # fmt: skip


if __name__ == "__main__":
    main()
