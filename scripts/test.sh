#!/usr/bin/env bash
# The test command: the whole suite on the CPU (its time on 2 cores: README.md).
#   bash scripts/test.sh [pytest args]
#   TEST_WORKERS=0 bash scripts/test.sh -x tests/test_cli.py   # one process, for a debugger
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${VIRTUAL_ENV:-}" || -n "${CONDA_PREFIX:-}" ]]; then PY=python; else PY=.venv/bin/python; fi
export WANDB_MODE=${WANDB_MODE:-offline} PYTHONHASHSEED=0
# one worker a core (pytest-xdist); a file's tests stay on one worker, so a module's fixture
# (a trained model, a smoke sweep) is made once. TEST_WORKERS=0 runs them in this process.
set +e
"$PY" -m pytest -n "${TEST_WORKERS:-auto}" --dist loadfile "$@"
status=$?
set -e
# pytest exits 5 when it collected no test: that is a broken suite, say so plainly.
if [[ $status -eq 5 ]]; then echo "pytest collected no tests" >&2; exit 1; fi
exit $status
