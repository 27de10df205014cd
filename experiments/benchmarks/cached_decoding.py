"""Decoding speed of the Transformer: with and without the key/value cache, or against another
checkout of the code.

Cached (``model.kv_cache=true``): each step feeds one token, writes one position into every
decoder layer's self-attention cache, and reuses the cross-attention keys/values projected once
per sentence in ``init_state``. Uncached (``false``): each step reruns the whole decoder
(cross-attention projections included) over the prefix, as decoders without incremental state
do. Both run the shared ``greedy_search`` (``--beam 1``) or ``beam_search`` (``--beam K``,
alpha 1.0) with the output length forced to each of --length tokens (EOS is blocked until then),
on the same random-init model (speed does not depend on the weights) and the same random
sources; the two modes alternate over --rounds and the medians are reported, with the
cached/uncached speed ratio.

With ``--against SRC`` (the ``src/`` of another checkout, e.g. a worktree of the parent commit)
the comparison is instead this checkout's cached decoding against that checkout's: each runs in
its own worker process (same interpreter, thread count and model seed, so the same weights and
sources), one decode at a time, alternating, and the outputs must be identical token for token.
The ratio is reported for the medians of the wall-clock time and of the workers' process CPU
time (less sensitive to a shared machine's scheduling; with one thread they should agree).
By default the workers persist and decode each (batch, length) once untimed first (steady
state: the memory allocator has seen these sizes); ``--fresh`` times each decode in a new
worker instead, i.e. the first decode of these sizes in a process.

    .venv/bin/python experiments/benchmarks/cached_decoding.py
    .venv/bin/python experiments/benchmarks/cached_decoding.py --batch-sizes 1 16 64 --length 100
    .venv/bin/python experiments/benchmarks/cached_decoding.py --beam 5 --threads 1 \\
        --length 50 100 --against ../baseline/src
    .venv/bin/python experiments/benchmarks/cached_decoding.py --beam 5 --threads 1 \\
        --batch-sizes 64 --length 100 --profile 15
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from seq2seq_lab.config import build_network
from seq2seq_lab.data.specials import EOS_ID, PAD_ID
from seq2seq_lab.decoding.beam import beam_search
from seq2seq_lab.decoding.greedy import greedy_search
from seq2seq_lab.models.transformer.network import TransformerNetwork

HERE_SRC = Path(__file__).resolve().parents[2] / "src"


def make_sources(batch: int, src_len: int, vocab: int, seed: int):
    """Random sources of lengths between src_len / 2 and src_len, EOS last, right-padded."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(src_len // 2, src_len + 1, (batch,), generator=g)
    src = torch.randint(4, vocab, (batch, int(lengths.max())), generator=g)
    mask = torch.arange(src.size(1))[None, :] < lengths[:, None]
    src[torch.arange(batch), lengths - 1] = EOS_ID
    return src.masked_fill(~mask, PAD_ID), mask


def decode_once(net: TransformerNetwork, src, mask, length: int, beam: int):
    """(seconds, tokens) of one decode forced to ``length`` tokens."""
    start = time.perf_counter()
    if beam == 1:
        hyps = greedy_search(net, src, mask, max_len_a=0.0, max_len_b=length, min_len=length)
    else:
        hyps = beam_search(
            net, src, mask, beam_size=beam, length_penalty=1.0,
            max_len_a=0.0, max_len_b=length, min_len=length,
        )  # fmt: skip
    seconds = time.perf_counter() - start
    assert all(len(tokens) == length for tokens in hyps.tokens), "length was not forced"
    return seconds, hyps.tokens


def build(args: argparse.Namespace) -> TransformerNetwork:
    """The network of the options, every size given: ``build_network`` fills what is not given
    from the default scale's (synthetic, d_model 64) config, not from these defaults."""
    torch.manual_seed(args.seed)
    return build_network(
        "transformer", src_vocab_size=args.vocab, tgt_vocab_size=args.vocab, d_model=args.d_model,
        heads=args.heads, d_ff=args.d_ff, encoder_layers=args.layers, decoder_layers=args.layers,
        positions=args.positions, norm="pre", tie_embeddings="none",
    ).eval()  # fmt: skip


