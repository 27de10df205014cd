#!/usr/bin/env bash
# Issue 6 without a GPU: the real-data comparisons at the reduced `real_cpu` scale
# (conf/scale/real_cpu.yaml), run as a queue of single training runs, two at a time with one
# thread each (on 2 cores ~1.8x the throughput of one run with two threads), then one report
# per comparison:
#   E1 on Multi30k          -> experiments/e1_attention/results-multi30k/
#   E2 on Multi30k          -> experiments/e2_reversal/results-multi30k/
#   E4 on Multi30k (6+6)    -> experiments/e4_norm_warmup/results-multi30k/
#   E1 on Europarl (length) -> experiments/e1_attention/results-long/
#
#   bash experiments/run_real_cpu.sh                 # everything (~100 min on a 2-core CPU)
#   ONLY=e4 bash experiments/run_real_cpu.sh         # one group: e1 | e2 | e4 | long
#   REPORT_ONLY=1 ROOT=multirun/real_cpu/<time> bash experiments/run_real_cpu.sh  # reports only
#   ONLY=long LONG_MIN=18 LONG_MODELS="seq2seq bahdanau" bash experiments/run_real_cpu.sh
#
# Minutes of training per run (validation included, test excluded) are set below; with a GPU
# use `scale=full` instead (experiments/e1_attention/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/python.sh
JOBS=${JOBS:-2}
ROOT=${ROOT:-multirun/real_cpu/$(date +%Y-%m-%d_%H-%M-%S)}
MULTI30K=${MULTI30K:-$(cd .. && pwd)/shared/data/multi30k}
EUROPARL=${EUROPARL:-$(cd .. && pwd)/shared/data/europarl_de_en_20k}
E1_MIN=${E1_MIN:-30} LSTM_MIN=${LSTM_MIN:-25} E2_MIN=${E2_MIN:-10} LONG_MIN=${LONG_MIN:-8}
E4_MIN=${E4_MIN:-4}
LONG_MODELS=${LONG_MODELS:-seq2seq bahdanau luong transformer}
mkdir -p "$ROOT"

common="scale=real_cpu threads=$(( JOBS > 1 ? 1 : 2 )) ~callbacks.progress_bar"
m30k="data.root=$MULTI30K"
long="data=europarl data.root=$EUROPARL data.test_from_train_lines=1000 data.val_from_train_lines=500"
# E4 reduced to fit minutes: 6+6 layers at d_model 128 and 2,048-token batches (more updates).
e4="experiment=e4_norm_warmup model.encoder_layers=6 model.d_model=128 model.d_ff=512 data.max_tokens=2048 cpu_run_minutes=$E4_MIN"

{
  # group name | overrides (longest first, so the two workers finish together)
  echo "e1 bahdanau|experiment=e1_attention model=bahdanau $m30k cpu_run_minutes=$E1_MIN"
  echo "e1 luong|experiment=e1_attention model=luong $m30k cpu_run_minutes=$E1_MIN"
  echo "e1 seq2seq|experiment=e1_attention model=seq2seq $m30k cpu_run_minutes=$LSTM_MIN"
  echo "e2 seq2seq_reverse-false|experiment=e2_reversal model=seq2seq model.reverse_source=false $m30k cpu_run_minutes=$E2_MIN"
  echo "e2 seq2seq_reverse-true|experiment=e2_reversal model=seq2seq model.reverse_source=true $m30k cpu_run_minutes=$E2_MIN"
  for m in $LONG_MODELS; do
    echo "long $m|experiment=e1_attention model=$m $long cpu_run_minutes=$LONG_MIN"
  done
  for norm in post pre; do for wu in true false; do for lr in 5e-4 1e-3; do
    echo "e4 $norm-LN_warmup-${wu}_lr$lr|$e4 $m30k model.norm=$norm schedule.linear_warmup=$wu optim.lr=$lr"
  done; done; done
} | { if [ -n "${ONLY:-}" ]; then grep "^$ONLY " || true; else cat; fi; } > "$ROOT/queue.txt"

run_one() {  # "group name|overrides": one training run in ROOT/group/name, log beside it
  local group=${1%% *} rest=${1#* }
  local name=${rest%%|*} overrides=${rest#*|}
  local dir="$ROOT/$group/$name"
  mkdir -p "$dir"
  local start=$(date +%s)
  # shellcheck disable=SC2086  # overrides are words by design
  "$PY" -m seq2seq_lab.train $overrides $common "hydra.run.dir=$dir" > "$dir/stdout.log" 2>&1 \
    || echo "run_real_cpu.sh: $group/$name exited $? (see $dir/stdout.log)" >&2
  echo "$group/$name $(( $(date +%s) - start ))" >> "$ROOT/wall_seconds.txt"
}
export -f run_one
export PY ROOT common
start=$(date +%s)
if [ -z "${REPORT_ONLY:-}" ]; then  # REPORT_ONLY=1: (re)write the reports of a finished ROOT
  tr '\n' '\0' < "$ROOT/queue.txt" | xargs -0 -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {}
fi
end=$(date +%s)

declare -A out=(
  [e1]=experiments/e1_attention/results-multi30k [e2]=experiments/e2_reversal/results-multi30k
  [e4]=experiments/e4_norm_warmup/results-multi30k [long]=experiments/e1_attention/results-long
)
for group in e1 e2 e4 long; do
  [ -d "$ROOT/$group" ] || continue
  mkdir -p "${out[$group]}"
  {
    echo "group: $group (driver: experiments/run_real_cpu.sh, runs in $ROOT/$group)"
    echo "jobs at once: $JOBS, torch threads per job: $(( JOBS > 1 ? 1 : 2 ))"
    grep "^$group " "$ROOT/queue.txt" | sed "s%^[^|]*|%command: $PY -m seq2seq_lab.train %; s%\$% $common%"
    echo "seconds per run (training + test):"
    grep "^$group/" "$ROOT/wall_seconds.txt" | sed 's/^/  /'
    [ -z "${REPORT_ONLY:-}" ] && echo "queue wall_seconds: $(( end - start ))"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc), gpu: none"
    echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } > "${out[$group]}/wall_time.txt"
  "$PY" -m seq2seq_lab.report "$ROOT/$group" --out "${out[$group]}" \
    || echo "run_real_cpu.sh: report of $group failed" >&2
done
echo "run_real_cpu.sh: done in $(( (end - start) / 60 )) min -> $ROOT"
