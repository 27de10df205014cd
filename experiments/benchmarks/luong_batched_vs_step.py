"""Training-step speed of Luong attention without input feeding: batched vs step-by-step.

Without input feeding the decoder RNN does not depend on attention, so
``LuongNetwork.teacher_forced`` runs the RNN over the whole target in one call and attends for
all positions in one batched product. This script times full training steps (forward, cross
entropy, backward, Adam step) through that path and through the generic step loop
(``stepwise(..., teacher_forcing_ratio=1.0)``, the path decoding uses) on the same parameters,
alternating the two, and prints the medians and their ratio.

    .venv/bin/python experiments/benchmarks/luong_batched_vs_step.py            # B=64, S=T=25
    .venv/bin/python experiments/benchmarks/luong_batched_vs_step.py --vocab 300 --repeats 20
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID
from seq2seq_lab.models.recurrent.luong import LuongNetwork


def make_batch(batch: int, src_len: int, tgt_len: int, vocab: int, generator: torch.Generator):
    """Random full-length rows ending in EOS (lengths do not matter for the timing)."""
    src = torch.randint(4, vocab, (batch, src_len), generator=generator)
    src[:, -1] = EOS_ID
    tgt = torch.randint(4, vocab, (batch, tgt_len + 1), generator=generator)
    tgt[:, 0] = BOS_ID
    tgt[:, -1] = EOS_ID
    return src, torch.ones_like(src, dtype=torch.bool), tgt[:, :-1], tgt[:, 1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--src-len", type=int, default=25)
    parser.add_argument("--tgt-len", type=int, default=25)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--embedding", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--cell", default="lstm")
    parser.add_argument("--score", default="general")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps per path")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per path")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--optimizer-kernel",
        choices=["fused", "loop"],
        default="fused",
        help="Adam kernel: fused (what training uses in full precision) or the per-tensor loop",
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    net = LuongNetwork(
        src_vocab_size=args.vocab,
        tgt_vocab_size=args.vocab,
        cell=args.cell,
        hidden_size=args.hidden,
        embedding_dim=args.embedding,
        dropout=0.0,
        input_feeding=False,
        attention={"score": args.score},
    ).train()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4, fused=args.optimizer_kernel == "fused")
    src, src_mask, tgt_in, tgt_out = make_batch(
        args.batch, args.src_len, args.tgt_len, args.vocab, torch.Generator().manual_seed(1)
    )
    paths = {
        "batched": lambda: net.teacher_forced(src, src_mask, tgt_in),
        "step": lambda: net.stepwise(src, src_mask, tgt_in, teacher_forcing_ratio=1.0),
    }

    def train_step(forward) -> float:
        start = time.perf_counter()
        logits = forward().logits  # [B, T, V]
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return time.perf_counter() - start

    times: dict[str, list[float]] = {name: [] for name in paths}
    for i in range(args.warmup + args.repeats):
        for name, forward in paths.items():  # alternate so drifting load hits both paths
            seconds = train_step(forward)
            if i >= args.warmup:
                times[name].append(seconds)

    print(
        f"Luong ({args.cell}, score={args.score}, no input feeding) training step, "
        f"B={args.batch} S={args.src_len} T={args.tgt_len} H={args.hidden} E={args.embedding} "
        f"V={args.vocab}, Adam {args.optimizer_kernel}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"median of {args.repeats}"
    )
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, ts in times.items():
        print(f"  {name:8s} median {medians[name] * 1e3:8.1f} ms   (min {min(ts) * 1e3:.1f} ms)")
    print(f"  speed-up batched vs step: {medians['step'] / medians['batched']:.2f}x")


if __name__ == "__main__":
    main()
