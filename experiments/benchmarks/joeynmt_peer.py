"""JoeyNMT 2.3, the peer of ../shared/bench/README.md: its own environment, data and runs.

The protocol fixes everything here: JoeyNMT lives in its own virtual environment (never the
project's), both systems read the same raw Multi30k text, JoeyNMT gets a joint 8k sentencepiece
BPE model with its own special-token ids (unk 0, pad 1, bos 2, eos 3) and a vocabulary file of
the pieces in id order, and each training run is stopped by SIGINT after a wall-clock budget.
The shared config templates (``$WORK`` placeholders) are read from ../shared/bench/joeynmt/.

Nothing is copied into the repository: the work directory (default ``.cache/peer``, ignored by
git) holds symbolic links to the read-only text, the tokenizer, the filled-in configs, the
JoeyNMT models and logs.

    python experiments/benchmarks/joeynmt_peer.py setup        # venv + data + configs
    python experiments/benchmarks/joeynmt_peer.py train p1_transformer --seconds 120

Only ``setup`` installs (pip, a few minutes, the package registry reachable); ``train`` and the
benchmarks that run the peer stop with one line naming the missing piece (the venv, the config
templates, the text) instead of installing or failing half-way.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
BENCH_CONFIGS = SHARED / "bench" / "joeynmt"
DEFAULT_DATA = SHARED / "data" / "multi30k"
DEFAULT_WORK = REPO / ".cache" / "peer"
SPLITS = ("train", "val", "test2016")
LANGS = ("de", "en")
# JoeyNMT logs one line per `logging_freq` updates, e.g.
# "Epoch   1, Step:      50, Batch Loss:     6.1, Batch Acc: 0.05, Tokens per Sec:      790, Lr: ..."
STEP_LINE = re.compile(r"Step:\s*(\d+).*?Tokens per Sec:\s*([\d.]+)")
GENERATION_LINE = re.compile(r"Generation took ([\d.]+)\[sec\]")


class PeerMissing(RuntimeError):
    """What the peer needs is not there (its venv with JoeyNMT, the protocol's config templates,
    the Multi30k text): the message is one line saying what is missing and what to run."""


@dataclass
class PeerTraining:
    """What one wall-clock-limited JoeyNMT training run logged."""

    config: str
    seconds: float
    tokens_per_second: list[float] = field(default_factory=list)  # one per logging window
    updates: int = 0
    log: Path | None = None

    @property
    def median_tokens_per_second(self) -> float:
        return statistics.median(self.tokens_per_second) if self.tokens_per_second else 0.0


def venv_python(work: Path) -> Path:
    return work / "venv" / "bin" / "python"


def installed(work: Path) -> bool:
    """Whether the peer's venv exists and finds JoeyNMT (a venv whose pip install failed
    half-way has a python but no joeynmt); the check imports nothing."""
    python = venv_python(work)
    if not python.exists():
        return False
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('joeynmt') is None)"
    return subprocess.run([str(python), "-c", probe], env=_env(1)).returncode == 0


def require(work: Path) -> Path:
    """The peer's python; PeerMissing when JoeyNMT is not installed in ``work``."""
    if not installed(work):
        raise PeerMissing(
            f"JoeyNMT peer not installed ({venv_python(work)} has no joeynmt): run "
            f"`python experiments/benchmarks/joeynmt_peer.py setup --work {work}` first "
            "(pip, a few minutes)"
        )
    return venv_python(work)


def ensure_venv(work: Path) -> Path:
    """Create the peer's virtual environment with the protocol's pins (once)."""
    python = venv_python(work)
    if installed(work):
        return python
    pip = [str(python), "-m", "pip", "install", "-q"]
    try:
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        # torch first and pinned: unpinned, joeynmt's dependency pulls a multi-GB CUDA build
        subprocess.run([*pip, "torch==2.13.0"], check=True)
        # `python -m joeynmt` needs importlib_metadata, which joeynmt 2.3 does not declare
        subprocess.run([*pip, "joeynmt==2.3.0", "importlib_metadata", "sentencepiece==0.2.0"],
                       check=True)  # fmt: skip
    except subprocess.CalledProcessError as failed:
        raise PeerMissing(
            f"installing the JoeyNMT peer into {work / 'venv'} failed ({' '.join(failed.cmd)} "
            f"exited {failed.returncode}; pip's message is above)"
        ) from failed
    return python


