"""Training-step speed of Luong attention without input feeding: batched vs step-by-step.

Without input feeding the decoder RNN does not depend on attention, so
``LuongNetwork.teacher_forced`` runs the RNN over the whole target in one call and attends for
all positions in one batched product. This script times full training steps (forward, cross
entropy, backward, Adam step) through that path and through the generic step loop
(``stepwise(..., teacher_forcing_ratio=1.0)``, the path decoding uses) on the same parameters,
and the decoder alone (RNN, attention and W_c, forward + backward, from a fixed encoder memory),
alternating all four, and prints the medians, both ratios, and the share of the step that the
two paths have in common (encoder, output layer + softmax, optimiser), which bounds the ratio.

    .venv/bin/python experiments/benchmarks/luong_batched_vs_step.py            # B=64, S=T=25
    .venv/bin/python experiments/benchmarks/luong_batched_vs_step.py --vocab 300 --repeats 20
    .venv/bin/python experiments/benchmarks/luong_batched_vs_step.py --precision bf16-mixed
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import Tensor

from seq2seq_lab.config import build_network
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID


def make_batch(batch: int, src_len: int, tgt_len: int, vocab: int, generator: torch.Generator):
    """Random full-length rows ending in EOS (lengths do not matter for the timing)."""
    src = torch.randint(4, vocab, (batch, src_len), generator=generator)
    src[:, -1] = EOS_ID
    tgt = torch.randint(4, vocab, (batch, tgt_len + 1), generator=generator)
    tgt[:, 0] = BOS_ID
    tgt[:, -1] = EOS_ID
    return src, torch.ones_like(src, dtype=torch.bool), tgt[:, :-1], tgt[:, 1:]


def describe(net: torch.nn.Module) -> str:
    """The built network's recurrent layers as torch reports them (cell, sizes, direction),
    so the line says what was timed, not what was asked for."""
    rnns = [
        f"{name} {type(m).__name__}({m.input_size}->{m.hidden_size}, layers {m.num_layers}"
        f"{', bidirectional' if m.bidirectional else ''})"
        for name, m in net.named_modules()
        if isinstance(m, torch.nn.RNNBase)
    ]
    return ", ".join(rnns)


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
        help="Adam kernel: fused (what training uses, fp32 and bf16-mixed) or the per-tensor loop",
    )
    parser.add_argument(
        "--precision",
        choices=["32", "bf16-mixed"],
        default="32",
        help="trainer.precision: bf16-mixed autocasts matmuls to bfloat16 (AMX on recent Xeons)",
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    # Every size given: build_network fills the rest from the default (synthetic) scale's config,
    # not from this script's options. One layer, the paper's unidirectional encoder.
    net = build_network(
        "luong",
        src_vocab_size=args.vocab,
        tgt_vocab_size=args.vocab,
        cell=args.cell,
        hidden_size=args.hidden,
        embedding_dim=args.embedding,
        num_layers=1,
        encoder_num_layers=1,
        bidirectional=False,
        dropout=0.0,
        input_feeding=False,
        attention={"score": args.score},
    ).train()
    parameters = sum(p.numel() for p in net.parameters())
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4, fused=args.optimizer_kernel == "fused")
    src, src_mask, tgt_in, tgt_out = make_batch(
        args.batch, args.src_len, args.tgt_len, args.vocab, torch.Generator().manual_seed(1)
    )
    # decoder only: the encoder's memory and the target embeddings are fixed inputs, the output
    # layer, loss and optimizer are left out; what remains is exactly the part the two paths
    # compute differently (RNN over T positions, attention, W_c)
    with torch.no_grad():
        memory = net.encode(src, src_mask)
        ys = net.embed_target(tgt_in)
    probe = torch.randn(
        args.batch, args.tgt_len, args.hidden, generator=torch.Generator().manual_seed(2)
    )

    def decoder_batched() -> Tensor:
        state = net.init_state(memory)
        outputs, _ = net.decoder_rnn(ys, state.hidden)
        return net._attend(outputs, state, 0)[0]

    def decoder_step() -> Tensor:
        state, attentional = net.init_state(memory), []
        for t in range(args.tgt_len):
            a, _, state = net._advance(ys[:, t], state)
            attentional.append(a)
        return torch.stack(attentional, 1)

    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16-mixed")

    def train_step(forward) -> float:
        start = time.perf_counter()
        with autocast:
            logits = forward().logits  # [B, T, V]
            loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return time.perf_counter() - start

    def decoder_pass(decoder) -> float:
        start = time.perf_counter()
        with autocast:
            loss = (decoder().float() * probe).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        return time.perf_counter() - start

    timed = {
        "batched": lambda: train_step(lambda: net.teacher_forced(src, src_mask, tgt_in)),
        "step": lambda: train_step(
            lambda: net.stepwise(src, src_mask, tgt_in, teacher_forcing_ratio=1.0)
        ),
        "decoder batched": lambda: decoder_pass(decoder_batched),
        "decoder step": lambda: decoder_pass(decoder_step),
    }
    times: dict[str, list[float]] = {name: [] for name in timed}
    for i in range(args.warmup + args.repeats):
        for name, run in timed.items():  # alternate so drifting load hits every path
            seconds = run()
            if i >= args.warmup:
                times[name].append(seconds)

    print(
        f"Luong ({args.cell}, score={args.score}, no input feeding), B={args.batch} "
        f"S={args.src_len} T={args.tgt_len} H={args.hidden} E={args.embedding} V={args.vocab}, "
        f"precision {args.precision}, Adam {args.optimizer_kernel}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, median of {args.repeats}"
    )
    print(f"  network: {parameters:,} parameters ({type(net).__name__}: {describe(net)})")
    ms = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
    for name, ts in times.items():
        print(f"  {name:16s} median {ms[name]:8.1f} ms   (min {min(ts) * 1e3:.1f} ms)")
    shared = ms["batched"] - ms["decoder batched"]
    print(f"  training step, batched vs step: {ms['step'] / ms['batched']:.2f}x")
    print(f"  decoder alone, batched vs step: {ms['decoder step'] / ms['decoder batched']:.2f}x")
    # both paths also pay for the encoder, the output layer + softmax and the optimizer
    # (Amdahl): even a batched decoder costing nothing could not beat step / shared
    if shared <= 0:  # tiny sizes: the decoder alone timed no faster than the whole step
        print(f"  shared by both paths ~{shared:.1f} ms: below timing noise, no bound")
        return
    print(
        f"  shared by both paths ~{shared:.1f} ms ({shared / ms['batched']:.0%} of the batched "
        f"step); bound with a free batched decoder: {ms['step'] / shared:.2f}x"
    )


if __name__ == "__main__":
    main()
