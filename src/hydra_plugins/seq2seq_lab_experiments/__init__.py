"""Hydra finds the comparisons' configs in their experiment folders (experiments/<name>/:
seq2seq_lab.experiment_folders): a config source for the ``experiments://`` scheme that serves
the groups ``experiment``, ``experiment_size`` and ``experiment_family`` from a root of experiment folders, and a
search-path plugin that adds every root. Hydra discovers both by scanning ``hydra_plugins``."""

from __future__ import annotations

from pathlib import Path

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin
from omegaconf import OmegaConf

from seq2seq_lab import experiment_folders as lab

SCHEME = "experiments"


class ExperimentFolders(ConfigSource):
    """``experiments://<root>``: experiment/<name> -> <root>/<name>/config.yaml,
    experiment/<name>/<v> -> variants/<v>.yaml, experiment_size/<name>_<scale> ->
    sizes/<scale>.yaml, experiment_family/<name>_<model>_<scale> -> families/<model>_<scale>.yaml."""

    @staticmethod
    def scheme() -> str:
        return SCHEME

    @property
    def root(self) -> Path:
        return Path(self.path)

    def load_config(self, config_path: str) -> ConfigResult:
        path = lab.config_file(self.root, config_path)
        if path is None or not path.is_file():
            raise ConfigLoadError(f"Config not found : {config_path} under {self.path}")
        text = path.read_text(encoding="utf-8")
        return ConfigResult(
            config=OmegaConf.create(text),
            path=f"{SCHEME}://{self.path}",
            provider=self.provider,
            header=ConfigSource._get_header_dict(text[:512]),
        )

    def available(self) -> bool:
        return self.root.is_dir()

    def is_group(self, config_path: str) -> bool:
        directory = lab.group_dir(self.root, config_path)
        return directory is not None and directory.is_dir()

    def is_config(self, config_path: str) -> bool:
        path = lab.config_file(self.root, config_path)
        return path is not None and path.is_file()

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        configs, groups = lab.options(self.root, config_path)
        listed = []
        if results_filter in (None, ObjectType.CONFIG):
            listed += configs
        if results_filter in (None, ObjectType.GROUP):
            listed += groups
        return sorted(set(listed))


class ExperimentRoots(SearchPathPlugin):
    """Every root of experiment folders, after conf/ (conf/ never names an experiment)."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        for root in lab.roots():
            search_path.append(provider="seq2seq-lab experiments", path=f"{SCHEME}://{root}")
