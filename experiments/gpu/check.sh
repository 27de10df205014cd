#!/usr/bin/env bash
# Everything a lent GPU should check and measure, in one call of at most ten minutes
# (experiments/gpu/README.md). The steps run in this order, each under its own time limit, and
# each writes its own result file under OUT as soon as it ends, so a call cut short keeps what
# finished:
#   facts         facts.json         GPU model, driver, torch, CUDA, bf16 support
#   tests         tests.json         pytest -m cuda: the equivalence tests, on the GPU
#   throughput    throughput.json    ours vs plain torch.nn.Transformer, fp32 and bf16-mixed,
#                                    target tokens/s, GPU utilisation sampled by nvidia-smi
#   time_to_bleu  time_to_bleu.json  the Transformer recipe on Multi30k, greedy test2016 BLEU
#                                    every 30 s of training clock, seconds to 35 and 38 BLEU
#   grid          grid.json          a real-data grid at the multi30k scale (GRID_EXPERIMENT,
#                 grid.tar.gz        default E4's; GRID_OVERRIDES added to its runs), jobs side
#                                    by side on the one GPU, for the time left (runs and
#                                    report, without checkpoints)
# and summary.txt, the table printed at the end; check.log is the whole console.
#
#   bash experiments/gpu/check.sh prepare        # here, before: data and wheels into the checkout
#   bash experiments/gpu/check.sh --out "$OUT"   # on the GPU machine (one `run` call)
#   bash experiments/gpu/check.sh --dry-run --out DIR   # every step at a toy size on the CPU
#   STEPS=grid bash experiments/gpu/check.sh --out "$OUT"  # only some steps (comma-separated)
#   STEPS=grid GRID_EXPERIMENT=e1_attention GRID_OVERRIDES=updates.multi30k=4000 \
#     bash experiments/gpu/check.sh --out "$OUT"          # another comparison's grid
#
# A failed step is recorded as failed and the next one starts: `set -e` stops nothing inside a
# step, whose status is read explicitly.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD

mode=run
OUT=${OUT:-$REPO/.gpu_out}
while [ $# -gt 0 ]; do
  case $1 in
    prepare) mode=prepare ;;
    --dry-run) mode=dry ;;
    --out) OUT=$2; shift ;;
    *) echo "usage: check.sh [prepare | --dry-run] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done

started=$(date +%s)  # the budget counts the set-up below too
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHON

