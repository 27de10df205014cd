#!/usr/bin/env bash
# The Europarl length study at the reduced `multi30k` scale without a GPU: E1's four
# models trained for a few minutes each by the wall clock on europarl_de_en_20k (the last 1,000
# train lines held out as the test set), two at a time with one thread each, then one report:
#   E1 on Europarl (length) -> experiments/e1_attention/results/europarl-long/
#
#   bash experiments/e1_attention/run_europarl_long.sh                 # the study (~20 min on a 2-core CPU)
#   REPORT_ONLY=1 ROOT=multirun/multi30k/<time> bash experiments/e1_attention/run_europarl_long.sh  # report only
#   LONG_MIN=18 LONG_MODELS="plain bahdanau" bash experiments/e1_attention/run_europarl_long.sh
#
# Minutes of training per run (validation included, test excluded) are set below; the study's
# real size needs a GPU (`scale=full`, experiments/e1_attention/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/python.sh
JOBS=${JOBS:-2}
ROOT=${ROOT:-multirun/multi30k/$(date +%Y-%m-%d_%H-%M-%S)}
EUROPARL=${EUROPARL:-$(cd .. && pwd)/shared/data/europarl_de_en_20k}
LONG_MIN=${LONG_MIN:-8}
LONG_MODELS=${LONG_MODELS:-plain bahdanau luong transformer}
mkdir -p "$ROOT"

common="scale=multi30k threads=$(( JOBS > 1 ? 1 : 2 )) ~callbacks.progress_bar"
long="data=europarl data.root=$EUROPARL data.test_from_train_lines=1000 data.val_from_train_lines=500"

{
  # group name | overrides
  for m in $LONG_MODELS; do
    echo "long $m|experiment=e1_attention model=$m $long cpu_run_minutes=$LONG_MIN"
  done
} > "$ROOT/queue.txt"

run_one() {  # "group name|overrides": one training run in ROOT/group/name, log beside it
  local group=${1%% *} rest=${1#* }
  local name=${rest%%|*} overrides=${rest#*|}
  local dir="$ROOT/$group/$name"
  mkdir -p "$dir"
  local start=$(date +%s)
  # shellcheck disable=SC2086  # overrides are words by design
  "$PY" -m seq2seq_lab.train $overrides $common "hydra.run.dir=$dir" > "$dir/stdout.log" 2>&1 \
    || echo "run_europarl_long.sh: $group/$name exited $? (see $dir/stdout.log)" >&2
  echo "$group/$name $(( $(date +%s) - start ))" >> "$ROOT/wall_seconds.txt"
}
export -f run_one
export PY ROOT common
start=$(date +%s)
if [ -z "${REPORT_ONLY:-}" ]; then  # REPORT_ONLY=1: (re)write the reports of a finished ROOT
  tr '\n' '\0' < "$ROOT/queue.txt" | xargs -0 -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {}
fi
end=$(date +%s)

out=experiments/e1_attention/results/europarl-long
if [ -d "$ROOT/long" ]; then
  mkdir -p "$out"
  {
    echo "group: long (driver: experiments/e1_attention/run_europarl_long.sh, runs in $ROOT/long)"
    echo "jobs at once: $JOBS, torch threads per job: $(( JOBS > 1 ? 1 : 2 ))"
    sed "s%^[^|]*|%command: $PY -m seq2seq_lab.train %; s%\$% $common%" "$ROOT/queue.txt"
    echo "seconds per run (training + test):"
    sed 's/^/  /' "$ROOT/wall_seconds.txt"
    [ -z "${REPORT_ONLY:-}" ] && echo "queue wall_seconds: $(( end - start ))"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc), gpu: none"
    echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } > "$out/wall_time.txt"
  "$PY" -m seq2seq_lab.report "$ROOT/long" --out "$out" \
    || echo "run_europarl_long.sh: report of the length study failed" >&2
fi
echo "run_europarl_long.sh: done in $(( (end - start) / 60 )) min -> $ROOT"