def prepare_data(work: Path, data_root: Path = DEFAULT_DATA) -> Path:
    """Links to the raw text, the joint BPE model with JoeyNMT's ids and its vocabulary file."""
    import sentencepiece as spm

    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        for lang in LANGS:
            source = (data_root / f"{split}.{lang}").resolve()
            if not source.is_file():
                raise PeerMissing(f"{source}: Multi30k {split}.{lang} is missing (--data)")
            link = data / f"{split}.{lang}"
            if not link.exists():
                link.symlink_to(source)
    model = data / "spm8k.model"
    if not model.exists():
        spm.SentencePieceTrainer.train(
            input=[str(data / "train.de"), str(data / "train.en")],
            model_prefix=str(data / "spm8k"),
            vocab_size=8000,
            model_type="bpe",
            character_coverage=1.0,
            unk_id=0,
            pad_id=1,
            bos_id=2,
            eos_id=3,
            unk_piece="<unk>",
            pad_piece="<pad>",
            bos_piece="<s>",
            eos_piece="</s>",
            minloglevel=2,
        )
        processor = spm.SentencePieceProcessor(model_file=str(model))
        pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
        (data / "vocab8k.txt").write_text("\n".join(pieces) + "\n", encoding="utf-8")
    return data


def write_configs(work: Path, templates: Path = BENCH_CONFIGS) -> dict[str, Path]:
    """The protocol's YAML files with ``$WORK`` filled in."""
    out = work / "configs"
    out.mkdir(parents=True, exist_ok=True)
    configs = {}
    for template in sorted(templates.glob("*.yaml")):
        target = out / template.name
        target.write_text(template.read_text().replace("$WORK", str(work)), encoding="utf-8")
        configs[template.stem] = target
    if not configs:
        raise PeerMissing(f"{templates}: no JoeyNMT config templates (*.yaml) found")
    return configs