if [ "$mode" = prepare ]; then
  # The device machine receives only the checkout (64 MiB at most) and reaches no network:
  # the corpus and the Hydra wheels travel in ignored folders named in the call's carry.
  shared=${SHARED:-$REPO/../shared}
  mkdir -p .gpu_data/multi30k .whl
  cp "$shared"/data/multi30k/{train,val,test2016}.{de,en} .gpu_data/multi30k/
  cp "$shared"/device-wheels/*.whl .whl/
  # pytest has no wheel there: its pure-Python packages, copied from this interpreter
  mkdir -p .whl/site
  site=$("$PYTHON" -c "import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))")
  for pkg in pytest _pytest pluggy iniconfig packaging py.py; do
    if [ -e "$site/$pkg" ]; then cp -r "$site/$pkg" .whl/site/; fi
  done
  find .whl/site -name __pycache__ -prune -exec rm -rf {} +
  du -sh .gpu_data .whl
  exit 0
fi

# Everything lands under OUT, of which only 8 files, 16 MiB each, come back: the step files,
# the grid's tarball, summary.txt and check.log; scratch goes to WORK beside it.
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")}
mkdir -p "$WORK"
exec > >(tee -a "$OUT/check.log") 2>&1

# The device machine's Python has torch and Lightning but not Hydra nor pytest: install the
# carried wheels into a private folder, never from the network. Here, the project's venv has
# them.
if ! "$PYTHON" -c "import hydra, omegaconf" 2> /dev/null; then
  if ls .whl/*.whl > /dev/null 2>&1; then
    # a failed install fails the steps that need Hydra, each recorded; facts still runs
    "$PYTHON" -m pip install -q --no-index --no-deps --target "$WORK/site" .whl/*.whl \
      || echo "check.sh: installing .whl/ failed" >&2
    export PYTHONPATH="$WORK/site:$REPO/src${PYTHONPATH:+:$PYTHONPATH}"
  else
    echo "check.sh: no Hydra and no .whl/ (run 'check.sh prepare' before the call)" >&2
  fi
fi
if ! "$PYTHON" -c "import pytest" 2> /dev/null && [ -d .whl/site ]; then
  export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$REPO/.whl/site"
fi
"$PYTHON" -c "import seq2seq_lab" 2> /dev/null || export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"
export WANDB_MODE=disabled  # W&B is not installed there, and nothing may go out
# the carried corpus, else the shared copy beside the checkout (scale=multi30k reads this too)
DATA_ROOT=$REPO/.gpu_data/multi30k
[ -f "$DATA_ROOT/train.de" ] || DATA_ROOT=$(cd "$REPO/.." && pwd)/shared/data/multi30k
export SEQ2SEQ_LAB_MULTI30K=$DATA_ROOT
SMI=${NVIDIA_SMI:-nvidia-smi}  # a test replaces it with a fake that answers as a GPU would

# The call's limit is 600 s including the transfer back: the steps share BUDGET seconds, each
# capped (a slow step must not eat the next ones) and each cut at what is left of BUDGET less
# RESERVE, which the summary and the grid's tarball need.
GRID_EXPERIMENT=${GRID_EXPERIMENT:-e4_norm_warmup}
if [ "$mode" = dry ]; then
  # it checks the steps, not their time: caps a loaded CPU (a test suite beside it) stays within
  BUDGET=${BUDGET:-900}; ACC=cpu; THREADS=1
  TESTS_CAP=180; THROUGHPUT_CAP=180; BLEU_CAP=180
  # toy sizes: the first pairs of each split, 1 s of training per system, one thread
  # two of the marked tests' files only: collecting all of tests/ takes longer than they run
  TESTS_ARGS=(-k "cached_steps_equal_uncached and pre or beam_size_one_equals_greedy"
              tests/test_transformer_network.py tests/test_decoding.py)
  THROUGHPUT_ARGS=(--systems ours-transformer-bf16,torch-transformer-bf16 --rounds 1
                   --seconds 1 --first-pairs 8)
  # a target of 0 BLEU: the first mark reaches it, so the dry run takes the stopping path
  BLEU_MINUTES=0.005,0.3; BLEU_STOP=0; BLEU_ARGS=(--first-pairs 8)
  # E4's grid cut to one setting; another comparison's whole grid at smoke
  dry_cut=""
  [ "$GRID_EXPERIMENT" = e4_norm_warmup ] \
    && dry_cut="model.norm=pre schedule.linear_warmup=true optim.lr=1e-3 model.encoder_layers=1 "
  GRID=(SCALE=smoke DATA=gpu-dry-run JOBS=1 THREADS=1
        "OVERRIDES=${dry_cut}trainer.accelerator=cpu${GRID_OVERRIDES:+ $GRID_OVERRIDES}")
  GRID_RESULTS=$WORK/experiments
else
  BUDGET=${BUDGET:-560}; ACC=gpu; THREADS=4  # CPU threads feed the GPU: 16 cores there
  TESTS_CAP=${TESTS_CAP:-180}; THROUGHPUT_CAP=${THROUGHPUT_CAP:-150}; BLEU_CAP=${BLEU_CAP:-230}
  # only the files that hold marked tests: the device machine lacks scipy, which a third of
  # tests/ imports (the report), and one module failing to import stops a whole collection
  mapfile -t TESTS_ARGS < <(grep -l 'pytest.mark.cuda' tests/test_*.py)
  # 10 s per system after its start-up (~20 s: data, model, CUDA context): the loop's rate
  # settles within seconds on a GPU, and the four runs must leave time for the later steps
  THROUGHPUT_ARGS=(--systems ours-transformer,torch-transformer,ours-transformer-bf16,torch-transformer-bf16
                   --rounds 1 --seconds "${THROUGHPUT_SECONDS:-10}")
  # a mark every 30 s of training clock, each scored by its own eval process (~15 s) while
  # training goes on, which stops at 38 BLEU: 2.5 min of training, start-up and the last
  # mark's eval fit BLEU_CAP
  BLEU_MINUTES=${BLEU_MINUTES:-0.5,1,1.5,2,2.5}; BLEU_STOP=${BLEU_STOP:-38}; BLEU_ARGS=()
  # the real-data grid at its multi30k scale, into its own results folder beside the CPU
  # grid's (experiments/<name>/results/multi30k-gpu/): GPU runs are not CPU runs
  GRID=(SCALE=multi30k DATA=multi30k-gpu "JOBS=${GRID_JOBS:-6}" THREADS=1
        "OVERRIDES=trainer.accelerator=gpu${GRID_OVERRIDES:+ $GRID_OVERRIDES}")
  GRID_RESULTS=$REPO/experiments
fi
RESERVE=${RESERVE:-20}
STEPS=${STEPS:-facts,tests,throughput,time_to_bleu,grid}

left() { echo $(( BUDGET - RESERVE - ($(date +%s) - started) )); }
wanted() { [[ ",$STEPS," == *",$1,"* ]]; }

# run_step NAME CAP COMMAND...: COMMAND under min(CAP, time left) seconds, its console in
# WORK/NAME.log; sets $rc, $seconds and $limit for the step's record
run_step() {
  local name=$1 cap=$2
  shift 2
  limit=$(left)
  [ "$limit" -gt "$cap" ] && limit=$cap
  echo "== $name (at most ${limit} s): $*"
  local t0
  t0=$(date +%s)
  rc=0
  timeout --signal=TERM --kill-after=10 "${limit}s" "$@" > "$WORK/$name.log" 2>&1 || rc=$?
  seconds=$(( $(date +%s) - t0 ))
  tail -n 5 "$WORK/$name.log" || true
}

record() { "$PYTHON" experiments/gpu/record.py step "$OUT" "$@" || echo "check.sh: record of $1 failed" >&2; }

# too little time left to start a step: say so in its file instead of starting it
too_late() {
  local name=$1 need=$2
  if [ "$(left)" -lt "$need" ]; then
    record "$name" --rc 1 --skipped "$(left) s left of BUDGET=$BUDGET"
    return 0
  fi
  return 1
}

# a. facts
if wanted facts; then
  run_step facts 30 "$PYTHON" experiments/gpu/record.py facts "$OUT" --smi "$SMI" \
    --repo "$REPO" --work "$WORK"
  [ "$rc" -eq 0 ] || record facts --rc "$rc" --seconds "$seconds" --limit "$limit" --log "$WORK/facts.log"
fi

# b. the equivalence tests, on the GPU where there is one (tests/conftest.py: device)
if wanted tests && ! too_late tests 20; then
  run_step tests "$TESTS_CAP" "$PYTHON" -m pytest -m cuda -p no:cacheprovider \
    --continue-on-collection-errors "${TESTS_ARGS[@]}"
  record tests --rc "$rc" --seconds "$seconds" --limit "$limit" --log "$WORK/tests.log"
fi

# c. throughput, with nvidia-smi sampling the GPU twice a second while the systems train
if wanted throughput && ! too_late throughput 30; then
  smi_pid=
  if command -v "$SMI" > /dev/null; then
    "$SMI" --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 \
      > "$WORK/smi.csv" 2> /dev/null &
    smi_pid=$!
  fi
  run_step throughput "$THROUGHPUT_CAP" "$PYTHON" experiments/benchmarks/throughput_vs_peers.py \
    --accelerator "$ACC" --threads "$THREADS" --root "$DATA_ROOT" --work "$WORK/throughput" \
    --out "$WORK/throughput" "${THROUGHPUT_ARGS[@]}"
  if [ -n "$smi_pid" ]; then kill "$smi_pid" 2> /dev/null || true; wait "$smi_pid" 2> /dev/null || true; fi
  record throughput --rc "$rc" --seconds "$seconds" --limit "$limit" --log "$WORK/throughput.log" \
    --result "$WORK/throughput/throughput.json" --smi "$WORK/smi.csv"
fi

# d. time to BLEU: ours only (the plain-torch reference's time to BLEU is the CPU benchmark's)
if wanted time_to_bleu && ! too_late time_to_bleu 30; then
  run_step time_to_bleu "$BLEU_CAP" "$PYTHON" experiments/benchmarks/time_to_bleu.py \
    --systems ours --accelerator "$ACC" --threads "$THREADS" --root "$DATA_ROOT" --minutes "$BLEU_MINUTES" \
    --beam-minutes '' --target 38 --stop-at "$BLEU_STOP" --work "$WORK/ttb" --out "$WORK/ttb" \
    "${BLEU_ARGS[@]}"
  record time_to_bleu --rc "$rc" --seconds "$seconds" --limit "$limit" \
    --log "$WORK/time_to_bleu.log" --result "$WORK/ttb/time_to_bleu.json" --targets 35,38
fi

# e. the grid (GRID_EXPERIMENT) for the time left: run_real.sh's resumable queue, its MINUTES the time left
# (it ends the runs cleanly, records them "interrupted" and writes the report of the rest)
if wanted grid && ! too_late grid 90; then
  # run_real.sh's deadline 45 s before the step's: after it, the runs get SIGTERM and up to a
  # minute to record themselves (queue.sh), most take seconds; the report comes after
  minutes=$(awk -v s="$(( $(left) - 45 ))" 'BEGIN { printf "%.2f", s / 60 }')
  data=$(printf '%s\n' "${GRID[@]}" | sed -n 's/^DATA=//p')
  grid_out=$GRID_RESULTS/$GRID_EXPERIMENT/results/$data
  mkdir -p "$GRID_RESULTS"  # run_real.sh looks for the other grids' runs under it
  run_step grid $(( $(left) )) env "${GRID[@]}" "MINUTES=$minutes" "RESULTS=$GRID_RESULTS" \
    START_MINUTES=0 bash experiments/run_real.sh "$GRID_EXPERIMENT"
  # the runs and their report travel back as one file: no checkpoints (too big to come back)
  # nor figures (regenerate_reports.sh draws them again from the runs)
  if [ -d "$grid_out" ]; then
    tar -czf "$OUT/grid.tar.gz" --exclude='*.ckpt' --exclude='*.png' \
      -C "$GRID_RESULTS" "$GRID_EXPERIMENT/results/$data" || rc=$?
  fi
  record grid --rc "$rc" --seconds "$seconds" --limit "$limit" --log "$WORK/grid.log" \
    --runs "$grid_out/runs"
fi

echo "== summary ($(( $(date +%s) - started )) s; files in $OUT)"
"$PYTHON" experiments/gpu/record.py summary "$OUT"
