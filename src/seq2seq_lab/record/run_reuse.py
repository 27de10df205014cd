"""A resumable queue never trains one configuration twice: it reuses another grid's identical run.

Grids share settings: at multi30k E2's reversed plain seq2seq and forward Bahdanau are E1's
runs under other labels. Two jobs train the same model when their
*training identity* is equal,

    identity(job) = job's resolved config restricted to :data:`TRAINING`, paths made portable

(seed, data, model, optimiser, schedule, module, trainer, callbacks, threads: what sets the
weights, the test decoding included). Labels (``experiment_name``, ``variant``, ``tags``),
where things are written (``paths``, ``logger``) and each experiment's per-scale tables
(``updates``, ``e4_lrs``: their values are resolved into ``trainer`` and ``optim``) are not part
of it. With ``deterministic=true`` on the CPU such a job would reproduce the other run's numbers
(up to the kernels of another CPU, as a run resumed on another machine), so training it again
only costs time.

A queue job (``resume=true``) with nothing in its directory looks through ``reuse_from`` (job
directories of other sweeps, ``DIR/*/results.json``) for a finished run with its identity that
was tested when this job tests and ran every length-probe join this job asks for. The first
found (in path order) is *adopted*: its record becomes this job's results.json, relabelled with
this job's experiment, variant, overrides and config, with ``reused_from`` naming the source;
its test outputs, csv history and analysis files are copied (checkpoints are not: they stay in
the source run, ``reused_from.run`` says where; a length probe the job does not ask for is
left out). The report says which runs were reused.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

from seq2seq_lab.added_settings import before, keys_with_before
from seq2seq_lab.analysis.decoding_study_record import STUDY
from seq2seq_lab.analysis.length_probe import PROBE
from seq2seq_lab.config import to_plain
from seq2seq_lab.record.portable_paths import portable_path, portable_record
from seq2seq_lab.record.results import FINISHED, read_results

# The key naming where a queue job looks for an identical run. run_real.sh lists the other
# grids that exist at each pass, so it grows between passes of one grid; it never changes a
# run (an adopted run is the run this job would train), so reports neither count it as a
# setting nor sweep over it.
POOLS_KEY = "reuse_from"
# The config keys that decide the trained weights and their test score.
TRAINING = (
    "seed",
    "deterministic",
    "threads",
    "data",
    "model",
    "optim",
    "schedule",
    "module",
    "trainer",
    "callbacks",
)
# Settings inside those keys that decide what a run draws, never its weights or test score:
# the attention heatmaps' sentences, under the names runs have recorded them by.
DRAWING = (
    ("callbacks", "attention_plots"),
    ("module", "attention_plots"),
    ("callbacks", "diagnostics", "attention_sentences"),
)
# Keys a config gained or lost after runs were recorded, each with the value that does what
# its absence did (added_settings.before): a recorded run without the key, or with it at that
# value, is the same job.
NEUTRAL: dict[tuple[str, ...], Any] = {
    tuple(key.split(".")): before(key) for key in keys_with_before()
}
# The source run's files an adopted run leaves out: its own Hydra record and log are the job's,
# checkpoints stay where they are (hundreds of MB), abandoned/ is not part of the run.
NOT_COPIED = frozenset({"results.json", ".hydra", "train.log", "checkpoints", "abandoned"})


def training_identity(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a run's (portable, resolved) config that decides its weights and test score:
    the :data:`TRAINING` keys without the :data:`DRAWING` settings, and without each
    :data:`NEUTRAL` key at its neutral value."""
    identity = copy.deepcopy({key: config.get(key) for key in TRAINING})
    for path in DRAWING:
        _drop(identity, path, lambda value: True)
    for path, neutral in NEUTRAL.items():
        _drop(identity, path, lambda value, neutral=neutral: value == neutral)
    return identity


def _drop(config: dict[str, Any], path: tuple[str, ...], when: Any) -> None:
    """Remove the key at ``path`` from the nested ``config`` if it is there and ``when(value)``."""
    *parents, leaf = path
    node: Any = config
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict) and leaf in node and when(node[leaf]):
        del node[leaf]


def job_identity(cfg: Any, run_dir: Path) -> dict[str, Any]:
    """A job's training identity, from its config as its results.json will record it
    (resolved, paths portable)."""
    config = portable_record({"config": to_plain(cfg)}, run_dir=run_dir.absolute())["config"]
    return training_identity(config)


def _covers(record: dict[str, Any], cfg: Any) -> bool:
    """Whether the finished run measured everything this job would: the test (when the job
    tests), every length-probe join the job asks for, and its decoding study with the same
    settings."""
    if cfg.get("test") and "test" not in record:
        return False
    study = to_plain(cfg.get(STUDY))
    if study and (STUDY not in record or (record.get("config") or {}).get(STUDY) != study):
        return False
    wanted = set(to_plain(cfg.get(PROBE)) or [])
    done = set((record.get("config") or {}).get(PROBE) or [])
    return wanted <= done and (not wanted or PROBE in record)


def find_identical(cfg: Any, run_dir: Path, pools: list[str | Path]) -> Path | None:
    """The first finished run under ``pools`` (``POOL/*/results.json``) whose training identity
    equals this job's and that measured what the job would (:func:`_covers`); None if there is
    none. ``run_dir`` itself is never a candidate."""
    ours = job_identity(cfg, run_dir)
    for pool in pools:
        for path in sorted(Path(pool).glob("*/results.json")):
            source = path.parent
            if source.resolve() == run_dir.resolve():
                continue
            record = read_results(path)
            if record.get("status") not in FINISHED or not _covers(record, cfg):
                continue
            if training_identity(record.get("config") or {}) == ours:
                return source
    return None


def adopt(source: Path, run_dir: Path, job: dict[str, Any]) -> dict[str, Any]:
    """Make the finished run in ``source`` this job's run in ``run_dir``: returns its record
    relabelled with the job's fields ``job`` (experiment, variant, seed, run_dir, scale,
    overrides, config) and ``reused_from``; copies its files but :data:`NOT_COPIED`. What
    the job does not ask for is left out, so the record is the one training it would write: a
    length probe (record and ``length_probe/``) or decoding study (record and
    ``decoding_study/``) the job's config does not list. The caller
    writes the record (results.write_results)."""
    record = read_results(source / "results.json")
    origin = {
        "run": portable_path(str(source.absolute())),
        "experiment": record.get("experiment"),
        "variant": record.get("variant"),
    }
    skipped = set(NOT_COPIED)
    for measured in (PROBE, STUDY):
        if not (job.get("config") or {}).get(measured):
            skipped.add(measured)
            record.pop(measured, None)
    run_dir.mkdir(parents=True, exist_ok=True)
    for item in sorted(source.iterdir()):
        if item.name in skipped:
            continue
        if item.is_dir():
            shutil.copytree(item, run_dir / item.name, dirs_exist_ok=True)
        else:
            shutil.copy2(item, run_dir / item.name)
    return {**record, **job, "reused_from": origin}
