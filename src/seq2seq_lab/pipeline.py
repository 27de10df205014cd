"""What train/eval/translate do, given a composed config (the entry points only parse configs).

``train``: data -> model -> Lightning fit -> test of the best checkpoint -> results.json.
Every run ends with a results.json in its directory, whatever happened: "completed",
"diverged" (a recorded result, exit code 0, the sweep goes on), "failed" (with the error) or
"interrupted" (by a signal, named; exit code 128 + its number). A run has a directory of its
own (``run_dir``); under DDP only global rank zero writes the run's files.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from pathlib import Path
from typing import Any, NamedTuple

import lightning as L
import torch
from lightning.pytorch.callbacks import Timer
from omegaconf import DictConfig, open_dict

from seq2seq_lab.analysis.alignment import alignment_figures
from seq2seq_lab.analysis.alignment_record import ALIGNMENT, alignment_record
from seq2seq_lab.analysis.length_probe import PROBE, length_probe
from seq2seq_lab.atomic import write_text
from seq2seq_lab.checkpoint import family_of, load_checkpoint
from seq2seq_lab.config import instantiate, to_plain
from seq2seq_lab.data import test_set
from seq2seq_lab.data.lines import decode_lines, read_lines
from seq2seq_lab.decoding import DecodingSettings, Hypotheses, decode
from seq2seq_lab.decoding.hypotheses import max_output_lengths
from seq2seq_lab.environment import hardware, versions
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.inputs import check_eval_inputs, check_train_inputs, check_translate_inputs
from seq2seq_lab.interruptions import SignalRecorder
from seq2seq_lab.models.network import Seq2SeqNetwork
from seq2seq_lab.results import write_results
from seq2seq_lab.run_dir import check_run_dir, close_run_log, continuation, is_rank_zero
from seq2seq_lab.run_reuse import POOLS_KEY, adopt, find_identical
from seq2seq_lab.training.convergence import late_gain
from seq2seq_lab.training.module import Seq2SeqModule, stop_cause
from seq2seq_lab.training.precision import choose_precision
from seq2seq_lab.wandb_logger import finish_wandb

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- building blocks
def build_datamodule(data_config: Any) -> L.LightningDataModule:
    return instantiate(data_config, key="data")


def build_module(cfg: DictConfig, datamodule: Any) -> Seq2SeqModule:
    """The shared Lightning module around ``cfg.model``; vocabulary sizes come from the data."""
    network = to_plain(cfg.model)
    if network.get("tie_embeddings") == "all" and not datamodule.shared_vocab:
        raise ConfigError(
            "model.tie_embeddings=all needs one joint source/target vocabulary, but data "
            f"'{datamodule.source.name}' builds separate ones (use a joint tokenizer)"
        )
    network["src_vocab_size"] = datamodule.src_vocab_size
    network["tgt_vocab_size"] = datamodule.tgt_vocab_size
    return Seq2SeqModule(
        network=network,
        optimizer=to_plain(cfg.optim),
        schedule=to_plain(cfg.schedule),
        **to_plain(cfg.module),
        run_config=checkpoint_run_config(cfg),
    )


def checkpoint_run_config(cfg: DictConfig) -> dict[str, Any]:
    """The run config kept in checkpoints: the resolved config with ``data.root`` made
    absolute, so that eval and translate find the data from any working directory
    (results.json names its paths portably instead: ``seq2seq_lab.portable_paths``)."""
    run_config = to_plain(cfg)
    data = run_config.get("data") or {}
    if data.get("root") is not None:
        data["root"] = str(Path(data["root"]).expanduser().resolve())
    return run_config


def build_callbacks(cfg: DictConfig) -> list[L.Callback]:
    callbacks = [
        instantiate(conf, key=f"callbacks.{name}")
        for name, conf in (cfg.get("callbacks") or {}).items()
        if conf is not None and "_target_" in conf
    ]
    if cfg.trainer.get("max_time") is None:
        # Lightning adds its Timer only for max_time (and ignores max_time if one is already
        # there); every run needs one, as its state in last.ckpt times a continued run
        callbacks.append(Timer())
    return callbacks


def earlier_segments_seconds(trainer: L.Trainer) -> float:
    """The training time of a continued run's earlier segments (0 for a new run):
    Lightning's Timer restores from the checkpoint the time trained before it was saved, so

        earlier = Timer.time_elapsed("train") - (this segment's train end - its start)

    (the work after that checkpoint, lost at the interruption, is counted once: when redone).
    A run whose max_time was already spent when its last.ckpt was written trains no further
    (Lightning stops it before training starts): all its time is earlier."""
    timer = next(c for c in trainer.callbacks if isinstance(c, Timer))
    start, end = timer.start_time("train"), timer.end_time("train")
    if start is None:
        return timer.time_elapsed("train")  # the restored time alone
    if end is None:
        return 0.0
    return max(0.0, timer.time_elapsed("train") - (end - start))


def build_loggers(cfg: DictConfig, family: str) -> list[Any]:
    loggers = []
    for name, conf in (cfg.get("logger") or {}).items():
        if conf is None or "_target_" not in conf:
            continue
        extra = {}
        if name == "wandb":
            extra = {
                "group": conf.get("group") or cfg.get("experiment_name") or "adhoc",
                "job_type": conf.get("job_type") or cfg.get("variant") or family,
            }
        loggers.append(instantiate(conf, key=f"logger.{name}", **extra))
    return loggers


def flatten(config: dict, prefix: str = "") -> dict[str, Any]:
    """{"model.d_model": 256, ...}: W&B groups, filters and parameter importance need flat keys."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def write_test_outputs(
    out_dir: Path, test_results: dict[str, Any], datamodule: Any = None
) -> dict[str, Any]:
    """Write hypotheses.<split>.txt (corpus order, one per line; the report's across-seed tests
    and length buckets read them) and what the run scored them against, and return the scores.
    The sources and references are named in test_set.json (file, line range, sha256) where
    ``datamodule`` read them from files the repository can name, else copied into
    sources/references.<split>.txt (the synthetic task's generated sentences): see
    ``seq2seq_lab.data.test_set``. Written atomically, and by global rank zero only (every
    DDP rank scores the whole split)."""
    test = dict(test_results)
    lines = {kind: test.pop(kind) for kind in ("hypotheses", "references", "sources")}
    if not is_rank_zero():
        return test
    split = test["split"]
    scored_on = test_set.record(datamodule, split, lines["sources"], lines["references"])
    if scored_on is not None:
        write_text(out_dir / test_set.TEST_SET_FILE, test_set.dumps(scored_on))
    for kind in ("hypotheses", *(test_set.KINDS if scored_on is None else ())):
        write_text(out_dir / f"{kind}.{split}.txt", "".join(x + "\n" for x in lines[kind]))
    return test


