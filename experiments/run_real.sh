#!/usr/bin/env bash
# The real-data grids: a comparison on Multi30k at the `multi30k` scale (conf/scale/multi30k.yaml,
# three seeds, each experiment's update budget or convergence rule), run as a resumable queue.
# Every pass runs the whole sweep into the same directory with `resume=true`: a finished run is
# kept, a run cut short (end of a session, kill -9) continues from its last.ckpt, the rest
# start (seq2seq_lab/record/run_dir.py: continuation); a run its wall-clock cap ended goes on
# to its update budget when OVERRIDES raise the cap (cpu_run_minutes=120) while its
# last.ckpt is on disk. Checkpoints are not committed: in a fresh clone
# a run cut short starts again, its partial files kept under runs/<job>/abandoned/. After each
# pass the report is regenerated from whatever has finished; its verdict stays inconclusive
# until every run it needs is there. A job identical to a finished run of another grid on the
# same data (same training config and seed: E2's reversed seq2seq is E1's seq2seq) reuses it
# instead of training it again (seq2seq_lab/record/run_reuse.py); the report names the reused runs.
#
#   bash experiments/run_real.sh e4_norm_warmup                 # run or continue E4's grid
#   bash experiments/run_real.sh e5_scaling e6_positions_heads  # one after the other
#   REPORT_ONLY=1 bash experiments/run_real.sh e4_norm_warmup   # the report only
#   SCALE=full bash experiments/run_real.sh e4_norm_warmup      # on a GPU (JOBS runs side by side)
#   MINUTES=150 bash experiments/run_real.sh e4_norm_warmup     # end the pass after 150 minutes
#   MINUTES=170 bash experiments/run_real.sh e4_norm_warmup e5_scaling  # 170 minutes in all
#   SWEEP=seed4 OVERRIDES="seed=4 model=bahdanau,transformer" bash experiments/run_real.sh e1_attention
#                                        # a fourth seed of two models, into the same report
#
# MINUTES ends the passes cleanly before a session does: it is the budget of the whole call,
# so a grid that finishes early leaves the rest to the next one. At the deadline the runs get
# SIGTERM, record themselves "interrupted" beside their last.ckpt, and the next call continues
# them; a later grid reached with less than START_MINUTES left (default 2) is not started. In a
# session whose disk does not outlive it, set START_MINUTES to about one run's length: a run
# cut short there restarts from scratch next time (see above).
# Runs:   experiments/<name>/results/<data>/runs/<job>/ (committed without checkpoints and
#         images, see .gitignore); the report beside them in experiments/<name>/results/<data>/.
#         SWEEP names a sweep of its own beside the grid's jobs, runs/<SWEEP>/<job>/ (a sweep
#         renumbers its jobs, so more seeds of some models cannot join the grid's own): its
#         passes count its jobs, the report reads every run under runs/.
# Passes: experiments/<name>/results/<data>/wall_time.txt, one line each (command, runs
#         finished, seconds, hardware); the grid's wall time is the time they cover.
# Two jobs at a time with one thread each (JOBS=2; on a 2-core CPU ~1.8x the throughput of
# one job with two threads); JOBS=1 THREADS=1 runs a grid on one core while another grid has the
# other. OVERRIDES adds Hydra overrides to every run; DATA names the
# results directory (default multi30k, the scale's corpus); REUSE_DATA names the results
# directory whose other grids' runs a job may reuse (default DATA: a grid whose OVERRIDES move
# only some of its settings onto another grid's reuses that grid's runs from their folder).
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/python.sh
JOBS=${JOBS:-2}
SCALE=${SCALE:-multi30k}
DATA=${DATA:-multi30k}
REUSE_DATA=${REUSE_DATA:-$DATA}
RESULTS=${RESULTS:-experiments}
read -r -a EXTRA <<< "${OVERRIDES:-}"
THREADS=${THREADS:-$(( JOBS > 1 ? 1 : 2 ))}
[ "$SCALE" = full ] && THREADS=null  # on a GPU the CPU threads are not the budget
if [ -n "${SWEEP:-}" ] && ! [[ $SWEEP =~ ^[A-Za-z][A-Za-z0-9_.-]*$ ]]; then
  # a number would be one of the grid's job directories
  echo "run_real.sh: SWEEP=$SWEEP: expected a name starting with a letter (letters, digits, _ . -), e.g. seed4" >&2
  exit 2
fi
[ $# -gt 0 ] || { echo "usage: run_real.sh EXPERIMENT... (experiments/<name>/config.yaml)" >&2; exit 2; }
for name in "$@"; do
  [ -f "experiments/$name/config.yaml" ] || { echo "run_real.sh: no experiments/$name/config.yaml" >&2; exit 2; }
done

# each grid's size (settings x seeds at this scale), for the passes' "F of J runs finished",
# composed before the clock of MINUTES starts
declare -A jobs
for name in "$@"; do
  jobs[$name]=$("$PY" -c "import sys
from seq2seq_lab.report.grid import axes, compose_experiment, seeds, settings
grid = axes(compose_experiment('$name', '$SCALE'), sys.argv[1:])
print(len(settings(grid)) * max(1, len(seeds(grid))))" "${EXTRA[@]}" 2> /dev/null || echo '?')
done

source experiments/queue.sh
deadline=$(queue_deadline)
for name in "$@"; do
  if [ "$name" != "$1" ] && queue_too_late; then
    echo "run_real.sh: $name not started: less than START_MINUTES=${START_MINUTES:-2} left of MINUTES=$MINUTES" >&2
    continue
  fi
  out="$RESULTS/$name/results/$DATA"
  runs="$out/runs"
  sweep="$runs${SWEEP:+/$SWEEP}"
  # the other grids' runs on this data: a job identical to one of theirs reuses it
  # (seq2seq_lab/record/run_reuse.py) instead of training it again
  # (none where RESULTS does not exist yet: find's failure would end the script, pipefail)
  others=$({ find "$RESULTS" -mindepth 4 -maxdepth 4 -path "*/results/$REUSE_DATA/runs" -type d \
               ! -path "$RESULTS/$name/*" -printf "'%p'\n" 2> /dev/null || true; } | sort | paste -sd, -)
  command=("$PY" -m seq2seq_lab.train -m "experiment=$name" "scale=$SCALE" resume=true
           hydra/launcher=joblib "hydra.launcher.n_jobs=$JOBS" "threads=$THREADS"
           '~callbacks.progress_bar' "reuse_from=[$others]" "${EXTRA[@]}" "hydra.sweep.dir=$sweep")
  if [ -z "${REPORT_ONLY:-}" ]; then
    queue_pass "experiment: $name" "$out" "$sweep" "${jobs[$name]}" "${command[@]}"
  fi
  mkdir -p "$out"
  # the records Hydra and Lightning wrote name this machine's directories: not in a commit
  [ -d "$runs" ] && "$PY" -m seq2seq_lab.record.portable_paths "$runs"
  # finished runs' hypotheses and metrics histories bzip2'd: a committed five-seed grid must
  # stay small enough to travel to a lent GPU (src/seq2seq_lab/record/compressed_outputs.py)
  [ -d "$runs" ] && "$PY" -m seq2seq_lab.record.compressed_outputs "$runs"
  "$PY" -m seq2seq_lab.report "$runs" --out "$out" || echo "run_real.sh: report of $name failed" >&2
done
