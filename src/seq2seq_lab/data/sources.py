"""Where sentence pairs come from: raw, untouched text per split, before any tokenisation.

A source is configured once (``data.source`` in the Hydra config) and asked for text through a
:class:`SourceContext` carrying the options every source shares (``data.root``, the language
pair, ``data.download``, ``data.cache_dir``). Three kinds:

- :class:`ParallelTextSource`: a directory of ``{root}/{split}.{lang}`` files, one sentence per
  line (``data=parallel_text|multi30k|europarl``), with optional download of missing files.
- :class:`HuggingFaceSource`: a ``datasets`` dataset with a ``translation`` column of
  ``{lang: text}`` dicts (``data=hf``), from the Hub or from ``save_to_disk``.
- :class:`~seq2seq_lab.data.synthetic.SyntheticSource`: the embedded generated task.

Split names are the project's (``train``, ``val``, ``test``); each source maps them to its own
(Multi30k's ``test2016``, the Hub's ``validation``).
"""

from __future__ import annotations

import gzip
import hashlib
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seq2seq_lab.data.lines import decode_lines
from seq2seq_lab.errors import ConfigError, DataError
from seq2seq_lab.record.atomic import write_bytes

SPLITS = ("train", "val", "test")
TextPairs = tuple[list[str], list[str]]  # (source sentences, target sentences), line-aligned


@dataclass(frozen=True)
class SourceContext:
    """The data options every source is read with (top-level keys of ``data``, whose one home
    is ``conf/data/_datamodule.yaml``: no defaults here)."""

    root: str | None
    src_lang: str
    tgt_lang: str
    download: bool
    cache_dir: str


