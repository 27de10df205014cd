#!/usr/bin/env bash
# Luong's collapse, measured (issue 51, item 3): E1's Luong model (bidirectional LSTM encoder,
# unscaled general score, input feeding; lr 1e-3) trained 200 updates on Multi30k with
#   the bridge on (s_0 = tanh(W_b [->h_S ; <-h_1]), as in E1) and off (s_0 = 0), x
#   W_m drawn as now (U(+-1/sqrt(Dk)), init_scale 1.0) and ten times smaller (0.1),
# five seeds each, then tested greedily on the validation set, where the share of attention
# on the source's last two positions is measured (analysis/alignment.py). A seed has
# collapsed when that mass is over 0.5. A resumable queue (run_real.sh): run again to continue.
#   bash experiments/e1_attention/luong_collapse.sh           # run or continue, then the table
#   MINUTES=120 JOBS=1 bash experiments/e1_attention/luong_collapse.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/python.sh
if [ -z "${TABLE_ONLY:-}" ]; then
  DATA=multi30k-luong-collapse \
  OVERRIDES='model=luong seed=1,2,3,4,5 model.bridge=bridge,zero model.attention.init_scale=1.0,0.1 trainer.max_steps=200 length_probe=[] data.split=val decoding@module.test_decoding=greedy variant=luong_${model.bridge}_wm${model.attention.init_scale}' \
    bash experiments/run_real.sh e1_attention
fi
out=experiments/e1_attention/results/multi30k-luong-collapse
"$PY" experiments/e1_attention/luong_collapse.py "$out/runs" | tee "$out/collapse.md"