def _set_threads(cfg: DictConfig) -> None:
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg.threads))


def is_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _overrides() -> list[str]:
    from hydra.core.hydra_config import HydraConfig

    return list(HydraConfig.get().overrides.task) if HydraConfig.initialized() else []


def _job_fields(cfg: DictConfig, run_dir: Path) -> dict[str, Any]:
    """What results.json says about the job itself (not about what it trained)."""
    return {
        "experiment": cfg.get("experiment_name"),
        "variant": cfg.get("variant"),
        "seed": cfg.seed,
        "run_dir": str(run_dir.resolve()),
        "scale": _scale(),
        "overrides": _overrides(),
        "config": to_plain(cfg),
    }


def _scale() -> str | None:
    """The ``scale`` group's choice (smoke, cpu, real_cpu, full): the report's quality floors
    are stated per scale."""
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get().runtime.choices.get("scale") if HydraConfig.initialized() else None


def _checkpoint_callback(trainer: L.Trainer) -> Any:
    """The callback that keeps the best checkpoint (LastCheckpoint is a checkpoint callback too)."""
    from lightning.pytorch.callbacks import ModelCheckpoint

    return next((c for c in trainer.checkpoint_callbacks if isinstance(c, ModelCheckpoint)), None)


# ---------------------------------------------------------------------------- train
def train(cfg: DictConfig) -> dict[str, Any]:
    """Train, test the best checkpoint, write results.json; returns the results dict.

    A directory that holds another run is refused before anything starts (ConfigError, see
    ``run_dir``); resuming from a checkpoint inside it continues that run. With
    ``resume=true`` the run goes on with what its directory holds (``run_dir.continuation``):
    a finished run's record is returned as it is, an unfinished run continues from its
    ``last.ckpt``. A SIGTERM/SIGINT is recorded as "interrupted" and raised as
    ``interruptions.Interrupted``.
    """
    run_dir = Path(cfg.paths.output_dir)
    if cfg.get("resume"):  # one job of a resumable queue: go on with what the directory holds
        plan = continuation(run_dir, cfg)
        if plan.finished is not None:
            close_run_log(run_dir)
            log.info("%s: finished before (%s), kept as it is", run_dir, plan.finished["status"])
            return plan.finished
        if plan.ckpt_path is not None:
            log.info("%s: continuing from %s", run_dir, plan.ckpt_path)
            with open_dict(cfg):
                cfg.ckpt_path = str(plan.ckpt_path)
        elif (twin := find_identical(cfg, run_dir, list(cfg.get(POOLS_KEY) or []))) is not None:
            log.info("%s: the identical run %s is reused (run_reuse.py)", run_dir, twin)
            record = adopt(twin, run_dir, _job_fields(cfg, run_dir))
            if is_rank_zero():
                write_results(run_dir / "results.json", record)
            return record
    if is_rank_zero():  # the other DDP ranks start in rank zero's directory, already claimed
        check_run_dir(run_dir, cfg.get("ckpt_path"))
    run_dir.mkdir(parents=True, exist_ok=True)
    job = _job_fields(cfg, run_dir)
    config = job.pop("config")  # last in the record, after what the run was made with
    results: dict[str, Any] = {
        "status": "failed",
        **job,
        "versions": versions(),
        "hardware": hardware(),
        "config": config,
    }
    signals = SignalRecorder().install()
    try:
        resume = check_train_inputs(cfg)  # before any work: bad input fails in a second
        _set_threads(cfg)
        results["hardware"]["torch_threads"] = torch.get_num_threads()
        L.seed_everything(cfg.seed, workers=True, verbose=False)
        datamodule = build_datamodule(cfg.data)
        datamodule.prepare_data()
        datamodule.setup("fit")
        datamodule.print_summary()
        results["data"] = datamodule.summary()
        module = build_module(cfg, datamodule)
        if resume is not None:
            resume.check_fits(module, module.hparams.network)
        family = module.family
        results["family"] = family
        results["variant"] = cfg.get("variant") or family
        results["parameters"] = sum(p.numel() for p in module.network.parameters())
        callbacks = build_callbacks(cfg)
        loggers = build_loggers(cfg, family)
        precision = choose_precision(cfg.trainer.precision, cfg.trainer.accelerator)
        log.info("training precision %s (%s)", precision.precision, precision.reason)
        results["precision"] = precision._asdict()
        trainer: L.Trainer = instantiate(
            cfg.trainer,
            key="trainer",
            callbacks=callbacks,
            logger=loggers or False,
            precision=precision.precision,
        )
        logged = {**flatten(results["config"]), **flatten(results["data"], "data_summary.")}
        for logger in loggers:
            logger.log_hyperparams(logged)

        started = time.perf_counter()
        trainer.fit(module, datamodule=datamodule, ckpt_path=cfg.get("ckpt_path"))
        signals.raise_if_received()  # one that came when Lightning no longer checked
        throughput = next((c for c in callbacks if hasattr(c, "tokens_per_second")), None)
        earlier = earlier_segments_seconds(trainer)
        results["timing"] = {
            # the whole fit, over every segment of a run continued from its last.ckpt
            "train_seconds": time.perf_counter() - started + earlier,
            "earlier_segments_seconds": earlier,
            # the rates below time this segment only (a rate needs no earlier segment)
            "train_step_seconds": throughput.step_seconds if throughput else None,
            "train_tokens": throughput.tokens if throughput else None,
            "train_tokens_per_second": throughput.tokens_per_second if throughput else None,
            "train_loop_seconds": throughput.loop_seconds if throughput else None,
            "train_loop_tokens_per_second": (
                throughput.loop_tokens_per_second if throughput else None
            ),
        }
        ckpt_cb = _checkpoint_callback(trainer)
        best_path = ckpt_cb.best_model_path if ckpt_cb is not None else ""
        results["training"] = {
            "steps": trainer.global_step,
            "epochs": trainer.current_epoch,
            "world_size": trainer.world_size,  # processes (DDP ranks); each step used them all
            "best_val_bleu": float(ckpt_cb.best_model_score)
            if ckpt_cb is not None and ckpt_cb.best_model_score is not None
            else None,
            "best_checkpoint": best_path or None,
            # the protocol trains to an update budget or to early stopping; the report treats
            # a run cut by the wall clock as off-protocol (see report/spec.py)
            "stopped_by": stop_cause(trainer),
            # the convergence check of the protocol (training/convergence.py)
            "validations": module.validations,
            "late_val_gain": late_gain(module.validations),
        }
        results["status"] = "diverged" if module.diverged else "completed"
        if module.diverged:
            results["status_reason"] = module.diverged
        # A diverged run is tested from its best checkpoint if it got one before blowing up;
        # its last weights would only measure the blow-up.
        if cfg.get("test") and (best_path or not module.diverged):
            started = time.perf_counter()
            trainer.test(
                module, datamodule=datamodule, ckpt_path=best_path or None, weights_only=True
            )
            signals.raise_if_received()
            results["timing"]["test_seconds"] = time.perf_counter() - started
            test = write_test_outputs(run_dir, module.test_results, datamodule)
            results["sacrebleu_signature"] = test.pop("sacrebleu_signature")
            results["test"] = test
            if cfg.get(PROBE):  # the tested checkpoint on inputs longer than training
                started = time.perf_counter()
                results[PROBE] = run_length_probe(module, datamodule, list(cfg[PROBE]), run_dir)
                signals.raise_if_received()
                results["timing"]["length_probe_seconds"] = time.perf_counter() - started
            started = time.perf_counter()
            batches = (batch.to(module.device) for batch in datamodule.test_dataloader())
            figures = alignment_figures(module.network, batches)
            if figures is not None:  # where the tested checkpoint's attention looks
                results[ALIGNMENT] = alignment_record(figures, test["split"])
                results["timing"]["alignment_seconds"] = time.perf_counter() - started
        return results
    except Exception as error:
        results["status"] = "failed"
        results["error"] = f"{type(error).__name__}: {error}"
        results["traceback"] = traceback.format_exc()
        raise
    except BaseException as error:  # a signal (Lightning turns them into SystemExit), or exit
        interrupted = signals.interruption(error)
        results["status"] = "failed" if interrupted is None else "interrupted"
        if interrupted is None:
            results["error"] = f"{type(error).__name__}: {error}"
            raise
        results["status_reason"] = str(interrupted)
        raise interrupted from None
    finally:
        with signals.held():  # the record is written whatever signal comes now
            if is_rank_zero():
                write_results(run_dir / "results.json", results)
            finish_wandb()


