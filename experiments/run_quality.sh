#!/usr/bin/env bash
# The recurrent quality targets on Multi30k (issue 18: Bahdanau >= 36, Luong >= 34, plain LSTM
# seq2seq >= 20 test2016 BLEU within 30 minutes of training), as a resumable queue:
#   1. search: every candidate of conf/recipe/rnn/ trains 30 minutes with seed 1;
#   2. once every candidate has finished, each family's choice on validation BLEU
#      (python -m seq2seq_lab.report.quality --select) trains again with seeds 2 and 3;
#   3. the report: the quality table and the search (seq2seq_lab/report/quality.py).
#
#   bash experiments/run_quality.sh               # run or continue
#   MINUTES=150 bash experiments/run_quality.sh   # end the call after 150 minutes
#   REPORT_ONLY=1 bash experiments/run_quality.sh
#
# Runs: experiments/recipe_quality/results/xeon/{search,confirm}/<job>/ (committed without
# checkpoints, see .gitignore); report: experiments/recipe_quality/results/xeon/quality.md;
# one line per pass in its wall_time.txt. Two runs side by side with one thread each (JOBS=2),
# as in the multi30k grids: a candidate's 30 minutes are those of one of two jobs on the
# 2-core machine (JOBS=1 THREADS=1 runs one candidate at a time on one core while a grid of
# run_real.sh has the other). A pass cut by MINUTES leaves its runs "interrupted": the next continues them
# from last.ckpt with the wall clock they had left (Lightning's Timer is checkpointed).
# The budget is the wall clock, so every run must train on one kind of CPU: a pass on a machine
# whose CPU (model and instruction sets) is not the finished runs' stops before it starts
# (python -m seq2seq_lab.report.quality --check-cpu); ANY_CPU=1 runs anyway, and the report
# names each run's CPU. On such a machine run an equal-updates grid instead (run_real.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/python.sh
JOBS=${JOBS:-2}
THREADS=${THREADS:-$(( JOBS > 1 ? 1 : 2 ))}
out=${OUT:-experiments/recipe_quality/results/xeon}
read -r -a EXTRA <<< "${OVERRIDES:-}"
candidates=$(find conf/recipe/rnn -name '*.yaml' -printf '%f\n' | sed 's/\.yaml$//' | sort | paste -sd, -)
sweep=("$PY" -m seq2seq_lab.train -m recipe=rnn_multi30k_cpu resume=true hydra/launcher=joblib
       "hydra.launcher.n_jobs=$JOBS" "threads=$THREADS" '~callbacks.progress_bar' "${EXTRA[@]}")

source experiments/queue.sh
deadline=$(queue_deadline)
if [ -z "${REPORT_ONLY:-}" ] && [ -z "${ANY_CPU:-}" ]; then
  "$PY" -m seq2seq_lab.report.quality "$out" --check-cpu || exit 2
fi
if [ -z "${REPORT_ONLY:-}" ]; then
  n=$(tr ',' '\n' <<< "$candidates" | wc -l)
  queue_pass "quality search" "$out" "$out/search" "$n" \
    "${sweep[@]}" "recipe/rnn=$candidates" seed=1 "hydra.sweep.dir=$out/search"
  done_search=$("$PY" -c "from seq2seq_lab.report.runs import find_runs
print(sum(run.finished for run in find_runs('$out/search')[0]))" 2> /dev/null || echo 0)
  if [ "$done_search" -lt "$n" ]; then
    echo "run_quality.sh: search $done_search of $n finished; the confirmation waits for all" >&2
  elif queue_too_late; then
    echo "run_quality.sh: confirmation not started: less than START_MINUTES=${START_MINUTES:-2} left" >&2
  else
    chosen=$("$PY" -m seq2seq_lab.report.quality "$out/search" --select | paste -sd, -)
    queue_pass "quality confirmation" "$out" "$out/confirm" "$(( $(tr ',' '\n' <<< "$chosen" | wc -l) * 2 ))" \
      "${sweep[@]}" "recipe/rnn=$chosen" seed=2,3 "hydra.sweep.dir=$out/confirm"
  fi
fi
# the records Hydra and Lightning wrote name this machine's directories: not in a commit
"$PY" -m seq2seq_lab.record.portable_paths "$out"
"$PY" -m seq2seq_lab.report.quality "$out" --out "$out"
