"""What ``--help`` lists (conf/hydra/help/seq2seq_lab.yaml): the options of each config group,
without the internal ``_`` bases, and the experiments with their titles, one line each.

Hydra's help template is read from the config, so ``${help_text:groups}`` and
``${help_text:experiments}`` in it are filled in by the resolver registered here when Hydra
prints the help, from the config search path Hydra composed it with.
"""

from __future__ import annotations

import ast
from pathlib import Path

from omegaconf import OmegaConf

from seq2seq_lab import experiment_folders
from seq2seq_lab.command_line import INTERNAL

# Not listed as groups: those chosen from other choices (``${model}_${scale}``), never by hand;
# Hydra's root group; the experiments (listed with their titles) and their variants
HIDDEN = ("model_size", "data_size", "experiment_size", "experiment_family", "hydra", "experiment")


def experiment_title(folder: Path) -> str:
    """A comparison's title: ``SPEC.title`` in its spec.py (read, not imported: importing a
    spec imports the report), else the first comment of its config.yaml that is not a Hydra
    header; "" if neither has one."""
    spec = folder / experiment_folders.SPEC
    if spec.is_file():
        for node in ast.walk(ast.parse(spec.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "title":
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    return node.value.value
    config = folder / experiment_folders.CONFIG
    if config.is_file():
        for line in config.read_text(encoding="utf-8").splitlines():
            if line.startswith("#") and "@package" not in line:
                return line.lstrip("# ").strip()
    return ""


def experiments() -> str:
    """One line per experiment: ``  <name>  <title>``."""
    names = experiment_folders.experiments()
    width = max((len(name) for name in names), default=0)
    folders = experiment_folders.folders()
    return "\n".join(
        f"  {name:<{width}}  {experiment_title(folders[name])}".rstrip() for name in names
    )


def groups() -> str:
    """One line per config group: ``  <group>: <option>, <option>...`` (``_`` bases left out),
    the Hydra groups (hydra/...) last."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.object_type import ObjectType

    loader = GlobalHydra.instance().config_loader()

    def walk(parent: str) -> list[str]:
        found = []
        for name in sorted(loader.list_groups(parent)):
            group = f"{parent}/{name}" if parent else name
            if group.startswith("experiment/"):
                continue
            options = [
                o
                for o in loader.get_group_options(group, ObjectType.CONFIG)
                if not o.startswith(INTERNAL)
            ]
            if options and group not in HIDDEN:
                found.append(f"  {group}: {', '.join(options)}")
            found.extend(walk(group))
        return found

    lines = walk("")
    return "\n".join(sorted(lines, key=lambda line: line.lstrip().startswith("hydra/")))


SECTIONS = {"groups": groups, "experiments": experiments}


def _resolve(section: str) -> str:
    return SECTIONS[section]()


if not OmegaConf.has_resolver("help_text"):
    OmegaConf.register_new_resolver("help_text", _resolve)
