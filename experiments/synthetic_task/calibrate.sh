#!/usr/bin/env bash
# Calibration runs of the synthetic task (docs/synthetic_task.md): each model of MODELS trained
# on the task as configured (OVERRIDES may change a lever: data.source.nouns=300 ...), one seed,
# UPDATES updates with a validation every 200, within the scale's wall-clock cap per run
# (cpu_run_minutes; CAP_MINUTES raises it), then the test-sampling table of test_sampling.py.
# Runs go to OUT/<model>/ (default multirun/synthetic_task/<time>); their results.json are
# what docs/synthetic_task.md quotes.
#   bash experiments/synthetic_task/calibrate.sh
#   MODELS="transformer" UPDATES=4000 OVERRIDES="data.source.nouns=300" bash experiments/synthetic_task/calibrate.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/python.sh
MODELS=${MODELS:-transformer bahdanau}
UPDATES=${UPDATES:-4000}
OUT=${OUT:-multirun/synthetic_task/$(date +%Y-%m-%d_%H-%M-%S)}
read -r -a EXTRA <<< "${OVERRIDES:-}"
CAP=()
[ -n "${CAP_MINUTES:-}" ] && CAP=("cpu_run_minutes=$CAP_MINUTES")
for model in $MODELS; do
  "$PY" -m seq2seq_lab.train "model=$model" seed=1 "trainer.max_steps=$UPDATES" val_every=200 \
    threads=1 '~callbacks.progress_bar' "${CAP[@]}" "${EXTRA[@]}" "hydra.run.dir=$OUT/$model"
done
"$PY" experiments/synthetic_task/test_sampling.py "$OUT"/*