def write_recipe_config(work: Path, *, lr: float, warmup: int, base: str = "p1_transformer") -> str:
    """P1 with our CPU recipe's peak learning rate and warmup (issue 16.4: the peer trained
    like ours, so that both decode real translations of similar length); its own model_dir.
    Returns the config's name (``<base>_cpu_recipe``). Both values are the caller's, read from
    our recipe's config, their one home."""
    name = f"{base}_cpu_recipe"
    text = (work / "configs" / f"{base}.yaml").read_text(encoding="utf-8")
    replacements = [
        (r"(?m)^name: .*$", f'name: "{name}"'),
        (r"(?m)^model_dir: .*$", f'model_dir: "{work.resolve() / "models" / name}"'),
        (r"(?m)^(\s*learning_rate:)\s*[^\s#]+", rf"\g<1> {lr:g}"),
        (r"(?m)^(\s*learning_rate_warmup:)\s*[^\s#]+", rf"\g<1> {warmup}"),
    ]
    for pattern, replacement in replacements:
        text, count = re.subn(pattern, replacement, text)
        if count != 1:
            raise ValueError(f"{base}.yaml: expected one line matching {pattern!r}, found {count}")
    (work / "configs" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return name


def setup(work: Path = DEFAULT_WORK, data_root: Path = DEFAULT_DATA) -> dict[str, Path]:
    """Install the peer (once), then its data and configs: everything ``train`` needs."""
    ensure_venv(work)
    prepare_data(work, data_root)
    return write_configs(work)


def prepare(work: Path = DEFAULT_WORK, data_root: Path = DEFAULT_DATA) -> dict[str, Path]:
    """As ``setup``, but never installs: PeerMissing (one line) when JoeyNMT is not there, so
    a benchmark stops before its first run instead of pip-installing or failing mid-way."""
    require(work)
    prepare_data(work, data_root)
    return write_configs(work)


def parse_training_log(text: str) -> tuple[int, list[float]]:
    """(last update logged, "Tokens per Sec" of every logging window) of a JoeyNMT training
    log; (0, []) when it logged no window."""
    updates, tokens_per_second = 0, []
    for match in STEP_LINE.finditer(text):
        updates = int(match.group(1))
        tokens_per_second.append(float(match.group(2)))
    return updates, tokens_per_second


def _env(threads: int) -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env.pop("PYTHONPATH", None)  # the peer must not see this project's packages
    return env


def train(
    config: str, *, seconds: float, work: Path = DEFAULT_WORK, threads: int = 2
) -> PeerTraining:
    """Train for ``seconds`` of wall clock, then SIGINT (JoeyNMT saves latest.ckpt on it)."""
    path = work / "configs" / f"{config}.yaml"
    log = work / "logs" / f"{config}-{time.strftime('%Y%m%d-%H%M%S')}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [str(venv_python(work)), "-m", "joeynmt", "train", str(path), "--skip-test"]
    start = time.perf_counter()
    with log.open("w") as sink:
        # A shell's background job starts with SIGINT ignored, and Python then never installs
        # its KeyboardInterrupt handler: JoeyNMT would not save latest.ckpt when stopped.
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=_env(threads),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    result = PeerTraining(config=config, seconds=time.perf_counter() - start, log=log)
    text = log.read_text(errors="replace")
    result.updates, result.tokens_per_second = parse_training_log(text)
    if not result.tokens_per_second:
        tail = "\n".join(text.splitlines()[-15:])
        raise RuntimeError(f"JoeyNMT logged no 'Tokens per Sec' line in {log}:\n{tail}")
    return result


def decode(
    config: str, *, checkpoint: Path, work: Path = DEFAULT_WORK, threads: int = 2
) -> tuple[float, list[str]]:
    """Decode test2016 with a P3 config: (generation seconds, hypotheses).

    The seconds are JoeyNMT's own "Generation took" figure: its batching and decoding loop,
    without process start-up and model loading.
    """
    path = work / "configs" / f"{config}.yaml"
    template = path.read_text()
    text = template.replace(re.search(r'load_model: "([^"]+)"', template).group(1), str(checkpoint))
    filled = work / "configs" / f"{config}.run.yaml"
    filled.write_text(text)
    output = work / "decoded" / config
    output.parent.mkdir(parents=True, exist_ok=True)
    command = [str(venv_python(work)), "-m", "joeynmt", "test", str(filled),
               "--output-path", str(output)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=_env(threads))
    log = done.stdout + done.stderr
    took = generation_seconds(log)
    if done.returncode != 0 or took is None:
        raise RuntimeError(f"joeynmt test {filled} failed:\n{log[-2000:]}")
    hypotheses = Path(f"{output}.test").read_text(encoding="utf-8").splitlines()
    return took, hypotheses


def generation_seconds(log: str) -> float | None:
    """JoeyNMT's own "Generation took" seconds in a ``joeynmt test`` log (None: not there)."""
    took = GENERATION_LINE.search(log)
    return float(took.group(1)) if took else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["setup", "train"])
    parser.add_argument("config", nargs="?", default="p1_transformer")
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    try:
        if args.command == "setup":
            setup(args.work, args.data)
            return
        prepare(args.work, args.data)
    except PeerMissing as missing:
        sys.exit(f"error: {missing}")
    # the protocol's configs and those written beside them (write_recipe_config)
    configs = sorted(p.stem for p in (args.work / "configs").glob("*.yaml") if ".run" not in p.stem)
    if args.config not in configs:
        parser.error(f"config {args.config!r}: expected one of {configs}")
    run = train(args.config, seconds=args.seconds, work=args.work)
    print(f"{run.config}: {run.updates} updates in {run.seconds:.0f} s, median "
          f"{run.median_tokens_per_second:.0f} target tokens/s ({run.log})")  # fmt: skip


if __name__ == "__main__":
    main()
