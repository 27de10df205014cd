"""One training step (forward, label-smoothed loss, backward, fused Adam) in full precision vs
bf16 autocast vs torch.compile, side by side in one process, alternating, median ms per step.

Shape: batch 160 x source 25 x target 26 (~4,160 target tokens, a 4,096-token Multi30k batch),
vocabulary 8000; the network of ``scale=multi30k model=<family>`` (the Transformer: 3+3, d_model
256, 4 heads, ff 1024, all embeddings tied; Bahdanau: bi-GRU 256, embeddings 256), composed as
the training run composes it, its parameter count printed. The real loop's own batches and
step: loop_vs_step.py. Modes: fp32, bf16, compile, compile_bf16.

    python experiments/benchmarks/precision_step.py transformer fp32,bf16 --rounds 6
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from seq2seq_lab.config import compose_train, instantiate

V, B, S, T = 8000, 160, 25, 27


def make_network(family: str) -> torch.nn.Module:
    """The network of ``scale=multi30k model=<family>`` with an 8,000-piece joint vocabulary."""
    torch.manual_seed(0)
    model = compose_train("scale=multi30k", f"model={family}").model
    net = instantiate(model, key="model", src_vocab_size=V, tgt_vocab_size=V)
    return net.train()


def make_step(net: torch.nn.Module, bf16: bool, batch: tuple):
    src, mask, tgt = batch
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4, fused=True)

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = net(src, mask, tgt[:, :-1]).logits
        flat = logits.float().flatten(0, 1)
        loss = F.cross_entropy(flat, tgt[:, 1:].flatten(), label_smoothing=0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("family", choices=["transformer", "bahdanau"])
    parser.add_argument("modes", help="comma-separated: fp32,bf16,compile,compile_bf16")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batch", type=int, default=B, help="sentences per batch")
    args = parser.parse_args()
    modes = args.modes.split(",")
    torch.manual_seed(0)
    n = args.batch
    batch = (torch.randint(4, V, (n, S)), torch.ones(n, S, dtype=torch.bool),
             torch.randint(4, V, (n, T)))  # fmt: skip
    steps = {}
    for mode in modes:
        net = make_network(args.family)
        if not steps:
            size = sum(p.numel() for p in net.parameters())
            print(f"{args.family} at scale=multi30k: {size:,} parameters, batch {n} x {S} -> {T}")
        if "compile" in mode:
            net.teacher_forced = torch.compile(net.teacher_forced)
        steps[mode] = make_step(net, "bf16" in mode, batch)
        for _ in range(2):  # warm-up (and compilation)
            steps[mode]()
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(args.rounds):
        for mode, step in steps.items():
            start = time.perf_counter()
            step()
            times[mode].append(time.perf_counter() - start)
    base = statistics.median(times[modes[0]])
    for mode in modes:
        median = statistics.median(times[mode])
        print(f"{args.family} {mode:14s} {median * 1000:8.1f} ms/step  "
              f"{base / median:.2f}x vs {modes[0]}")  # fmt: skip


if __name__ == "__main__":
    main()
