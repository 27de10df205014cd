#!/usr/bin/env bash
# Luong's collapse, measured (issue 51, item 3): E1's Luong model (bidirectional LSTM encoder,
# unscaled general score, input feeding) trained 200 updates on Multi30k, then tested greedily
# on the validation set, where the share of attention on the source's last two positions is
# measured (analysis/alignment.py). A seed has collapsed when that mass is over 0.5. Three
# queues, five seeds a setting:
#   multi30k-luong-collapse      E1's Adam (lr 1e-3, gradient norm clipped at 1) x the bridge
#                                on (s_0 = tanh(W_b [->h_S ; <-h_1]), as in E1) and off (s_0 = 0)
#                                x W_m drawn as now (U(+-1/sqrt(Dk)), init_scale 1.0) and ten
#                                times smaller (0.1)
#   multi30k-luong-collapse-sgd  the paper's optimiser (Luong et al. 2015, sec. 4.1: plain SGD
#                                at lr 1.0, gradient norm rescaled at 5), E1's bridge and W_m
#   multi30k-luong-collapse-warmup  E1's Adam with a linear warmup over 400 updates and the
#                                inverse square-root decay after it (schedule=inverse_sqrt, E1's
#                                Transformer's schedule), E1's bridge and W_m, read at 400
#                                updates (the end of the warmup)
# Each a resumable queue (run_real.sh): run again to continue; the table covers all three.
# (Luong's unscaled score named: E1 scales it at multi30k since, families/luong_multi30k.yaml.)
#   bash experiments/e1_attention/luong_collapse.sh           # run or continue, then the table
#   MINUTES=120 JOBS=1 bash experiments/e1_attention/luong_collapse.sh
#   TABLE_ONLY=1 bash experiments/e1_attention/luong_collapse.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/python.sh
study='model=luong model.attention.scaled=false seed=1,2,3,4,5 length_probe=[] decoding_study=none data.split=val decoding@module.test_decoding=greedy'
if [ -z "${TABLE_ONLY:-}" ]; then
  DATA=multi30k-luong-collapse \
  OVERRIDES="$study trainer.max_steps=200"' model.bridge=bridge,zero model.attention.init_scale=1.0,0.1 variant=luong_${model.bridge}_wm${model.attention.init_scale}' \
    bash experiments/run_real.sh e1_attention
  DATA=multi30k-luong-collapse-sgd \
  OVERRIDES="$study trainer.max_steps=200 optim=sgd optim.lr=1.0 trainer.gradient_clip_val=5 variant=luong_sgd" \
    bash experiments/run_real.sh e1_attention
  DATA=multi30k-luong-collapse-warmup \
  OVERRIDES="$study trainer.max_steps=400 schedule=inverse_sqrt warmup_steps=400 variant=luong_warmup" \
    bash experiments/run_real.sh e1_attention
fi
out=experiments/e1_attention/results/multi30k-luong-collapse
"$PY" experiments/e1_attention/luong_collapse.py "$out/runs" "$out-sgd/runs" "$out-warmup/runs" | tee "$out/collapse.md"
