#!/usr/bin/env bash
# The `synthetic` grid: every comparison at `synthetic` scale (conf/scale/synthetic.yaml: the scale's three
# seeds, each run trained for its experiment's update budget), one sweep after another, each
# turned into its committed report experiments/<name>/results/synthetic/. Each sweep's wall time goes
# to experiments/<name>/results/synthetic/wall_time.txt (the READMEs quote it), and the grid's to
# experiments/cpu_grid_wall_time.txt.
#
#   bash experiments/run_cpu.sh                                  # every comparison (under 2 hours)
#   bash experiments/run_cpu.sh e2_reversal e4_norm_warmup       # named comparisons
#   SEEDS=1 bash experiments/run_cpu.sh e3_scores                # one seed (a quick look)
#
# Two jobs at a time with one thread each (JOBS=2): on a 2-core CPU that is ~1.8x the
# throughput of one job with two threads, and every job of a sweep sees the same conditions.
# A grid cut short (end of a session) continues by naming the comparisons not yet reported.
# OVERRIDES adds Hydra overrides to every sweep; RESULTS and MULTIRUN move the reports and the
# runs (the test suite runs a trimmed smoke grid this way).
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/python.sh
JOBS=${JOBS:-2}
TAG=${TAG:-$(date +%Y-%m-%d_%H-%M-%S)}
RESULTS=${RESULTS:-experiments}
MULTIRUN=${MULTIRUN:-multirun}
read -r -a EXTRA <<< "${OVERRIDES:-}"
# every comparison: each folder of experiments/ with a config.yaml (experiment=<name>)
ALL=$(for c in experiments/*/config.yaml; do basename "$(dirname "$c")"; done | tr '\n' ' ')
[ $# -eq 0 ] && set -- $ALL
SEED_ARGS=()
[ -n "${SEEDS:-}" ] && SEED_ARGS=("seeds=$SEEDS")
THREADS=$(( JOBS > 1 ? 1 : 2 ))

for name in "$@"; do
  if [ ! -f "experiments/$name/config.yaml" ]; then
    echo "run_cpu.sh: no experiments/$name/config.yaml (expected one of: $ALL)" >&2
    exit 2
  fi
done
grid_start=$(date +%s)
for name in "$@"; do
  sweep="$MULTIRUN/$name/synthetic/$TAG"
  out="$RESULTS/$name/results/synthetic"
  command=("$PY" -m seq2seq_lab.train -m "experiment=$name" "${SEED_ARGS[@]}"
           hydra/launcher=joblib "hydra.launcher.n_jobs=$JOBS" "threads=$THREADS"
           '~callbacks.progress_bar' "${EXTRA[@]}")
  start=$(date +%s)
  "${command[@]}" "hydra.sweep.dir=$sweep"
  end=$(date +%s)
  rm -rf "$out"  # the new report replaces the old one whole: nothing stale stays beside it
  mkdir -p "$out"
  jobs=$(find "$sweep" -mindepth 2 -maxdepth 2 -name results.json | wc -l)
  {
    echo "experiment: $name"
    echo "command: ${command[*]}"
    echo "jobs: $jobs"
    echo "wall_seconds: $(( end - start ))"
    echo "cpu: $("$PY" -m seq2seq_lab.record.environment)"
    echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } > "$out/wall_time.txt"
  "$PY" -m seq2seq_lab.report "$sweep" --out "$out"
  echo "run_cpu.sh: $name took $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s -> $out"
done
grid_end=$(date +%s)
{
  echo "experiments: $*"
  echo "wall_seconds: $(( grid_end - grid_start ))  (sweeps and reports)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc)"
  echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$RESULTS/cpu_grid_wall_time.txt"
echo "run_cpu.sh: $* took $(( (grid_end - grid_start) / 60 )) min"
