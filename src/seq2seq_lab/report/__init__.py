"""The report generator: runs (results.json + their files) -> one markdown report per comparison.

    python -m seq2seq_lab.report PATH [--out DIR]

Computing (no file written, no text laid out):

- ``runs``: find run directories under PATH and read what each left behind;
- ``aggregate``: group runs into variants, mean +- std over seeds;
- ``spec``: what a comparison's report needs (roles, contrasts, plots, quality floor, verdict
  checks) and the verdict rule shared by all, with its evidence gates (seeds, grid, floor);
- ``experiments``: the seven comparisons (E1-E7) as specs, one module each, the one place
  their published finding, expectation, checks and thresholds, roles and plots live;
- ``evidence``: the across-seed test of a difference between two variants (seed variance plus
  test-set sampling) that every check reads;
- ``commands``: the sweep command rebuilt from the runs' Hydra overrides;
- ``grid``: an experiment's sweep grid read from its composed Hydra config;
- ``assessment``: all of the above for one experiment's runs.

Rendering (reads an assessment, computes nothing):

- ``markdown``: report.md and the index; ``plots`` and ``figures``: the PNGs beside them;
- ``generate``: writes every experiment's report, figures and runs.csv;
- ``readmes``: the generated block of each experiments/<name>/README.md, from the spec and
  the composed experiment config (``python -m seq2seq_lab.report.readmes``).
"""

from seq2seq_lab.report.generate import generate_report

__all__ = ["generate_report"]
