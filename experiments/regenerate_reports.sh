#!/usr/bin/env bash
# Regenerate every committed report from the committed runs, under the current verdict rules
# (no training): a results folder with a runs/ directory is reported from it; one without
# (its runs were not committed) from each report's runs.csv, at the scale its verdict.json
# records. Then the README tables.
#   bash experiments/regenerate_reports.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
for folder in experiments/*/results/*/; do
  folder=${folder%/}
  if [[ -d $folder/runs ]]; then
    "$PY" -m seq2seq_lab.report "$folder/runs" --out "$folder"
  else
    for table in "$folder"/*/runs.csv; do
      [[ -f $table ]] || continue
      scale=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["scale"])' \
        "$(dirname "$table")/verdict.json")
      "$PY" -m seq2seq_lab.report "$table" --scale "$scale" --out "$folder"
    done
  fi
done
"$PY" -m seq2seq_lab.report.readmes
