# One pass of a resumable sweep, ended cleanly at a deadline, and the hand-off between a
# script's stages: sourced by run_real.sh, run_quality.sh and the scripts that chain several
# run_real.sh calls (run_synthetic_v2.sh, e1_attention/luong_recipe.sh); not run on its own.
#
#   queue_pass LABEL OUT RUNS JOBS COMMAND...
#
# runs COMMAND (a `-m` sweep with resume=true into RUNS), under `timeout` when $deadline (epoch
# seconds) is set, then appends one line to OUT/wall_time.txt (its first line names LABEL):
# when, seconds, runs finished (the report's rule, seq2seq_lab/report/runs.py) of JOBS, exit
# status, CPU, GPU, command. A grid whose JOBS runs had all finished gets no pass (nothing to
# train, and no line that would count as one), unless its wall-clock cap ended one of them: a
# pass continues such a run where the command now raises the cap (record/run_dir.py).
# Reads $PY and $deadline; sets $pass_status.
queue_pass() {
  local label=$1 out=$2 runs=$3 jobs=$4
  shift 4
  local start end pid limit=() finished cpu gpu
  pass_status=0
  if [[ $jobs =~ ^[0-9]+$ ]] && [ "$(queue_finished "$runs" settled)" = "$jobs" ]; then
    echo "$label: all $jobs runs finished before, no pass -> $out"
    return 0
  fi
  start=$(date +%s)
  if [ -n "${deadline:-}" ]; then
    limit=(timeout --signal=TERM --kill-after=120 "$(( deadline - start ))s")
  fi
  # a failed job (or the time limit) fails the sweep: the report still shows the rest
  "${limit[@]}" "$@" &
  pid=$!
  wait "$pid" || pass_status=$?
  if [ -n "${deadline:-}" ]; then
    # timeout signals its whole process group (the launcher's workers too) and returns once
    # the launcher has exited: give each started run up to a minute to write its record,
    # then end the idle workers left in the group
    local started recorded
    for _ in $(seq 60); do
      [ -d "$runs" ] || break  # cut before the sweep made its directory: nothing started
      started=$(find "$runs" -mindepth 2 -maxdepth 2 \( -name csv -o -name checkpoints \) -printf '%h\n' 2> /dev/null | sort -u | wc -l)
      recorded=$(find "$runs" -mindepth 2 -maxdepth 2 -name results.json 2> /dev/null | wc -l)
      [ "$recorded" -ge "$started" ] && break
      sleep 1
    done
    pkill -KILL -g "$pid" 2> /dev/null || true
  fi
  end=$(date +%s)
  finished=$(queue_finished "$runs")
  cpu=$("$PY" -m seq2seq_lab.record.environment 2> /dev/null || echo '?')
  gpu=$(command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || echo none)
  mkdir -p "$out"
  [ -f "$out/wall_time.txt" ] \
    || echo "$label (resumable queue: one line per pass; the wall time is the time they cover)" > "$out/wall_time.txt"
  echo "pass: finished $(date -u +%Y-%m-%dT%H:%M:%SZ), wall_seconds: $(( end - start )), runs finished: $finished of $jobs, exit: $pass_status, cpu: $cpu, gpu: $gpu, command: $*" >> "$out/wall_time.txt"
  echo "$label: pass took $(( (end - start) / 60 )) min, $finished of $jobs runs finished -> $out"
}

# queue_finished RUNS [settled]: how many of the sweep's jobs (RUNS/<job>/, not the runs of
# another sweep inside RUNS: run_real.sh's SWEEP) have finished (the report's rule), '?'
# where none can be read; with "settled", not counting those the wall clock ended
# (trainer.max_time)
queue_finished() {
  "$PY" -c "import sys
from pathlib import Path
from seq2seq_lab.report.runs import find_runs
root, settled = Path(sys.argv[1]), sys.argv[2:] == ['settled']
print(sum(run.finished and not (settled and run.stopped_by == 'trainer.max_time')
          for run in find_runs(root)[0] if run.path.parent == root))" "$1" "${2:-}" 2> /dev/null || echo '?'
}

# The epoch second at which MINUTES (the whole call's budget, may be fractional) runs out, or
# nothing without MINUTES.
queue_deadline() {
  [ -n "${MINUTES:-}" ] && echo $(( $(date +%s) + $(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }') ))
  return 0
}

# Whether under START_MINUTES (default 2, may be fractional) are left before $deadline (never
# without one): what is too little to begin another stage of the queue.
queue_too_late() {
  [ -n "${deadline:-}" ] \
    && [ $(( deadline - $(date +%s) )) -lt "$(awk -v m="${START_MINUTES:-2}" 'BEGIN { printf "%d", m * 60 }')" ]
}

# Hand-off between a script's stages: with under START_MINUTES left before $deadline, says on
# stderr that STAGE is not started (SCRIPT names the caller) and returns 1; otherwise exports
# MINUTES as what is left of the call's budget (unchanged without a deadline), so the next
# stage's run_real.sh ends at the same deadline, and returns 0.
#   queue_next_stage run_synthetic_v2.sh synthetic_v2-8k || exit 0
queue_next_stage() {
  if queue_too_late; then
    echo "$1: $2 not started: less than START_MINUTES=${START_MINUTES:-2} left of MINUTES=$MINUTES" >&2
    return 1
  fi
  [ -z "${deadline:-}" ] \
    || export MINUTES=$(awk -v s=$(( deadline - $(date +%s) )) 'BEGIN { printf "%.2f", s / 60 }')
  return 0
}
