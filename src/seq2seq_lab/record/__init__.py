"""The run record: what a run leaves in its directory and how it is written and read.

``results`` (results.json, atomic), ``portable_paths`` (no directory of the machine in a
record), ``run_dir`` (one run, one directory; continuing a resumable queue), ``run_reuse``
(a finished identical run adopted instead of trained again), ``interruptions`` (a signal is a
recorded result), ``atomic`` (files written whole or not at all), ``environment`` (hardware and
versions a run records), ``flat_config`` (a config as flat dotted keys).
"""