def header(args: argparse.Namespace, what: str, net: TransformerNetwork) -> str:
    """What was measured: the search, the lengths and the network as built (its parameter
    count and the sizes read back from its layers, not from the options)."""
    search = "greedy" if args.beam == 1 else f"beam {args.beam} (alpha 1.0)"
    return (
        f"{what}: {search}, forced length {'/'.join(map(str, args.length))}, "
        f"{describe(net)}, {args.positions} positions, vocab {args.vocab}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, median of {args.rounds}"
    )


def describe(net: TransformerNetwork) -> str:
    """The built network's parameter count and shape."""
    parameters = sum(p.numel() for p in net.parameters())
    return (
        f"{parameters:,} parameters: {len(net.encoder)}+{len(net.decoder)} layers "
        f"d_model {net.d_model}, {net.heads} heads, d_ff {net.encoder[0].ffn.w_1.out_features}"
    )


def cached_vs_uncached(args: argparse.Namespace) -> None:
    net = build(args)
    print(header(args, "Cached vs uncached", net))
    print(
        f"  {'batch':>5s} {'length':>6s} {'mode':9s} {'sent/s':>9s} {'tokens/s':>10s} {'ratio':>7s}"
    )
    for batch in args.batch_sizes:
        src, mask = make_sources(batch, args.src_len, args.vocab, args.seed)
        for length in args.length:
            seconds: dict[bool, list[float]] = {True: [], False: []}
            for r in range(args.rounds + 1):  # round 0 warms up
                for kv_cache in (True, False) if r % 2 == 0 else (False, True):
                    net.kv_cache = kv_cache
                    elapsed, _ = decode_once(net, src, mask, length, args.beam)
                    if r > 0:
                        seconds[kv_cache].append(elapsed)
            median = {mode: statistics.median(ts) for mode, ts in seconds.items()}
            for kv_cache, name in ((True, "cached"), (False, "uncached")):
                ratio = median[False] / median[kv_cache]
                print(
                    f"  {batch:5d} {length:6d} {name:9s} {batch / median[kv_cache]:9.1f} "
                    f"{batch * length / median[kv_cache]:10.0f} {ratio:6.2f}x"
                )


def serve(args: argparse.Namespace) -> None:
    """Worker of --against: one JSON request per stdin line ({"batch", "length"}), one JSON
    answer per stdout line (wall and process CPU seconds, a digest of the output tokens)."""
    net = build(args)
    sources = {}
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        batch, length = request["batch"], request["length"]
        if batch not in sources:
            sources[batch] = make_sources(batch, args.src_len, args.vocab, args.seed)
        cpu = time.process_time()
        seconds, tokens = decode_once(net, *sources[batch], length, args.beam)
        cpu = time.process_time() - cpu
        digest = hashlib.sha1(json.dumps(tokens).encode()).hexdigest()
        print(json.dumps({"seconds": seconds, "cpu": cpu, "digest": digest}), flush=True)


class Worker:
    """A ``--serve`` process of this script that imports seq2seq_lab from ``src``."""

    def __init__(self, src: Path, argv: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(src)}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", *argv],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.hello = self._read()

    def _read(self) -> dict:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.process.args} exited")
        return json.loads(line)

    def decode(self, batch: int, length: int) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"batch": batch, "length": length}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def profile_decode(args: argparse.Namespace) -> None:
    """One cached decode of each --batch-sizes x --length under torch.profiler (after a
    warm-up decode): the top operators by self CPU time, and the profiled run's wall time next
    to an unprofiled one (the profiler's own overhead differs between operators)."""
    from torch.profiler import ProfilerActivity, profile

    net = build(args)
    print(header(args, "Profile of cached decoding", net))
    for batch in args.batch_sizes:
        src, mask = make_sources(batch, args.src_len, args.vocab, args.seed)
        for length in args.length:
            decode_once(net, src, mask, 5, args.beam)  # warm-up
            unprofiled, _ = decode_once(net, src, mask, length, args.beam)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                profiled, _ = decode_once(net, src, mask, length, args.beam)
            print(
                f"\nbatch {batch}, length {length}: {unprofiled:.2f} s unprofiled, "
                f"{profiled:.2f} s profiled"
            )
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.profile))


