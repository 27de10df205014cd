"""The training loop against its own bare step: same network, same batches, same precision.

For one run's command line (Hydra overrides, as ``python -m seq2seq_lab.train`` takes them),
two systems, each its own process, alternating within every round:

- ``loop``: ``python -m seq2seq_lab.train OVERRIDES trainer.max_steps=N test=false``, the
  Lightning loop with every callback of the config; its figure is ``results.json``'s
  ``timing``: real target tokens / ``train_step_seconds`` (and ``train_loop_seconds``, which
  adds fetching the batch);
- ``bare``: this script with ``--bare``: the same config composed, the same data module and
  Lightning module built as the pipeline builds them (``seq2seq_lab.pipeline.building``), the
  first N batches of the same training loader, and for each a plain step: the module's loss
  (``loss_terms``), backward, gradient clipping as ``trainer.gradient_clip_val``, the
  optimiser of the config (``choose_kernel``: fused Adam in full precision), the schedule's
  step; bf16 autocast around the forward where ``trainer.precision`` is bf16-mixed. Timed
  from the batch in hand to the end of the schedule's step.

Both count every one of the N updates (the first included, as a user's run does), real target
tokens only. The padding of those batches is stated: real target tokens / padded target
positions. The ratio loop / bare is the loop's overhead over its own step (1.0: none).

    python experiments/benchmarks/loop_vs_step.py recipe=transformer_multi30k_cpu trainer.precision=32-true
    python experiments/benchmarks/loop_vs_step.py scale=multi30k model=bahdanau --updates 30
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# the loop without what is not training: no test, no sanity validation before the first update
LOOP_ONLY = ["test=false", "trainer.num_sanity_val_steps=0"]


def machine() -> dict:
    """CPU model and the flags that decide the bf16 path, torch's threads (the ratio's context)."""
    import torch

    from seq2seq_lab.record.environment import cpu_features

    model = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": model,
        "cpu_features": cpu_features(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def bare(overrides: list[str], updates: int) -> dict:
    """The bare steps of the run ``overrides`` configures, on its first ``updates`` batches."""
    import lightning as L
    import torch

    from seq2seq_lab.config import compose_train, instantiate
    from seq2seq_lab.optim.kernels import choose_kernel
    from seq2seq_lab.optim.schedules import lambda_scheduler
    from seq2seq_lab.pipeline.building import build_datamodule, build_module, set_threads

    out = tempfile.mkdtemp(prefix="bare-")  # nothing is written there: the config names one
    cfg = compose_train(
        *overrides, *LOOP_ONLY, f"trainer.max_steps={updates}", f"paths.output_dir={out}"
    )
    set_threads(cfg)
    torch.use_deterministic_algorithms(bool(cfg.get("deterministic")))
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    datamodule = build_datamodule(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("fit")
    module = build_module(cfg, datamodule).train()
    precision = str(cfg.trainer.precision)
    if precision not in ("32-true", "32", "bf16-mixed"):
        raise SystemExit(f"--bare times 32-true or bf16-mixed, not trainer.precision={precision}")
    optimizer = instantiate(
        choose_kernel(module.hparams.optimizer, precision), key="optim", params=module.parameters()
    )
    schedule = lambda_scheduler(optimizer, instantiate(cfg.schedule, key="schedule"), updates)
    clip = cfg.trainer.get("gradient_clip_val")
    batches = []
    for batch in datamodule.train_dataloader():
        batches.append(batch)
        if len(batches) == updates:
            break
    seconds, tokens, padded = 0.0, 0, 0
    for batch in batches:
        started = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16-mixed"):
            loss_sum, _, n_tokens = module.loss_terms(batch)
        loss = loss_sum / n_tokens
        optimizer.zero_grad()
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(module.parameters(), float(clip))
        optimizer.step()
        schedule.step()
        seconds += time.perf_counter() - started
        tokens += batch.num_tgt_tokens
        padded += batch.tgt_out.numel()
    return {
        "updates": len(batches),
        "step_seconds": seconds,
        "tokens": tokens,
        "padded_positions": padded,
        "parameters": sum(p.numel() for p in module.parameters()),
        "precision": precision,
    }


def loop(overrides: list[str], updates: int, work: Path) -> dict:
    """One ``seq2seq_lab.train`` run of ``updates`` updates; its timing from results.json."""
    out = Path(tempfile.mkdtemp(prefix="loop-", dir=work))
    command = [
        sys.executable, "-m", "seq2seq_lab.train", *overrides, *LOOP_ONLY,
        f"trainer.max_steps={updates}", f"paths.output_dir={out}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    record = out / "results.json"
    if not record.is_file():
        raise SystemExit(f"the loop wrote no results.json:\n{done.stderr[-3000:]}")
    results = json.loads(record.read_text())
    if results["status"] != "completed":
        raise SystemExit(f"the loop's run {results['status']}: {results.get('error', '')}")
    timing = results["timing"]
    return {
        "updates": results["training"]["steps"],
        "step_seconds": timing["train_step_seconds"],
        "loop_seconds": timing["train_loop_seconds"],
        "tokens": timing["train_tokens"],
        "parameters": results["parameters"],
        "precision": results["precision"]["precision"],
    }


def run_bare(overrides: list[str], updates: int) -> dict:
    command = [sys.executable, __file__, "--bare", "--updates", str(updates), *overrides]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the bare step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("overrides", nargs="*", help="the run's Hydra overrides")
    parser.add_argument("--updates", type=int, default=30, help="updates per measurement")
    parser.add_argument("--rounds", type=int, default=2, help="loop and bare, alternating")
    parser.add_argument("--work", type=Path, default=None, help="for the loop's run dirs")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:  # the bare system's process: one JSON line
        print(json.dumps(bare(args.overrides, args.updates)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="loop_vs_step-"))
    work.mkdir(parents=True, exist_ok=True)
    rounds: list[dict] = []
    for r in range(args.rounds):
        order = ("loop", "bare") if r % 2 == 0 else ("bare", "loop")
        measured = {}
        for system in order:
            if system == "loop":
                measured[system] = loop(args.overrides, args.updates, work)
            else:
                measured[system] = run_bare(args.overrides, args.updates)
        rounds.append(measured)
        print(f"round {r + 1}: " + ", ".join(
            f"{s} {m['tokens'] / m['step_seconds']:,.0f} target tokens/s" for s, m in measured.items()
        ), flush=True)  # fmt: skip
    summary = summarise(rounds)
    summary.update(overrides=args.overrides, updates=args.updates, machine=machine())
    print(table(summary))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "rounds": rounds}, indent=2) + "\n")


def summarise(rounds: list[dict]) -> dict:
    """Medians over rounds: tokens/s of each clock, the loop / bare ratio, the padding."""

    def median(system: str, clock: str) -> float:
        return statistics.median(m[system]["tokens"] / m[system][clock] for m in rounds)

    loop_step, bare_step = median("loop", "step_seconds"), median("bare", "step_seconds")
    first = rounds[0]["bare"]
    if rounds[0]["loop"]["tokens"] != first["tokens"]:
        raise SystemExit(
            f"the loop trained on {rounds[0]['loop']['tokens']} target tokens, the bare step on "
            f"{first['tokens']}: not the same batches"
        )
    return {
        "parameters": first["parameters"],
        "precision": first["precision"],
        "real_per_padded_target": first["tokens"] / first["padded_positions"],
        "bare_tokens_per_second": bare_step,
        "loop_step_tokens_per_second": loop_step,
        "loop_tokens_per_second": median("loop", "loop_seconds"),
        "loop_over_bare": loop_step / bare_step,
        "rounds": len(rounds),
    }


def table(s: dict) -> str:
    return "\n".join([
        f"{' '.join(s['overrides'])}: {s['parameters']:,} parameters, {s['precision']}, "
        f"{s['updates']} updates, real target tokens / padded positions "
        f"{s['real_per_padded_target']:.2f}; {s['machine']['cpu']}, "
        f"{s['machine']['torch_threads']} threads",
        "| system | target tokens/s (median of rounds) |",
        "|---|---|",
        f"| bare step | {s['bare_tokens_per_second']:,.0f} |",
        f"| loop, step clock | {s['loop_step_tokens_per_second']:,.0f} |",
        f"| loop, with batch fetching | {s['loop_tokens_per_second']:,.0f} |",
        f"loop / bare step: **{s['loop_over_bare']:.2f}x**",
    ])  # fmt: skip


if __name__ == "__main__":
    main()
