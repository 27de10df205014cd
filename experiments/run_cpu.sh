#!/usr/bin/env bash
# Runs comparisons at `cpu` scale on this machine, one after another, and turns each sweep into
# its committed report: experiments/<name>/results-cpu/. Records each sweep's wall time in
# experiments/<name>/results-cpu/wall_time.txt, because the per-comparison READMEs quote it.
#
#   bash experiments/run_cpu.sh e2_reversal e4_norm_warmup      # named comparisons
#   SEEDS=1,2 JOBS=2 bash experiments/run_cpu.sh e3_scores      # both seeds
#
# Two jobs at a time with one thread each (JOBS=2): on a 2-core CPU that is ~1.8x the
# throughput of one job with two threads, and every job of a sweep sees the same conditions.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
[ -x .venv/bin/python ] && PY=${PYTHON:-.venv/bin/python}
SEEDS=${SEEDS:-1}
JOBS=${JOBS:-2}
TAG=${TAG:-$(date +%Y-%m-%d_%H-%M-%S)}

for name in "$@"; do
  if [ ! -f "conf/experiment/$name.yaml" ]; then
    echo "run_cpu.sh: no conf/experiment/$name.yaml (expected one of: $(cd conf/experiment && ls *.yaml | sed 's/.yaml//' | tr '\n' ' '))" >&2
    exit 2
  fi
  sweep="multirun/$name/cpu/$TAG"
  out="experiments/$name/results-cpu"
  start=$(date +%s)
  "$PY" -m seq2seq_lab.train -m "experiment=$name" "seeds=$SEEDS" \
    hydra/launcher=joblib "hydra.launcher.n_jobs=$JOBS" threads=$(( JOBS > 1 ? 1 : 2 )) \
    '~callbacks.progress_bar' "hydra.sweep.dir=$sweep"
  end=$(date +%s)
  mkdir -p "$out"
  jobs=$(find "$sweep" -mindepth 2 -maxdepth 2 -name results.json | wc -l)
  {
    echo "experiment: $name"
    echo "command: $PY -m seq2seq_lab.train -m experiment=$name seeds=$SEEDS hydra/launcher=joblib hydra.launcher.n_jobs=$JOBS threads=$(( JOBS > 1 ? 1 : 2 )) '~callbacks.progress_bar'"
    echo "jobs: $jobs"
    echo "wall_seconds: $(( end - start ))"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc)"
    echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } > "$out/wall_time.txt"
  "$PY" -m seq2seq_lab.report "$sweep" --out "$out"
  echo "run_cpu.sh: $name took $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s -> $out"
done