def worker_argv(args: argparse.Namespace) -> list[str]:
    """The options a --serve worker needs: the model, the sources, the search, the threads."""
    names = ("beam", "src_len", "vocab", "d_model", "heads", "d_ff", "layers", "positions")
    argv = [f"--{name.replace('_', '-')}={getattr(args, name)}" for name in names]
    return argv + [f"--threads={args.threads}", f"--seed={args.seed}"]


def against(args: argparse.Namespace, argv: list[str]) -> None:
    sources = {"before": args.against.resolve(), "after": HERE_SRC}
    workers = {} if args.fresh else {name: Worker(src, argv) for name, src in sources.items()}

    def decode(name: str, batch: int, length: int) -> dict:
        if not args.fresh:
            return workers[name].decode(batch, length)
        worker = Worker(sources[name], argv)  # its only earlier decode: the warm-up
        worker.decode(batch, 5)
        answer = worker.decode(batch, length)
        worker.close()
        return answer

    print(header(args, f"This checkout (after) vs {args.against} (before)", build(args)))
    if workers:
        print(f"  workers: {json.dumps({n: w.hello for n, w in workers.items()})}")
    print(
        f"  {'batch':>5s} {'length':>6s} {'before s':>9s} {'after s':>9s} {'before/after':>12s} "
        f"{'(CPU time)':>10s}"
    )
    for batch in args.batch_sizes:
        for length in args.length:
            for worker in workers.values():  # warm up: thread pool, allocator, first calls
                worker.decode(batch, length)
            times: dict[str, dict[str, list[float]]] = {
                clock: {name: [] for name in sources} for clock in ("seconds", "cpu")
            }
            digests: set[str] = set()
            for r in range(args.rounds):
                for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
                    answer = decode(name, batch, length)
                    for clock, by_name in times.items():
                        by_name[name].append(answer[clock])
                    digests.add(answer["digest"])
            wall, cpu = (
                {name: statistics.median(ts) for name, ts in times[clock].items()}
                for clock in ("seconds", "cpu")
            )
            same = "identical outputs" if len(digests) == 1 else "OUTPUTS DIFFER"
            print(
                f"  {batch:5d} {length:6d} {wall['before']:9.3f} {wall['after']:9.3f} "
                f"{wall['before'] / wall['after']:11.2f}x {cpu['before'] / cpu['after']:9.2f}x"
                f"  {same}",
                flush=True,
            )
    for worker in workers.values():
        worker.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--length", type=int, nargs="+", default=[50], help="forced lengths")
    parser.add_argument("--beam", type=int, default=1, help="beam size (1: greedy search)")
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
    parser.add_argument(
        "--against", type=Path, help="src/ of another checkout: time its decoding against ours"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="with --against: time each decode in a new worker process (after a length-5 "
        "warm-up), i.e. the first decode of these sizes in a process; by default the workers "
        "persist and each (batch, length) is decoded once untimed first",
    )
    parser.add_argument(
        "--profile",
        type=int,
        metavar="N",
        help="profile this checkout's cached decoding: top N ops",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.serve:
        serve(args)
    elif args.profile:
        profile_decode(args)
    elif args.against is not None:
        against(args, worker_argv(args))
    else:
        cached_vs_uncached(args)


if __name__ == "__main__":
    main()
