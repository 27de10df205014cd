"""What train/eval/translate do, given a composed config (the entry points only parse configs).

``train``: data -> model -> Lightning fit -> test of the best checkpoint -> results.json.
Every run ends with a results.json in its directory, whatever happened: "completed",
"diverged" (a recorded result, exit code 0, the sweep goes on), "failed" (with the error) or
"interrupted" (by a signal, named; exit code 128 + its number). A run has a directory of its
own (``run_dir``); under DDP only global rank zero writes the run's files.
"""

from __future__ import annotations

import logging
import time
import traceback
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Timer
from omegaconf import DictConfig, open_dict

from seq2seq_lab.analysis.alignment import alignment_figures
from seq2seq_lab.analysis.alignment_record import ALIGNMENT, alignment_record
from seq2seq_lab.analysis.decoding_study_record import STUDY
from seq2seq_lab.analysis.length_probe import PROBE, length_probe
from seq2seq_lab.config import instantiate, to_plain
from seq2seq_lab.console import quiet_third_party, resolved_config, run_footer, run_header
from seq2seq_lab.loggers.wandb_identity import run_identity
from seq2seq_lab.loggers.wandb_logger import finish_wandb
from seq2seq_lab.loggers.wandb_record import log_hypotheses
from seq2seq_lab.pipeline.building import (
    build_callbacks,
    build_datamodule,
    build_module,
    is_multirun,
    set_threads,
    write_test_outputs,
)
from seq2seq_lab.pipeline.decoding_study import run_decoding_study
from seq2seq_lab.pipeline.extra_tests import run_extra_tests, translate_in_order
from seq2seq_lab.preflight import check_train_inputs
from seq2seq_lab.record.atomic import write_text
from seq2seq_lab.record.environment import hardware, versions
from seq2seq_lab.record.flat_config import flatten
from seq2seq_lab.record.interruptions import SignalRecorder
from seq2seq_lab.record.results import EXTRA_TESTS, write_results
from seq2seq_lab.record.run_dir import check_run_dir, close_run_log, continuation, is_rank_zero
from seq2seq_lab.record.run_reuse import POOLS_KEY, adopt, find_identical
from seq2seq_lab.training.convergence import late_gain
from seq2seq_lab.training.module import Seq2SeqModule, stop_cause
from seq2seq_lab.training.precision import choose_precision, use_full_precision_kernels

log = logging.getLogger(__name__)


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
        extra = run_identity(cfg, family) if name == "wandb" else {}
        loggers.append(instantiate(conf, key=f"logger.{name}", **extra))
    return loggers


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
    """The ``scale`` group's choice (smoke, synthetic, multi30k, full): the report's quality floors
    are stated per scale."""
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get().runtime.choices.get("scale") if HydraConfig.initialized() else None


def _checkpoint_callback(trainer: L.Trainer) -> Any:
    """The callback that keeps the best checkpoint (LastCheckpoint is a checkpoint callback too)."""
    from lightning.pytorch.callbacks import ModelCheckpoint

    return next((c for c in trainer.checkpoint_callbacks if isinstance(c, ModelCheckpoint)), None)


def train(cfg: DictConfig) -> dict[str, Any]:
    """Train, test the best checkpoint, write results.json; returns the results dict.

    A directory that holds another run is refused before anything starts (ConfigError, see
    ``run_dir``); resuming from a checkpoint inside it continues that run. With
    ``resume=true`` the run goes on with what its directory holds (``run_dir.continuation``):
    a finished run's record is returned as it is, an unfinished run continues from its
    ``last.ckpt``. A SIGTERM/SIGINT is recorded as "interrupted" and raised as
    ``interruptions.Interrupted``.
    """
    quiet_third_party()
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
    example = None  # a test source sentence, for the footer's translate command
    try:
        resume = check_train_inputs(cfg)  # before any work: bad input fails in a second
        if cfg.get("print_config") and is_rank_zero():
            print(resolved_config(results["config"]), flush=True)
        set_threads(cfg)
        results["hardware"]["torch_threads"] = torch.get_num_threads()
        L.seed_everything(cfg.seed, workers=True, verbose=False)
        datamodule = build_datamodule(cfg.data)
        datamodule.prepare_data()
        datamodule.setup("fit")
        datamodule.print_summary()
        if is_rank_zero():
            datamodule.write_vocabularies(run_dir)
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
        # after module and datamodule: auto may time their training steps (precision.py)
        precision = choose_precision(
            cfg.trainer.precision, cfg.trainer.accelerator, module, datamodule
        )
        log.info("training precision %s (%s)", precision.precision, precision.reason)
        for line in run_header(results, precision.precision):
            log.info(line)
        results["precision"] = precision._asdict()
        use_full_precision_kernels(precision.precision)
        trainer: L.Trainer = instantiate(
            cfg.trainer,
            key="trainer",
            callbacks=callbacks,
            logger=loggers or False,
            precision=precision.precision,
        )
        logged = {
            "scale": results["scale"],  # a workspace shows one scale of a comparison
            **flatten(results["config"]),
            **flatten(results["data"], "data_summary."),
        }
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
            example = next(iter(module.test_results.get("sources") or []), None)
            test = write_test_outputs(run_dir, module.test_results, datamodule, cfg.data)
            results["sacrebleu_signature"] = test.pop("sacrebleu_signature")
            results["test"] = test
            log_hypotheses(loggers, module.test_results)
            if cfg.get(PROBE):  # the tested checkpoint on inputs longer than training
                started = time.perf_counter()
                results[PROBE] = run_length_probe(module, datamodule, list(cfg[PROBE]), run_dir)
                signals.raise_if_received()
                results["timing"]["length_probe_seconds"] = time.perf_counter() - started
            if datamodule.extra_test_splits and is_rank_zero():  # scored apart from the test
                started = time.perf_counter()
                results[EXTRA_TESTS] = run_extra_tests(module, datamodule, run_dir)
                signals.raise_if_received()
                results["timing"]["extra_tests_seconds"] = time.perf_counter() - started
            if cfg.get(STUDY) and is_rank_zero():  # every beam width and length penalty
                started = time.perf_counter()
                results[STUDY] = run_decoding_study(
                    module, datamodule, to_plain(cfg[STUDY]), run_dir
                )
                signals.raise_if_received()
                results["timing"]["decoding_study_seconds"] = time.perf_counter() - started
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
            finish_wandb(results)
            if is_rank_zero() and not is_multirun():  # a sweep says where it went at its end
                print("\n".join(run_footer(run_dir, results, example)), flush=True)


def run_length_probe(
    module: Seq2SeqModule, datamodule: Any, joins: list[int], run_dir: Path
) -> dict[str, Any]:
    """:func:`seq2seq_lab.analysis.length_probe.length_probe` on the tested split, decoded
    with the validation settings (greedy: every model of a comparison alike, and the long
    joined inputs stay cheap), its hypotheses written to RUN/length_probe/join-<k>.txt."""
    sources, references = datamodule.raw_pairs(datamodule.split)
    decoding = module.val_decoding

    def translate(lines: list[str]) -> list[str]:
        return translate_in_order(module, datamodule, lines, decoding)

    probe = length_probe(translate, sources, references, joins)
    if is_rank_zero():
        for k, lines in probe.pop("hypotheses").items():
            write_text(run_dir / PROBE / f"join-{k}.txt", "".join(x + "\n" for x in lines))
    else:
        probe.pop("hypotheses")
    probe["decoding"] = decoding.to_dict()
    probe["split"] = datamodule.split
    return probe
