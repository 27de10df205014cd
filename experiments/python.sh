# The interpreter the experiment scripts run: $PYTHON if set, else the project's .venv (made by
# scripts/setup.sh), else `python`. Sourced by run_cpu.sh, run_real.sh, run_synthetic_v2.sh,
# e1_attention/run_europarl_long.sh and run_quality.sh; sets $PY and stops the script before
# any pass when that interpreter cannot import seq2seq_lab, so a fresh clone without setup
# records no empty pass.
PY=${PYTHON:-python}
[ -x .venv/bin/python ] && PY=${PYTHON:-.venv/bin/python}
"$PY" -c "import seq2seq_lab" 2> /dev/null || {
  echo "$(basename "$0"): $PY cannot import seq2seq_lab: run bash scripts/setup.sh first (or set PYTHON)" >&2
  exit 2
}