PROBE_BATCH = 64  # sentences per decoder call in the length probe (outputs do not depend on it)


def run_length_probe(
    module: Seq2SeqModule, datamodule: Any, joins: list[int], run_dir: Path
) -> dict[str, Any]:
    """:func:`seq2seq_lab.analysis.length_probe.length_probe` on the tested split, decoded
    with the validation settings (greedy: every model of a comparison alike, and the long
    joined inputs stay cheap), its hypotheses written to RUN/length_probe/join-<k>.txt."""
    sources, references = datamodule.raw_pairs(datamodule.split)
    decoding = module.val_decoding

    def translate(lines: list[str]) -> list[str]:
        # sorted by length so that a batch pads little; each output is independent of its batch
        order = sorted(range(len(lines)), key=lambda i: len(lines[i]))
        result = translate_lines(
            module, datamodule, [lines[i] for i in order], decoding, PROBE_BATCH
        )
        if result.truncated:
            log.warning("length probe: %d inputs cut to the model's limit", len(result.truncated))
        out = [""] * len(lines)
        for i, text in zip(order, result.lines):
            out[i] = text
        return out

    was_training = module.training
    module.eval()
    try:
        with torch.inference_mode():
            probe = length_probe(translate, sources, references, joins)
    finally:
        module.train(was_training)
    if is_rank_zero():
        for k, lines in probe.pop("hypotheses").items():
            write_text(run_dir / PROBE / f"join-{k}.txt", "".join(x + "\n" for x in lines))
    else:
        probe.pop("hypotheses")
    probe["decoding"] = decoding.to_dict()
    probe["split"] = datamodule.split
    return probe


