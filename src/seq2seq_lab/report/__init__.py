"""The report generator: runs (results.json + their files) -> one markdown report per comparison.

    python -m seq2seq_lab.report PATH [--out DIR]

Modules, one concept each:

- ``runs``: find run directories under PATH and read what each left behind;
- ``aggregate``: group runs into variants, mean +- std over seeds;
- ``spec``: what a comparison's report needs (roles, contrasts, plots, verdict checks) and the
  verdict rule shared by all;
- ``experiments``: the seven comparisons (E1-E7) as specs, one module each, the one place
  their roles, rules, contrasts and plots live;
- ``significance``: sacrebleu's paired bootstrap test;
- ``plots``: the figures (BLEU by length, loss curves, Transformer diagnostics);
- ``commands``: the sweep command rebuilt from the runs' Hydra overrides;
- ``markdown``: rendering; ``generate``: putting it together.
"""

from seq2seq_lab.report.generate import generate_report

__all__ = ["generate_report"]
