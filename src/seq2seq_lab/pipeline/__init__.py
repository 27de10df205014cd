"""What train, eval and translate do, given a composed config (the entry points
``seq2seq_lab.train``, ``eval`` and ``translate`` only parse configs).

``training.train``: data -> model -> Lightning fit -> test of the best checkpoint ->
results.json. Every run ends with a results.json in its directory, whatever happened:
"completed", "diverged" (a recorded result, exit code 0, the sweep goes on), "failed" (with the
error) or "interrupted" (by a signal, named; exit code 128 + its number). A run has a directory
of its own (``record.run_dir``); under DDP only global rank zero writes the run's files.
``evaluation.evaluate`` scores a checkpoint on a split; ``translation.translate`` translates
lines. ``building``: what the three build from a config.
"""