# ---------------------------------------------------------------------------- eval
def _eval_data_config(cfg: DictConfig, run_config: dict) -> dict:
    """The data config to evaluate on: a data= group chosen now, or the training run's data
    with this command's non-null data.* values (split, root...) on top."""
    given = to_plain(cfg.get("data")) or {}
    if "_target_" in given:
        return given
    if "data" not in run_config:
        raise ConfigError("the checkpoint records no data config: pass data=<name> data.root=...")
    merged = dict(run_config["data"])
    merged.update({k: v for k, v in given.items() if v is not None})
    return merged


def _expected_family(cfg: DictConfig) -> str | None:
    model = to_plain(cfg.get("model")) or {}
    return family_of(model) if "_target_" in model else None


def _with_decoding_overrides(cfg: DictConfig, settings: DecodingSettings) -> DecodingSettings:
    """The checkpoint's test decoding with this command's non-null ``decoding.*`` on top."""
    return settings.replace(**(to_plain(cfg.get("decoding")) or {}))


def evaluate(cfg: DictConfig) -> dict[str, Any]:
    """Score a checkpoint on one split (data.split) with its own tokenizers."""
    check_eval_inputs(cfg)
    _set_threads(cfg)
    ckpt = load_checkpoint(cfg.ckpt_path, expected_family=_expected_family(cfg))
    module = ckpt.module
    module.test_decoding = _with_decoding_overrides(cfg, module.test_decoding)
    datamodule = build_datamodule(_eval_data_config(cfg, ckpt.run_config))
    datamodule.load_state_dict(ckpt.datamodule_state)
    datamodule.prepare_data()
    datamodule.setup("test")
    trainer = L.Trainer(
        accelerator=cfg.get("accelerator", "auto"),
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
    )
    trainer.test(module, datamodule=datamodule, verbose=True)
    out_dir = Path(cfg.paths.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    test = write_test_outputs(out_dir, module.test_results, datamodule)
    results = {
        "status": "completed",
        "checkpoint": str(ckpt.path.resolve()),
        "family": ckpt.family,
        "sacrebleu_signature": test.pop("sacrebleu_signature"),
        "test": test,
        "versions": versions(),
        "hardware": hardware(),
    }
    print(
        f"{test['split']}: BLEU {test['bleu']:.2f}  chrF {test['chrf']:.2f}  "
        f"TER {test['ter']:.2f}  ({test['sentences']} sentences, {ckpt.family})"
    )
    if cfg.get(PROBE):  # a finished run's checkpoint on inputs longer than training
        results[PROBE] = run_length_probe(module, datamodule, list(cfg[PROBE]), out_dir)
        joins = results[PROBE]["joins"]
        print(f"{PROBE} (greedy), BLEU by pairs joined: " + "  ".join(
            f"{k}: {joins[k]['bleu']:.2f}" for k in joins))  # fmt: skip
    write_results(out_dir / "eval_results.json", results)
    return results


# ---------------------------------------------------------------------------- translate
class Translations(NamedTuple):
    """The output of :func:`translate_lines`, one entry per input line, in input order."""

    lines: list[str]  # detokenised translations
    tokens: list[list[int]]  # target ids (no BOS/EOS)
    scores: list[float]  # the decoder's score of each (see Hypotheses.scores)
    truncated: list[int]  # 0-based indices of the inputs cut to ``source_limit`` tokens


def _position_tables(network: Seq2SeqNetwork) -> tuple[Any, Any] | None:
    """The (source, target) absolute position tables (``AbsolutePositions``, each with its
    ``max_positions``) of a network that has them (the Transformer's ``src_positions`` and
    ``tgt_positions``), else None."""
    src_table = getattr(network, "src_positions", None)
    tgt_table = getattr(network, "tgt_positions", None)
    return None if src_table is None or tgt_table is None else (src_table, tgt_table)


def source_limit(network: Seq2SeqNetwork, decoding: DecodingSettings) -> int | None:
    """The most source tokens (EOS included) ``network`` can translate under ``decoding``
    without running past its absolute position tables, or None when it has none (recurrent
    families; Transformer with relative or no positions).

    Two limits meet: the source table must hold the source, and the target table every
    position the search may feed, i.e. the output limit floor(a * |x| + b) of
    ``max_output_lengths`` (EOS included) must be at most ``model.max_positions``; the limit
    is therefore below ``max_positions`` when outputs may be longer than their source.
    """
    tables = _position_tables(network)
    if tables is None:
        return None
    src_table, tgt_table = tables

    def output_fits(n: int) -> bool:
        mask = torch.ones(1, n, dtype=torch.bool)
        limit = max_output_lengths(mask, decoding.max_len_a, decoding.max_len_b)
        return int(limit) <= tgt_table.max_positions

    if not output_fits(1):
        raise ConfigError(
            f"decoding.max_len_a={decoding.max_len_a:g} and decoding.max_len_b="
            f"{decoding.max_len_b} let even an empty line's output run past "
            f"model.max_positions={tgt_table.max_positions}; lower decoding.max_len_b"
        )
    low, high = 1, src_table.max_positions  # output_fits(low) holds; the limit is monotone
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if output_fits(middle) else (low, middle - 1)
    return low


def translate_lines(
    module: Seq2SeqModule,
    datamodule: Any,
    lines: list[str],
    decoding: DecodingSettings,
    batch_size: int,
) -> Translations:
    """Translate raw source sentences in order, ``batch_size`` sentences per decoder call.

    A line longer than :func:`source_limit` is cut to its first tokens (and listed in
    ``truncated``) rather than failing the whole input. Each sentence's output does not depend
    on ``batch_size`` or on its neighbours (tests/test_batch_invariance.py).
    """
    from seq2seq_lab.data.batching import source_batch

    if batch_size < 1:
        raise ConfigError(f"batch_size={batch_size}: expected a positive number")
    network = module.network
    device = next(module.parameters()).device
    limit = source_limit(network, decoding)
    ids = [datamodule.encode_source(line) for line in lines]
    truncated: list[int] = []
    if limit is not None:
        for i, sentence in enumerate(ids):
            if len(sentence) + 1 > limit:  # + EOS, which source_batch appends
                ids[i] = sentence[: limit - 1]
                truncated.append(i)
    tokens: list[list[int]] = []
    scores: list[float] = []
    for start in range(0, len(ids), batch_size):
        batch = source_batch(ids[start : start + batch_size]).to(device)
        hyps: Hypotheses = decode(network, batch.src, batch.src_mask, decoding)
        tokens.extend(hyps.tokens)
        scores.extend(hyps.scores)
    texts = [datamodule.tgt_tokenizer.decode(t) for t in tokens]
    return Translations(texts, tokens, scores, truncated)


def read_input(input_path: str | None) -> list[str]:
    """The lines to translate: of the file ``input_path``, or of stdin when None, through the
    training data's line reader (split on \\n only); invalid UTF-8 is a one-line DataError
    naming the file (or <stdin>) and the line."""
    if input_path:
        path = Path(input_path)
        if not path.is_file():
            raise ConfigError(f"input={path}: no such file")
        return read_lines(path)
    return decode_lines(sys.stdin.buffer.read(), "<stdin>")


def truncation_warning(
    truncated: list[int], network: Seq2SeqNetwork, decoding: DecodingSettings, shown: int = 20
) -> str:
    """One line naming the (1-based) input lines that were cut, the first ``shown`` of them,
    and the limit they were cut to (:func:`source_limit`, without EOS)."""
    limit = source_limit(network, decoding)
    numbers = ", ".join(str(i + 1) for i in truncated[:shown])
    more = f" and {len(truncated) - shown} more" if len(truncated) > shown else ""
    tables = _position_tables(network)
    assert limit is not None and tables is not None, "nothing is cut without a limit"
    positions = tables[0].max_positions
    return (
        f"warning: input line{'s' if len(truncated) > 1 else ''} {numbers}{more}: longer "
        f"than the {limit - 1} tokens this model translates (model.max_positions={positions}, "
        f"decoding.max_len_a={decoding.max_len_a:g}, decoding.max_len_b={decoding.max_len_b}"
        f"); only the first {limit - 1} tokens were translated"
    )


def translate(cfg: DictConfig) -> list[str]:
    """Translate lines from ``input`` (a file, or stdin) to ``output`` (a file, or stdout):
    one output line per input line, in order. Input lines end at \\n only (the reader of
    the training data, ``seq2seq_lab.data.lines``); lines too long for the model are cut to
    its limit with a one-line warning on stderr naming them."""
    check_translate_inputs(cfg)
    _set_threads(cfg)
    lines = read_input(cfg.get("input"))  # before loading anything: bad input fails fast
    ckpt = load_checkpoint(cfg.ckpt_path, expected_family=_expected_family(cfg))
    datamodule = build_datamodule(ckpt.run_config["data"])
    datamodule.load_state_dict(ckpt.datamodule_state)
    decoding = _with_decoding_overrides(cfg, ckpt.module.test_decoding)
    with torch.inference_mode():
        result = translate_lines(ckpt.module, datamodule, lines, decoding, int(cfg.batch_size))
    if result.truncated:
        print(truncation_warning(result.truncated, ckpt.module.network, decoding), file=sys.stderr)
    rendered = "".join(o + "\n" for o in result.lines)
    if cfg.get("output"):
        Path(cfg.output).write_text(rendered, encoding="utf-8")
    else:
        sys.stdout.write(rendered)
    return result.lines
