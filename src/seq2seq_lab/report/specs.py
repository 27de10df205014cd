"""The comparisons' specs, found in their experiment folders (``experiment_folders``): each
folder's ``spec.py`` defines ``SPEC``, the :class:`ExperimentSpec` of that comparison (roles read
from each run's resolved config, quality floor, checks and margins, contrasts, plots).

A spec with ``reads`` set (the length probe reads E1's runs) is a comparison made from another
experiment's runs: the report writes it beside that experiment's own. Runs of an experiment
without a spec get a plain one: results table, BLEU by length and loss curves, no rule.

The folders are imported as the package ``experiments`` (one sub-package per folder, its
``__path__`` every root), so a spec can import a sibling comparison
(``from experiments.e1_attention.spec import SPEC``) wherever the folder lives.
"""

from __future__ import annotations

import importlib
import sys
import types
from functools import cache

from seq2seq_lab import experiment_folders as lab
from seq2seq_lab.report.plots import BleuByLength, LossCurves
from seq2seq_lab.report.spec import ExperimentSpec

PACKAGE = "experiments"


def _package() -> types.ModuleType:
    """The namespace package ``experiments`` over every root (created once, roots added)."""
    package = sys.modules.get(PACKAGE)
    if package is None:
        package = types.ModuleType(PACKAGE)
        package.__path__ = []
        sys.modules[PACKAGE] = package
    for root in lab.roots():
        if str(root) not in package.__path__:
            package.__path__.append(str(root))
    return package


def spec_module(name: str) -> types.ModuleType:
    """The module ``experiments.<name>.spec`` of the comparison's folder."""
    _package()
    if lab.folder(name) is None or not (lab.folder(name) / lab.SPEC).is_file():
        known = ", ".join(sorted(specs())) or "none"
        raise LookupError(f"no {lab.SPEC} for comparison {name!r} (known: {known})")
    return importlib.import_module(f"{PACKAGE}.{name}.{lab.SPEC.removesuffix('.py')}")


@cache
def specs() -> dict[str, ExperimentSpec]:
    """name -> spec of every folder with a spec.py (the experiments' own and those that
    read another's runs)."""
    found = {}
    for name, folder in lab.folders().items():
        if (folder / lab.SPEC).is_file():
            spec = spec_module(name).SPEC
            if spec.name != name:
                raise ValueError(f"{folder / lab.SPEC}: SPEC.name {spec.name!r} != folder {name!r}")
            found[name] = spec
    return found


def own_specs() -> dict[str, ExperimentSpec]:
    """The experiments' own specs (those that read no other experiment's runs)."""
    return {name: spec for name, spec in specs().items() if spec.reads is None}


def readers(name: str) -> tuple[ExperimentSpec, ...]:
    """The further comparisons made from experiment ``name``'s runs."""
    return tuple(spec for spec in specs().values() if spec.reads == name)


def spec_for(name: str) -> ExperimentSpec:
    """The spec of a comparison with a folder; for any other experiment name (or runs with
    none) a plain one: results table, BLEU by length and loss curves, no contrasts, no rule."""
    if name in specs():
        return specs()[name]
    return ExperimentSpec(
        name=name,
        title=name,
        published="(not one of the documented comparisons)",
        expected="",
        role=lambda run: {},
        plots=(BleuByLength(), LossCurves()),
    )