class PairSource(ABC):
    """A place sentence pairs come from."""

    name: str  # short name used in messages and summaries
    # True where the pairs are a pure function of the source's settings (the synthetic task):
    # a run may then name its test set by the data config that generates it, not copy it
    generated: bool = False

    def prepare(  # noqa: B027 (optional hook)
        self, context: SourceContext, splits: Sequence[str] = SPLITS
    ) -> None:
        """Fetch what ``splits`` need that is missing (Lightning's ``prepare_data``, rank 0
        only). Default: nothing."""

    @abstractmethod
    def load(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> dict[str, TextPairs]:
        """The raw text of each of ``splits`` (names from :data:`SPLITS`), in corpus order;
        the others are not read (``data.test_from_train_lines`` takes test from train)."""

    def check(  # noqa: B027 (optional hook)
        self, context: SourceContext, splits: Sequence[str] = SPLITS
    ) -> None:
        """Raise a one-line UserError where ``load`` of ``splits`` would fail for want of its
        inputs (a directory not set, files missing): checked before a run starts, without
        reading the data. Default: nothing to check."""

    def describe(self) -> str:
        return self.name

    def extra_test_splits(self) -> tuple[str, ...]:
        """Test sets scored apart from the test split, beside it and never mixed into it (the
        synthetic task's sentences past every training length); ``load`` reads them by name.
        Default: none."""
        return ()


def read_lines(path: Path) -> list[str]:
    """The sentences of a training text file, one per line, read by the line reader translate
    uses too (:mod:`seq2seq_lab.data.lines`: split on ``\\n`` only, ``\\r\\n`` ends and a leading
    byte-order mark removed, nothing else stripped). Raises :class:`DataError` naming the file
    (and line) when it is empty or not UTF-8."""
    data = path.read_bytes()
    if not data:
        raise DataError(f"{path}: empty file; expected one sentence per line")
    return decode_lines(data, path)


class ParallelTextSource(PairSource):
    """A directory of line-aligned files ``{root}/{file}.{lang}``, one sentence per line.

    ``split_files`` maps the project's split names to the file stems (Multi30k:
    ``{train: train, val: val, test: test2016}``). With ``data.download=true`` missing files are
    fetched from ``download_url`` (``{name}`` and ``{lang}`` filled from ``download_names``;
    ``.gz`` files are gunzipped), checked against ``sha256`` (keyed ``{file}.{lang}``) when
    given, and written atomically into ``data.root`` (or ``{cache_dir}/downloads/{name}`` when
    ``data.root`` is null). ``download_names: null`` means the ``split_files`` stems,
    ``sha256: null`` no check. The keyword arguments have no defaults: their one home is
    ``conf/data/parallel_text.yaml`` (which multi30k.yaml and europarl.yaml start from).
    """

    def __init__(
        self,
        *,
        name: str,
        split_files: dict[str, str],
        download_url: str | None,
        download_names: dict[str, str] | None,
        sha256: dict[str, str] | None,
    ) -> None:
        self.name = name
        self.split_files = dict(split_files or {})
        if sorted(self.split_files) != sorted(SPLITS):
            raise ConfigError(
                f"data.source.split_files={self.split_files}: expected the keys {', '.join(SPLITS)}"
            )
        self.download_url = download_url
        self.download_names = dict(download_names or self.split_files)
        self.sha256 = dict(sha256 or {})

    def describe(self) -> str:
        return f"{self.name} (parallel text files)"

    def root(self, context: SourceContext) -> Path:
        if context.root is not None:
            return Path(context.root).expanduser()
        if context.download and self.download_url:
            return Path(context.cache_dir).expanduser() / "downloads" / self.name
        hint = " or data.download=true" if self.download_url else ""
        raise ConfigError(
            f"data.root is not set: data={self.name} reads {{root}}/{{split}}.{{lang}} files; "
            f"pass data.root=DIR (e.g. data.root=../shared/data/{self.name}){hint}"
        )

    def paths(
        self, context: SourceContext, splits: Sequence[str] = SPLITS
    ) -> dict[tuple[str, str], Path]:
        root = self.root(context)
        return {
            (split, lang): root / f"{self.split_files[split]}.{lang}"
            for split in splits
            for lang in (context.src_lang, context.tgt_lang)
        }

    def _expected(self, context: SourceContext, splits: Sequence[str]) -> str:
        stems = ",".join(self.split_files[s] for s in splits)
        stems = f"{{{stems}}}" if len(splits) > 1 else stems
        return f"{self.root(context)}/{stems}.{{{context.src_lang},{context.tgt_lang}}}"

    def prepare(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> None:
        if not context.download:
            return
        if not self.download_url:
            raise ConfigError(f"data.download=true: data={self.name} has no download_url")
        for (split, lang), path in self.paths(context, splits).items():
            if not path.exists():
                self._download(split, lang, path)

    def _download(self, split: str, lang: str, path: Path) -> None:
        assert self.download_url is not None
        url = self.download_url.format(name=self.download_names[split], lang=lang)
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                data = response.read()
            if url.endswith(".gz"):
                data = gzip.decompress(data)
        except (urllib.error.URLError, OSError, EOFError) as e:
            raise DataError(
                f"could not download {url} ({e}); fetch it by hand into {path}"
            ) from None
        expected = self.sha256.get(path.name)
        if expected and hashlib.sha256(data).hexdigest() != expected:
            raise DataError(f"{url}: sha256 differs from the expected {expected}; not saved")
        write_bytes(path, data)

    def check(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> None:
        """``data.root`` set (or a download to make) and, unless ``data.download=true`` fetches
        them, every file of ``splits`` there."""
        if not context.download:
            self._check_files(context, splits)

    def _check_files(self, context: SourceContext, splits: Sequence[str]) -> None:
        missing = [str(p) for p in self.paths(context, splits).values() if not p.is_file()]
        if missing:
            hint = " (or pass data.download=true)" if self.download_url else ""
            raise DataError(
                f"missing file {missing[0]}"
                + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                + f": data={self.name} expects {self._expected(context, splits)}{hint}"
            )

    def load(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> dict[str, TextPairs]:
        self._check_files(context, splits)  # after prepare() fetched what it could
        paths = self.paths(context, splits)
        out: dict[str, TextPairs] = {}
        for split in splits:
            src_path, tgt_path = paths[split, context.src_lang], paths[split, context.tgt_lang]
            src, tgt = read_lines(src_path), read_lines(tgt_path)
            if len(src) != len(tgt):
                raise DataError(
                    f"{src_path} has {len(src)} lines but {tgt_path} has {len(tgt)}; "
                    "parallel files must have the same number of lines (one sentence each)"
                )
            out[split] = (src, tgt)
        return out


class HuggingFaceSource(PairSource):
    """A Hugging Face ``datasets`` dataset with a ``translation`` column of ``{lang: text}``
    dicts (the WMT/IWSLT layout).

    With ``data.root`` set it is read with ``datasets.load_from_disk(root)`` (a dataset saved
    with ``save_to_disk``); otherwise ``datasets.load_dataset(name, config)`` downloads it
    into the Hugging Face cache. ``splits`` maps the project's split names to the dataset's.
    The keyword arguments have no defaults: their one home is ``conf/data/hf.yaml``.
    """

    def __init__(
        self,
        *,
        name: str | None,
        config: str | None,
        splits: dict[str, str],
        column: str,
    ) -> None:
        self.dataset_name = name
        self.config = config
        self.splits = dict(splits or {})
        if sorted(self.splits) != sorted(SPLITS):
            raise ConfigError(
                f"data.source.splits={self.splits}: expected the keys {', '.join(SPLITS)}"
            )
        self.column = column
        self.name = "hf"

    def describe(self) -> str:
        what = self.dataset_name or "dataset on disk"
        return f"hf {what}" + (f" ({self.config})" if self.config else "")

    def _open(self, context: SourceContext):  # -> datasets.DatasetDict
        try:
            import datasets
        except ImportError:
            raise ConfigError(
                "data=hf needs the datasets package: pip install 'seq2seq-lab[hf]'"
            ) from None
        if context.root is not None:
            path = Path(context.root).expanduser()
            if not path.exists():
                raise DataError(
                    f"missing directory {path}: data=hf with data.root expects a "
                    "dataset saved with save_to_disk"
                )
            return datasets.load_from_disk(str(path)), str(path)
        if not self.dataset_name:
            raise ConfigError(
                "data.source.name is not set: data=hf needs a dataset name (e.g. "
                "data.source.name=wmt/wmt14 data.source.config=de-en) or data.root=DIR "
                "(a dataset saved with save_to_disk)"
            )
        return datasets.load_dataset(self.dataset_name, self.config), self.dataset_name

    def prepare(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> None:
        self._open(context)  # downloads into the Hugging Face cache on first use

    def load(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> dict[str, TextPairs]:
        dataset, where = self._open(context)
        out: dict[str, TextPairs] = {}
        for split in splits:
            hf_split = self.splits[split]
            if hf_split not in dataset:
                raise DataError(
                    f"{where}: no split '{hf_split}' (data.source.splits.{split}); "
                    f"it has {', '.join(dataset)}"
                )
            part = dataset[hf_split]
            if self.column not in part.column_names:
                raise DataError(
                    f"{where}[{hf_split}]: no column '{self.column}' (data.source.column); "
                    f"it has {', '.join(part.column_names)}"
                )
            src: list[str] = []
            tgt: list[str] = []
            for row, pair in enumerate(part[self.column]):
                for lang, sink in ((context.src_lang, src), (context.tgt_lang, tgt)):
                    text = pair.get(lang) if isinstance(pair, dict) else None
                    if not isinstance(text, str):
                        langs = ", ".join(pair) if isinstance(pair, dict) else "none"
                        raise DataError(
                            f"{where}[{hf_split}] row {row}: no '{lang}' text in "
                            f"'{self.column}' (languages: {langs}); check data.src_lang/tgt_lang"
                        )
                    sink.append(text)
            out[split] = (src, tgt)
        return out
