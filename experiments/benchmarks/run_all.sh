#!/usr/bin/env bash
# Every side-by-side figure of RESULTS.md from one command, into one folder, as a resumable
# queue: each step writes OUT/<step>.txt and is skipped when that file exists, so a run cut
# off by the end of a session continues where it stopped (delete a file to redo its step).
#
#   bash experiments/benchmarks/run_all.sh [OUT]     # default experiments/benchmarks/results/<date>
#   bash experiments/benchmarks/run_all.sh --list [OUT]   # each step's name and command; runs nothing
#
# Needs the machine to itself (each system gets both cores in turn): about 2.5 hours on a 2-core
# CPU, most of it the time-to-BLEU runs (ours, then the plain-torch reference, 40 minutes of
# training clock each) and training the JoeyNMT peer under our recipe (30 minutes). The peer's
# environment is made once by `joeynmt_peer.py setup` (.cache/peer, pip from the registry).
set -euo pipefail
cd "$(dirname "$0")/../.."
LIST=false
if [[ ${1:-} == --list ]]; then
  LIST=true
  shift
fi
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-experiments/benchmarks/results/$(date -u +%Y%m%d)}
BENCH=experiments/benchmarks
export WANDB_MODE=${WANDB_MODE:-offline}
$LIST || mkdir -p "$OUT"

step() {  # step NAME COMMAND...: run COMMAND unless OUT/NAME.txt exists; its output goes there
  local name=$1
  shift
  if $LIST; then  # one line per step, "NAME: COMMAND" (the test suite checks the options)
    echo "$name: $*"
    return
  fi
  if [[ -s "$OUT/$name.txt" ]]; then
    echo "== $name: done before ($OUT/$name.txt)"
    return
  fi
  echo "== $name: $* ($(date -u +%H:%M:%S))"
  # Steps of one queue may run in different sessions on different machines: each step's file
  # names the CPU its ratios were measured on.
  { echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p')," \
      "bf16 flags: $(grep -o -w -E 'avx512_bf16|amx_bf16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')"
    "$@"; } > "$OUT/$name.txt.partial" 2>&1 || { tail -20 "$OUT/$name.txt.partial"; exit 1; }
  mv "$OUT/$name.txt.partial" "$OUT/$name.txt"
  tail -12 "$OUT/$name.txt"
}

# the machine every figure below was measured on
step machine bash -c "date -u; lscpu; $PY -c 'import torch, lightning, sys; print(sys.version); print(\"torch\", torch.__version__, \"lightning\", lightning.__version__)'"
step peer_setup "$PY" $BENCH/joeynmt_peer.py setup
# The two long steps first and in one session: decoding reads time_to_bleu's 30-minute
# snapshot from .cache, which does not outlive the work tree.
# greedy test2016 BLEU every 5 minutes of training clock, ours vs the plain-torch reference
step time_to_bleu "$PY" $BENCH/time_to_bleu.py --work .cache/time_to_bleu --out "$OUT"
# decoding speed with models of similar quality: our 30-minute snapshot vs the peer trained
# under our recipe for 30 minutes (ours is trained again if that snapshot is gone)
# (a glob, not `ls | tail`: under pipefail a failing ls ended the whole queue here, silently,
# exactly when the snapshot was gone)
RUNS=()
for run in .cache/time_to_bleu/ours-*/; do [[ -d "$run" ]] && RUNS+=("$run"); done
OURS=()
if ((${#RUNS[@]})) && [[ -f "${RUNS[-1]}snapshots/minute-030.ckpt" ]]; then
  OURS=(--ours "${RUNS[-1]}snapshots/minute-030.ckpt")
fi
step decoding "$PY" $BENCH/decoding_vs_peer.py "${OURS[@]}" --train-minutes 30 --out "$OUT"
# one training step in fp32 / bf16 autocast / torch.compile, alternating in one process
step precision_step_transformer "$PY" $BENCH/precision_step.py transformer fp32,bf16,compile,compile_bf16 --rounds 6
step precision_step_bahdanau "$PY" $BENCH/precision_step.py bahdanau fp32,bf16 --rounds 6
# the training loop against its own bare step: the same network, batches and precision
step loop_vs_step_transformer "$PY" $BENCH/loop_vs_step.py --updates 30 --rounds 2 --out "$OUT/loop_vs_step_transformer.json" recipe=transformer_multi30k_cpu trainer.precision=32-true
step loop_vs_step_bahdanau "$PY" $BENCH/loop_vs_step.py --updates 30 --rounds 2 --out "$OUT/loop_vs_step_bahdanau.json" scale=multi30k model=bahdanau
# the training loop's target tokens/s: ours (fp32 and bf16-mixed) vs JoeyNMT vs plain torch
step throughput "$PY" $BENCH/throughput_vs_peers.py --rounds 2 --seconds 90 --peer-seconds 180 --out "$OUT"
# the KV cache: cached vs uncached greedy at forced length 50
step cached_decoding "$PY" $BENCH/cached_decoding.py --batch-sizes 1 64 --length 50
$LIST || echo "all steps done: $OUT"
