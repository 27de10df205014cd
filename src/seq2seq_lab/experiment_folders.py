"""Experiment folders: one comparison, one folder, found by name.

A comparison is a folder ``<root>/<name>/`` holding everything that is that comparison::

    config.yaml          experiment=<name>: the Hydra config and its sweep grid (@package _global_)
    variants/<v>.yaml    the config group experiment/<name> (one variant per file), if it has one
    sizes/<scale>.yaml   its sizes at one scale where the families' would not fit its grid
                         (the group experiment_size, option <name>_<scale>), if any
    families/<model>_<scale>.yaml
                         its setting of one model family at one scale, where the comparison
                         needs one the family's own (conf/model_size/) does not make for every
                         comparison (the group experiment_family, option <name>_<model>_<scale>)
    spec.py              the report's ExperimentSpec as ``SPEC`` (published finding, checks)
    README.md, NOTES.md  what it is (a generated block + prose); calibration history
    results/<scale>/     its committed reports

The roots, first match wins: the checkout's ``experiments/``, then each directory listed in
``$SEQ2SEQ_LAB_EXPERIMENTS`` (os.pathsep-separated), so a comparison kept outside the checkout
is found by training (Hydra's search path: ``hydra_plugins/seq2seq_lab_experiments``), by the
report and by the run scripts alike. Adding a comparison is copying a folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from seq2seq_lab.checkout import EXPERIMENTS_DIR

ENV = "SEQ2SEQ_LAB_EXPERIMENTS"
CONFIG = "config.yaml"
VARIANTS = "variants"
SIZES = "sizes"
FAMILIES = "families"
SPEC = "spec.py"
# The Hydra config groups an experiment folder provides
EXPERIMENT_GROUP = "experiment"
SIZE_GROUP = "experiment_size"
FAMILY_GROUP = "experiment_family"
# group -> the folder of an experiment that holds its options (<name>_<file stem>)
PER_EXPERIMENT = {SIZE_GROUP: SIZES, FAMILY_GROUP: FAMILIES}


def roots() -> list[Path]:
    """The directories whose sub-folders are comparisons, in the order they are searched."""
    extra = [Path(p) for p in os.environ.get(ENV, "").split(os.pathsep) if p]
    return [EXPERIMENTS_DIR, *extra]


def folders(root: Path | None = None) -> dict[str, Path]:
    """name -> folder of every comparison (a folder with a config.yaml or a spec.py)."""
    found: dict[str, Path] = {}
    for base in [root] if root else roots():
        if not base.is_dir():
            continue
        for folder in sorted(base.iterdir()):
            if folder.is_dir() and ((folder / CONFIG).is_file() or (folder / SPEC).is_file()):
                found.setdefault(folder.name, folder)
    return found


def experiments() -> list[str]:
    """The names ``experiment=<name>`` accepts: every folder with a config.yaml, sorted."""
    return sorted(name for name, f in folders().items() if (f / CONFIG).is_file())


def folder(name: str) -> Path | None:
    """The folder of comparison ``name``, None when no root has one."""
    return folders().get(name)


def config_file(root: Path, config_path: str) -> Path | None:
    """The file behind a Hydra config path under one root: ``experiment/<name>`` ->
    config.yaml, ``experiment/<name>/<variant>`` -> variants/<variant>.yaml,
    ``experiment_size/<name>_<scale>`` -> sizes/<scale>.yaml,
    ``experiment_family/<name>_<model>_<scale>`` -> families/<model>_<scale>.yaml; None for any
    other path."""
    parts = config_path.removesuffix(".yaml").split("/")
    if parts[0] == EXPERIMENT_GROUP and len(parts) == 2:
        return root / parts[1] / CONFIG
    if parts[0] == EXPERIMENT_GROUP and len(parts) == 3:
        return root / parts[1] / VARIANTS / f"{parts[2]}.yaml"
    if parts[0] in PER_EXPERIMENT and len(parts) == 2:
        for name in folders(root):
            if parts[1].startswith(f"{name}_"):
                file = root / name / PER_EXPERIMENT[parts[0]] / f"{parts[1][len(name) + 1 :]}.yaml"
                if file.is_file():
                    return file
    return None


def group_dir(root: Path, config_path: str) -> Path | None:
    """The directory behind a Hydra group path under one root (``experiment/<name>`` ->
    variants/), None for a path that is no group here. The groups ``experiment``,
    ``experiment_size`` and ``experiment_family`` are the root itself."""
    parts = [p for p in config_path.split("/") if p]
    if not parts or parts == [EXPERIMENT_GROUP] or (len(parts) == 1 and parts[0] in PER_EXPERIMENT):
        return root
    if parts[0] == EXPERIMENT_GROUP and len(parts) == 2:
        return root / parts[1] / VARIANTS
    return None


def options(root: Path, group: str) -> tuple[list[str], list[str]]:
    """(configs, groups) a Hydra group lists under one root."""
    parts = [p for p in group.split("/") if p]
    if not parts:
        return [], [EXPERIMENT_GROUP, *PER_EXPERIMENT]
    if parts == [EXPERIMENT_GROUP]:
        names = folders(root)
        configs = [n for n, f in names.items() if (f / CONFIG).is_file()]
        return configs, [n for n, f in names.items() if (f / VARIANTS).is_dir()]
    if len(parts) == 1 and parts[0] in PER_EXPERIMENT:
        return [
            f"{name}_{file.stem}"
            for name, f in folders(root).items()
            for file in sorted((f / PER_EXPERIMENT[parts[0]]).glob("*.yaml"))
        ], []
    variants = group_dir(root, group)
    if variants is not None and variants.is_dir():
        return [p.stem for p in sorted(variants.glob("*.yaml"))], []
    return [], []
