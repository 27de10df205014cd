"""Greedy decoding speed of the Transformer with and without the key/value cache.

Cached (``model.kv_cache=true``): each step feeds one token, appends one position to every
decoder layer's self-attention cache, and reuses the cross-attention keys/values projected once
per sentence in ``init_state``. Uncached (``false``): each step reruns the whole decoder
(cross-attention projections included) over the prefix, as decoders without incremental state
do. Both run the shared ``greedy_search`` with the output length forced to --length tokens
(EOS is blocked until then), on the same random-init model (speed does not depend on the
weights) and the same random sources; the two modes alternate over --rounds and the medians are
reported, with the cached/uncached speed ratio.

    .venv/bin/python experiments/benchmarks/cached_decoding.py
    .venv/bin/python experiments/benchmarks/cached_decoding.py --batch-sizes 1 16 64 --length 100
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from seq2seq_lab.config import build_network
from seq2seq_lab.data.specials import EOS_ID, PAD_ID
from seq2seq_lab.decoding.greedy import greedy_search
from seq2seq_lab.models.transformer.network import TransformerNetwork


def make_sources(batch: int, src_len: int, vocab: int, seed: int):
    """Random sources of lengths between src_len / 2 and src_len, EOS last, right-padded."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(src_len // 2, src_len + 1, (batch,), generator=g)
    src = torch.randint(4, vocab, (batch, int(lengths.max())), generator=g)
    mask = torch.arange(src.size(1))[None, :] < lengths[:, None]
    src[torch.arange(batch), lengths - 1] = EOS_ID
    return src.masked_fill(~mask, PAD_ID), mask


def decode_seconds(net: TransformerNetwork, src, mask, length: int) -> float:
    start = time.perf_counter()
    hyps = greedy_search(net, src, mask, max_len_a=0.0, max_len_b=length, min_len=length)
    seconds = time.perf_counter() - start
    assert all(len(tokens) == length for tokens in hyps.tokens), "length was not forced"
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--length", type=int, default=50, help="forced output length")
    parser.add_argument("--src-len", type=int, default=25)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--d-ff", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--positions", default="sinusoidal")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    net = build_network(
        "transformer", src_vocab_size=args.vocab, tgt_vocab_size=args.vocab, d_model=args.d_model,
        heads=args.heads, d_ff=args.d_ff, encoder_layers=args.layers, decoder_layers=args.layers,
        positions=args.positions,
    ).eval()  # fmt: skip

    print(
        f"Greedy decoding, forced length {args.length}, {args.layers}+{args.layers} layers "
        f"d_model {args.d_model}, {args.heads} heads, d_ff {args.d_ff}, {args.positions} "
        f"positions, vocab {args.vocab}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, median of {args.rounds}"
    )
    print(f"  {'batch':>5s} {'mode':9s} {'sent/s':>9s} {'tokens/s':>10s} {'ratio':>7s}")
    for batch in args.batch_sizes:
        src, mask = make_sources(batch, args.src_len, args.vocab, args.seed)
        seconds: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.rounds + 1):  # round 0 warms up
            for kv_cache in (True, False) if r % 2 == 0 else (False, True):
                net.kv_cache = kv_cache
                elapsed = decode_seconds(net, src, mask, args.length)
                if r > 0:
                    seconds[kv_cache].append(elapsed)
        median = {mode: statistics.median(ts) for mode, ts in seconds.items()}
        for kv_cache, name in ((True, "cached"), (False, "uncached")):
            ratio = median[False] / median[kv_cache]
            print(
                f"  {batch:5d} {name:9s} {batch / median[kv_cache]:9.1f} "
                f"{batch * args.length / median[kv_cache]:10.0f} {ratio:6.2f}x"
            )


if __name__ == "__main__":
    main()
