#!/usr/bin/env bash
# The test command: the whole suite on the CPU (its time on 2 cores: README.md).
#   bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${VIRTUAL_ENV:-}" || -n "${CONDA_PREFIX:-}" ]]; then PY=python; else PY=.venv/bin/python; fi
export WANDB_MODE=${WANDB_MODE:-offline} PYTHONHASHSEED=0
set +e
"$PY" -m pytest "$@"
status=$?
set -e
# pytest exits 5 when it collected no test: that is a broken suite, say so plainly.
if [[ $status -eq 5 ]]; then echo "pytest collected no tests" >&2; exit 1; fi
exit $status
