#!/usr/bin/env bash
# One-command set-up: a virtual environment with seq2seq-lab and everything it needs.
#
#   bash scripts/setup.sh            # creates .venv (or uses the active venv/conda env)
#
# torch: if the environment already has torch (e.g. a CUDA build), it is kept; otherwise the
# CPU wheel torch==2.13.0 is installed (without the pin pip would pull a multi-GB CUDA build).
# Extras: EXTRAS="dev,sweeps,hf,wandb" by default; set EXTRAS= to install the bare package.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${VIRTUAL_ENV:-}" || -n "${CONDA_PREFIX:-}" ]]; then
  PY=python
  echo "Using the active environment: $(command -v python)"
else
  PYTHON=${PYTHON:-python3}
  if [[ ! -x .venv/bin/python ]]; then
    echo "Creating .venv with $($PYTHON --version)"
    "$PYTHON" -m venv .venv
  fi
  PY=.venv/bin/python
fi

"$PY" -m pip install --quiet --upgrade pip
if "$PY" -c "import torch" 2>/dev/null; then
  echo "Keeping installed torch $("$PY" -c 'import torch; print(torch.__version__)')"
else
  echo "Installing torch==2.13.0 (CPU)"
  "$PY" -m pip install --quiet torch==2.13.0
fi
EXTRAS=${EXTRAS-dev,sweeps,hf,wandb}
"$PY" -m pip install --quiet -e ".${EXTRAS:+[$EXTRAS]}"
"$PY" -c "import seq2seq_lab, torch, lightning; print('seq2seq-lab', seq2seq_lab.__version__, '| torch', torch.__version__, '| lightning', lightning.__version__)"
