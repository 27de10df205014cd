"""The training loss from two ``F.cross_entropy`` passes (smoothed, then the NLL under
``no_grad``: the module's loss before training/loss.py) vs ``training/loss.py``'s one log-softmax,
in one process on the same module and the same batches, alternating; median ms per step.

A step: the loss, backward, the config's optimiser. The two give bit-identical losses and
gradients (tests/test_loss.py), so only the time differs.

    python experiments/benchmarks/loss_passes.py recipe=transformer_multi30k_cpu trainer.precision=32-true
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

from seq2seq_lab.config import compose_train, instantiate
from seq2seq_lab.data.specials import PAD_ID
from seq2seq_lab.optim.kernels import choose_kernel
from seq2seq_lab.pipeline.building import build_datamodule, build_module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("overrides", nargs="*", help="the run's Hydra overrides")
    parser.add_argument("--batches", type=int, default=8, help="training batches, each timed")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the batches")
    args = parser.parse_args()
    out = tempfile.mkdtemp(prefix="loss_passes-")  # nothing is written there
    cfg = compose_train(*args.overrides, f"paths.output_dir={out}")
    torch.manual_seed(0)
    datamodule = build_datamodule(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("fit")
    module = build_module(cfg, datamodule).train()
    epsilon = module.hparams.label_smoothing
    batches = []
    for batch in datamodule.train_dataloader():
        batches.append(batch)
        if len(batches) == args.batches:
            break
    optimizer = instantiate(
        choose_kernel(module.hparams.optimizer, "32-true"), key="optim", params=module.parameters()
    )

    def two_passes(batch):
        logits = module.network(batch.src, batch.src_mask, batch.tgt_in).logits
        flat, gold = logits.reshape(-1, logits.size(-1)).float(), batch.tgt_out.reshape(-1)
        smoothed = F.cross_entropy(
            flat, gold, ignore_index=PAD_ID, label_smoothing=epsilon, reduction="sum"
        )
        with torch.no_grad():
            nll = F.cross_entropy(flat, gold, ignore_index=PAD_ID, reduction="sum")
        return smoothed, nll, (gold != PAD_ID).sum()

    losses = {"two cross_entropy passes": two_passes, "one log-softmax": module.loss_terms}

    def step(terms, batch) -> float:
        started = time.perf_counter()
        loss_sum, _, n_tokens = terms(batch)
        optimizer.zero_grad()
        (loss_sum / n_tokens).backward()
        optimizer.step()
        return time.perf_counter() - started

    for terms in losses.values():  # warm-up
        step(terms, batches[0])
    times: dict[str, list[float]] = {name: [] for name in losses}
    for r in range(args.rounds):
        for batch in batches:
            for name in losses if r % 2 == 0 else reversed(list(losses)):
                times[name].append(step(losses[name], batch))
    medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
    parameters = sum(p.numel() for p in module.parameters())
    print(f"{' '.join(args.overrides)}: {parameters:,} parameters, {len(batches)} batches, "
          f"{args.rounds} rounds, label smoothing {epsilon}")  # fmt: skip
    for name, ms in medians.items():
        print(f"{name:26s} {ms:8.1f} ms/step")
    old, new = medians["two cross_entropy passes"], medians["one log-softmax"]
    print(f"two passes / one log-softmax: {old / new:.3f}x")


if __name__ == "__main__":
    main()
